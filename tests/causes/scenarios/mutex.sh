#!/usr/bin/env bash
# mutex.sh: a second thread of the game (random name) takes a mutex at the end of a frame and holds it for 80-250 ms
# (sleeping); the next frame locks it.
. "$(dirname "$0")/../lib.sh"
holder=$(rand_name)
holder=${holder:0:15}
ms=$(rand_int 80 250)
start_game --inject mutex --ms "$ms" --holder "$holder"
wait_game
injected_by_game
read -r _ _ htid _ _ < <(grep '^holder ' "$work/game.out")
note culprit "thread $holder tid $htid of the game (pid $(awk '/^game /{print $3}' "$work/game.out"))"
note culprit_tid "$htid"
finish lock-wait "$holder" "thread $holder (tid $htid) holds a pthread mutex for $ms ms from the end of frame" \
	"$((plan_frame - 1)); frame $plan_frame locks it"
