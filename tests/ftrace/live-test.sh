#!/usr/bin/env bash
# live-test.sh: the live view in tmux (status with seconds of history, a segfault highlighted with its story, pause and filter), the JSONL tap read with jq, and a slow JSONL reader that loses lines while the recording loses none.
# usage: live-test.sh ENGINE PROFILE SEGV   (root; the profile is tests/ftrace/live.yaml, instances hindsight_test_live_*)
# HS_TEST_START_TIMEOUT (s, default 90): how long the engine may take to start (sanitizer builds are slow).
set -uo pipefail
ulimit -c 0
engine=$(realpath "$1") profile=$(realpath "$2") segv=$(realpath "$3")
here=$(cd "$(dirname "$0")" && pwd) # the test changes to a scratch folder
instances=(hindsight_test_live_ring hindsight_test_live_keys hindsight_test_live_keys_trg)
# A tmux server of its own: the test never touches anyone's sessions.
tm=(tmux -L hindsight_test_live_$$)
. "$here/lib.sh"
. "$here/../partial.sh"
test_setup

cleanup() {
	kill_engine
	"${tm[@]}" kill-server 2>/dev/null
	exec 3>&- 2>/dev/null
	remove_instances "${instances[@]}"
	rm -rf "$tmp"
}
trap cleanup EXIT
screen() { "${tm[@]}" capture-pane -p -t live; }
fail() {
	[[ -n ${HS_TEST_KEEP:-} ]] && cp -r "$tmp" "$HS_TEST_KEEP"
	echo "live test: FAIL: $*" >&2
	screen 2>/dev/null | head -30 >&2
	[[ -f $tmp/out.txt ]] && tail -20 "$tmp/out.txt" >&2
	exit 1
}
[[ $(id -u) == 0 ]] || fail "must run as root"
for t in tmux jq trace-cmd; do
	command -v $t >/dev/null || { echo "live test: SKIP: no $t"; exit 77; }
done
cd "$tmp" || exit 1

# wait_screen SECS REGEX: until the pane shows a line matching REGEX.
wait_screen() {
	for _ in $(seq $(($1 * 10))); do
		screen | grep -Eq "$2" && return 0
		sleep 0.1
	done
	return 1
}

# ---- 1. The live view, the default on a terminal, with the JSONL tap to a file ----
"${tm[@]}" new-session -d -s live -x 220 -y 50 \
	"cd $tmp && $engine --rules $profile --events-jsonl $tmp/ev.jsonl; echo \$? >$tmp/rc; sleep 600"
"${tm[@]}" list-sessions >/dev/null || fail "tmux did not start"
# The quiet start shows the header before the view takes the screen; the view then shows a status area where
# the ring's history grows from 0.
wait_screen $limit 'buffering .*history [1-9][0-9.]* (s|min)' ||
	fail "the status area never showed the ring's history in seconds"
screen | grep -q 'keyevents .*file-circular.*key file .*chunks dropped 0' || fail "no key-event file line"
screen | grep -Eq 'trigger crash +event +armed +fired 0' || fail "the crash trigger is not shown armed"
wait_screen 5 'own cpu [0-9.]+%' || fail "no own CPU in the status"
echo "live test: status area: $(screen | grep -E '^snap ' | head -1)"

# engine ctl status --json is the same status, valid against schemas/status.schema.json (node + ajv: ./run.sh --test).
schema_check=$here/../schema/check.mjs schema=$here/../../schemas/status.schema.json
if ! command -v node >/dev/null || [[ ! -d $here/../schema/node_modules/ajv ]]; then
	partial_skip "engine ctl status --json against schemas/status.schema.json" "no node or tests/schema/node_modules (npm ci there)"
else
	"$engine" ctl --rules "$profile" status --json >status.json || fail "engine ctl status --json failed"
	node "$schema_check" "$schema" status.json | grep -q $'\tvalid$' ||
		fail "the status does not validate: $(node "$schema_check" "$schema" status.json)"
	jq -e '.events_jsonl.dropped == 0 and (.sessions[0].history_s > 0)' status.json >/dev/null ||
		fail "the status lacks the tap's counts or the ring's history"
	echo "live test: engine ctl status --json validates against schemas/status.schema.json"
