#!/usr/bin/env bash
# counter-test.sh: memory pressure caught through the kernel's PSI trigger file (issue 22): two page-cache readers in
# a memory cgroup (v1: this machine's memory controller; memory.high is cgroup v2's) whose limit_in_bytes they press
# against, under stress-ng --cpu 2 when installed (HS_TEST_NO_STRESS=1: without), make the profile's psi_memory_some
# trigger (10% of 2 s) fire within seconds; before it, 4 quiet seconds fire nothing; recording goes on. The cgroup and
# the file are the test's own and are removed.
# usage: counter-test.sh ENGINE PROFILE   (root; the profile is tests/ftrace/deadline.yaml,
# instances hindsight_test_dl_*)
set -uo pipefail
engine=$1 profile=$2
instances=(hindsight_test_dl_ring hindsight_test_dl_keys hindsight_test_dl_keys_trg)
. "$(dirname "$0")/lib.sh"
test_setup
cg=/sys/fs/cgroup/memory/hs_test_psi_$$
stress= reader=

cleanup() {
	[[ -n $stress ]] && kill "$stress" 2>/dev/null && wait "$stress" 2>/dev/null
	[[ -n $reader ]] && kill "$reader" 2>/dev/null && wait "$reader" 2>/dev/null
	kill_engine
	if [[ -d $cg ]]; then
		while read -r p; do kill -9 "$p" 2>/dev/null; done <"$cg/cgroup.procs"
		sleep 0.2
		rmdir "$cg" 2>/dev/null
	fi
	remove_instances "${instances[@]}"
	rm -rf "$tmp" "${big:-}"
}
trap cleanup EXIT
fail() {
	echo "counter test: FAIL: $*" >&2
	[[ -n ${dir:-} ]] && ls "$dir/snapshots" >&2
	[[ -f $tmp/out.txt ]] && grep '^engine' "$tmp/out.txt" | tail -30
	exit 1
}
[[ $(id -u) == 0 ]] || fail "must run as root"
command -v jq >/dev/null || { echo "counter test: SKIP: no jq"; exit 77; }
[[ -f /proc/pressure/memory ]] || { echo "counter test: SKIP: this kernel has no PSI"; exit 77; }
[[ -d /sys/fs/cgroup/memory ]] || { echo "counter test: SKIP: no cgroup v1 memory controller"; exit 77; }
cd "$tmp" || exit 1

start_engine out.txt "$engine" --rules "$profile"
grep -q 'trigger mempressure: the kernel signals memory pressure "some 200000 2000000"' out.txt ||
	fail "the engine did not register the PSI trigger"
sleep 4
(($(snapshot_folders mempressure) == 0)) || fail "a quiet machine fired the memory-pressure trigger"

# The workload: a 256 MB file on disk (not tmpfs: page cache that reclaim can drop) read again and again by two
# processes whose memory cgroup may hold 32 MB: every read charges pages past the limit, and the charge reclaims
# (a memory stall, as PSI counts it) before it goes on.
under=
if [[ -z ${HS_TEST_NO_STRESS:-} ]] && command -v stress-ng >/dev/null; then
	stress-ng --cpu 2 --timeout 120 >stress.txt 2>&1 &
	stress=$!
	sleep 1
	kill -0 "$stress" 2>/dev/null || fail "stress-ng did not start: $(cat stress.txt)"
	under=" under stress-ng"
fi
big=$(mktemp /var/tmp/hs_psi_big.XXXXXX)
mkdir "$cg" || fail "cannot create $cg"
echo $((32 * 1024 * 1024)) >"$cg/memory.limit_in_bytes"
t0=$(date +%s%N)
(
	echo $BASHPID >"$cg/cgroup.procs"
	head -c $((256 * 1024 * 1024)) /dev/zero >"$big"
	# Two readers: one alone stalled 10.5-11.6% of the worst 2 s here (a coin toss against a 10% threshold),
	# two 36-38%, and the kernel signalled every window.
	for _ in 1 2; do (while :; do cat "$big" >/dev/null; done) & done
	wait
) &
reader=$!
wait_snapshots 1 30 mempressure ||
	fail "no memory-pressure snapshot after 30 s against the cgroup's limit ($(grep some /proc/pressure/memory))"
t1=$(date +%s%N)
echo "memory-pressure snapshot$under $(((t1 - t0) / 1000000)) ms after the reader started;" \
	"$(grep some /proc/pressure/memory)"
[[ -z $stress ]] || kill -0 "$stress" 2>/dev/null || fail "stress-ng ended before the snapshot: the load missed it"
while read -r p; do kill "$p" 2>/dev/null; done <"$cg/cgroup.procs"
wait "$reader" 2>/dev/null
reader=
f=$(ls -d "$dir"/snapshots/[0-9]*-mempressure | head -1)
jq -e '.trigger.kind == "counter" and .hit.counter == "psi_memory_some" and .hit.crossing == true and .hit.value == 10
	and (.hit.detail | startswith("some avg10="))' "$f/snapshot.json" >/dev/null ||
	fail "$f/snapshot.json: $(jq -c .hit "$f/snapshot.json")"
jq -c '.hit | {counter, value, step, detail}' "$f/snapshot.json"
kill -0 "$epid" 2>/dev/null || fail "engine stopped after the snapshot: recording must go on"
[[ -n $stress ]] && kill "$stress" && wait "$stress" 2>/dev/null
stress=

kill -INT "$epid"
wait "$epid"
rc=$?
epid=
[[ $rc == 0 ]] || fail "engine exited $rc after SIGINT"
jq -e '.triggers[] | select(.name == "mempressure") | .fired >= 1' "$dir/run.json" >/dev/null ||
	fail "run.json: $(jq -c '.triggers[] | select(.name == "mempressure")' "$dir/run.json")"
echo "counter test: OK"
