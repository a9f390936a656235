#!/usr/bin/env bash
# check-launch.sh: one launch-mode case, checked with perf and trace-cmd. usage: check-launch.sh CASE DRIVER BUSY RULES
set -uo pipefail
case=$1 driver=$2 busy=$3 rules=$4
fail() { echo "launch test ($case): $*" >&2; exit 1; }
((EUID == 0)) || fail "needs root (perf_event_open with kernel frames, /proc/kallsyms)"
command -v perf >/dev/null || fail "perf is not installed"
command -v trace-cmd >/dev/null || fail "trace-cmd is not installed"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
# A copy next to which the default output lands (and nothing else writes).
cp "$busy" "$tmp/busy" || exit 1

# The sampling session's tracefs instance (launch mode scopes it to the program's tree).
instance=$(sed -n '/^  linux:/,$ s/^ *logger_name: *//p' "$rules" | head -n1)
[[ -n $instance ]] || fail "no linux logger_name in $rules"
no_instance() {
	[[ -e /sys/kernel/tracing/instances/$instance ]] && fail "tracefs instance '$instance' left behind"
	return 0
}
no_instance

# trace-cmd report of the events file; every event's pid must be the program's
# or one its tree forked. usage: tree_events DAT PROGRAM
tree_events() {
	local dat=$1 prog=$2
	[[ -f $dat ]] || fail "no events file $dat next to the samples"
	grep -qx "events $dat count [0-9]* lost 0" "$tmp/out.txt" || fail "result does not name $dat with its count (or events were lost)"
	trace-cmd report "$dat" >"$tmp/events.txt" 2>"$tmp/events.err" || { cat "$tmp/events.err"; fail "trace-cmd report $dat failed"; }
	echo "--- trace-cmd report $(basename "$dat") (head) ---"
	grep -v '^cpus=' "$tmp/events.txt" | head -n 8
	sed -n 's/^ *.*-\([0-9][0-9]*\) *\[[0-9]*\] .*/\1/p' "$tmp/events.txt" >"$tmp/event_pids.txt"
	local n counted
	n=$(wc -l <"$tmp/event_pids.txt") counted=$(sed -n 's/^events .* count \([0-9]*\) .*/\1/p' "$tmp/out.txt")
	[[ $n == "$counted" ]] || fail "trace-cmd report shows $n events, the launch counted $counted"
	pid=$(grep -F "sched_process_exec:" "$tmp/events.txt" | grep -F "filename=$prog " | head -n1 | sed -n 's/.* pid=\([0-9]*\) .*/\1/p')
	[[ -n $pid ]] || fail "no sched_process_exec of $prog"
	grep -E "sched_process_exit: .* pid=$pid " "$tmp/events.txt" >/dev/null || fail "no sched_process_exit of pid $pid"
	local tree
	tree=$( { echo "$pid"; sed -n 's/.*sched_process_fork:.* child_pid=\([0-9]*\).*/\1/p' "$tmp/events.txt"; } | sort -u)
	local stray
	stray=$(grep -vxF -f <(echo "$tree") "$tmp/event_pids.txt" | sort -u | tr '\n' ' ')
	[[ -z $stray ]] || fail "events of processes outside the launched tree ($(echo $tree)): $stray"
	echo "events file: $n events, all of pids $(echo $tree)"
}

samples_in() { perf report -i "$1" -D 2>/dev/null | grep -c 'PERF_RECORD_SAMPLE('; }
field() { grep '^samples ' "$tmp/out.txt" | sed -n "s/.*\b$1 \([^ ]*\).*/\1/p" | tail -n1; }