fi

# A segfault: its signal_deliver appears highlighted, with its story, and the trigger fires. The list is filtered
# to the program's name first: beside builds (CI's background compiles) their execs and exits scroll a line out of
# the pane in under a second.
"${tm[@]}" send-keys -t live / hs_segv Enter
wait_screen 5 'filter: hs_segv' || fail "/ did not set the filter"
"$segv" 2>/dev/null
wait_screen 10 '\[crash\] hs_segv\[[0-9]+\] cpu[0-9]+ signal:signal_deliver sig=11 .* -- The task is acting on signal' ||
	fail "the segfault did not appear as a [crash] line with its story"
# Highlighted: the line carries an SGR attribute (bold / red) in the pane's escapes.
"${tm[@]}" capture-pane -p -e -t live | grep -a 'signal:signal_deliver sig=11' | grep -aq $'\e\[[0-9;]*m.*\[crash\] hs_segv' ||
	fail "the crash line is not highlighted"
"${tm[@]}" send-keys -t live Escape
wait_screen 15 'trigger crash +event +cooling down +fired 1' || fail "the trigger did not fire"
echo "live test: $(screen | grep -m1 -o 'latest alert: .\{0,90\}')"

# Filter: only the lines holding the text remain.
"${tm[@]}" send-keys -t live / signal:signal_deliver Enter
wait_screen 5 'filter: signal:signal_deliver' || fail "/ did not set the filter"
sleep 1.5
list=$(screen | sed -n '/^-- key events --/,$p' | tail -n +2 | grep -v '^$')
[[ -n $list ]] || fail "the filtered list is empty"
echo "$list" | grep -qv 'signal:signal_deliver' && fail "the filter let other lines through: $(echo "$list" | grep -v signal:signal_deliver | head -2)"
"${tm[@]}" send-keys -t live Escape

