#!/usr/bin/env bash
# deadline-test.sh: a hang caught while it lasts (issue 22): a 240 Hz atrace loop that stops drawing for 6 s, busy in
# its own code and then stopped by SIGSTOP from another process, gets a snapshot before the freeze ends, at most
# deadline + 250 ms after its last frame, and a second one when it draws again; a loop a debugger holds, one that exits
# and one that draws too slowly to be watched get none; recording goes on. Every case runs under stress-ng --cpu 2
# when it is installed (HS_TEST_NO_STRESS=1: without).
# usage: deadline-test.sh ENGINE PROFILE DEADLINE_LOOP   (root; the profile is tests/ftrace/deadline.yaml,
# instances hindsight_test_dl_*). HS_TEST_START_TIMEOUT (s, default 90): how long the engine may take to start.
set -uo pipefail
engine=$1 profile=$2 loop=$3
instances=(hindsight_test_dl_ring hindsight_test_dl_keys hindsight_test_dl_keys_trg)
. "$(dirname "$0")/lib.sh"
test_setup
stress=

cleanup() {
	[[ -n $stress ]] && kill "$stress" 2>/dev/null && wait "$stress" 2>/dev/null
	[[ -n ${lpid:-} ]] && kill -CONT "$lpid" 2>/dev/null && kill -9 "$lpid" 2>/dev/null
	kill_engine
	remove_instances "${instances[@]}"
	rm -rf "$tmp"
}
trap cleanup EXIT
fail() {
	echo "deadline test: FAIL: $*" >&2
	[[ -n ${dir:-} ]] && for d in "$dir"/snapshots/[0-9]*; do echo "${d##*/}: $(jq -c .hit "$d/snapshot.json")"; done >&2
	[[ -f $tmp/out.txt ]] && grep '^engine' "$tmp/out.txt" | tail -30
	exit 1
}
[[ $(id -u) == 0 ]] || fail "must run as root"
command -v jq >/dev/null || { echo "deadline test: SKIP: no jq"; exit 77; }
cd "$tmp" || exit 1
alive() { kill -0 "$epid" 2>/dev/null || fail "engine stopped after $1: recording must go on"; }
# Real-time priority for the 240 Hz loop, as the frame hitch test: under load a normal task's 4 ms sleeps overrun.
rt=()
command -v chrt >/dev/null && chrt -f 10 true 2>/dev/null && rt=(chrt -f 10)

start_engine out.txt "$engine" --rules "$profile"
deadline_ns=2000000000
budget_ns=$((deadline_ns + 250000000))

# check_hang N WHAT: the Nth hang folder is the freeze in loop.txt (freeze A B): its hit is the deadline after the
# last frame, decided within deadline + 250 ms of it and taken before the freeze ended; the next folder is its end.
check_hang() {
	local n=$1 what=$2 f e
	read -r _ a b < <(grep '^freeze' loop.txt)
	f=$(ls -d "$dir"/snapshots/[0-9]*-hang | sed -n "${n}p")
	e=$(ls -d "$dir"/snapshots/[0-9]*-hang | sed -n "$((n + 1))p")
	[[ -n $f && -n $e ]] || fail "$what: no freeze and resume snapshots"
	jq -e '.hit.phase == "frozen" and .trigger.kind == "deadline" and .weight == 1' "$f/snapshot.json" >/dev/null ||
		fail "$what: $f is not the freeze's snapshot"
	local start detect taken first
	start=$(jq -r .hit.freeze_start_ns "$f/snapshot.json")
	first=$(jq -r .first_hit_ns "$f/snapshot.json")
	detect=$(jq -r .detect_ns "$f/snapshot.json")
	taken=$(jq -r .taken_ns "$f/snapshot.json")
	echo "$what: frames stopped $a..$b; freeze_start $start, hit $first, detected +$(((detect - start) / 1000000)) ms," \
		"taken +$(((taken - start) / 1000000)) ms, freeze ended +$(((b - start) / 1000000)) ms"
	((start >= a - 1000000 && start <= a + 5000000)) || fail "$what: freeze_start $start is not the last frame $a"
	((first == start + deadline_ns)) || fail "$what: the hit $first is not the deadline after $start"
	((detect - start <= budget_ns)) || fail "$what: detected $(((detect - start) / 1000000)) ms after the last frame"
	((taken < b)) || fail "$what: the snapshot was taken after the freeze ended"
	jq -e '.hit.phase == "ended" and .hit.ended_by == "frame"' "$e/snapshot.json" >/dev/null ||
		fail "$what: $e is not the hang's end"
	local hang
	hang=$(jq -r .hit.hang_ms "$e/snapshot.json")
	echo "$what: resume snapshot: hang_ms $hang"
	awk -v h="$hang" -v g="$(((b - a) / 1000000))" 'BEGIN { exit !(h >= g - 5 && h <= g + 5) }' ||
		fail "$what: hang_ms $hang is not the gap of $(((b - a) / 1000000)) ms"
}

