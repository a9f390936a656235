#!/usr/bin/env bash
# make-thread-fixture.sh: how tests/analyze/thread-fixture.dat was made (root, tracefs, trace-cmd): a bash that
# spins 0.2 s, sleeps 0.6 s waiting for an external sleep, spins 0.4 s and raises SIGSEGV, with the scheduler's,
# the signals' and the interrupts' events of it and its children (set_event_pid + event-fork keep other load out;
# a switch or wake-up is kept when either task is ours). kallsyms and printk formats are hidden from trace-cmd
# extract (a private mount namespace) to keep the file small and free of kernel addresses.
# With "wrap" (tests/analyze/wrap-fixture.dat): a 16 KB ring per CPU that wraps under a loop of /bin/true for 1.5 s
# before the crash, so the report must say how little of the second the ring still covers.
# usage: sudo make-thread-fixture.sh OUT.dat [wrap]   (then analyze report OUT.dat: the thread section)
set -e
out=$(realpath -m "${1:?usage: make-thread-fixture.sh OUT.dat [wrap]}")
mode=${2:-}
t=/sys/kernel/tracing
inst=hindsight_test_rpt_fixture
i=$t/instances/$inst
work=$(mktemp -d)
mkdir "$i"
echo mono >"$i/trace_clock"
if [[ $mode == wrap ]]; then echo 16 >"$i/buffer_size_kb"; else echo 1024 >"$i/buffer_size_kb"; fi
for e in sched/sched_process_exec sched/sched_process_exit sched/sched_process_fork sched/sched_switch \
	sched/sched_waking sched/sched_wakeup sched/sched_wakeup_new signal/signal_generate signal/signal_deliver \
	syscalls/sys_enter_exit_group irq/irq_handler_entry irq/irq_handler_exit irq/softirq_entry irq/softirq_exit; do
	echo 1 >"$i/events/$e/enable"
done
echo 1 >"$i/options/event-fork"
# the workload waits for the pid list: its own pid goes in before it starts
if [[ $mode == wrap ]]; then
	bash -c 'read -r _ <"$1"; end=$((${EPOCHREALTIME/./} + 1500000)); while ((${EPOCHREALTIME/./} < end)); do /bin/true; done
		kill -SEGV $$' _ <(sleep 0.3; echo go) 2>/dev/null &
else
	bash -c 'read -r _ <"$1"; spin() { local t=$((${EPOCHREALTIME/./} + $1)); while ((${EPOCHREALTIME/./} < t)); do :; done; }
		spin 200000; sleep 0.6; spin 400000; kill -SEGV $$' _ <(sleep 0.3; echo go) 2>/dev/null &
fi
pid=$!
echo $pid >"$i/set_event_pid"
echo 1 >"$i/tracing_on"
wait $pid || true
sleep 0.1
echo 0 >"$i/tracing_on"
: >"$work/empty"
unshare -m sh -c "mount --bind $work/empty /proc/kallsyms; mount --bind $work/empty $t/printk_formats;
	trace-cmd extract -B $inst -o $out" >"$work/extract.log" 2>&1 || cat "$work/extract.log"
[ -d "$i" ] && rmdir "$i" || true
rm -rf "$work"
echo "workload pid $pid"
