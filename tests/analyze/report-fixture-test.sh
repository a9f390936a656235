#!/usr/bin/env bash
# report-fixture-test.sh: `analyze report` without root on the committed trace (tests/replay/fixture.dat):
# the golden report.txt, report.json valid against schemas/report.schema.json, a self-contained report.html,
# the thread before the moment on tests/analyze/thread-fixture.dat (a golden of its section) and on a ring that
# wrapped (wrap-fixture.dat: the coverage said, no loss miscounted),
# a truncated copy (exit 1, says what is missing, still reports the readable file beside it), bad paths (exit 2), a
# damaged .etl (exit 1), a report without rules (no stories, said so), and a file that is not a report is never overwritten.
# usage: report-fixture-test.sh ANALYZE SOURCE_DIR   (HS_UPDATE_GOLDEN=1 rewrites the golden)
set -uo pipefail
analyze=$(realpath "$1") src=$(realpath "$2")
fixture=$src/tests/replay/fixture.dat
golden=$src/tests/analyze/fixture.report.txt
schema=$src/schemas/report.schema.json
check=$src/tests/schema/check.mjs
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "report fixture test: FAIL: $*" >&2; exit 1; }
. "$src/tests/partial.sh"
command -v node >/dev/null || fail "node is needed (the CSP's script hash, the JSON checks; ./run.sh --test installs it)"
have_ajv=1
[[ -d $src/tests/schema/node_modules/ajv ]] ||
	{ have_ajv=0; partial_skip "report.json against its schema (3 files)" "no tests/schema/node_modules (npm ci there)"; }

# 1. The golden: run from the fixture's folder so the paths in the text are relative.
mkdir "$tmp/out"
(cd "$src/tests/replay" && "$analyze" report fixture.dat -o "$tmp/out" --rules ../../rules/stutter.yaml) >"$tmp/stdout.txt" 2>"$tmp/err.txt"
rc=$?
echo "exit: $rc" >>"$tmp/stdout.txt"
if [[ ${HS_UPDATE_GOLDEN:-} == 1 ]]; then
	cp "$tmp/stdout.txt" "$golden"
	echo "updated $golden"
fi
diff -u "$golden" "$tmp/stdout.txt" || fail "stdout differs from $golden (HS_UPDATE_GOLDEN=1 to accept)"
[[ $rc == 0 ]] || fail "exit $rc on the intact fixture"
head -n -1 "$tmp/stdout.txt" | cmp -s - "$tmp/out/report.txt" || fail "report.txt is not what was printed"
for f in report.txt report.json report.html; do [[ -s $tmp/out/$f ]] || fail "no $f"; done
ls -A "$tmp/out" | grep -q '^\.' && fail "a temporary file was left: $(ls -A "$tmp/out")"
sed -n 2p "$tmp/out/report.txt" | grep -q 'sh (pid 5112' || fail "the verdict does not name sh (pid 5112)"
sed -n 2p "$tmp/out/report.txt" | grep -q 'status 3' || fail "the verdict does not give the exit status 3"
grep -q '6 x /bin/true exec -> exit 0' "$tmp/out/report.txt" || fail "the six /bin/true runs are not collapsed"

# 2. report.json against the schema; a broken copy must not pass (the check checks).
if ((have_ajv)); then
	node "$check" "$schema" "$tmp/out/report.json" >"$tmp/v.txt" || fail "schema check could not run"
	grep -q $'\tvalid$' "$tmp/v.txt" || fail "report.json is not valid: $(cat "$tmp/v.txt")"
	sed 's/"report_version": 2/"report_version": 1/' "$tmp/out/report.json" >"$tmp/bad.json"
	node "$check" "$schema" "$tmp/bad.json" | grep -q $'\tinvalid' || fail "the schema accepts report_version 1 (its verdict was an array)"
fi

# 3. The HTML: one file, nothing fetched, the verdict in plain markup (no script needed).
html=$tmp/out/report.html
grep -qiE 'src=|href=|@import|url\(' "$html" && fail "report.html refers to something outside itself"
# One inline script (the timeline's zoom), allowed by its hash in the page's CSP and nothing else.
[[ $(grep -o '<script' "$html" | wc -l) == 1 ]] || fail "report.html has other scripts than the timeline's zoom"
want=$(sed -n 's/.*<script>\(.*\)<\/script>.*/\1/p' "$html" | tr -d '\n' |
	node -e "process.stdout.write(require('crypto').createHash('sha256').update(require('fs').readFileSync(0)).digest('base64'))")
