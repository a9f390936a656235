#!/usr/bin/env bash
# sleep.sh: the frame thread sleeps 80-250 ms (clock_nanosleep) inside a frame: the app's own doing.
. "$(dirname "$0")/../lib.sh"
ms=$(rand_int 80 250)
start_game --inject sleep --ms "$ms"
wait_game
injected_by_game
note culprit "the game's own clock_nanosleep"
note culprit_pid "$game_pid"
note culprit_tid "$game_tid"
finish sleep "$game_name" "clock_nanosleep($ms ms) on the frame thread in frame $plan_frame"
