#!/usr/bin/env bash
# check-tracedat.sh: records a real trace.dat (forks, a SIGSEGV child, exit codes) in a private tracefs
# instance, then checks analyze counts against trace-cmd report, the crash timeline and summary --json.
# usage: check-tracedat.sh ANALYZE HS_SEGV RULES   (root; exit 77 = cannot run here)
set -uo pipefail
analyze=$1 segv=$2 rules=$3

[[ $(id -u) == 0 ]] || { echo "SKIP: needs root for tracefs"; exit 77; }
command -v trace-cmd >/dev/null || { echo "SKIP: no trace-cmd"; exit 77; }
tracefs=/sys/kernel/tracing
[[ -d $tracefs/instances ]] || mount -t tracefs nodev $tracefs 2>/dev/null
[[ -d $tracefs/instances ]] || { echo "SKIP: no tracefs at $tracefs"; exit 77; }

inst=hs_test_tracedat_$$_$RANDOM
dir=$(mktemp -d)
cleanup() {
	# trace-cmd extract removes the instance; anything that failed before it must not leak one.
	if [[ -d $tracefs/instances/$inst ]]; then
		echo 0 >"$tracefs/instances/$inst/tracing_on" 2>/dev/null
		echo 0 >"$tracefs/instances/$inst/events/enable" 2>/dev/null
		rmdir "$tracefs/instances/$inst" || echo "cleanup: could not remove instance $inst"
	fi
	rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
fail=0
bad() { echo "FAIL: $*"; fail=1; }

mkdir "$tracefs/instances/$inst" || { echo "FAIL: cannot create instance $inst"; exit 1; }
i=$tracefs/instances/$inst
echo mono >"$i/trace_clock"
for e in sched/sched_process_exec sched/sched_process_exit sched/sched_process_fork signal/signal_deliver \
	signal/signal_generate syscalls/sys_enter_exit_group oom; do
	echo 1 >"$i/events/$e/enable" || bad "cannot enable $e"
done
echo 1 >"$i/tracing_on"
for n in 1 2 3 4 5; do /bin/true; done
"$segv" 2>/dev/null
segv_status=$?
sh -c 'exit 3'
echo 0 >"$i/tracing_on"
((segv_status == 139)) || bad "the SIGSEGV child exited with $segv_status, not 139"

dat=$dir/trace.dat
trace-cmd extract -B "$inst" -o "$dat" >"$dir/extract.log" 2>&1 || { cat "$dir/extract.log"; bad "trace-cmd extract failed"; exit 1; }
[[ -d $tracefs/instances/$inst ]] && echo "note: trace-cmd extract left $inst; cleanup removes it"

# counts: per event name, what trace-cmd report prints (the token after "[cpu] ts:").
trace-cmd report "$dat" 2>/dev/null | awk '{for (f = 1; f < NF - 1; f++) if ($f ~ /^\[[0-9]+\]$/) { ev = $(f + 2); sub(/:$/, "", ev); print ev; break }}' |
	sort | uniq -c | awk '{print $2 "\t" $1}' >"$dir/report.counts"
"$analyze" counts "$dat" >"$dir/analyze.out"
rc=$?
((rc == 0)) || bad "analyze counts exited $rc"
grep -v '^TOTAL' "$dir/analyze.out" | awk -F'\t' '{sub(/^event=/, "", $2); print $2 "\t" $3}' | sort >"$dir/analyze.counts"
diff -u "$dir/report.counts" "$dir/analyze.counts" || bad "analyze counts differ from trace-cmd report"
total=$(awk -F'\t' '$1 == "TOTAL" {print $2}' "$dir/analyze.out")
report_total=$(awk -F'\t' '{s += $2} END {print s + 0}' "$dir/report.counts")
[[ $total == "$report_total" ]] || bad "TOTAL $total, trace-cmd report has $report_total events"
# sorted by system then event, and every line in the documented shape
sort -c -t$'\t' -k1,1 -k2,2 <(grep -v '^TOTAL' "$dir/analyze.out") || bad "counts not sorted"
grep -vqP '^([a-z0-9_]+\tevent=[a-z0-9_]+\t[0-9]+|TOTAL\t[0-9]+)$' "$dir/analyze.out" && bad "counts lines in an unexpected shape"
grep -q $'^signal\tevent=signal_deliver\t' "$dir/analyze.out" || bad "no signal_deliver counted"
((total >= 20)) || bad "only $total events recorded"

# crash: the SIGSEGV child flagged with the signal name, its story and the catalog's alert tag.
"$analyze" crash "$dat" --rules "$rules" >"$dir/crash.out"
rc=$?
((rc == 0)) || bad "analyze crash exited $rc"
grep -qE '^[0-9]+\.[0-9]+ +signal/signal_deliver .* hs_segv .*\[crash\]$' "$dir/crash.out" || bad "no [crash]-tagged signal_deliver for hs_segv"
grep -q 'CRASH: hs_segv (pid [0-9]*) died of SIGSEGV' "$dir/crash.out" || bad "crash not flagged with SIGSEGV"
grep -q 'The task is acting on signal sig now' "$dir/crash.out" || bad "signal_deliver story missing"
grep -q 'exit: hs_segv (pid [0-9]*) ended by SIGSEGV' "$dir/crash.out" || bad "exit not tied to the signal"
grep -q 'exits with status 3' "$dir/crash.out" || bad "exit_group status 3 not decoded"
grep -qE '^[0-9]+ key events, 1 crash,' "$dir/crash.out" || bad "crash total is not 1"
# the rules' filter keeps SIGCHLD deliveries (sig 17) out of the timeline
grep -q 'SIGCHLD' "$dir/crash.out" && bad "filtered signal SIGCHLD shown"
"$analyze" crash "$dat" --rules "$rules" --json >"$dir/crash.json" || bad "analyze crash --json failed"
jq -e '.crashes == 1 and ([.timeline[] | select(.crash and .signal == "SIGSEGV" and .comm == "hs_segv")] | length) == 1' \
	"$dir/crash.json" >/dev/null || bad "crash --json does not hold the SIGSEGV crash"

# summary --json parses and agrees with counts.
"$analyze" summary "$dat" --rules "$rules" --json >"$dir/summary.json" || bad "analyze summary --json failed"
jq -e --argjson total "$total" --arg inst "$inst" \
	'.format == "trace.dat" and .events == $total and .version >= 6 and .cpus >= 1 and
	 ([.buffers[] | select(.name == $inst)] | length) == 1 and
	 ([.events_by_kind[] | select(.event == "signal_deliver" and .alert == "crash" and (.story | length) > 0)] | length) == 1' \
	"$dir/summary.json" >/dev/null || { bad "summary --json is not as expected"; head -c 2000 "$dir/summary.json"; }
"$analyze" summary "$dat" --rules "$rules" | grep -q 'signal_deliver \[crash\] - The task is acting' || bad "summary text lacks stories"

# damage: a truncated copy and a non-trace file are refused cleanly (exit 2), never a crash.
head -c 4000 "$dat" >"$dir/cut.dat"
"$analyze" counts "$dir/cut.dat" >/dev/null 2>&1
rc=$?
((rc == 2)) || bad "truncated trace.dat: exit $rc, expected 2"

((fail)) && { echo "--- crash output"; cat "$dir/crash.out"; exit 1; }
echo "ok: $total events, counts match trace-cmd report, crash flagged"
