#!/usr/bin/env bash
# fleet-root-test.sh: issue 23's "done when", as root on the real kernel: three runs of the engine (tests/fleet/
# fleet.yaml: the shipped crash trigger's signals, the shipped fleet rules), in each a real crash: hs_segv's NULL
# access twice (the second copy of it under another path, and every run with its own pid) and hs_abort's abort().
# Each crash snapshot gets its report at capture time, with its signature block; `analyze fleet` over the three
# snapshots shows two buckets, counts 2 and 1, on one machine; docs/fleet.md's DuckDB recipe over `--ndjson` agrees.
# The blocks carry the recording machine's facts (kernel release, machine id, host), validate against
# schemas/report.schema.json, and the two segfaults' blocks agree on every grouped field and machine fact (a crash's
# cause and culprit, what the thread did just before it, are facets that differ from run to run under load).
# usage: fleet-root-test.sh ENGINE ANALYZE SEGV ABORT SOURCE_DIR
#   (root; instances hindsight_test_fleet_*; exit 77 when a recorder holds them)
set -uo pipefail
ulimit -c 0
engine=$(realpath -m "$1") analyze=$(realpath -m "$2") segv=$(realpath -m "$3") abrt=$(realpath -m "$4") src=$(realpath -m "$5")
profile=$src/tests/fleet/fleet.yaml
instances=(hindsight_test_fleet_ring hindsight_test_fleet_keys)
. "$src/tests/ftrace/lib.sh"
. "$src/tests/partial.sh"
fail() { echo "fleet root test: FAIL: $*" >&2; [[ -f ${tmp:-/nonexistent}/out.txt ]] && tail -20 "$tmp/out.txt"; exit 1; }
[[ $(id -u) == 0 ]] || { echo "fleet root test: SKIP: not root"; exit 77; }
for i in "${instances[@]}"; do held "$i" && { echo "fleet root test: SKIP: $i is held by a running recorder"; exit 77; }; done
test_setup
cleanup() {
	kill_engine
	remove_instances "${instances[@]}"
	[[ -n ${HS_FLEET_KEEP:-} ]] && cp -r "$tmp" "$HS_FLEET_KEEP"
	rm -rf "$tmp"
}
trap cleanup EXIT
command -v jq >/dev/null || fail "jq is needed (./run.sh installs it)"
have_ajv=1 have_duck=1
command -v node >/dev/null && [[ -d $src/tests/schema/node_modules/ajv ]] ||
	{ have_ajv=0; partial_skip "report.json against its schema" "no node or tests/schema/node_modules (npm ci there)"; }
command -v node >/dev/null && [[ -d $src/tests/fleet/node_modules/@duckdb/node-api ]] ||
	{ have_duck=0; partial_skip "DuckDB over the NDJSON" "no node or tests/fleet/node_modules (npm ci there)"; }

# One run: the engine, one crash of PROGRAM, its snapshot (found by the crash's pid) with its capture-time
# report.json, then Ctrl+C. Sets snap to the snapshot folder.
one_run() { # NAME PROGRAM
	local name=$1 prog=$2 pid d
	snap=
	mkdir -p "$tmp/$name"
	cd "$tmp/$name" || fail "cd $tmp/$name"
	start_engine "$tmp/$name/out.txt" "$engine" --rules "$profile" --quiet
	dir=$(realpath "$dir") # the engine names it relative to $tmp/$name; the checks below run from $tmp
	"$prog" 2>/dev/null &
	pid=$!
	wait $pid
	for _ in $(seq 300); do
		for d in "$dir"/snapshots/[0-9]*-crash; do
			[[ -f $d/snapshot.json ]] && grep -qE "\"pid\": *$pid([^0-9]|$)" "$d/snapshot.json" && snap=$d
		done
		[[ -n $snap && -s $snap/report.json ]] && grep -q '"state": "written"' "$snap/snapshot.json" && break
		kill -0 "$epid" 2>/dev/null || fail "$name: the engine exited"
		sleep 0.1
	done
	[[ -n $snap ]] || fail "$name: no crash snapshot of pid $pid ($prog)"
	[[ -s $snap/report.json ]] || fail "$name: no capture-time report in $snap: $(grep -A3 '"report"' "$snap/snapshot.json")"
	kill -INT "$epid"
	wait "$epid"
	local rc=$?
	epid=
	[[ $rc == 0 ]] || fail "$name: the engine exited $rc after SIGINT"
	cd "$tmp" || exit 1
}

# The same program from another path in the second run: no path may reach the signature.
mkdir -p "$tmp/elsewhere/bin"
cp "$segv" "$tmp/elsewhere/bin/hs_segv"
one_run run1 "$segv"
s1=$snap
one_run run2 "$tmp/elsewhere/bin/hs_segv"
s2=$snap
one_run run3 "$abrt"
s3=$snap
for s in "$s1" "$s2" "$s3"; do
	jq -e '.generator == "hindsight engine (capture-time report)"' "$s/report.json" >/dev/null ||
		fail "$s/report.json is not the capture-time report"
	echo "fleet root test: ${s#"$tmp"/}: $(jq -r .signature.signature "$s/report.json") (bucket $(jq -r .signature.bucket_id "$s/report.json"))"