grep -qF "script-src 'sha256-$want'" "$html" || fail "the CSP does not allow exactly the timeline's script (sha256-$want)"
grep -q '<div class="verdict" id="verdict"><p>No crash' "$html" || fail "report.html does not open with the verdict"
grep -q '<svg' "$html" || fail "report.html has no timeline"

# 4. A truncated copy: exit 1 and says what is missing.
head -c 100000 "$fixture" >"$tmp/trunc.dat"
"$analyze" report "$tmp/trunc.dat" --rules "$src/rules/stutter.yaml" >"$tmp/t.txt" 2>/dev/null
rc=$?
[[ $rc == 1 ]] || fail "a truncated trace exited $rc, not 1"
grep -q 'NOT READ' "$tmp/t.txt" && grep -q 'PROBLEM: ' "$tmp/t.txt" || fail "the truncated trace's report does not say what is missing"
sed -n 2p "$tmp/t.txt" | grep -q 'No verdict' || fail "a report with nothing read gives a verdict"
# ... beside a readable one: the readable one is reported, the other is named as missing, exit 1.
mkdir "$tmp/both"
cp "$fixture" "$tmp/both/a.dat"
cp "$tmp/trunc.dat" "$tmp/both/b.dat"
"$analyze" report "$tmp/both" --rules "$src/rules/stutter.yaml" >"$tmp/b.txt" 2>/dev/null
rc=$?
[[ $rc == 1 ]] || fail "a folder with one damaged trace exited $rc, not 1"
sed -n 2p "$tmp/b.txt" | grep -q 'status 3' || fail "the readable trace beside a damaged one is not reported"
grep -q 'Only part of the input was read' "$tmp/b.txt" || fail "the verdict does not warn that part was unread"

# ... a snapshot folder without root: a snapshot.json naming the fixture as its key-event file and a ring file
# that is missing; then one whose snapshot.json is broken.
mkdir "$tmp/snap"
cp "$fixture" "$tmp/snap/keys.dat"
cat >"$tmp/snap/snapshot.json" <<'JSON'
{"snapshot": 7, "trigger": {"name": "exit3", "kind": "event"},
 "hit": {"trigger": "exit3", "kind": "event", "ts_ns": 15408435200211, "pid": 5112, "system": "syscalls",
         "event": "sys_enter_exit_group", "where": {"error_code": 3}},
 "first_hit_ns": 15408435200211, "hits": 1, "detection_latency_ms": 12.5, "taken_at": "2026-12-03T03:00:00+0000",
 "sessions": [{"name": "snap", "mode": "buffering", "file": "ring.dat", "wrapped": true, "overwritten_since_previous": 1234},
              {"name": "keyevents", "mode": "file-circular", "file": "keys.dat", "chunks_dropped": 2, "events_lost": 5,
               "bytes_lost_disk": 0}]}
JSON
"$analyze" report "$tmp/snap" --rules "$src/rules/stutter.yaml" >"$tmp/s.txt" 2>/dev/null
rc=$?
[[ $rc == 1 ]] || fail "a snapshot with a missing ring file exited $rc, not 1"
sed -n 2p "$tmp/s.txt" | grep -q 'sh (pid 5112' || fail "the snapshot's verdict does not name sh (pid 5112)"
sed -n 3p "$tmp/s.txt" | grep -q 'Snapshot 007 was taken by trigger exit3 (kind event) on syscalls/sys_enter_exit_group (error_code=3), 1 hit, detected 12.5 ms' ||
	fail "the snapshot's second verdict line does not give the trigger: $(sed -n 3p "$tmp/s.txt")"
grep -q 'ring.dat is missing' "$tmp/s.txt" || fail "the missing ring file is not named"
grep -q 'key file: chunks dropped 2, events lost 5' "$tmp/s.txt" || fail "snapshot.json's key-file losses are not in the coverage box"
if ((have_ajv)); then
	node "$check" "$schema" "$tmp/snap/report.json" | grep -q $'\tvalid$' || fail "the snapshot's report.json is not valid"
