set -e
t=/sys/kernel/tracing; inst=hs_replay_fixture; i=$t/instances/$inst
mkdir $i
echo mono > $i/trace_clock
for e in sched/sched_process_exec sched/sched_process_exit sched/sched_process_fork sched/sched_switch sched/sched_wakeup task syscalls/sys_enter_exit_group syscalls/sys_enter_fsync syscalls/sys_exit_fsync; do echo 1 > $i/events/$e/enable; done
echo 1 > $i/options/event-fork
echo $$ > $i/set_event_pid
echo 1 > $i/tracing_on
for n in 1 2 3 4 5 6; do /bin/true; echo x > /tmp/fx/f; sync /tmp/fx/f; sleep 0.2; done
sh -c 'exit 3' || true
echo 0 > $i/tracing_on
unshare -m sh -c "mount --bind /tmp/fx/empty /proc/kallsyms; mount --bind /tmp/fx/empty /sys/kernel/tracing/printk_formats; trace-cmd extract -B $inst -o /tmp/fx/fixture.dat" > /tmp/fx/extract.log 2>&1 || cat /tmp/fx/extract.log # -B $inst -o /tmp/fx/fixture.dat > /tmp/fx/extract.log 2>&1 || cat /tmp/fx/extract.log
[ -d $i ] && rmdir $i || true
