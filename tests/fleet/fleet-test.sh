#!/usr/bin/env bash
# fleet-test.sh: the fleet signature and `analyze fleet` without root (issue 23): the signature blocks of three
# fixture reports against their goldens (a Linux crash, a Linux exit status, a Windows crash made by mk_report_etl),
# the same trace under other names, folders and "machines" in one bucket; a replayed run's snapshots (no report:
# their JSON-lines files replaced by the fixture) reported by analyze fleet itself, one of them weighted by its
# snapshot.json; every report.json valid against schemas/report.schema.json; DuckDB, through docs/fleet.md's own
# recipes over --ndjson, giving the buckets, counts and weights analyze fleet gives; what cannot be read said and
# left out (exit 1), a missing path exit 2; docs/fleet.md's ClickHouse table against the NDJSON's columns and values.
# usage: fleet-test.sh ANALYZE ENGINE MK_REPORT_ETL SOURCE_DIR   (HS_UPDATE_GOLDEN=1 rewrites the goldens)
set -uo pipefail
analyze=$(realpath -m "$1") engine=$(realpath -m "$2") mketl=$(realpath -m "$3") src=$(realpath -m "$4")
here=$src/tests/fleet
tmp=$(mktemp -d)
trap '[[ -n ${HS_KEEP:-} ]] || rm -rf "$tmp"' EXIT
chmod 0777 "$tmp"
fail() { echo "fleet test: FAIL: $*" >&2; exit 1; }
. "$src/tests/partial.sh"
command -v jq >/dev/null || fail "jq is needed (./run.sh installs it)"
have_ajv=1 have_duck=1
command -v node >/dev/null && [[ -d $src/tests/schema/node_modules/ajv ]] ||
	{ have_ajv=0; partial_skip "report.json against its schema" "no node or tests/schema/node_modules (npm ci there)"; }
command -v node >/dev/null && [[ -d $here/node_modules/@duckdb/node-api ]] ||
	{ have_duck=0; partial_skip "DuckDB over the NDJSON" "no node or tests/fleet/node_modules (npm ci there)"; }
valid() { # FILE...: every report.json valid
	((have_ajv)) || return 0
	node "$src/tests/schema/check.mjs" "$src/schemas/report.schema.json" "$@" >"$tmp/v.txt" ||
		fail "check.mjs could not run"
	grep -v $'\tvalid$' "$tmp/v.txt" && fail "not valid against report.schema.json"
	return 0
}
sig() { jq -S '.signature' "$1"; } # the block of a report.json, keys sorted
golden() { # NAME REPORT.json: its block against tests/fleet/NAME.signature.json
	local g=$here/$1.signature.json
	sig "$2" >"$tmp/$1.sig.json"
	if [[ ${HS_UPDATE_GOLDEN:-} == 1 ]]; then
		cp "$tmp/$1.sig.json" "$g"
		echo "updated $g"
	fi
	diff -u "$g" "$tmp/$1.sig.json" || fail "the signature block of $1 differs from its golden (HS_UPDATE_GOLDEN=1 to accept)"
}
rules=(--rules "$src/rules/stutter.yaml")

# 1. Goldens: what the block says for three fixtures, made far from the source tree.
mkdir -p "$tmp/g/crash" "$tmp/g/exit" "$tmp/g/etl"
cp "$src/tests/analyze/thread-fixture.dat" "$tmp/g/crash/"
cp "$src/tests/replay/fixture.dat" "$tmp/g/exit/"
"$analyze" report "$tmp/g/crash/thread-fixture.dat" "${rules[@]}" >/dev/null 2>&1 || fail "analyze report thread-fixture.dat exited $?"
"$analyze" report "$tmp/g/exit/fixture.dat" "${rules[@]}" >/dev/null 2>&1 || fail "analyze report fixture.dat exited $?"
cat=$src/rules/providers/windows.yaml
guid_of() { awk -v n="$1" '$0 ~ "- name: "n"$" {f=1; next} f && /guid:/ {print $2; exit}' "$cat"; }
"$mketl" "$tmp/g/etl/snap.etl" crash "$(guid_of Microsoft-Windows-Kernel-Process)" "$(guid_of Microsoft-Windows-DxgKrnl)" \
	"$(guid_of Microsoft-Windows-Kernel-PnP)" "$(guid_of Hindsight-Marker)" "$(guid_of Microsoft-Windows-TCPIP)" >/dev/null ||
	fail "mk_report_etl crash exited $?"