done
((have_ajv)) && {
	node "$src/tests/schema/check.mjs" "$src/schemas/report.schema.json" "$s1/report.json" "$s2/report.json" "$s3/report.json" |
		grep -v $'\tvalid$' && fail "a capture-time report.json is not valid against report.schema.json"
}

# The blocks: the two segfaults alike, their pids not; the recording machine's facts in each. Compared: what a crash
# groups by and the facts of the machine (measured beside two compilers: the first segfault's cause was app-cpu
# blaming bash, the second's cpu-contention blaming ccN; the crash bucket does not group on them, by fleet.yaml).
p1=$(jq -r '.findings[0].pid' "$s1/report.json") p2=$(jq -r '.findings[0].pid' "$s2/report.json")
[[ $p1 != "$p2" ]] || fail "the two segfaults have one pid ($p1): the pid check proves nothing"
same='.signature | {sig_version, symptom, app, app_version, detail, signature, bucket_id, os, os_build, machine, host, weight}'
diff <(jq -S "$same" "$s1/report.json") <(jq -S "$same" "$s2/report.json") ||
	fail "the two segfaults' signature blocks differ (pids $p1 and $p2, two paths)"
[[ $(jq -r .signature.signature "$s1/report.json") == "crash | hs_segv | SIGSEGV" ]] || fail "hs_segv signs $(jq -r .signature.signature "$s1/report.json")"
[[ $(jq -r .signature.signature "$s3/report.json") == "crash | hs_abort | SIGABRT" ]] || fail "hs_abort signs $(jq -r .signature.signature "$s3/report.json")"
for s in "$s1" "$s3"; do
	jq -e --arg r "$(uname -r)" --arg h "$(uname -n)" '.signature | .os == "linux" and .os_build == $r and .host == $h
		and (.machine | test("^[0-9a-f]{16}$")) and .seen_at != null and .weight == 1' "$s/report.json" >/dev/null ||
		fail "$s: the block lacks the recording machine's facts: $(jq -c .signature "$s/report.json")"
done
[[ $(jq -r .signature.machine "$s1/report.json") == $(jq -r .signature.machine "$s3/report.json") ]] || fail "one machine, two ids"
grep -q "$(tr -d '\n' </etc/machine-id)" "$s1/report.json" && fail "report.json holds the raw machine-id"
tail -1 "$s1/report.txt" | grep -q '^signature: crash | hs_segv | SIGSEGV  (bucket ' || fail "report.txt does not close with the signature line"

# analyze fleet over the three snapshots: two buckets, 2 and 1, one machine; the capture-time reports are used as
# they are (none made again).
"$analyze" fleet "$s1" "$s2" "$s3" --json --ndjson "$tmp/fleet.ndjson" >"$tmp/fleet.json" 2>"$tmp/fleet.err" ||
	fail "analyze fleet exited $?: $(cat "$tmp/fleet.err")"
"$analyze" fleet "$s1" "$s2" "$s3"
jq -e '.reports == 3 and .machines == 1 and .reported_here == 0 and (.buckets | length) == 2
	and .buckets[0].count == 2 and .buckets[1].count == 1
	and .buckets[0].signature == "crash | hs_segv | SIGSEGV" and .buckets[1].signature == "crash | hs_abort | SIGABRT"
	and .buckets[0].machines == 1' "$tmp/fleet.json" >/dev/null || fail "analyze fleet: $(cat "$tmp/fleet.json")"
# the run folders as a whole: their own reports (the final rings) are left out, and our buckets hold at least ours
"$analyze" fleet "$tmp"/run1 "$tmp"/run2 "$tmp"/run3 --json >"$tmp/runs.json" 2>/dev/null
[[ $(jq .run_reports_left_out "$tmp/runs.json") == 3 ]] || fail "the three runs' own reports were not left out: $(jq .run_reports_left_out "$tmp/runs.json")"
if ((have_duck)); then
	(cd "$src/tests/fleet" && node duck.mjs "$src/docs/fleet.md" "$tmp/fleet.ndjson") >"$tmp/duck.jsonl" 2>"$tmp/duck.err" ||
		fail "docs/fleet.md's DuckDB recipes: $(cat "$tmp/duck.err")"
	diff <(jq -r '.buckets[] | "\(.bucket_id) \(.count) \(.machines)"' "$tmp/fleet.json" | sort) \
		<(jq -r '"\(.bucket_id) \(.reports) \(.machines)"' "$tmp/duck.jsonl" | sort) ||
		fail "DuckDB over --ndjson disagrees with analyze fleet"
	echo "fleet root test: DuckDB agrees: $(jq -c . "$tmp/duck.jsonl" | tr '\n' ' ')"
fi
# the real crashes' rows (with machine, host, os_build) against docs/fleet.md's ClickHouse table
if command -v node >/dev/null; then
	node "$src/tests/fleet/columns.mjs" "$src/docs/fleet.md" "$tmp/fleet.ndjson" >"$tmp/columns.txt" 2>&1 ||
		fail "docs/fleet.md's ClickHouse table does not fit the NDJSON rows: $(cat "$tmp/columns.txt")"
fi
partial_end
echo "fleet root test: OK"
