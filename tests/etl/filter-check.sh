#!/usr/bin/env bash
# filter-check.sh: checks `analyze filter` through `analyze counts` of its output (fixture, synthetic and error cases).
#
#   filter-check.sh fixture   ANALYZE IN.etl PROFILE
#   filter-check.sh synthetic ANALYZE TEST_ETL_WRITER PROFILE EXPECTED.counts
#   filter-check.sh errors    ANALYZE IN.etl PROFILE
set -u
mode=$1
analyze=$2
work=$(mktemp -d "${TMPDIR:-/tmp}/hs-filter-XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# Runs the filter and checks the counts of what it wrote against $1 (a file),
# and that its --json numbers agree with both files' counts.
filter_and_compare() {
	local in=$1 profile=$2 expected=$3
	"$analyze" filter "$in" --rules "$profile" -o "$work/out.etl" --json >"$work/filter.json" 2>"$work/filter.err" ||
		{ cat "$work/filter.err" >&2; fail "analyze filter exited $?"; }
	grep -q '^analyze: filter: kept [0-9]* of [0-9]* events' "$work/filter.err" ||
		fail "no summary line on stderr: $(cat "$work/filter.err")"
	# The copy must read back clean: counts exits 1 on any problem.
	"$analyze" counts "$work/out.etl" >"$work/out.counts" || fail "analyze counts of the output exited $?"
	diff -u "$expected" "$work/out.counts" || fail "the filtered file does not hold the expected events"
	local total_in total_out kept dropped
	total_in=$("$analyze" counts "$in" | sed -n 's/^TOTAL\t//p')
	total_out=$(sed -n 's/^TOTAL\t//p' "$work/out.counts")
	kept=$(sed -n 's/^  "kept": \([0-9]*\),$/\1/p' "$work/filter.json")
	dropped=$(sed -n 's/^  "dropped": \([0-9]*\),$/\1/p' "$work/filter.json")
	[ "$kept" = "$total_out" ] || fail "--json kept=$kept, the output holds $total_out"
	[ "$((kept + dropped))" = "$total_in" ] || fail "--json kept+dropped=$((kept + dropped)), the input holds $total_in"
	grep -q '"per_provider": \[' "$work/filter.json" || fail "--json has no per_provider"
}

case $mode in
fixture)
	in=$3 profile=$4
	"$analyze" counts "$in" >"$work/in.counts" || fail "analyze counts of the input exited $?"
	# The expectation, from the input's counts and filter-profile.yaml alone:
	# whitelisted ids/opcodes of each provider, every event of the provider
	# without a whitelist, every kernel event of the system providers' classic
	# GUIDs (they take no id whitelist: process, thread and image groups for
	# Test-SystemProcess, perfinfo and stackwalk for Test-SystemProfile) but
	# Thread/1, whose catalog keyword (SYSTEM_PROCESS_KW_THREAD) the session
	# leaves off, and the header group.
	awk -F'\t' '
		$1 == "e13c0d23-ccbc-4e12-931b-d9cc2eee27e4" && ($2 == "id=1" || $2 == "id=2" || $2 == "id=10") ||
		$1 == "22fb2cd6-0e7b-422b-a0c7-2fad1fd0e716" && $2 == "id=1" ||
		$1 == "2e5dba47-a3d2-4d16-8ee0-6671ffdcd7b5" ||
		$1 == "b3e675d7-2554-4f18-830b-2762732560de" && ($2 == "opcode=0" || $2 == "opcode=36") ||
		$1 ~ /^kernel:0x(00|03|05|0f|14|18)$/ && !($1 == "kernel:0x05" && $2 == "opcode=1") { print; total += $3 }
		END { print "TOTAL\t" total }' "$work/in.counts" >"$work/expected.counts"
	# Each of those selections must match something, or the test proves less.
	[ "$(wc -l <"$work/expected.counts")" -ge 15 ] || fail "the fixture no longer has the events this test selects"
	filter_and_compare "$in" "$profile" "$work/expected.counts"
	;;
synthetic)
	maker=$3 profile=$4 expected=$5
	"$maker" --make-filter-input "$work/in.etl" || fail "cannot write the synthetic input"
	filter_and_compare "$work/in.etl" "$profile" "$expected"
	;;
errors)
	in=$3 profile=$4
	expect_2() { # expect_2 WHAT PATTERN ARGS...: exit status 2 and PATTERN on stderr
		local what=$1 pattern=$2 rc
		shift 2
		"$analyze" filter "$@" >"$work/out" 2>"$work/err"
		rc=$?
		[ $rc = 2 ] || fail "$what: exit status $rc, not 2"
		grep -q -- "$pattern" "$work/err" || fail "$what: stderr lacks '$pattern': $(cat "$work/err")"
	}
	expect_2 "missing -o" "needs -o" "$in" --rules "$profile"
	expect_2 "missing input" "No such\|no such" "$work/absent.etl" --rules "$profile" -o "$work/x.etl"
	expect_2 "not an .etl" "not an .etl" "$profile" --rules "$profile" -o "$work/x.etl"
	printf '%s\n' 'schema_version: 1' 'kind: profile' 'name: broken' 'description: d' \
		'include: [no-such-catalog.yaml]' 'platforms: {windows: {sessions: []}}' >"$work/broken.yaml"
	expect_2 "rules with errors" "broken.yaml" "$in" --rules "$work/broken.yaml" -o "$work/x.etl"
	grep -q "error" "$work/err" || fail "rules with errors: no diagnostic printed: $(cat "$work/err")"
	expect_2 "a catalog, not a profile" "catalog" "$in" --rules "$(dirname "$profile")/filter-catalog.yaml" \
		-o "$work/x.etl"
	expect_2 "output directory missing" "cannot create $work/no/x.etl" "$in" --rules "$profile" -o "$work/no/x.etl"
	mkdir "$work/adir"
	expect_2 "output is a directory" "cannot write $work/adir" "$in" --rules "$profile" -o "$work/adir"
	[ ! -e "$work/x.etl" ] || fail "a failed filter left $work/x.etl behind"
	leftovers=$(find "$work" -name '*.tmp-*')
	[ -z "$leftovers" ] || fail "temporary files left behind: $leftovers"
	;;
*)
	fail "unknown mode $mode"
	;;
esac
echo "ok: filter $mode"