fi
echo '{"snapshot": 7, "trigger": ' >"$tmp/snap/snapshot.json"
rm -f "$tmp/snap"/report.*
"$analyze" report "$tmp/snap" --rules "$src/rules/stutter.yaml" >"$tmp/s2.txt" 2>/dev/null
rc=$?
[[ $rc == 1 ]] || fail "a snapshot with a broken snapshot.json exited $rc, not 1"
grep -q 'snapshot.json could not be read' "$tmp/s2.txt" || fail "a broken snapshot.json is not reported"
sed -n 2p "$tmp/s2.txt" | grep -q 'sh (pid 5112' || fail "a broken snapshot.json lost the trace's verdict"

# 4b. The thread before the moment, on a recorded thread the test knows (tests/analyze/thread-fixture.dat, made by
# make-thread-fixture.sh): bash spun 0.2 s, slept 0.6 s waiting for an external sleep, spun 0.4 s (preempted by a
# stress load another test ran) and raised SIGSEGV. Its section is a golden; the JSON twin's states sum to the
# covered time; the HTML draws the bar.
mkdir "$tmp/thr"
(cd "$src/tests/analyze" && "$analyze" report thread-fixture.dat -o "$tmp/thr" --rules ../../rules/stutter.yaml) >/dev/null 2>&1 ||
	fail "analyze report on thread-fixture.dat exited $?"
sed -n '/^THE THREAD BEFORE THE MOMENT/,/^$/p' "$tmp/thr/report.txt" >"$tmp/thr.txt"
tgold=$src/tests/analyze/thread-fixture.thread.txt
[[ ${HS_UPDATE_GOLDEN:-} == 1 ]] && cp "$tmp/thr.txt" "$tgold"
diff -u "$tgold" "$tmp/thr.txt" || fail "the thread section differs from $tgold (HS_UPDATE_GOLDEN=1 to accept)"
sed -n 2p "$tmp/thr/report.txt" | grep -q 'bash (pid 1358) crashed with SIGSEGV' || fail "the thread fixture's verdict does not name bash"
grep -qE '^ +60\.0 %  599\.9 ms +sleeping' "$tmp/thr.txt" || fail "the 0.6 s sleep is not 60 % of the second"
grep -q '^  woken by: 1 x sleep (pid ' "$tmp/thr.txt" || fail "the waker (the sleep child) is not named"
grep -q 'class="bar"' "$tmp/thr/report.html" || fail "report.html has no state bar for the thread"
if command -v node >/dev/null; then
	node -e 'const t = JSON.parse(require("fs").readFileSync(process.argv[1])).thread;
		const s = Object.values(t.states_ns).reduce((a, b) => a + b, 0);
		if (!t.analysed || s !== t.covered_last_ns - (t.born_ns ?? t.covered_first_ns) || t.wakers[0].comm !== "sleep")
			process.exit(1);' "$tmp/thr/report.json" || fail "report.json's thread does not sum to the covered time or lacks the waker"
	if ((have_ajv)); then
		node "$check" "$schema" "$tmp/thr/report.json" | grep -q $'\tvalid$' || fail "the thread fixture's report.json is not valid"
	fi
fi

# 4c. A ring that wrapped (tests/analyze/wrap-fixture.dat: 16 KB a CPU under a loop of /bin/true, then the crash):
# the thread section must say how little of the second is covered and why, and not call the CPU's older losses
# a loss inside the window.
mkdir "$tmp/wrap"
"$analyze" report "$src/tests/analyze/wrap-fixture.dat" -o "$tmp/wrap" --rules "$src/rules/stutter.yaml" >/dev/null 2>&1 ||
	fail "analyze report on wrap-fixture.dat exited $?"
sed -n '/^THE THREAD BEFORE THE MOMENT/,/^$/p' "$tmp/wrap/report.txt" >"$tmp/wrap.txt"
grep -q '^  covered: 31.2 ms of 1.000 s (3 %), .*: cpu 0.s older events are gone (its ring wrapped or lost them); no events lost in it$' \
	"$tmp/wrap.txt" || fail "the wrapped ring's coverage is not said: $(sed -n 2p "$tmp/wrap.txt")"
