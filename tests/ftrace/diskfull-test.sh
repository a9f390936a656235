#!/usr/bin/env bash
# diskfull-test.sh: a ring snapshot on a nearly full disk keeps the newest data that fits and says what it dropped.
# The engine records into a small tmpfs this test mounts (and unmounts); the
# 64 MB ring is filled far past what the disk can hold even compressed. On
# Ctrl+C, snap.dat must exist, open in trace-cmd, hold the last process started
# before the stop, and the engine must say how much it dropped; keyevents.dat
# keeps its events; nothing half-written is left.
# usage: diskfull-test.sh ENGINE PROFILE   (root; the profile names the instances hindsight_test_df*)
# HS_TEST_START_TIMEOUT (s, default 90): how long the engine may take to start (sanitizer builds are slow).
set -uo pipefail
engine=$1 profile=$2
instances=(hindsight_test_dfkeys hindsight_test_dfring)
tracing=/sys/kernel/tracing
[[ -d $tracing/instances ]] || mount -t tracefs nodev $tracing
tmp=$(mktemp -d)
mnt=$tmp/disk
pids=()

cleanup() {
	for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
	for i in "${instances[@]}"; do [[ -d $tracing/instances/$i ]] && rmdir "$tracing/instances/$i"; done
	cd /
	mountpoint -q "$mnt" && umount "$mnt"
	rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "diskfull test: FAIL: $*" >&2; [[ -f $tmp/out1.txt ]] && grep '^engine' "$tmp/out1.txt" | tail -25; exit 1; }
[[ $(id -u) == 0 ]] || fail "must run as root"
mkdir "$mnt" && mount -t tmpfs -o size=8m,mode=0700 hs_diskfull "$mnt" || fail "cannot mount a tmpfs"
cd "$mnt" || exit 1
run_dir_of() { sed -n 's/^engine: run folder \(.*\) (pid.*/\1/p' "$1"; }

"$engine" --rules "$profile" >"$tmp/out1.txt" 2>&1 &
epid=$!
pids+=("$epid")
limit=${HS_TEST_START_TIMEOUT:-90}
for _ in $(seq $((limit * 10))); do
	grep -q '^engine: recording' "$tmp/out1.txt" && break
	kill -0 "$epid" 2>/dev/null || fail "engine exited early"
	sleep 0.1
done
grep -q '^engine: recording' "$tmp/out1.txt" || fail "engine did not start recording within $limit s"
cp /bin/true "$tmp/hs_df_first" && cp /bin/true "$tmp/hs_df_last" || fail "cannot copy /bin/true"
"$tmp/hs_df_first"
# Fill the ring: context switches and forks on both CPUs for a few seconds. Each fork's exit is a key event too:
# the 1 MB key file holds ~14k of them, and 6 s of unbounded forks once made 13.6k (a CI run dropped the chunk with
# hs_df_first in it), so the forks stop after 4000; the switches alone fill the ring.
if command -v stress-ng >/dev/null; then
	stress-ng --switch 2 --fork 1 --fork-ops 4000 -t 6s --quiet >/dev/null 2>&1
else
	end=$((SECONDS + 6))
	while ((SECONDS < end)); do /bin/true; done
fi
sleep 1.5 # a key-event flush with the first marker in it
# Leave ~4 MB free: less than the ring even compressed (40 MB raw is ~4 MB of
# zstd), and more than the engine keeps back for the key-event rewrite and
# run.json (1 MB + twice the key file, up to 3 MB on a loaded machine: with
# 4 MB filled, a busy run kept nothing of the ring).
dd if=/dev/zero of="$mnt/filler" bs=1M count=3 status=none 2>/dev/null
"$tmp/hs_df_last"
kill -INT "$epid"
wait "$epid"
rc=$?
df -k "$mnt" | tail -1
dir=$(run_dir_of "$tmp/out1.txt")
[[ -n $dir && -d $dir ]] || fail "no run folder"
ls -la "$dir"
[[ $rc == 0 ]] || fail "engine exited $rc on a full disk"
[[ -f $dir/snap.dat ]] || fail "no snap.dat: the whole ring was lost"
ls -A "$dir" | grep -qE '^\.|\.tmp$' && fail "temporary files left in $dir: $(ls -A "$dir")"
grep -q 'DROPPED the oldest' "$tmp/out1.txt" || fail "the engine did not say what it dropped"
grep 'DROPPED the oldest' "$tmp/out1.txt"
trace-cmd report "$dir/snap.dat" >"$tmp/snap.txt" 2>/dev/null || fail "trace-cmd cannot read snap.dat"
n=$(grep -cE '^ *\S.*\[[0-9]+\] +[0-9]+\.[0-9]+: ' "$tmp/snap.txt")
echo "snap.dat: $n events, $(stat -c %s "$dir/snap.dat") bytes"
[[ $n -gt 1000 ]] || fail "snap.dat holds only $n events"
grep -q 'sched_process_exec: .*filename=.*hs_df_last' "$tmp/snap.txt" || fail "snap.dat lacks the newest events (the last marker's exec)"
trace-cmd report "$dir/keyevents.dat" >"$tmp/keys.txt" 2>/dev/null || fail "trace-cmd cannot read keyevents.dat"
grep -q 'filename=.*hs_df_first' "$tmp/keys.txt" || fail "keyevents.dat lost the key events it held"
[[ -f $dir/run.json ]] || fail "no run.json"
echo "diskfull test: OK"
