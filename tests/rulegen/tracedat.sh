#!/usr/bin/env bash
# tracedat.sh: records a small trace.dat in a private tracefs instance and checks that rulegen --counts
# reads it as analyze counts does, with a positive length from its first and last event.
# usage: tracedat.sh RULEGEN ANALYZE   (root; exit 77 = cannot run here)
set -uo pipefail
rulegen=$1 analyze=$2
[[ $(id -u) == 0 ]] || { echo "SKIP: needs root for tracefs"; exit 77; }
command -v trace-cmd >/dev/null || { echo "SKIP: no trace-cmd"; exit 77; }
tracefs=/sys/kernel/tracing
[[ -d $tracefs/instances ]] || { echo "SKIP: no tracefs at $tracefs"; exit 77; }
inst=hs_test_rulegen_$$_$RANDOM
dir=$(mktemp -d)
cleanup() {
	if [[ -d $tracefs/instances/$inst ]]; then
		echo 0 >"$tracefs/instances/$inst/tracing_on" 2>/dev/null
		echo 0 >"$tracefs/instances/$inst/events/enable" 2>/dev/null
		rmdir "$tracefs/instances/$inst" || echo "cleanup: could not remove instance $inst"
	fi
	rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
mkdir "$tracefs/instances/$inst" || { echo "FAIL: cannot create instance $inst"; exit 1; }
i=$tracefs/instances/$inst
echo mono >"$i/trace_clock"
for e in sched/sched_process_exec sched/sched_process_exit sched/sched_process_fork; do
	echo 1 >"$i/events/$e/enable" || { echo "FAIL: cannot enable $e"; exit 1; }
done
echo 1 >"$i/tracing_on"
for n in 1 2 3 4 5; do
	/bin/true
	sleep 0.05
done
echo 0 >"$i/tracing_on"
dat=$dir/trace.dat
trace-cmd extract -B "$inst" -o "$dat" >"$dir/extract.log" 2>&1 || { cat "$dir/extract.log"; echo "FAIL: trace-cmd extract"; exit 1; }
"$rulegen" --counts "$dat" >"$dir/mine" || { echo "FAIL: rulegen --counts exited $?"; exit 1; }
"$analyze" counts "$dat" >"$dir/theirs" || { echo "FAIL: analyze counts exited $?"; exit 1; }
cat "$dir/mine"
fail=0
diff -u "$dir/theirs" <(grep -v '^#' "$dir/mine") || { echo "FAIL: rulegen and analyze count differently"; fail=1; }
seconds=$(awk '$1 == "#" && $2 == "seconds:" {print $3}' "$dir/mine")
awk -v s="$seconds" 'BEGIN {exit !(s > 0.1)}' || { echo "FAIL: length $seconds s (5 runs 50 ms apart)"; fail=1; }
((fail == 0)) && echo "rulegen reads trace.dat: ok"
exit $fail