# Load on both CPUs for all three cases (about 60 s of them), started before the first and checked to be running.
under=
if [[ -z ${HS_TEST_NO_STRESS:-} ]] && command -v stress-ng >/dev/null; then
	stress-ng --cpu 2 --timeout 180 >stress.txt 2>&1 &
	stress=$!
	sleep 1
	kill -0 "$stress" 2>/dev/null || fail "stress-ng did not start: $(cat stress.txt)"
	under=" under stress-ng"
fi

# 1. Busy: the loop spins in its own code for 6 s without a frame.
"${rt[@]}" "$loop" frames 240 3 6 2 busy Frame >loop.txt || fail "deadline-loop failed"
wait_snapshots 2 20 hang || fail "busy freeze: no freeze and resume snapshots"
check_hang 1 "busy freeze$under"
alive "the busy freeze"

# 2. SIGSTOP from another process (this shell) for 6 s.
"${rt[@]}" "$loop" frames 240 14 0 0 none Frame >loop.txt &
lpid=$!
sleep 3
kill -STOP "$lpid"
sleep 6
kill -CONT "$lpid"
wait "$lpid" || fail "deadline-loop (SIGSTOP) failed"
lpid=
wait_snapshots 4 20 hang || fail "SIGSTOP: no freeze and resume snapshots"
check_hang 3 "SIGSTOP$under"
grep -q '"probe": "running"' "$(ls -d "$dir"/snapshots/[0-9]*-hang | sed -n 3p)/snapshot.json" ||
	fail "SIGSTOP: the probe did not see a stopped process that no debugger holds"
alive "the SIGSTOP freeze"

# 3. Not hangs: a debugger holds the loop for 6 s (ignore_debugger: true); a loop that exits; one that made 7 frames
# (fewer than active_frames) and then spins 6 s without one.
"${rt[@]}" "$loop" frames 240 14 0 0 none Frame >loop.txt &
lpid=$!
sleep 3
"$loop" ptrace "$lpid" 6 >ptrace.txt || fail "cannot hold the loop with ptrace"
wait "$lpid" || fail "deadline-loop (ptrace) failed"
lpid=
"$loop" frames 240 2 0 0 none Frame >/dev/null || fail "deadline-loop (exit) failed"
"$loop" frames 240 0.03 6 0 busy Frame >/dev/null || fail "deadline-loop (few frames) failed"
sleep 3
n=$(snapshot_folders hang)
((n == 4)) || fail "a debugger's hold, an exit or a process with few frames made a hang snapshot ($n folders, want 4)"
alive "the processes that were not hung"
if [[ -n $stress ]]; then
	kill -0 "$stress" 2>/dev/null || fail "stress-ng ended before the last case: the load did not cover it"
	kill "$stress" && wait "$stress" 2>/dev/null
	stress=
fi

# Ctrl+C: the final rings, and run.json counts the debugger's hold as excused.
kill -INT "$epid"
wait "$epid"
rc=$?
epid=
[[ $rc == 0 ]] || fail "engine exited $rc after SIGINT"
jq -e '.triggers[] | select(.name == "hang") | .fired == 4 and .excused >= 1' "$dir/run.json" >/dev/null ||
	fail "run.json: $(jq -c '.triggers[] | select(.name == "hang")' "$dir/run.json")"
ls -a "$dir/snapshots" | grep -q partial && fail "a .partial folder was left behind"
echo "deadline test: OK"
