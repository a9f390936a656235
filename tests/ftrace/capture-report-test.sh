#!/usr/bin/env bash
# capture-report-test.sh: the verdict at capture time (issue 20 item 3), as root on the real kernel: under
# `engine --rules stutter.yaml` a segfaulting program's crash snapshot gets report.txt, report.json and report.html
# from the engine itself within 5 s of the snapshot, their first lines naming the process and the signal; main.log,
# the live view (plain lines: pinned "verdict:"), `engine ctl status` (text and --json) and the --events-jsonl tap's
# `snapshot` record say that verdict; `analyze report` on the same snapshot gives the same report.txt; Ctrl+C gives
# the final rings a report too and the engine's last lines say where and what; run.json, snapshot.json, report.json
# and the status validate against their schemas. Then `run: capture_report: false` (a copy of tests/ftrace/report.yaml)
# leaves a crash snapshot without report files, its snapshot.json saying "off".
# usage: capture-report-test.sh ENGINE ANALYZE SEGV SOURCE_DIR
#   (root; stutter.yaml's instances hindsight_stutter_*, then hindsight_test_rpt_*; exit 77 when a recorder holds them)
set -uo pipefail
ulimit -c 0
engine=$(realpath -m "$1") analyze=$(realpath -m "$2") segv=$(realpath -m "$3") src=$(realpath -m "$4")
profile=$src/rules/stutter.yaml
instances=(hindsight_stutter_keys hindsight_stutter_ring hindsight_test_rpt_ring hindsight_test_rpt_keys
	hindsight_test_rpt_keys_trg)
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../partial.sh"
test_setup
cleanup() {
	kill_engine
	remove_instances "${instances[@]}"
	[[ -n ${HS_CAPTURE_KEEP:-} ]] && cp -r "$tmp" "$HS_CAPTURE_KEEP"
	rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "capture report test: FAIL: $*" >&2; [[ -f $tmp/out.txt ]] && grep '^engine' "$tmp/out.txt" | tail -20; exit 1; }
[[ $(id -u) == 0 ]] || { echo "capture report test: SKIP: not root"; exit 77; }
for i in "${instances[@]}"; do held "$i" && { echo "capture report test: SKIP: $i is held by a running recorder"; exit 77; }; done
check=$src/tests/schema/check.mjs
have_node=0
command -v node >/dev/null && [[ -d $src/tests/schema/node_modules/ajv ]] && have_node=1
((have_node)) || partial_skip "status, run.json, snapshot.json and report.json against their schemas" \
	"no node or tests/schema/node_modules (npm ci there)"
valid() { # SCHEMA FILE...
	((have_node)) || return 0
	local s=$1
	shift
	node "$check" "$src/schemas/$s" "$@" | grep -v $'\tvalid$' && fail "not valid against $s"
	return 0
}
now() { date +%s.%N; }
cd "$tmp" || exit 1

# 1. stutter.yaml, with the live view as plain lines (stdout is no terminal) and the JSONL tap.
start_engine out.txt "$engine" --rules "$profile" --live --events-jsonl "$tmp/tap.jsonl"
# the profile's triggers arm after warmup_s (10 s)
warm=$(awk '/warmup_s:/ { print $2; exit }' "$profile")
sleep $((${warm:-10} + 1))

# 2. A real NULL dereference. Other programs may crash meanwhile: ours is found by its pid.
t_crash=$(now)
"$segv" 2>/dev/null &
pid=$!
wait $pid
snap= t_snap= t_report=
for _ in $(seq 900); do
	for d in "$dir"/snapshots/[0-9]*-crash; do
		[[ -f $d/snapshot.json ]] && grep -qE "\"pid\": *$pid([^0-9]|$)" "$d/snapshot.json" || continue
		[[ -n $snap ]] || { snap=$d; t_snap=$(now); }
	done
	[[ -n $snap && -s $snap/report.html ]] && { t_report=$(now); break; }
	sleep 0.1
