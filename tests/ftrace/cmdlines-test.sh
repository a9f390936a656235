#!/usr/bin/env bash
# cmdlines-test.sh: comm names survive in keyevents.dat although the kernel's saved_cmdlines changes and forgets them.
# A probe process with a distinctive name runs once; then hundreds of other
# processes churn (the kernel keeps only the last 128 comms, and its
# saved_cmdlines file changes while libtracecmd copies it). keyevents.dat must
# still name the probe's events with its comm in `trace-cmd report`.
# usage: cmdlines-test.sh ENGINE PROFILE   (root; the profile names the instance hindsight_test_cmdl)
# HS_TEST_START_TIMEOUT (s, default 90): how long the engine may take to start (sanitizer builds are slow).
set -uo pipefail
engine=$1 profile=$2
instances=(hindsight_test_cmdl)
tracing=/sys/kernel/tracing
[[ -d $tracing/instances ]] || mount -t tracefs nodev $tracing
tmp=$(mktemp -d)
pids=()

cleanup() {
	for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
	for i in "${instances[@]}"; do [[ -d $tracing/instances/$i ]] && rmdir "$tracing/instances/$i"; done
	rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "cmdlines test: FAIL: $*" >&2; for f in "$tmp"/out*.txt; do echo "--- $f"; grep '^engine' "$f" | tail -20; done; exit 1; }
[[ $(id -u) == 0 ]] || fail "must run as root"
cd "$tmp" || exit 1
run_dir_of() { sed -n 's/^engine: run folder \(.*\) (pid.*/\1/p' "$1"; }

"$engine" --rules "$profile" >out1.txt 2>&1 &
epid=$!
pids+=("$epid")
limit=${HS_TEST_START_TIMEOUT:-90}
for _ in $(seq $((limit * 10))); do
	grep -q '^engine: recording' out1.txt && break
	kill -0 "$epid" 2>/dev/null || fail "engine exited early"
	sleep 0.1
done
grep -q '^engine: recording' out1.txt || fail "engine did not start recording within $limit s"

# The probe: a copy of sleep, so its comm is its file name.
cp /bin/sleep hs_comm_probe && cp /bin/true hs_churn || fail "cannot copy the probe programs"
./hs_comm_probe 0.2 &
probe=$!
wait "$probe"
sleep 2.5 # past two flushes: keyevents.dat has been rebuilt with the probe in it
# Churn: far more than the kernel's 128 saved comms, during several rebuilds.
end=$((SECONDS + 4))
n=0
while ((SECONDS < end)); do ./hs_churn; n=$((n + 1)); done
echo "churned $n processes"
kill -INT "$epid"
wait "$epid" || fail "engine exited $? after SIGINT"
dir=$(run_dir_of out1.txt)
[[ -f $dir/keyevents.dat ]] || fail "no keyevents.dat"
trace-cmd report "$dir/keyevents.dat" >report.txt 2>report.err || fail "trace-cmd cannot read keyevents.dat"
grep -qE "sched_process_exec: .*pid=$probe " report.txt || fail "no exec of the probe (pid $probe) in keyevents.dat"
lines=$(grep -E "^ *\S+-$probe +\[" report.txt)
[[ -n $lines ]] || fail "no event of pid $probe in the report"
echo "probe's events:"
echo "$lines" | head -5
echo "$lines" | grep -vq "hs_comm_probe-$probe" && fail "the probe's events lost its comm: $(echo "$lines" | grep -v "hs_comm_probe-$probe" | head -3)"
# The churned processes' comms too (the newest are in the kernel's list at the end).
grep -qE '^ *hs_churn-[0-9]+ +\[' report.txt || fail "no churned process shows its comm"
grep -q 'error in size of file' out1.txt && fail "libtracecmd reported a saved_cmdlines size error while rebuilding"
echo "cmdlines test: OK"
