#!/usr/bin/env bash
# make-seeds.sh: how tests/tracedat/seeds/*.dat were made (root, tracefs, trace-cmd 3.1.6): small real trace.dat files.
# A short shell's exec/exit/signal/switch events go to the top buffer and its forks/exits to an instance (both
# follow that shell only: set_event_pid + event-fork), then `trace-cmd extract -t -B` and `trace-cmd convert` write them in each layout
# the reader knows (`trace-cmd record` cannot run here: lockdown refuses it ftrace_enabled):
#   v6.dat           file version 6 (sequential headers, "flyrecord" CPU pairs, a BUFFER option for the instance)
#   v7-none.dat      version 7 sections, nothing compressed
#   v7-zstd.dat      version 7, sections and CPU data compressed with zstd
#   v7-lost.dat      version 7 of an 8 KB-per-CPU instance that overflowed: pages that say events were lost
# kallsyms and printk formats are hidden from trace-cmd (a private mount namespace, as tests/replay/make-fixture.sh
# does), so the files stay small for the fuzzer and hold no kernel addresses. The top buffer's events and pid
# filter are switched off again at the end, its ring cleared.
# usage: flock /tmp/hs-root.lock tests/tracedat/make-seeds.sh OUTDIR   (root)
set -euo pipefail
out=$(realpath -m "${1:?usage: make-seeds.sh OUTDIR}")
t=/sys/kernel/tracing
mkdir -p "$out"
work=$(mktemp -d)
b=hs_seed_b_$$
lost=hs_seed_lost_$$
top_events=(sched/sched_process_exec sched/sched_process_exit sched/sched_switch sched/sched_wakeup
	signal/signal_generate signal/signal_deliver syscalls/sys_enter_exit_group)
clock_before=$(sed 's/.*\[\(.*\)\].*/\1/' "$t/trace_clock")
cleanup() {
	echo 0 >"$t/tracing_on"
	for e in "${top_events[@]}"; do echo 0 >"$t/events/$e/enable"; done
	echo >"$t/set_event_pid"
	echo 0 >"$t/options/event-fork"
	echo "$clock_before" >"$t/trace_clock"
	: >"$t/trace"
	echo 1 >"$t/tracing_on"
	for i in "$b" "$lost"; do
		[[ -d $t/instances/$i ]] && { echo 0 >"$t/instances/$i/tracing_on"; rmdir "$t/instances/$i"; }
	done
	rm -rf "$work"
}
trap cleanup EXIT
: >"$work/empty"
# Only the formats of the recorded events (and ftrace's own), and only the traced shell's comms, are saved: a
# copy of those files is mounted over tracefs's in the namespace extract runs in.
mkdir -p "$work/events/ftrace"
cat "$t/events/header_page" >"$work/events/header_page"
cat "$t/events/header_event" >"$work/events/header_event"
for f in "$t"/events/ftrace/*/format; do
	e=$(basename "$(dirname "$f")")
	mkdir -p "$work/events/ftrace/$e"
	cat "$f" >"$work/events/ftrace/$e/format"
done
for e in "${top_events[@]}" sched/sched_process_fork; do
	mkdir -p "$work/events/$e"
	cat "$t/events/$e/format" >"$work/events/$e/format"
done
hide="mount --bind $work/empty /proc/kallsyms; mount --bind $work/empty $t/printk_formats;
	grep -E ' (bash|sh|true)\$' $t/saved_cmdlines >$work/cmdlines; mount --bind $work/cmdlines $t/saved_cmdlines;
	mount --bind $work/events $t/events"

# The traced shell: forks, execs, a signal, an exit status.
echo 0 >"$t/tracing_on"
: >"$t/trace"
echo mono >"$t/trace_clock"
mkdir "$t/instances/$b"
echo mono >"$t/instances/$b/trace_clock"
for e in "${top_events[@]}"; do echo 1 >"$t/events/$e/enable"; done
echo 1 >"$t/instances/$b/events/sched/sched_process_fork/enable"
echo 1 >"$t/instances/$b/events/sched/sched_process_exit/enable"
bash -c "
	for f in $t/set_event_pid $t/instances/$b/set_event_pid; do echo \$\$ >\$f; done
	echo 1 >$t/options/event-fork; echo 1 >$t/instances/$b/options/event-fork
	echo 1 >$t/tracing_on; echo 1 >$t/instances/$b/tracing_on
	for n in 1 2 3; do /bin/true; done
	sh -c 'kill -USR1 \$\$; exit 0' || true
	sh -c 'exit 3' || true
	echo 0 >$t/tracing_on; echo 0 >$t/instances/$b/tracing_on" 2>/dev/null
# extract writes its default layout; convert rewrites it in each version and compression.
unshare -m sh -c "$hide; cd $work && trace-cmd extract -t -B $b -o $work/all.dat" >"$work/log" 2>&1 || {
	cat "$work/log"
	exit 1
}
convert() { # OUT.dat then options
	trace-cmd convert -i "$work/all.dat" -o "$1" "${@:2}" >"$work/log" 2>&1 || { cat "$work/log"; exit 1; }
}
convert "$out/v6.dat" --file-version 6
convert "$out/v7-none.dat" --file-version 7 --compression none
convert "$out/v7-zstd.dat" --file-version 7 --compression zstd

# Overflow: a tiny ring, far more switches than it holds; extract keeps the newest pages.
mkdir "$t/instances/$lost"
i=$t/instances/$lost
echo 8 >"$i/buffer_size_kb"
echo mono >"$i/trace_clock"
echo 1 >"$i/events/sched/sched_switch/enable"
echo 1 >"$i/events/sched/sched_wakeup/enable"
echo 1 >"$i/tracing_on"
for n in $(seq 1 300); do /bin/true; done
echo 0 >"$i/tracing_on"
unshare -m sh -c "$hide; cd $work && trace-cmd extract -B $lost -o $out/v7-lost.dat --compression none" \
	>"$work/log" 2>&1 || { cat "$work/log"; exit 1; }
ls -l "$out"
