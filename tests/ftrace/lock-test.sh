#!/usr/bin/env bash
# lock-test.sh: a second engine with the same instance names refuses, naming the running one's pid, and leaves it recording; a kill -9'd engine's instances are still removed.
# usage: lock-test.sh ENGINE PROFILE   (root; the profile names the instances hindsight_test_lock_*, ring first)
# HS_TEST_START_TIMEOUT (s, default 90): how long an engine may take to start (sanitizer builds are slow).
set -uo pipefail
engine=$1 profile=$2
instances=(hindsight_test_lock_ring hindsight_test_lock_keys)
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
fail() { echo "lock test: FAIL: $*" >&2; for f in "$tmp"/*/out.txt; do echo "--- $f"; grep '^engine' "$f" | tail -20; done; exit 1; }
[[ $(id -u) == 0 ]] || fail "must run as root"

start_engine() { # $1: a folder of its own (the engine's cwd, with out.txt); sets $epid
	mkdir -p "$1"
	(cd "$1" && exec "$engine" --rules "$profile" >out.txt 2>&1) &
	epid=$!
	pids+=("$epid")
	local limit=${HS_TEST_START_TIMEOUT:-90}
	for _ in $(seq $((limit * 10))); do
		grep -q '^engine: recording' "$1/out.txt" && return 0
		kill -0 "$epid" 2>/dev/null || fail "engine in $1 exited early"
		sleep 0.1
	done
	fail "engine in $1 did not start recording within $limit s"
}
run_dir_of() { sed -n 's/^engine: run folder \(.*\) (pid.*/\1/p' "$1/out.txt"; }
events_in() { trace-cmd report "$1" 2>/dev/null | grep -cE '^ *\S.*\[[0-9]+\] +[0-9]+\.[0-9]+: '; }

# 1. Engine A records; B, with the same profile, must refuse and leave A alone.
start_engine "$tmp/a"
apid=$epid
mkdir -p "$tmp/b"
# --duration-sec: should B wrongly start, it still ends by itself.
(cd "$tmp/b" && exec "$engine" --rules "$profile" --duration-sec 2) >"$tmp/b/out.txt" 2>&1
rc=$?
cat "$tmp/b/out.txt"
[[ $rc != 0 ]] || fail "a second engine with the same instance names started (exit 0)"
grep -q "belongs to a running engine, pid $apid " "$tmp/b/out.txt" || fail "the second engine does not name the running engine's pid $apid"
grep -q "removed tracefs instance" "$tmp/b/out.txt" && fail "the second engine removed a running engine's instance"
[[ -z $(ls -A "$tmp/b/logs/runs" 2>/dev/null) ]] || fail "the refused engine left a run folder: $(ls "$tmp/b/logs/runs")"
for i in "${instances[@]}"; do [[ -d $tracing/instances/$i ]] || fail "instance $i of the running engine is gone"; done
for _ in $(seq 20); do /bin/true; done
kill -0 "$apid" 2>/dev/null || fail "engine A died"
kill -INT "$apid"
wait "$apid"
rc=$?
[[ $rc == 0 ]] || fail "engine A exited $rc after SIGINT"
dir=$tmp/a/$(run_dir_of "$tmp/a")
n=$(events_in "$dir/snap.dat")
echo "engine A's snap.dat: $n events"
[[ $n -gt 0 ]] || fail "engine A's ring snapshot has no events"

# 2. kill -9 leaves the instances and the lock file (nobody holds it); C removes them and records.
start_engine "$tmp/c"
kill -9 "$epid"
wait "$epid" 2>/dev/null
for i in "${instances[@]}"; do [[ -d $tracing/instances/$i ]] || fail "instance $i vanished after kill -9 (test assumption)"; done
start_engine "$tmp/d"
for i in "${instances[@]}"; do
	grep -q "removed tracefs instance '$i'" "$tmp/d/out.txt" || fail "the next engine did not remove the killed one's $i"
done
for _ in $(seq 20); do /bin/true; done
kill -INT "$epid"
wait "$epid" || fail "the engine after the kill -9 exited $?"
dir=$tmp/d/$(run_dir_of "$tmp/d")
n=$(events_in "$dir/snap.dat")
echo "snap.dat after a kill -9 and restart: $n events"
[[ $n -gt 0 ]] || fail "the engine after the kill -9 recorded nothing in its ring"
for i in "${instances[@]}"; do [[ -d $tracing/instances/$i ]] && fail "instance $i left behind"; done
echo "lock test: OK"
