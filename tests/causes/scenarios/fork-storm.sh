#!/usr/bin/env bash
# fork-storm.sh: spawner processes (one random name) on the game's CPU start short processes (/bin/true) as fast as
# they can during a heavy frame (15 ms of CPU).
. "$(dirname "$0")/../lib.sh"
spawner=$(new_culprit)
ms=$(rand_int 80 250) k=$(rand_int 3 5) heavy=15
start_game --signal-fifo "$start_fifo" --inject work --ms "$heavy"
start_culprit "$spawner" forks --procs "$k" --cpu "$cpu" --start-fifo "$start_fifo" --offset-ms -2 --ms "$ms"
wait_game
wait_culprits
injected_by "$spawner"
pids=$(awk '/^culprit /{print $3}' "$work/$spawner.out" | sort -n | tr '\n' ' ')
forks=$(awk '/^forks /{n += $2} END {print n + 0}' "$work/$spawner.out")
note culprit "$spawner x$k (pids ${pids% }) cpu $cpu, $forks processes started"
note culprit_pid "${pids%% *}"
note culprit_pids "${pids% }"
finish process-start "$spawner" "$k processes $spawner start $forks short processes (/bin/true) on CPU $cpu" \
	"for $ms ms from 2 ms before frame $plan_frame, which needs $heavy ms of CPU"
