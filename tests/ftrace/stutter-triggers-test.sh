#!/usr/bin/env bash
# stutter-triggers-test.sh: the default profile, left running, snapshots by itself on a segfault, an OOM kill in a cgroup and a 240 Hz frame loop's hitch, and records on.
# usage: stutter-triggers-test.sh ENGINE STUTTER_YAML FRAMELOOP SEGV   (root; instances hindsight_stutter_*, skipped when a real recorder holds them)
# HS_TEST_START_TIMEOUT (s, default 90): how long the engine may take to start (sanitizer builds are slow).
set -uo pipefail
ulimit -c 0
engine=$1 profile=$2 frameloop=$3 segv=$4
cgroot=/sys/fs/cgroup/memory # cgroup v1 on these VMs
[[ -d $cgroot ]] || cgroot=/sys/fs/cgroup
cg=$cgroot/hindsight_test_trg_oom_$$
mapfile -t instances < <(sed -n 's/^ *logger_name: *\(hindsight_stutter_[a-z_]*\).*/\1/p' "$profile" | sort -u)
. "$(dirname "$0")/lib.sh"
test_setup

cleanup() {
	kill_engine
	remove_instances "${instances[@]}" "${instances[@]/%/_trg}"
	if [[ -d $cg ]]; then
		while read -r p; do kill -9 "$p" 2>/dev/null; done <"$cg/cgroup.procs"
		sleep 0.2
		rmdir "$cg"
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "stutter triggers test: FAIL: $*" >&2; [[ -f $tmp/out.txt ]] && grep '^engine' "$tmp/out.txt" | tail -30; exit 1; }
[[ $(id -u) == 0 ]] || fail "must run as root"
for t in jq trace-cmd; do command -v $t >/dev/null || { echo "SKIP: no $t"; exit 77; }; done
for i in "${instances[@]}"; do held "$i" && { echo "SKIP: a running recorder holds $i"; exit 77; }; done
cd "$tmp" || exit 1

start_engine out.txt "$engine" --rules "$profile"
# The profile's warm-up (start-up churn is no incident).
warm=$(jq -r '.plan.triggers | map(.warmup_s) | max' "$dir/run.json" 2>/dev/null)
[[ $warm =~ ^[0-9]+$ ]] || warm=10
sleep $((warm + 1))

# A real NULL dereference.
"$segv" 2>/dev/null
wait_snapshots 1 120 crash || fail "no crash snapshot after a segfault"
# An OOM kill in a memory cgroup of 32 MB.
mkdir "$cg" || fail "cannot create memory cgroup $cg"
if [[ -f $cg/memory.limit_in_bytes ]]; then echo 32M >"$cg/memory.limit_in_bytes"; else echo 32M >"$cg/memory.max"; fi
sh -c "echo \$\$ > $cg/cgroup.procs; exec tail /dev/zero" 2>/dev/null
[[ $? == 137 ]] || fail "the memory hog was not OOM-killed"
rmdir "$cg"
wait_snapshots 1 120 oom-kill || fail "no oom-kill snapshot after an OOM kill"
# A 240 Hz frame loop with one 100 ms frame (real-time priority: only the hitch it makes).
rt=()
command -v chrt >/dev/null && chrt -f 10 true 2>/dev/null && rt=(chrt -f 10)
"${rt[@]}" "$frameloop" 240 1200 600 100 Frame >frames.txt || fail "frameloop failed"
wait_snapshots 1 120 frame-hitch || fail "no frame-hitch snapshot for a 100 ms frame in a 240 Hz loop"
kill -0 "$epid" 2>/dev/null || fail "the engine stopped: recording must go on"

kill -INT "$epid"
wait "$epid"
rc=$?
epid=
[[ $rc == 0 ]] || fail "engine exited $rc after SIGINT"
grep -q '^engine: DONE' out.txt || fail "no DONE line"
for d in "$dir"/snapshots/[0-9]*; do
	t=${d##*/[0-9][0-9][0-9]-}
	jq -e --arg t "$t" '.trigger.name == $t and .first_hit_ns > 0 and (.sessions | length == 2)' "$d/snapshot.json" \
		>/dev/null || fail "$d/snapshot.json is incomplete"
	for f in "$d"/*.dat; do
		timeout 300 trace-cmd report "$f" >rep.txt 2>/dev/null || fail "trace-cmd cannot read $f"
	done
	echo "$t: $(jq -c '{hit: .hit.event, latency_ms: .detection_latency_ms, ring_events: .sessions[1].events}' "$d/snapshot.json")"
done
h=$(ls -d "$dir"/snapshots/[0-9]*-frame-hitch | head -1)
jq -e '.hit.frame_ms >= 95' "$h/snapshot.json" >/dev/null || fail "the frame-hitch snapshot is not the 100 ms frame"
echo "stutter triggers test: OK"
