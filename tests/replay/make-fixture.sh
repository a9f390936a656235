#!/usr/bin/env bash
# make-fixture.sh: how tests/replay/fixture.dat was made (root, tracefs, trace-cmd): a small shell loop's key events.
# The events follow this shell and its children only (set_event_pid + event-fork), so other load stays out; kallsyms
# and printk formats are hidden from trace-cmd extract (a private mount namespace) to keep the file ~150 KB and
# free of kernel addresses. usage: sudo make-fixture.sh OUT.dat
set -e
out=$(realpath -m "${1:?usage: make-fixture.sh OUT.dat}")
t=/sys/kernel/tracing
inst=hs_replay_fixture
i=$t/instances/$inst
work=$(mktemp -d)
mkdir "$i"
echo mono >"$i/trace_clock"
for e in sched/sched_process_exec sched/sched_process_exit sched/sched_process_fork sched/sched_switch \
	sched/sched_wakeup task syscalls/sys_enter_exit_group syscalls/sys_enter_fsync syscalls/sys_exit_fsync; do
	echo 1 >"$i/events/$e/enable"
done
echo 1 >"$i/options/event-fork"
echo $$ >"$i/set_event_pid"
echo 1 >"$i/tracing_on"
for n in 1 2 3 4 5 6; do
	/bin/true
	echo x >"$work/f"
	sync "$work/f"
	sleep 0.2
done
sh -c 'exit 3' || true
echo 0 >"$i/tracing_on"
: >"$work/empty"
unshare -m sh -c "mount --bind $work/empty /proc/kallsyms; mount --bind $work/empty $t/printk_formats;
	trace-cmd extract -B $inst -o $out" >"$work/extract.log" 2>&1 || cat "$work/extract.log"
[ -d "$i" ] && rmdir "$i" || true
rm -rf "$work"