grep -q 'WARNING' "$tmp/wrap.txt" && fail "the losses before the covered part are called losses inside the window"
grep -q '^  woken by: 35 x true (35 tasks of that name' "$tmp/wrap.txt" || fail "the loop's children are not grouped as wakers"
grep -q 'cpu 0: .*(starts later: older events of this CPU are gone), 9787 lost' "$tmp/wrap/report.txt" ||
	fail "the coverage box does not give cpu 0's losses"

# 5. Bad paths: exit 2 with a clear message.
"$analyze" report "$tmp/nonexistent" 2>"$tmp/e.txt" >/dev/null
[[ $? == 2 ]] && grep -q 'no such file or folder' "$tmp/e.txt" || fail "an unknown path is not a clear exit-2 error"
echo hello >"$tmp/plain.txt"
"$analyze" report "$tmp/plain.txt" 2>"$tmp/e.txt" >/dev/null
[[ $? == 2 ]] && grep -q 'neither a trace-cmd file nor an .etl' "$tmp/e.txt" || fail "a text file is not refused with exit 2"

# an .etl that is not one: reported as unreadable (exit 1, the reader's reason); a trace.dat named .etl is read
mkdir "$tmp/etl"
printf 'not an etl at all, just text\n' >"$tmp/etl/x.etl"
"$analyze" report "$tmp/etl/x.etl" >"$tmp/e.txt" 2>&1
[[ $? == 1 ]] && grep -q 'PROBLEM: cannot be read' "$tmp/e.txt" || fail "a damaged .etl is not reported as unreadable (exit 1)"
cp "$fixture" "$tmp/etl/y.etl"
"$analyze" report "$tmp/etl/y.etl" >"$tmp/e.txt" 2>&1 && grep -q 'sh (pid 5112' "$tmp/e.txt" ||
	fail "a trace.dat named .etl is not read as a trace.dat"

# 6. Without rules: no stories, said so, still a report (exit 0).
mkdir "$tmp/norules"
"$analyze" report "$fixture" -o "$tmp/norules" --rules "$tmp/none.yaml" >"$tmp/n.txt" 2>/dev/null
[[ $? == 0 ]] || fail "a report without rules did not exit 0"
grep -q 'NO STORIES: ' "$tmp/n.txt" || fail "a report without rules does not say there are no stories"
grep -q 'story: ' "$tmp/n.txt" && fail "a report without rules shows stories"
sed -n 2p "$tmp/n.txt" | grep -q 'status 3' || fail "a report without rules lost its verdict"

# 6b. -o DIR that does not exist yet is made (with the folders above it); -o naming a file is refused (exit 2).
"$analyze" report "$fixture" -o "$tmp/made/deeper" --rules "$src/rules/stutter.yaml" >/dev/null 2>"$tmp/e.txt" ||
	fail "-o a folder that does not exist: exit $?: $(cat "$tmp/e.txt")"
[[ -s $tmp/made/deeper/report.txt && -s $tmp/made/deeper/report.json && -s $tmp/made/deeper/report.html ]] ||
	fail "-o a folder that does not exist: the reports are not in it"
"$analyze" report "$fixture" -o "$tmp/plain.txt" --rules "$src/rules/stutter.yaml" >/dev/null 2>"$tmp/e.txt"
[[ $? == 2 ]] && grep -q 'not a folder' "$tmp/e.txt" || fail "-o naming a file is not refused with exit 2"

# 7. A report.txt that is not ours stays untouched.
mkdir "$tmp/keep"
echo "my notes" >"$tmp/keep/report.txt"
"$analyze" report "$fixture" -o "$tmp/keep" --rules "$src/rules/stutter.yaml" >/dev/null 2>"$tmp/e.txt"
[[ $? == 2 ]] || fail "overwriting a foreign report.txt was not refused"
[[ $(cat "$tmp/keep/report.txt") == "my notes" ]] || fail "a foreign report.txt was overwritten"
partial_end
echo "report fixture test: OK"
