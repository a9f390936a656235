#!/usr/bin/env bash
# fifo-hog.sh: a SCHED_FIFO busy loop (random name, priority and length) on the game's CPU starves the frame thread.
. "$(dirname "$0")/../lib.sh"
hog=$(new_culprit)
ms=$(rand_int 80 250) prio=$(rand_int 10 90)
start_game --signal-fifo "$start_fifo" --inject none
start_culprit "$hog" spin --fifo "$prio" --cpu "$cpu" --start-fifo "$start_fifo" --ms "$ms"
wait_game
wait_culprits
injected_by "$hog"
read -r _ _ hog_pid _ hog_tid _ < <(grep '^culprit ' "$work/$hog.out")
note culprit "$hog pid $hog_pid tid $hog_tid SCHED_FIFO $prio (kernel prio $((99 - prio))) cpu $cpu"
note culprit_pid "$hog_pid"
note culprit_tid "$hog_tid"
note expect_policy fifo
note expect_priority "$prio"
note expect_what "CPU $cpu\\b"
finish cpu-contention "$hog" "$hog (pid $hog_pid), SCHED_FIFO $prio, spins on CPU $cpu for $ms ms" \
	"from frame $plan_frame's start"
