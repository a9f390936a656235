#!/usr/bin/env bash
# fork-storm.sh: spawner processes (one random name) on the game's CPU start short-lived programs (another random name,
# each working 1-3 ms after its start, as a launched tool or a build step does) as fast as they can, from the start of
# a heavy frame (5-10 ms of CPU) for longer than that frame takes. HS_FORK_LEAD=FRAMES HS_FORK_OFFSET_MS=D: the storm
# starts D ms from the scheduled start of the frame, as seen FRAMES frames before it, instead (a storm already going
# when the frame starts: its first programs were born before the frame).
. "$(dirname "$0")/../lib.sh"
spawner=$(new_culprit) helper=$(new_culprit)
ms=$(rand_int 300 450) k=$(rand_int 2 4) child=$(rand_int 1 3) heavy=$(rand_int 5 10)
inflight=4 lead=${HS_FORK_LEAD:-0} offset=${HS_FORK_OFFSET_MS:-0}
start_game --signal-fifo "$start_fifo" --signal-lead "$lead" --inject work --ms "$heavy"
start_culprit "$spawner" forks --procs "$k" --cpu "$cpu" --exec "$work/bin/$helper" --child-ms "$child" \
	--inflight "$inflight" --start-fifo "$start_fifo" --offset-ms "$offset" --ms "$ms"
wait_game
wait_culprits
injected_by "$spawner"
pids=$(awk '/^culprit /{print $3}' "$work/$spawner.out" | sort -n | tr '\n' ' ')
forks=$(awk '/^forks /{n += $2} END {print n + 0}' "$work/$spawner.out")
note culprit "$spawner x$k (pids ${pids% }) cpu $cpu, $forks processes $helper started (each $child ms of CPU)"
note culprit_pid "${pids%% *}"
note culprit_pids "${pids% }"
note expect_what "new process"
finish process-start "$spawner" "$k processes $spawner start $forks processes $helper ($child ms of CPU each, at most" \
	"$inflight at a time each) on CPU $cpu for $ms ms from $offset ms after frame $plan_frame's start" \
	"(seen $lead frames before), which needs $heavy ms of CPU"