case $case in
hot)
	"$driver" --rules "$rules" --launch "$tmp/busy" --args 1.0 >"$tmp/out.txt" 2>&1 || { cat "$tmp/out.txt"; fail "driver failed"; }
	cat "$tmp/out.txt"
	grep -qx "DONE $tmp/busy OK" "$tmp/out.txt" || fail "no DONE line"
	out=$(tail -n1 "$tmp/out.txt" | sed -n 's/^output: //p')
	# The default output: next to the program, named from the session's output.
	[[ $out == "$tmp/perf.data" && -f $out ]] || fail "output not next to the program: '$out'"
	ls "$tmp" | grep -q '\.tmp\.' && fail "temporary file left behind"
	perf report -i "$out" --stdio --no-children --sort symbol 2>"$tmp/report.err" >"$tmp/report.txt" ||
		{ cat "$tmp/report.err"; fail "perf report failed"; }
	echo "--- perf report --no-children --sort symbol (top) ---"
	grep -v '^#' "$tmp/report.txt" | grep -v '^$' | grep -v '^ *|' | grep -v -- '---' | head -n 5
	top=$(grep -v '^#' "$tmp/report.txt" | grep -E '^ +[0-9.]+%' | head -n1)
	[[ $top == *busy_hot_spin* ]] || fail "top symbol is not busy_hot_spin: $top"
	grep -q 'busy_cold_spin' "$tmp/report.txt" || fail "busy_cold_spin missing"
	# Call chains resolve through main.
	grep -q 'main' "$tmp/report.txt" || fail "no call chain through main"
	# perf's default view (children, since the file has call chains) puts the
	# callers main/__libc_start_call_main first at ~100%; the hot function must
	# have the highest Self there.
	perf report -i "$out" --stdio --sort symbol >"$tmp/children.txt" 2>/dev/null || fail "perf report (children) failed"
	top_self=$(grep -E '^ +[0-9.]+% +[0-9.]+%' "$tmp/children.txt" | sort -k2,2 -g -r | head -n1)
	[[ $top_self == *busy_hot_spin* ]] || fail "highest Self in the children view is not busy_hot_spin: $top_self"
	# Sample count: CPU time x rate, within 10%; the file holds what the driver counted.
	n=$(samples_in "$out")
	counted=$(field samples) cpu_ns=$(field cpu_ns) hz=$(field hz)
	expected=$(( cpu_ns * hz / 1000000000 ))
	echo "samples in file $n, counted $counted, expected $expected (cpu ${cpu_ns} ns x ${hz} Hz)"
	[[ $n == "$counted" ]] || fail "file has $n samples, the sampler counted $counted"
	(( expected > 0 && n * 10 >= expected * 9 && n * 10 <= expected * 11 )) || fail "$n samples, expected $expected +-10%"
	grep -q 'build-ids' "$tmp/out.txt" || fail "no build-id count"
	perf report -i "$out" --header-only >"$tmp/header.txt" 2>/dev/null || fail "perf report --header-only failed"
	grep -q "^# hostname" "$tmp/header.txt" || fail "header features unreadable"
	perf buildid-list -i "$out" >"$tmp/buildids.txt" 2>/dev/null || fail "perf buildid-list failed"
	want=$(readelf -n "$tmp/busy" | sed -n 's/.*Build ID: //p')
	grep -q "^$want $tmp/busy\$" "$tmp/buildids.txt" || fail "build-id of the program missing or wrong (want $want)"
	grep -q ' \[kernel.kallsyms\]$' "$tmp/buildids.txt" || fail "no kernel build-id"
	# Kernel frames resolve through kallsyms (no raw 0xffff... on top).
	grep -E '^ +[0-9.]+% +\[k\] 0x' "$tmp/report.txt" && fail "kernel frames unresolved"
	# The tracefs side: next to perf.data, the program's lifetime events only.
	tree_events "$tmp/perf.dat" "$tmp/busy"
	;;
crash)
	"$driver" --rules "$rules" --launch "$tmp/busy" --args "0.3 segv" --out "$tmp/crash.data" >"$tmp/out.txt" 2>&1 ||
		{ cat "$tmp/out.txt"; fail "driver failed"; }
	cat "$tmp/out.txt"
	grep -q 'by signal 11 (SIGSEGV)' "$tmp/out.txt" || fail "the crash signal is not reported"
	grep -q ' signal 11 ' "$tmp/out.txt" || fail "result does not carry signal 11"
	perf report -i "$tmp/crash.data" --stdio --no-children --sort symbol >"$tmp/report.txt" 2>&1 || fail "perf report failed"
	grep -q busy_hot_spin "$tmp/report.txt" || fail "crash profile lacks busy_hot_spin"
	tree_events "$tmp/crash.dat" "$tmp/busy"
	grep -E "signal_deliver: +sig=11 " "$tmp/events.txt" || fail "no signal_deliver sig=11 in crash.dat"
	;;