done
[[ -n $snap ]] || fail "no crash snapshot of pid $pid"
[[ -n $t_report ]] || fail "no report in $snap (its snapshot.json: $(grep -A3 '"report"' "$snap/snapshot.json"))"
after_snap=$(echo "$t_report - $t_snap" | bc) after_crash=$(echo "$t_report - $t_crash" | bc)
echo "capture report test: report written ${after_snap} s after the snapshot folder appeared, ${after_crash} s after the crash (post_delay 2 s)"
(($(echo "$after_snap <= 5" | bc))) || fail "the report came ${after_snap} s after the snapshot (5 s allowed)"
for f in report.txt report.json report.html; do [[ -s $snap/$f ]] || fail "no $f in $snap"; done
head -3 "$snap/report.txt"
head -3 "$snap/report.txt" | grep -q "hs_segv (pid $pid) crashed with SIGSEGV" || fail "report.txt's first lines do not name hs_segv and SIGSEGV"
verdict="hs_segv (pid $pid) crashed with SIGSEGV"
grep -q '"state": "written"' "$snap/snapshot.json" || fail "snapshot.json does not say the report was written"

# 3. Where the verdict shows: main.log, the live view, engine ctl status (text, --json), the tap.
grep -qF "engine: snapshot ${snap##*/}: $verdict" "$dir/main.log" || fail "main.log does not say the verdict"
sleep 1.5 # the live view draws its status once a second
grep -qF "live: verdict: snapshot ${snap##*/}: $verdict" out.txt || fail "the live view shows no pinned verdict"
"$engine" ctl --rules "$profile" status >status.txt 2>&1 || fail "engine ctl status exited $?: $(cat status.txt)"
grep -qF "verdict: $verdict" status.txt || fail "engine ctl status does not say the verdict: $(grep -A12 last_snapshot status.txt)"
grep -qF "path: $snap" status.txt || fail "engine ctl status does not say where the report is"
"$engine" ctl --rules "$profile" status --json >status.json 2>&1 || fail "engine ctl status --json exited $?"
grep -qF "\"verdict\": \"$verdict" status.json || fail "status --json has no last_snapshot verdict"
valid status.schema.json status.json
grep -E '"type": ?"snapshot"' tap.jsonl | grep -qE "\"pid\": ?$pid," || fail "the tap has no snapshot record of pid $pid"

# 4. analyze report on the same snapshot: the same report.txt.
"$analyze" report "$snap" -o "$tmp/again" >/dev/null 2>analyze.err || fail "analyze report exited $?: $(cat analyze.err)"
diff "$snap/report.txt" "$tmp/again/report.txt" || fail "analyze report's report.txt differs from the engine's"

# 5. Ctrl+C: the final rings get their report, and the last lines say where and what.
kill -INT "$epid"
wait "$epid"
rc=$?
epid=
[[ $rc == 0 ]] || fail "engine exited $rc after SIGINT"
tail -5 out.txt
tail -5 out.txt | grep -q "^engine: the final rings: " || fail "the last lines do not say what the final rings show"
tail -5 out.txt | grep -qF "engine: report of the run: $dir/report.txt" || fail "the last lines do not say where the run's report is"
for f in report.txt report.json report.html; do [[ -s $dir/$f ]] || fail "no $f in the run folder"; done
grep -q '"state": "written"' "$dir/run.json" || fail "run.json does not say the reports were written"
valid run.schema.json "$dir/run.json"
valid snapshot.schema.json "$dir"/snapshots/[0-9]*/snapshot.json
valid report.schema.json "$dir/report.json" "$dir"/snapshots/[0-9]*/report.json

# 6. The rules switch: capture_report: false leaves the files only.
sed -e "s|include: \[../../rules/providers/linux.yaml\]|include: [$src/rules/providers/linux.yaml]|" \
	-e 's|^  snapshots_max_mb: 256$|  snapshots_max_mb: 256\n  capture_report: false|' "$src/tests/ftrace/report.yaml" >off.yaml
grep -q 'capture_report: false' off.yaml || fail "could not make the profile with capture_report: false"
mkdir off && cd off || exit 1
start_engine out.txt "$engine" --rules "$tmp/off.yaml" --quiet
"$segv" 2>/dev/null &
pid=$!
wait $pid
wait_snapshots 1 "$limit" crash || fail "capture_report false: no crash snapshot"
sleep 2
kill -INT "$epid"
wait "$epid"
epid=
off=$(ls -d "$dir"/snapshots/[0-9]*-crash | head -1)
ls "$off"/report.* 2>/dev/null && fail "capture_report false: the snapshot has report files"
grep -q '"state": "off"' "$off/snapshot.json" || fail "capture_report false: snapshot.json does not say off"
[[ -e $dir/report.txt ]] && fail "capture_report false: the run folder has a report"
grep -q '^engine: the final rings' out.txt && fail "capture_report false: the engine still reported the final rings"
valid snapshot.schema.json "$off/snapshot.json"
valid run.schema.json "$dir/run.json"
partial_end
echo "capture report test: OK"
