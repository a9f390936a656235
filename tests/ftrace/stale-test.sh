#!/usr/bin/env bash
# stale-test.sh: a kill -9'd engine's chunk folder is rescued by the next start: its key-event file rebuilt from the chunks (events after its last flush included), the folder removed.
# usage: stale-test.sh ENGINE PROFILE   (root; the profile names the instances hindsight_test_stale_* and rebuilds its key-event file only hourly)
# HS_TEST_START_TIMEOUT (s, default 90): how long an engine may take to start (sanitizer builds are slow).
set -uo pipefail
engine=$1 profile=$2
instances=(hindsight_test_stale_keys hindsight_test_stale_ring)
tracing=/sys/kernel/tracing
[[ -d $tracing/instances ]] || mount -t tracefs nodev $tracing
tmp=$(mktemp -d)
pids=()

# An instance whose lock a live engine holds (another run of these tests, say) is not ours to remove.
held() { local l=/run/hindsight/$1.lock; [[ -f $l ]] && grep -q ":$(stat -c %i "$l") " /proc/locks; }
cleanup() {
	for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
	for i in "${instances[@]}"; do [[ -d $tracing/instances/$i ]] && ! held "$i" && rmdir "$tracing/instances/$i"; done
	rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "stale test: FAIL: $*" >&2; for f in "$tmp"/out*.txt; do echo "--- $f"; grep '^engine' "$f" | tail -20; done; exit 1; }
[[ $(id -u) == 0 ]] || fail "must run as root"
cd "$tmp" || exit 1
limit=${HS_TEST_START_TIMEOUT:-90}

start_engine() { # $1: output file; sets $epid
	"$engine" --rules "$profile" >"$1" 2>&1 &
	epid=$!
	pids+=("$epid")
	for _ in $(seq $((limit * 10))); do
		grep -q '^engine: recording' "$1" && return 0
		kill -0 "$epid" 2>/dev/null || fail "engine exited early"
		sleep 0.1
	done
	fail "engine did not start recording within $limit s"
}
run_dir_of() { sed -n 's/^engine: run folder \(.*\) (pid.*/\1/p' "$1"; }

# 1. An engine records a marker program's exec into its chunks, then is killed.
start_engine out1.txt
killed=$epid
dir1=$(run_dir_of out1.txt)
chunks="$dir1/.keyevents.dat.chunks"
marker="$tmp/hs_stale_marker_$$"
cp /bin/true "$marker"
# The exec's file name is in the raw record: wait until the streamer moved it
# to a chunk file (it drains every few tens of ms; the .dat is rebuilt hourly).
for _ in $(seq $((limit * 10))); do
	"$marker"
	grep -qaF "hs_stale_marker_$$" "$chunks"/cpu* 2>/dev/null && break
	sleep 0.1
done
grep -qaF "hs_stale_marker_$$" "$chunks"/cpu* 2>/dev/null || fail "the marker's exec never reached a chunk file in $chunks"
kill -9 "$killed"
wait "$killed" 2>/dev/null
[[ -d $chunks ]] || fail "no chunk folder after kill -9 (test assumption)"
[[ -e $dir1/keyevents.dat ]] && echo "note: the killed run has a keyevents.dat already (flushed before the kill)"

# 2. The next start rescues them.
start_engine out2.txt
grep -F "rebuilt $(realpath "$dir1")/keyevents.dat from the " out2.txt || fail "the next start did not say it rebuilt the killed run's keyevents.dat"
grep -q "(pid $killed)" out2.txt || fail "the rescue message does not name the killed engine's pid $killed"
[[ -e $chunks ]] && fail "the killed run's chunk folder $chunks is still there"
[[ -f $dir1/keyevents.dat ]] || fail "the killed run has no keyevents.dat after the rescue"
[[ $(stat -c %a "$dir1/keyevents.dat") == 600 ]] || fail "the rescued keyevents.dat is not mode 0600"
trace-cmd report "$dir1/keyevents.dat" >keys1.txt 2>/dev/null || fail "trace-cmd cannot read the rescued keyevents.dat"
grep -qF "filename=$marker " keys1.txt || fail "the rescued keyevents.dat lacks the marker's exec"
echo "rescued keyevents.dat: $(grep -c 'sched_process_exec:' keys1.txt) execs, the marker's included"
for i in "${instances[@]}"; do grep -q "removed tracefs instance '$i'" out2.txt || fail "the next start did not remove $i"; done
kill -INT "$epid"
wait "$epid" || fail "the next engine exited $?"
dir2=$(run_dir_of out2.txt)
ls -A "$dir1" "$dir2" | grep -q '^\.' && fail "temporary files left: $(ls -A "$dir1" "$dir2")"

# 3. A chunk folder that cannot be rebuilt (no whole page) is still removed, and said so.
start_engine out3.txt
killed=$epid
dir3=$(run_dir_of out3.txt)
kill -9 "$killed"
wait "$killed" 2>/dev/null
rm -f "$dir3"/.keyevents.dat.chunks/cpu*
echo -n torn >"$dir3/.keyevents.dat.chunks/cpu0.0"
start_engine out4.txt
grep -F "$(realpath "$dir3")/.keyevents.dat.chunks" out4.txt || fail "the next start did not mention the killed run's chunk folder"
[[ -e $dir3/.keyevents.dat.chunks ]] && fail "a chunk folder without whole pages was left behind"
kill -INT "$epid"
wait "$epid" || fail "the last engine exited $?"
echo "stale test: OK"
