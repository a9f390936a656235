#!/usr/bin/env bash
# cgroup-throttle.sh: the game runs in a cpu cgroup with a 5 ms / 100 ms quota (cgroup v1 cpu.cfs_quota_us); its
# light frames fit, a heavy frame (11-16 ms of CPU) spends the quota and the group is throttled to the next period.
# Over 10 ms, so the frame is throttled for at least one whole period wherever in the period it starts: a frame
# needing 5-10 ms that starts late in a period (55-80 ms in, quota left) finishes early in the next one in under
# 50 ms, no hitch, and the frames after it hitch on the quota it spent (a run.sh here: 8 ms, frame 120 took 45 ms,
# frame 123 88 ms, twice).
. "$(dirname "$0")/../lib.sh"
root=/sys/fs/cgroup/cpu
[[ -f $root/cpu.cfs_quota_us ]] || lack "no cgroup v1 cpu controller at $root"
cg=$root/$(rand_name)
mkdir "$cg" || fail "cannot create $cg"
at_exit "while read -r p; do kill -9 \$p; done <'$cg/cgroup.procs'; sleep 0.1; rmdir '$cg'"
echo 100000 >"$cg/cpu.cfs_period_us" && echo 5000 >"$cg/cpu.cfs_quota_us" || fail "cannot set the quota"
heavy=$(rand_int 11 16)
# 100 us a frame: 2.4 ms of each 100 ms period at 240 Hz, under the quota.
start_game --cgroup "$cg" --work-us 100 --inject work --ms "$heavy"
wait_game
injected_by_game
read -r _ periods _ throttled _ throttled_ns < <(tr '\n' ' ' <"$cg/cpu.stat")
note cgroup "${cg#/sys/fs/cgroup/} cpu.cfs_quota_us 5000 cpu.cfs_period_us 100000"
note cgroup_stat "nr_periods $periods nr_throttled $throttled throttled_time $throttled_ns ns"
((throttled > 0)) || fail "the cgroup was never throttled"
note expect_culprit_what "CPU quota"
note expect_what "/${cg##*/}\\b"
finish cgroup-throttle - "the game in cpu cgroup ${cg#/sys/fs/cgroup/} (5 ms per 100 ms) needs $heavy ms of CPU" \
	"in frame $plan_frame"
