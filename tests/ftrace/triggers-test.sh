#!/usr/bin/env bash
# triggers-test.sh: the engine takes snapshots by itself and keeps recording: crash (+ cool-down), crash loop (rate cap), frame hitch, SIGUSR1, then Ctrl+C.
# usage: triggers-test.sh ENGINE PROFILE FRAMELOOP   (root; the profile is tests/ftrace/triggers.yaml, instances hindsight_test_trg_*)
# HS_TEST_START_TIMEOUT (s, default 90): how long the engine may take to start (sanitizer builds are slow).
set -uo pipefail
ulimit -c 0 # the crash loop must not write 30 core files
engine=$1 profile=$2 frameloop=$3
instances=(hindsight_test_trg_ring hindsight_test_trg_keys hindsight_test_trg_keys_trg)
. "$(dirname "$0")/lib.sh"
test_setup

cleanup() {
	kill_engine
	remove_instances "${instances[@]}"
	rm -rf "$tmp"
}
trap cleanup EXIT
fail() {
	echo "triggers test: FAIL: $*" >&2
	[[ -n ${dir:-} ]] && ls "$dir/snapshots" >&2
	[[ -f $tmp/out.txt ]] && grep '^engine' "$tmp/out.txt" | tail -30
	exit 1
}
[[ $(id -u) == 0 ]] || fail "must run as root"
command -v jq >/dev/null || { echo "triggers test: SKIP: no jq"; exit 77; }
command -v trace-cmd >/dev/null || { echo "triggers test: SKIP: no trace-cmd"; exit 77; }
cd "$tmp" || exit 1

alive() { kill -0 "$epid" 2>/dev/null || fail "engine stopped after $1: recording must go on"; }

start_engine out.txt "$engine" --rules "$profile"

# 1. A crash: one snapshot, and the engine goes on.
sh -c 'kill -SEGV $$' 2>/dev/null
wait_snapshots 1 $limit crash || fail "no crash snapshot after a SIGSEGV"
alive "the crash snapshot"
# A second crash inside the 20 s cool-down joins the first snapshot.
sh -c 'kill -SEGV $$' 2>/dev/null
sleep 3
(($(snapshot_folders crash) == 1)) || fail "a crash inside the cool-down made a second folder"

# 2. A crash loop of 30 aborts: at most max_per_hour (2) snapshots.
for _ in $(seq 30); do sh -c 'kill -ABRT $$' 2>/dev/null; done
wait_snapshots 2 $limit crashloop || fail "the crash loop made fewer than 2 snapshots"
sleep 3
n=$(snapshot_folders crashloop)
((n == 2)) || fail "the crash loop made $n snapshots; the rate cap is 2 per hour"
alive "the crash loop"

# 3. A 240 Hz frame loop with one 100 ms frame: one hitch snapshot whose ring window holds the gap.
# Real-time priority: under load (other tests, stress-ng) a normal task's 4 ms sleeps can overrun by
# 100 ms and more, a real hitch the trigger rightly catches; this test wants only the one it makes.
rt=()
command -v chrt >/dev/null && chrt -f 10 true 2>/dev/null && rt=(chrt -f 10)
"${rt[@]}" "$frameloop" 240 720 360 100 Frame >frames.txt || fail "frameloop failed"
read -r _ gap_start gap_end <frames.txt
wait_snapshots 1 $limit hitch || fail "no hitch snapshot for a 100 ms frame in a 240 Hz loop"
sleep 2
(($(snapshot_folders hitch) == 1)) || fail "more than one hitch snapshot for one long frame"
hd=$(ls -d "$dir"/snapshots/[0-9]*-hitch | head -1)
jq -e . "$hd/snapshot.json" >/dev/null || fail "$hd/snapshot.json is not JSON"
hit=$(jq -r '.first_hit_ns' "$hd/snapshot.json")
fms=$(jq -r '.hit.frame_ms' "$hd/snapshot.json")
echo "gap $gap_start..$gap_end, hit at $hit, frame_ms $fms"
awk -v f="$fms" 'BEGIN { exit !(f >= 95 && f < 400) }' || fail "hitch frame_ms $fms is not the 100 ms frame"
# The hit is the start that ended the long frame.
((hit >= gap_end - 2000000 && hit <= gap_end + 50000000)) || fail "hit $hit is not at the gap's end $gap_end"
trace-cmd report "$hd/snap.dat" >hitch-snap.txt 2>/dev/null || fail "trace-cmd cannot read $hd/snap.dat"
first=$(grep -m1 -oE ' [0-9]+\.[0-9]+: ' hitch-snap.txt | tr -d ' :')
last=$(grep -oE ' [0-9]+\.[0-9]+: ' hitch-snap.txt | tail -1 | tr -d ' :')
echo "hitch snapshot ring window $first..$last s"
awk -v f="$first" -v l="$last" -v s="$gap_start" -v e="$gap_end" 'BEGIN { exit !(f * 1e9 <= s && l * 1e9 >= e) }' ||
	fail "the hitch snapshot's ring ($first..$last s) does not hold the gap ($gap_start..$gap_end ns)"
alive "the hitch snapshot"

# 4. SIGUSR1: a manual snapshot, recording goes on.
kill -USR1 "$epid"
wait_snapshots 1 $limit manual || fail "no manual snapshot after SIGUSR1"
alive "SIGUSR1"

# Every snapshot: complete snapshot.json, files trace-cmd opens, the marker in the key-event copy, no partial folder.
for d in "$dir"/snapshots/[0-9]*; do
	jq -e '.trigger.name and .first_hit_ns and .detect_ns and (.sessions | length == 2) and .rules_hash_fnv1a64' \
		"$d/snapshot.json" >/dev/null || fail "$d/snapshot.json lacks trigger, times, sessions or the rules hash"
	for f in snap.dat keyevents.dat; do
		trace-cmd report "$d/$f" >rep.txt 2>/dev/null || fail "trace-cmd cannot read $d/$f"
	done
	grep -q 'hindsight: trigger' rep.txt || fail "$d/keyevents.dat has no trigger marker"
done
ls -a "$dir/snapshots" | grep -q partial && fail "a .partial folder was left behind"

# 5. Ctrl+C still saves the final rings and stops.
kill -INT "$epid"
wait "$epid"
rc=$?
epid=
[[ $rc == 0 ]] || fail "engine exited $rc after SIGINT"
grep -q '^engine: DONE' out.txt || fail "no DONE line"
trace-cmd report "$dir/snap.dat" >/dev/null 2>&1 || fail "the final snap.dat does not open"
jq -e '.triggers[] | select(.name == "crashloop") | .dropped_rate >= 1' "$dir/run.json" >/dev/null ||
	fail "run.json does not count the crash loop's refused snapshots"
jq -e '.triggers[] | select(.name == "crash") | .joined >= 1' "$dir/run.json" >/dev/null ||
	fail "run.json does not count the crash that joined the cool-down"
jq -r '.snapshots[] | "\(.snapshot) \(.trigger) \(.complete) \(.bytes)"' "$dir/run.json"
echo "triggers test: OK"
