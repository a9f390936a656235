#!/usr/bin/env bash
# record-test.sh: drives the real engine on tracefs: snapshot completeness, key events (crash, OOM kill), kill -9 and restart.
# usage: record-test.sh ENGINE PROFILE ANALYZE SEGV   (root; the profile names the instances hindsight_test_*)
# HS_TEST_START_TIMEOUT (s, default 90): how long the engine may take to start (sanitizer builds are slow).
set -uo pipefail
engine=$1 profile=$2 analyze=${3:-} segv=${4:-}
instances=(hindsight_test_keys hindsight_test_ring)
tracing=/sys/kernel/tracing
[[ -d $tracing/instances ]] || mount -t tracefs nodev $tracing
cgroot=/sys/fs/cgroup/memory # cgroup v1 on these VMs
[[ -d $cgroot ]] || cgroot=/sys/fs/cgroup
cg=$cgroot/hindsight_test_oom_$$
tmp=$(mktemp -d)
pids=()

cleanup() {
	for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
	for i in "${instances[@]}"; do [[ -d $tracing/instances/$i ]] && rmdir "$tracing/instances/$i"; done
	if [[ -d $cg ]]; then
		while read -r p; do kill -9 "$p" 2>/dev/null; done <"$cg/cgroup.procs"
		sleep 0.2
		rmdir "$cg"
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "record test: FAIL: $*" >&2; for f in "$tmp"/out*.txt; do echo "--- $f"; grep '^engine' "$f" | tail -20; done; exit 1; }
[[ $(id -u) == 0 ]] || fail "must run as root"
cd "$tmp" || exit 1

start_engine() { # $1: output file; sets $epid
	"$engine" --rules "$profile" >"$1" 2>&1 &
	epid=$!
	pids+=("$epid")
	local limit=${HS_TEST_START_TIMEOUT:-90}
	for _ in $(seq $((limit * 10))); do
		grep -q '^engine: recording' "$1" && return 0
		kill -0 "$epid" 2>/dev/null || fail "engine exited early"
		sleep 0.1
	done
	fail "engine did not start recording within $limit s"
}
# A real NULL dereference (page fault at 0, then SIGSEGV), from a tiny C program.
segv_child() { "$segv" 2>/dev/null; }
run_dir_of() { sed -n 's/^engine: run folder \(.*\) (pid.*/\1/p' "$1"; }
events_in() { trace-cmd report "$1" 2>/dev/null | grep -cE '^ *\S.*\[[0-9]+\] +[0-9]+\.[0-9]+: '; }

# 1. A normal run with known activity, stopped by SIGINT.
start_engine out1.txt
for _ in $(seq 20); do /bin/true; done
segv_child
# A real-time signal's default action ends a process too; the kernel delivers such a fatal signal as SIGKILL
# (complete_signal's group exit), and analyze crash must flag the kill either way.
sleep 30 &
rt_pid=$!
for _ in $(seq 200); do [[ $(cat "/proc/$rt_pid/comm" 2>/dev/null) == sleep ]] && break; sleep 0.01; done
kill -s RTMIN+3 "$rt_pid"
wait "$rt_pid" 2>/dev/null
dd if=/dev/zero of=data bs=64k count=32 conv=fsync status=none
mkdir "$cg" || fail "cannot create memory cgroup $cg"
if [[ -f $cg/memory.limit_in_bytes ]]; then echo 32M >"$cg/memory.limit_in_bytes"; else echo 32M >"$cg/memory.max"; fi
# tail buffers an endless line from /dev/zero: memory grows until the cgroup's OOM killer acts.
sh -c "echo \$\$ > $cg/cgroup.procs; exec tail /dev/zero" 2>/dev/null
[[ $? == 137 ]] || fail "the memory hog was not OOM-killed"
rmdir "$cg" || fail "cannot remove $cg"
sleep 0.5
kill -INT "$epid"
wait "$epid"
rc=$?
[[ $rc == 0 ]] || fail "engine exited $rc after SIGINT"
dir=$(run_dir_of out1.txt)
[[ -d $dir ]] || fail "no run folder in the output"
for f in main.log run.json snap.dat keyevents.dat; do
	[[ -f $dir/$f ]] || fail "$dir/$f missing"
	[[ $(stat -c %a "$dir/$f") == 600 ]] || fail "$dir/$f is not mode 0600"
