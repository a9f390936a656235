#!/usr/bin/env bash
# nice-hogs.sh: several nice-0 busy processes (one random name) on the game's CPU during a heavy frame (15 ms of CPU,
# no hitch by itself): the frame gets 1/(K+1) of the CPU and takes K+1 times as long.
. "$(dirname "$0")/../lib.sh"
hog=$(new_culprit)
ms=$(rand_int 80 250) k=$(rand_int 6 10) heavy=15
start_game --signal-fifo "$start_fifo" --inject work --ms "$heavy"
# 2 ms before the frame: the hogs are running when it starts.
start_culprit "$hog" spin --procs "$k" --cpu "$cpu" --start-fifo "$start_fifo" --offset-ms -2 --ms "$ms"
wait_game
wait_culprits
injected_by "$hog"
pids=$(awk '/^culprit /{print $3}' "$work/$hog.out" | sort -n | tr '\n' ' ')
note culprit "$hog x$k (pids ${pids% }) SCHED_OTHER nice 0 cpu $cpu"
note culprit_pid "${pids%% *}"
note culprit_pids "${pids% }"
note expect_what "CPU $cpu\\b"
note expect_policy normal
finish cpu-contention "$hog" "$k processes $hog (nice 0) spin on CPU $cpu for $ms ms from 2 ms before" \
	"frame $plan_frame, which needs $heavy ms of CPU"
