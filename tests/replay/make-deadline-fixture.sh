#!/usr/bin/env bash
# make-deadline-fixture.sh: how tests/replay/deadline-fixture.dat was made (root, tracefs, trace-cmd): the frame
# markers and process exits of three stand-in games (tests/ftrace/deadline-loop.c): one at 60 Hz that freezes 3 s
# busy, then draws again; one that draws 2 s and exits; one that draws 5 frames and then spins without any.
# The loops write the instance's own trace_marker (HS_TRACE_MARKER), so neither the top-level buffer nor another
# writer's markers are in the file; the instance records the process exits of this shell's children only
# (set_event_pid + event-fork); kallsyms and printk formats are hidden from trace-cmd extract
# (a private mount namespace) to keep the file small and free of kernel addresses.
# usage: sudo make-deadline-fixture.sh DEADLINE_LOOP OUT.dat
set -e
loop=$(realpath -m "${1:?usage: make-deadline-fixture.sh DEADLINE_LOOP OUT.dat}")
out=$(realpath -m "${2:?usage: make-deadline-fixture.sh DEADLINE_LOOP OUT.dat}")
t=/sys/kernel/tracing
inst=hs_replay_dl_fixture
i=$t/instances/$inst
work=$(mktemp -d)
mkdir "$i"
echo mono >"$i/trace_clock"
echo 1 >"$i/events/sched/sched_process_exit/enable"
export HS_TRACE_MARKER=$i/trace_marker
echo 1 >"$i/options/event-fork"
echo $$ >"$i/set_event_pid"
echo 1 >"$i/tracing_on"
"$loop" frames 60 3 3 1 busy Frame >"$work/hang.txt"
"$loop" frames 60 2 0 0 none Frame >"$work/exit.txt"
"$loop" frames 60 0.08 3 0 busy Frame >"$work/few.txt"
echo 0 >"$i/tracing_on"
cat "$work"/hang.txt
: >"$work/empty"
unshare -m sh -c "mount --bind $work/empty /proc/kallsyms; mount --bind $work/empty $t/printk_formats;
	trace-cmd extract -B $inst -o $out" >"$work/extract.log" 2>&1 || cat "$work/extract.log"
[ -d "$i" ] && rmdir "$i" || true
rm -rf "$work"
