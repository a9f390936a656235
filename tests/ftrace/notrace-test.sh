#!/usr/bin/env bash
# notrace-test.sh: the engine leaves itself (every thread) out of its tracefs instances: its own fsyncs are not key events, other processes' still are.
# usage: notrace-test.sh ENGINE PROFILE   (root; the profile names the instances hindsight_test_lock_* and whitelists sys_enter_fsync)
# HS_TEST_START_TIMEOUT (s, default 90): how long the engine may take to start (sanitizer builds are slow).
set -uo pipefail
engine=$1 profile=$2
instances=(hindsight_test_lock_ring hindsight_test_lock_keys)
tracing=/sys/kernel/tracing
[[ -d $tracing/instances ]] || mount -t tracefs nodev $tracing
tmp=$(mktemp -d)
epid=

# An instance whose lock a live engine holds (another run of these tests, say) is not ours to remove.
held() { local l=/run/hindsight/$1.lock; [[ -f $l ]] && grep -q ":$(stat -c %i "$l") " /proc/locks; }
cleanup() {
	[[ -n $epid ]] && { kill -9 "$epid" 2>/dev/null; wait "$epid" 2>/dev/null; }
	for i in "${instances[@]}"; do [[ -d $tracing/instances/$i ]] && ! held "$i" && rmdir "$tracing/instances/$i"; done
	rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "notrace test: FAIL: $*" >&2; [[ -f $tmp/out.txt ]] && grep '^engine' "$tmp/out.txt" | tail -20; exit 1; }
[[ $(id -u) == 0 ]] || fail "must run as root"
cd "$tmp" || exit 1

"$engine" --rules "$profile" >out.txt 2>&1 &
epid=$!
limit=${HS_TEST_START_TIMEOUT:-90}
for _ in $(seq $((limit * 10))); do
	grep -q '^engine: recording' out.txt && break
	kill -0 "$epid" 2>/dev/null || fail "engine exited early"
	sleep 0.1
done
grep -q '^engine: recording' out.txt || fail "engine did not start recording within $limit s"
# Every thread the engine has now (main and the main.log copier) must be listed, and nothing else. The two are read
# at slightly different moments, and a thread that just ended leaves the list only when the kernel frees it (the
# exit hook of event-fork runs at sched_process_free, after an RCU grace period): a run.sh saw a short-lived engine
# thread still listed but gone from /proc. So the comparison is taken again, for up to 2 s, until it holds.
listed_of() { tr ' ' '\n' <"$tracing/instances/$1/set_event_notrace_pid" | grep . | sort -n | tr '\n' ' '; }
for _ in $(seq 20); do
	tids=$(ls /proc/"$epid"/task | sort -n | tr '\n' ' ')
	same=1
	for i in "${instances[@]}"; do [[ $(listed_of "$i") == "$tids" ]] || same=0; done
	((same)) && break
	sleep 0.1
done
for i in "${instances[@]}"; do
	listed=$(listed_of "$i")
	echo "$i: set_event_notrace_pid: $listed (engine threads: $tids)"
	[[ $listed == "$tids" ]] || fail "$i does not leave out exactly the engine's threads $tids (it lists '$listed')"
	[[ $(cat "$tracing/instances/$i/options/event-fork") == 1 ]] || fail "$i: event-fork is off: threads started later would be recorded"
done
# Key events from others: fsyncs by dd. The engine fsyncs each rebuilt key-event
# file (every flush interval, 1 s, while there are new events): wait for three
# rebuilds after the activity, so the engine's own fsyncs had every chance to
# be recorded.
for _ in 1 2 3; do dd if=/dev/zero of=data bs=4k count=4 conv=fsync status=none; done
base=$(grep -c '^engine: stats:' out.txt)
for _ in $(seq $((limit * 10))); do
	(($(grep -c '^engine: stats:' out.txt) >= base + 3)) && break
	sleep 0.1
done
kill -INT "$epid"
wait "$epid"
rc=$?
epid=
[[ $rc == 0 ]] || fail "engine exited $rc after SIGINT"
dir=$(sed -n 's/^engine: run folder \(.*\) (pid.*/\1/p' out.txt)
trace-cmd report "$dir/keyevents.dat" >keys.txt 2>/dev/null || fail "trace-cmd cannot read keyevents.dat"
grep -q 'sys_enter_fsync:' keys.txt || fail "no fsync at all in keyevents.dat (dd's should be there)"
grep -qE '^ *dd-[0-9]+ .*sys_enter_fsync:' keys.txt || fail "dd's fsyncs are missing: the exclusion swallowed others' events"
# "comm-pid [cpu] ts: event: ..." -- the pid of every event.
own=$(sed -n 's/^ *.*-\([0-9][0-9]*\) *\[[0-9]*\] .*/\1/p' keys.txt | grep -xF -f <(tr ' ' '\n' <<<"$tids" | grep .))
echo "keyevents.dat: $(grep -c 'sys_enter_fsync:' keys.txt) fsyncs, $(grep -c . <<<"$own") of them or other events by the engine"
[[ -z $own ]] || fail "keyevents.dat holds the engine's own events: $(grep -E -- "-($(tr ' ' '|' <<<"${tids% }")) " keys.txt | head -5)"
echo "notrace test: OK"
