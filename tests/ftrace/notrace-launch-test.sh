#!/usr/bin/env bash
# notrace-launch-test.sh: launch mode still records the launched tree (the engine's self-exclusion must not swallow it), writes owner-only outputs, and leaves the program's umask alone.
# usage: notrace-launch-test.sh ENGINE PROFILE   (root; the profile's one instance is hindsight_test_notrace_launch)
set -uo pipefail
engine=$1 profile=$2
instance=hindsight_test_notrace_launch
tracing=/sys/kernel/tracing
[[ -d $tracing/instances ]] || mount -t tracefs nodev $tracing
tmp=$(mktemp -d)
# An instance whose lock a live engine holds (another run of these tests, say) is not ours to remove.
held() { local l=/run/hindsight/$1.lock; [[ -f $l ]] && grep -q ":$(stat -c %i "$l") " /proc/locks; }
cleanup() {
	[[ -d $tracing/instances/$instance ]] && ! held "$instance" && rmdir "$tracing/instances/$instance"
	rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "notrace launch test: FAIL: $*" >&2; [[ -f $tmp/out.txt ]] && tail -20 "$tmp/out.txt"; exit 1; }
[[ $(id -u) == 0 ]] || fail "must run as root"
cd "$tmp" || exit 1
cp /bin/true "$tmp/hs_tree_child"
# The usual umask: without the fix the outputs come out 0644.
umask 022
"$engine" --rules "$profile" --launch /bin/sh --args "-c 'umask >$tmp/umask.txt; $tmp/hs_tree_child; $tmp/hs_tree_child'" \
	--out "$tmp/p.data" >out.txt 2>&1 || fail "engine --launch exited $?"
dat=$(sed -n 's/^events: \(.*\) (.*/\1/p' out.txt)
[[ -f $dat ]] || fail "no events file named in the output"
for f in "$tmp/p.data" "$dat"; do
	[[ $(stat -c %a "$f") == 600 ]] || fail "$f is mode $(stat -c %a "$f"), not 0600 like a run folder's files"
done
[[ $(cat umask.txt) == 0022 ]] || fail "the program ran with umask $(cat umask.txt), not the 0022 it was given"
trace-cmd report "$dat" >events.txt 2>/dev/null || fail "trace-cmd cannot read $dat"
n=$(grep -cF "filename=$tmp/hs_tree_child " events.txt)
echo "launched tree: $(grep -c 'sched_process_exec:' events.txt) execs, $n of the grandchild; outputs 0600; program umask $(cat umask.txt)"
grep -qE 'sched_process_exec: .*filename=/bin/sh ' events.txt || fail "the launched program's exec is missing"
[[ $n == 2 ]] || fail "the tree's children: $n execs of hs_tree_child, want 2"
echo "notrace launch test: OK"