timeout)
	start=$(date +%s)
	"$driver" --rules "$rules" --launch "$tmp/busy" --args "0.2 hang" --out "$tmp/hang.data" --timeout-sec 1 \
		>"$tmp/out.txt" 2>&1 || { cat "$tmp/out.txt"; fail "driver failed"; }
	cat "$tmp/out.txt"
	# Functional, not timed: the program hangs forever, so returning at all
	# means the timeout killed it (the bound only catches a hung launcher;
	# sanitizer builds under parallel load are slow).
	(( $(date +%s) - start <= 120 )) || fail "the launcher did not return after the timeout"
	grep -q "timed_out 1" "$tmp/out.txt" || fail "the result does not say the program was timed out"
	grep -q 'timeout after 1 s: killing' "$tmp/out.txt" || fail "the kill is not announced"
	grep -q 'killed by signal 9 (SIGKILL)' "$tmp/out.txt" || fail "the kill is not reported"
	grep -q 'timed_out 1' "$tmp/out.txt" || fail "result does not say timed_out"
	sleep 0.2
	pgrep -f "$tmp/busy" && fail "the program or its forked child survived"
	# Both processes of the tree were sampled (inherit).
	perf report -i "$tmp/hang.data" --stdio --no-children --sort pid >"$tmp/pids.txt" 2>/dev/null || fail "perf report --sort pid failed"
	(( $(grep -cE '^ +[0-9.]+% +[0-9]+:busy' "$tmp/pids.txt") >= 2 )) || { cat "$tmp/pids.txt"; fail "the forked child was not sampled"; }
	perf report -i "$tmp/hang.data" --stdio --no-children --sort symbol >"$tmp/report.txt" 2>&1 || fail "perf report failed"
	grep -q busy_hot_spin "$tmp/report.txt" || fail "no samples of busy_hot_spin"
	# event-fork: the forked child is in the events too.
	tree_events "$tmp/hang.dat" "$tmp/busy"
	grep -q 'sched_process_fork:' "$tmp/events.txt" || fail "the fork of the hanging child is not in hang.dat"
	;;
args)
	# Quoted --args reach the program as words; a missing program fails with the log.
	"$driver" --rules "$rules" --launch "$tmp/busy" --args "'0.1' \"\"" --out "$tmp/a.data" >"$tmp/out.txt" 2>&1 ||
		{ cat "$tmp/out.txt"; fail "driver failed"; }
	grep -q '^DONE ' "$tmp/out.txt" || fail "no DONE"
	"$driver" --rules "$rules" --launch "$tmp/missing" --out "$tmp/m.data" >"$tmp/out.txt" 2>&1 && fail "missing program succeeded"
	cat "$tmp/out.txt"
	grep -q '^FAILED ' "$tmp/out.txt" || fail "no FAILED line"
	grep -q 'not found' "$tmp/out.txt" || fail "log lines not printed"
	"$driver" --rules "$rules" --launch "$tmp/busy" --cwd "$tmp/nodir" --out "$tmp/m.data" >"$tmp/out.txt" 2>&1 && fail "bad cwd succeeded"
	cat "$tmp/out.txt"
	grep -q 'cannot run' "$tmp/out.txt" || fail "bad cwd not reported"
	[[ -e $tmp/m.data || -e $tmp/m.dat ]] && fail "a failed launch left an output"
	ls "$tmp" | grep -q '\.cpu[0-9]' && fail "per-CPU scratch file left behind"
	ls "$tmp" | grep -q '\.tmp\.' && fail "temporary file left behind"
	;;
*) fail "unknown case" ;;
esac
no_instance
echo "launch test ($case): ok"
