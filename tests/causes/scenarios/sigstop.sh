#!/usr/bin/env bash
# sigstop.sh: another program (random name) sends the game SIGSTOP and, 80-250 ms later, SIGCONT.
. "$(dirname "$0")/../lib.sh"
stopper=$(new_culprit)
ms=$(rand_int 80 250)
start_game --signal-fifo "$start_fifo" --inject none
start_culprit "$stopper" stop --pid "$game_pid" --start-fifo "$start_fifo" --ms "$ms"
gpid=$game_pid
wait_game
wait_culprits
injected_by "$stopper"
read -r _ _ spid _ stid _ < <(grep '^culprit ' "$work/$stopper.out")
note culprit "$stopper pid $spid tid $stid (sends SIGSTOP, then SIGCONT)"
note culprit_pid "$spid"
note culprit_tid "$stid"
finish stopped "$stopper" "$stopper (pid $spid) sends SIGSTOP to the game (pid $gpid) at frame $plan_frame's start" \
	"and SIGCONT $ms ms later"