done
ls -A "$dir" | grep -q '^\.' && fail "temporary files left in $dir: $(ls -A "$dir")"
grep -q 'DONE' "$dir/main.log" || fail "main.log lacks the engine's output"
entries=$(node -e 'const d=JSON.parse(require("fs").readFileSync(process.argv[1],"utf8")); console.log(d.sessions.filter(s=>s.mode==="buffering")[0].snapshot_entries)' "$dir/run.json") ||
	fail "run.json unreadable"
n=$(events_in "$dir/snap.dat")
echo "snap.dat: $n events, ring entries $entries"
[[ $entries -gt 0 && $n == "$entries" ]] || fail "snap.dat has $n events, the ring held $entries"
trace-cmd report "$dir/keyevents.dat" >keys1.txt 2>/dev/null || fail "trace-cmd cannot read keyevents.dat"
grep -qE 'signal_deliver: +sig=11 ' keys1.txt || fail "no SIGSEGV delivery in keyevents.dat"
grep -qE 'page_fault_user: +address=0x0 ' keys1.txt || fail "no NULL-page fault in keyevents.dat"
grep -q 'mark_victim:' keys1.txt || fail "no OOM kill (mark_victim) in keyevents.dat"
grep -q 'sched_process_fork:' keys1.txt || fail "no forks in keyevents.dat"
echo "keyevents.dat: $(wc -l <keys1.txt) lines with the crash and the OOM kill"
if [[ -n $analyze ]]; then
	# The same crash and OOM kill, with their stories, as a user reads them.
	"$analyze" crash "$dir/keyevents.dat" --rules "$profile" >crash1.txt 2>&1 || fail "analyze crash failed on keyevents.dat"
	grep -q 'CRASH: ' crash1.txt || fail "analyze crash does not flag the SIGSEGV"
	grep -qE 'mark_victim|OOM' crash1.txt || fail "analyze crash does not show the OOM kill"
	grep -q 'The OOM killer chose' crash1.txt || fail "analyze crash lacks the OOM kill's story"
	grep -q "KILLED: sleep (pid $rt_pid) was killed by" crash1.txt ||
		fail "analyze crash does not flag sleep (pid $rt_pid) killed by a real-time signal: $(grep -A1 -E "pid $rt_pid\b" crash1.txt | head -4)"
	echo "analyze crash on keyevents.dat: $(grep -c 'CRASH' crash1.txt) crash line(s)"
fi

# 2. kill -9 leaves the instances; a restart removes them; the killed run's file is readable.
start_engine out2.txt
segv_child
sleep 2.5 # past the 1 s flush interval
kill -9 "$epid"
wait "$epid" 2>/dev/null
for i in "${instances[@]}"; do [[ -d $tracing/instances/$i ]] || fail "instance $i vanished after kill -9 (test assumption)"; done
dir2=$(run_dir_of out2.txt)
trace-cmd report "$dir2/keyevents.dat" >keys2.txt 2>/dev/null || fail "keyevents.dat of the killed run is unreadable"
grep -qE 'signal_deliver: +sig=11 ' keys2.txt || fail "the killed run's keyevents.dat lacks the crash flushed before the kill"
start_engine out3.txt
for i in "${instances[@]}"; do grep -q "removed tracefs instance '$i'" out3.txt || fail "restart did not report removing $i"; done
kill -INT "$epid"
wait "$epid" || fail "restarted engine exited $?"
for i in "${instances[@]}"; do [[ -d $tracing/instances/$i ]] && fail "instance $i left behind"; done
echo "record test: OK"