"$analyze" report "$tmp/g/etl/snap.etl" "${rules[@]}" >/dev/null 2>&1 || fail "analyze report on the .etl crash exited $?"
golden thread-fixture "$tmp/g/crash/report.json"
golden fixture "$tmp/g/exit/report.json"
golden etl-crash "$tmp/g/etl/report.json"
valid "$tmp"/g/*/report.json
[[ $(jq -r .signature.signature "$tmp/g/crash/report.json") == "crash | bash | SIGSEGV" ]] ||
	fail "thread-fixture.dat: $(jq -r .signature.signature "$tmp/g/crash/report.json")"
tail -1 "$tmp/g/crash/report.txt" | grep -qF "signature: crash | bash | SIGSEGV  (bucket $(jq -r .signature.bucket_id "$tmp/g/crash/report.json"), sig_version 1)" ||
	fail "report.txt does not close with the signature line: $(tail -1 "$tmp/g/crash/report.txt")"

# 2. The same incident elsewhere: other file names, folders and depths sign alike (no path in a field).
b0=$(jq -r .signature.bucket_id "$tmp/g/crash/report.json")
i=0
for d in store/lab-01/20261201_101010 store/lab-02/x/y store/lab-03/deep/deeper/still; do
	mkdir -p "$tmp/$d"
	cp "$src/tests/analyze/thread-fixture.dat" "$tmp/$d/ring-$i.dat"
	(cd "$tmp/$d" && "$analyze" report "ring-$i.dat" "${rules[@]}" >/dev/null 2>&1) || fail "analyze report in $d exited $?"
	[[ $(jq -r .signature.bucket_id "$tmp/$d/report.json") == "$b0" ]] || fail "$d/ring-$i.dat signs $(sig "$tmp/$d/report.json")"
	i=$((i + 1))
done
cp "$src/tests/replay/fixture.dat" "$tmp/store/lab-02/x/exit.dat"
mkdir -p "$tmp/store/lab-02/x/exit" && mv "$tmp/store/lab-02/x/exit.dat" "$tmp/store/lab-02/x/exit/"
"$analyze" report "$tmp/store/lab-02/x/exit/exit.dat" "${rules[@]}" >/dev/null 2>&1 || fail "analyze report exit.dat exited $?"

# 3. A replayed run: its snapshots have no report (JSON lines); analyze fleet makes them. One is weighted 4, as a
#    trigger with chance 0.25 writes it.
(cd "$tmp" && timeout -k 5 120 "$engine" --rules "$src/tests/replay/triggers-replay.yaml" \
	--replay "$src/tests/replay/fixture.dat" --replay-speed 0 --quiet >replay.txt 2>&1) ||
	fail "engine --replay exited $?: $(tail -5 "$tmp/replay.txt")"
run=$(ls -d "$tmp"/logs/runs/*/ | head -n1)
run=${run%/}
snaps=("$run"/snapshots/[0-9]*)
((${#snaps[@]} >= 3)) || fail "the replay made ${#snaps[@]} snapshots (3 or more wanted)"
for s in "${snaps[@]}"; do
	[[ -e $s/report.json ]] && fail "$s has a report before analyze fleet"
	cp "$src/tests/replay/fixture.dat" "$s/snap.dat"
	cp "$src/tests/replay/fixture.dat" "$s/keyevents.dat"
done
weighted=${snaps[0]}
sed -i -E 's/"weight": *[0-9.]+/"weight": 4.0/' "$weighted/snapshot.json"
grep -q '"weight": 4.0' "$weighted/snapshot.json" || fail "could not weight $weighted"
"$analyze" fleet "$run" --json >"$tmp/run.json" 2>"$tmp/run.err" || fail "analyze fleet on the run exited $?: $(cat "$tmp/run.err")"
[[ $(jq .reported_here "$tmp/run.json") == "${#snaps[@]}" ]] ||
	fail "analyze fleet reported $(jq .reported_here "$tmp/run.json") of ${#snaps[@]} snapshots"
[[ $(jq .run_reports_left_out "$tmp/run.json") == 0 ]] || fail "a run report was counted as left out (the replay made none)"
for s in "${snaps[@]}"; do
	[[ -s $s/report.json ]] || fail "analyze fleet did not write $s/report.json"
	jq -e '.generator == "hindsight analyze fleet"' "$s/report.json" >/dev/null || fail "$s/report.json: generator"
	# the report analyze report makes of the same folder signs the same
	"$analyze" report "$s" -o "$tmp/again" "${rules[@]}" >/dev/null 2>&1
	[[ $(jq -r .signature.bucket_id "$tmp/again/report.json") == $(jq -r .signature.bucket_id "$s/report.json") ]] ||
		fail "$s: analyze report and analyze fleet sign it differently"
done
valid "${snaps[@]/%//report.json}"
[[ $(jq .signature.weight "$weighted/report.json") == 4 ]] || fail "the weighted snapshot's report has weight $(jq .signature.weight "$weighted/report.json")"
exit3=$(ls -d "$run"/snapshots/[0-9]*-exit3 | head -1)
[[ $(jq -r .signature.signature "$exit3/report.json") == "exit_status | sh" ]] ||
	fail "the exit3 snapshot signs $(jq -r .signature.signature "$exit3/report.json")"
[[ -n $(jq -r '.signature.seen_at // empty' "$exit3/report.json") ]] || fail "a snapshot's block has no seen_at"
# a second look reads the reports it wrote, makes none
"$analyze" fleet "$run" --json >"$tmp/run2.json" 2>/dev/null || fail "analyze fleet's second look exited $?"
[[ $(jq .reported_here "$tmp/run2.json") == 0 ]] || fail "the second look made reports again"

# 3b. Shipped as docs/fleet.md says: only report.json and snapshot.json of each snapshot, under <store>/<host>/<run>/
#     snapshots/. The store alone gives the same buckets and counts, with no report made again: the folder layout and
#     report.json are the contract. A snapshot caught while being written (.<NNN>-<trigger>.partial, its snapshot.json
#     and no report yet) is not read.
ship=$tmp/shipped/lab-09/$(basename "$run")
for s in "${snaps[@]}"; do
	mkdir -p "$ship/snapshots/$(basename "$s")"
	cp "$s/report.json" "$s/snapshot.json" "$ship/snapshots/$(basename "$s")/" || fail "could not ship $s"
done
mkdir -p "$ship/snapshots/.009-crash.partial"
cp "${snaps[0]}/snapshot.json" "$ship/snapshots/.009-crash.partial/"
"$analyze" fleet "$tmp/shipped" --json >"$tmp/shipped.json" 2>"$tmp/shipped.err" ||
	fail "analyze fleet on the shipped store exited $?: $(cat "$tmp/shipped.err")"
[[ $(jq .reported_here "$tmp/shipped.json") == 0 ]] || fail "analyze fleet made reports again from shipped report.json files"
diff <(jq -c '[.reports, [.buckets[] | {bucket_id, count, weight}]]' "$tmp/run2.json") \
	<(jq -c '[.reports, [.buckets[] | {bucket_id, count, weight}]]' "$tmp/shipped.json") ||
	fail "the shipped store (report.json and snapshot.json only) groups otherwise than the run"

# 4. The whole store: the buckets, counts and weights, and DuckDB's over the NDJSON.
"$analyze" fleet "$tmp/store" "$run" "$tmp/g/crash/report.json" --json --ndjson "$tmp/fleet.ndjson" >"$tmp/fleet.json" \
	2>"$tmp/fleet.err" || fail "analyze fleet on the store exited $?: $(cat "$tmp/fleet.err")"
rows=$(wc -l <"$tmp/fleet.ndjson")
want=$((4 + ${#snaps[@]} + 1))
[[ $rows == "$want" ]] || fail "$rows NDJSON rows for $want reports"
[[ $(jq .reports "$tmp/fleet.json") == "$want" ]] || fail "analyze fleet counted $(jq .reports "$tmp/fleet.json") reports, not $want"
jq -c . "$tmp/fleet.ndjson" >/dev/null || fail "the NDJSON is not one JSON value per line"
crash=$(jq --arg b "$b0" '.buckets[] | select(.bucket_id == $b) | .count' "$tmp/fleet.json")
[[ $crash == 4 ]] || fail "the crash bucket counts ${crash:-nothing}, not 4 (the golden's copy and three stores)"
jq -r '.buckets[] | "\(.bucket_id)\t\(.count)\t\(.weight)"' "$tmp/fleet.json" | sort >"$tmp/ours.tsv"
echo "fleet test: analyze fleet's buckets (id, count, weight):"
cat "$tmp/ours.tsv"
total_w=$(jq '[.buckets[].weight] | add' "$tmp/fleet.json")
[[ $(echo "$total_w == $want + 3" | bc) == 1 ]] || fail "the weights sum to $total_w, not $want + 3 (one report weighs 4)"
if ((have_duck)); then
	(cd "$here" && node duck.mjs "$src/docs/fleet.md" "$tmp/fleet.ndjson") >"$tmp/duck.jsonl" 2>"$tmp/duck.err" ||
		fail "docs/fleet.md's DuckDB recipes: $(cat "$tmp/duck.err")"
	jq -r '"\(.bucket_id)\t\(.reports)\t\(.incidents)"' "$tmp/duck.jsonl" | sort >"$tmp/duck.tsv"
	# analyze fleet prints weights with three decimals, DuckDB as it sums them: compared as numbers
	paste "$tmp/ours.tsv" "$tmp/duck.tsv" | awk -F'\t' '$1 != $4 || $2 != $5 || $3 + 0 != $6 + 0 { bad = 1; print "differs: " $0 }
		END { exit bad }' || fail "DuckDB's top-buckets and analyze fleet disagree"
	[[ $(wc -l <"$tmp/duck.tsv") == $(wc -l <"$tmp/ours.tsv") ]] || fail "DuckDB found another number of buckets"
	echo "fleet test: DuckDB (docs/fleet.md's top-buckets) gives the same $(wc -l <"$tmp/duck.tsv") buckets; $(tr '\n' ' ' <"$tmp/duck.err")"
fi

# docs/fleet.md's ClickHouse table (no ClickHouse here): the rows have its columns, each value fits its type
if command -v node >/dev/null; then # without node the checks above already said what was left out
	node "$here/columns.mjs" "$src/docs/fleet.md" "$tmp/fleet.ndjson" >"$tmp/columns.txt" 2>&1 ||
		fail "docs/fleet.md's ClickHouse table does not fit the NDJSON rows: $(cat "$tmp/columns.txt")"
	echo "fleet test: docs/fleet.md's ClickHouse table fits the NDJSON: $(cat "$tmp/columns.txt")"
fi

# 5. What cannot be read is said and left out; a missing path is a usage error.
mkdir -p "$tmp/store/lab-04/cut" "$tmp/store/lab-04/foreign"
head -c 400 "$tmp/g/crash/report.json" >"$tmp/store/lab-04/cut/report.json"
echo '{"hello": "world"}' >"$tmp/store/lab-04/foreign/report.json"
"$analyze" fleet "$tmp/store" >"$tmp/bad.txt" 2>"$tmp/bad.err"
rc=$?
[[ $rc == 1 ]] || fail "a store with a cut and a foreign report.json: exit $rc, not 1"
grep -q "lab-04/cut/report.json: left out: the JSON ends early" "$tmp/bad.err" || fail "the cut report is not named: $(cat "$tmp/bad.err")"
grep -q "lab-04/foreign/report.json: left out: no report_version" "$tmp/bad.err" || fail "the foreign report.json is not named"
grep -q "^analyze fleet: 4 reports, 2 buckets" "$tmp/bad.txt" || fail "the readable reports were not counted: $(head -1 "$tmp/bad.txt")"
"$analyze" fleet "$tmp/no-such-folder" >/dev/null 2>&1
[[ $? == 2 ]] || fail "a missing path does not exit 2"
"$analyze" fleet "$tmp/g/crash/thread-fixture.dat" >/dev/null 2>&1
[[ $? == 2 ]] || fail "a trace given as a report does not exit 2"
partial_end
echo "fleet test: OK"