# Pause: the list stops while the recording goes on (key events keep counting).
"${tm[@]}" send-keys -t live p
wait_screen 5 'PAUSED' || fail "p did not pause the view"
n1=$(screen | sed -n 's/.*key events \([0-9]*\).*/\1/p' | head -1)
for _ in $(seq 50); do /bin/true; done
sleep 2.5
n2=$(screen | sed -n 's/.*key events \([0-9]*\).*/\1/p' | head -1)
((n2 > n1)) || fail "while paused the key events count stood still ($n1 -> $n2): the recording must not pause"
"${tm[@]}" send-keys -t live p
wait_screen 5 '\[p\] pause' || fail "p did not resume the view"
# Ctrl+C stops as always; the run's main.log has the plan the terminal did not show.
"${tm[@]}" send-keys -t live C-c
for _ in $(seq 600); do [[ -s $tmp/rc ]] && break; sleep 0.1; done
[[ $(cat "$tmp/rc" 2>/dev/null) == 0 ]] || fail "the engine did not exit 0 after Ctrl+C (rc $(cat "$tmp/rc" 2>/dev/null))"
dir=$(ls -d "$tmp"/logs/runs/*/ | head -1)
grep -q '^session snap: buffering' "$dir/main.log" || fail "main.log lacks the plan"
grep -q 'the full plan is in' "$dir/main.log" || fail "main.log lacks the header"
grep -q 'trigger crash fired' "$dir/main.log" || fail "main.log lacks the messages the view showed"
grep -q 'DONE, all files written' <(screen) || fail "the end was not shown on the terminal"

# The tap: one JSON object per line, the crash among them.
lines=$(wc -l <ev.jsonl)
((lines > 0)) || fail "ev.jsonl is empty"
parsed=$(jq -c . ev.jsonl | wc -l) || fail "ev.jsonl does not parse"
((parsed == lines)) || fail "$lines lines but $parsed JSON values"
jq -c 'select(.event == "signal_deliver" and .fields.sig == 11 and .comm == "hs_segv" and .alert == "crash"
	and .system == "signal" and (.story | startswith("The task is acting on signal")) and (.cpu | type) == "number"
	and .pid > 0 and (.time | test("^20[0-9-]+T[0-9:.]+Z$")))' ev.jsonl | grep -q . ||
	fail "ev.jsonl lacks the crash's signal_deliver: $(grep signal_deliver ev.jsonl | head -2)"
# a snapshot's capture-time report done before the end is a record of its own ({"type": "snapshot", ...}), not a
# key event (ftrace:capture_report checks it)
records=$(jq -c 'select(.type == "snapshot")' ev.jsonl | wc -l)
lines=$((lines - records))
grep -q -- "--events-jsonl: $lines key events written, 0 dropped" "$dir/main.log" ||
	fail "no final tap message for $lines lines: $(grep -- --events-jsonl "$dir/main.log")"
observed=$(jq .key_events_observed "$dir/run.json")
((lines == observed)) || fail "the tap wrote $lines lines, run.json observed $observed key events"
echo "live test: view and tap ok ($lines key events as JSONL, the crash highlighted)"
"${tm[@]}" kill-server 2>/dev/null

# ---- 2. A reader that does not read: lines are dropped and counted, the recording loses nothing ----
mkfifo fifo
exec 3<>fifo # holds the FIFO open without reading it
start_engine out.txt "$engine" --rules "$profile" --live --events-jsonl fifo
for _ in $(seq 4000); do /bin/true; done # 8000 key events: more than the pipe and the 1 MiB queue hold
drop=0
for _ in $(seq 100); do
	drop=$(sed -n 's/^live: .*jsonl [0-9]* lines, \([0-9]*\) dropped.*/\1/p' out.txt | tail -1)
	((${drop:-0} > 0)) && break
	sleep 0.1
done
((${drop:-0} > 0)) || fail "the status never counted dropped lines: $(grep 'jsonl' out.txt | tail -1)"
kill -0 "$epid" || fail "the engine died with a slow reader"
cat <&3 >got.jsonl &
reader=$!
t0=$(date +%s%N)
kill -INT "$epid"
wait "$epid"
rc=$?
epid=
t1=$(date +%s%N)
((rc == 0)) || fail "exit status $rc with a slow reader"
(((t1 - t0) / 1000000 < 30000)) || fail "the engine took $(((t1 - t0) / 1000000)) ms to stop with a slow reader"
exec 3>&-
sleep 0.5
kill "$reader" 2>/dev/null
dir=$(sed -n 's/^engine: run folder \(.*\) (pid.*/\1/p' out.txt)
final=$(grep -o -- '--events-jsonl: [0-9]* key events written, [0-9]* dropped' out.txt) || fail "no final tap message"
written=$(echo "$final" | awk '{print $2}') dropped=$(echo "$final" | awk '{print $6}')
((dropped > 0)) || fail "nothing dropped at the end: $final"
observed=$(jq .key_events_observed "$dir/run.json")
((written + dropped == observed)) || fail "$written written + $dropped dropped != $observed key events observed"
got=$(jq -c . got.jsonl | wc -l)
((got == written)) || fail "the reader got $got lines, the engine says it wrote $written"
# The recording itself lost nothing: every exec is in keyevents.dat and the ring reported no loss.
[[ $(jq '.sessions[] | select(.name == "keyevents") | .cpus | map(.dropped + .overrun) | add' "$dir/run.json") == 0 ]] ||
	fail "the key-event session lost events"
execs=$(trace-cmd report "$dir/keyevents.dat" 2>/dev/null | grep -Ec 'sched_process_exec: +filename=(/usr)?/bin/true ')
((execs >= 4000)) || fail "keyevents.dat holds $execs of the 4000 execs"
echo "live test: slow reader ok ($written written, $dropped dropped of $observed; keyevents.dat has all $execs execs)"
partial_end
echo "live test: PASS"
