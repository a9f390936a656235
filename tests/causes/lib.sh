# lib.sh: what the cause scenarios share (sourced by tests/causes/scenarios/*.sh): random names and numbers, the stand-in game, its culprits, cleanup and scenario.txt.
#
# A scenario is run as `SCENARIO.sh WORKDIR` (root). It injects one cause of a long frame into a fresh copy of the
# stand-in game (hitchgame.c) and writes WORKDIR/scenario.txt: what it injected, the expected reason id and culprit,
# the game's and the culprit's pid/tid and the long frame's start and end (CLOCK_MONOTONIC ns, the trace clock of
# stutter.yaml). Exit status: 0 the hitch happened as planned; 3 it did not (the scenario failed, not the report);
# 4 the machine lacks what the scenario needs. Everything it creates (cgroups, namespaces, files, processes) is
# removed on exit. Environment (the suite sets it; by hand the defaults find a build under build/):
#   HS_GAME, HS_CULPRIT   the built hs_hitchgame and hs_culprit (copied here under random names)
#   HS_GAME_CPU           the game's CPU (default: a random online CPU); HS_OTHER_CPU: another one
#   HS_HOLD=1             once scenario.txt is written (WORKDIR/ready), the game and its culprits stay (lingering,
#                         as programs go on after a hitch) until a line is written to WORKDIR/release.fifo (the
#                         suite does once it has the snapshot), at most HS_HOLD_S seconds (default 300)
# While the game's frames run, the scenario's shell forks nothing (no sleep, no grep): a process started then on the
# game's CPU would be one more cause in its frame. It waits with builtins (nap, has_line).
set -uo pipefail

scenario=$(basename "$0" .sh)
work=${1:?usage: $scenario.sh WORKDIR}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
build=${HS_BUILD:-$here/../../build}
HS_GAME=${HS_GAME:-$build/tests/hs_hitchgame}
HS_CULPRIT=${HS_CULPRIT:-$build/tests/hs_culprit}
mkdir -p "$work/bin" || exit 3
rm -f "$work/scenario.txt"

fail() { echo "$scenario: FAIL: $*" >&2; exit 3; }
lack() { echo "$scenario: cannot run here: $*" >&2; exit 4; }
[[ $(id -u) == 0 ]] || lack "must run as root"
[[ -x $HS_GAME && -x $HS_CULPRIT ]] || lack "no hs_hitchgame / hs_culprit (set HS_GAME, HS_CULPRIT or HS_BUILD)"

# Job control: each background job (the game, a culprit and its forks) is a process group of its own, so cleanup can
# kill a culprit's forks with it. Not setsid: a new session is a new autogroup (sched_autogroup_enabled), and the
# scheduler would then share the CPU between sessions first: eight hogs in one session would get what the game's
# session gets, no more. Here the game, its culprits (and the suite's stress-ng) compete task by task.
set -m

# nap SECONDS: a sleep without a fork (a read that times out on a FIFO nobody writes).
mkfifo "$work/.nap" && exec {nap_fd}<>"$work/.nap" && rm -f "$work/.nap" || exit 3
nap() { read -r -t "$1" -u "$nap_fd" _; }
# has_line FILE PREFIX: FILE has a line that starts with PREFIX (builtins only).
has_line() {
	local l
	[[ -f $1 ]] || return 1
	while IFS= read -r l; do [[ $l == "$2"* ]] && return 0; done <"$1"
	return 1
}
# The suite's hold (HS_HOLD): its FIFO, open before anything can fail.
rm -f "$work/ready" "$work/release.fifo"
if [[ -n ${HS_HOLD:-} ]]; then
	mkfifo "$work/release.fifo" && exec {hold_fd}<>"$work/release.fifo" || exit 3
fi

# Cleanup: each scenario pushes shell commands; they run in reverse order on exit, whatever happened.
cleanups=()
on_exit() { local i; for ((i = ${#cleanups[@]} - 1; i >= 0; i--)); do eval "${cleanups[i]}" 2>/dev/null; done; }
trap on_exit EXIT
trap 'exit 130' INT TERM
at_exit() { cleanups+=("$1"); }

# rand_int LO HI: uniform in [LO, HI].
rand_int() { echo $(($1 + SRANDOM % ($2 - $1 + 1))); }
# rand_name: 5-12 random lowercase letters that name no command here: a name no rule can know.
rand_name() {
	local n
	while :; do
		n=$(head -c 64 /dev/urandom | tr -dc a-z | head -c "$(rand_int 5 12)")
		((${#n} >= 5)) && ! command -v "$n" >/dev/null && echo "$n" && return
	done
}

# CPUs: the game's (random unless given) and another one for what must not run on it.
mapfile -t cpus < <(awk -F, '{ for (i = 1; i <= NF; i++) { n = split($i, r, "-"); for (c = r[1]; c <= r[n]; c++)
	print c } }' /sys/devices/system/cpu/online)
((${#cpus[@]} >= 2)) || lack "needs 2 online CPUs"
cpu=${HS_GAME_CPU:-${cpus[SRANDOM % ${#cpus[@]}]}}
other=${HS_OTHER_CPU:-}
if [[ -z $other ]]; then for c in "${cpus[@]}"; do [[ $c != "$cpu" ]] && other=$c && break; done; fi

# scenario.txt: "key: value" lines; the first ones say what this run injected.
note() { local k=$1; shift; printf '%s: %s\n' "$k" "$*" >>"$work/scenario.txt"; }

# new_culprit: copies hs_culprit under a random name into WORKDIR/bin; prints the name.
new_culprit() {
	local n
	n=$(rand_name)
	cp "$HS_CULPRIT" "$work/bin/$n" || fail "cannot copy the culprit program"
	echo "$n"
}

# The game, under a random name too (a report must not know it either).
game_name=$(rand_name)
cp "$HS_GAME" "$work/bin/$game_name" || fail "cannot copy the game"
game_pid=
at_exit '[[ -n $game_pid ]] && kill -CONT $game_pid && kill -9 $game_pid'
# Culprit processes started in the background are killed on exit too (their forks go with their process group).
bg_pids=()
declare -A culprit_out # pid -> its output file
at_exit 'for p in "${bg_pids[@]}"; do kill -9 -- -$p $p; done'

# The FIFO through which the game tells an outside culprit when its frame --at starts (hitchgame --signal-fifo,
# culprit --start-fifo): late frames move the game's schedule, so a time taken before it runs would miss.
start_fifo=$work/start.fifo
rm -f "$start_fifo"
mkfifo "$start_fifo" || fail "cannot create $start_fifo"

# start_game [--cgroup DIR]... GAME_ARGS...: runs the game on $cpu in the background (joining the cgroups first),
# waits for its plan line and sets game_pid, game_tid, plan_frame and plan_ns (frame plan_frame's scheduled start).
start_game() {
	local cgs=()
	while [[ ${1:-} == --cgroup ]]; do cgs+=("$2"); shift 2; done
	bash -c 'for c in "${@:2:$1}"; do echo $$ >"$c/cgroup.procs" || exit 1; done; shift $(($1 + 1)); exec "$@"' \
		_ ${#cgs[@]} "${cgs[@]}" "$work/bin/$game_name" --cpu "$cpu" --linger "$@" >"$work/game.out" \
		2>"$work/game.err" &
	game_pid=$!
	local i
	for ((i = 0; i < 1000; i++)); do
		has_line "$work/game.out" 'plan ' && break
		kill -0 "$game_pid" 2>/dev/null || fail "the game exited early: $(cat "$work/game.err")"
		nap 0.01
	done
	read -r _ plan_frame plan_ns < <(grep '^plan ' "$work/game.out")
	[[ -n ${plan_ns:-} ]] || fail "the game printed no plan line within 10 s"
	local pid
	read -r _ _ pid _ game_tid _ < <(grep '^game ' "$work/game.out")
	[[ $pid == "$game_pid" ]] || fail "the game's pid is $pid, not $game_pid"
}

# start_culprit [--netns NS] NAME ARGS...: runs WORKDIR/bin/NAME ARGS --linger in the background (output in
# WORKDIR/NAME.out), in network namespace NS if given; sets culprit_pid.
start_culprit() {
	local pre=()
	[[ $1 == --netns ]] && pre=(ip netns exec "$2") && shift 2
	local n=$1
	shift
	"${pre[@]}" "$work/bin/$n" "$@" --linger >"$work/$n.out" 2>"$work/$n.err" &
	culprit_pid=$!
	bg_pids+=("$culprit_pid")
	culprit_out[$culprit_pid]=$work/$n.out
}

# wait_game: waits for the game's last frame (it lingers) and reads its report: frame, frame_start, frame_end,
# frame_ms (the first frame over 50 ms: the one stutter.yaml's frame-hitch trigger fires on; later ones join its
# snapshot), hitches (how many frames took over 50 ms), median_ms. The game stays until the scenario exits.
wait_game() {
	local i
	for ((i = 0; i < 6000; i++)); do
		has_line "$work/game.out" lingering && break
		kill -0 "$game_pid" 2>/dev/null || { wait "$game_pid"; fail "the game exited $?: $(cat "$work/game.err")"; }
		nap 0.01
	done
	has_line "$work/game.out" lingering || fail "the game did not end its frames within 60 s"
	read -r _ _ frame _ frame_start _ frame_end _ frame_ms < <(grep '^hitch ' "$work/game.out" | head -1)
	read -r _ median_ms _ _ _ hitches < <(grep '^median_ms ' "$work/game.out")
	[[ -n ${hitches:-} ]] || fail "the game's report is incomplete: $(cat "$work/game.out")"
	[[ -n ${frame_ms:-} ]] || fail "no frame over 50 ms: $(grep -E '^(long|inject) ' "$work/game.out")"
}

# wait_culprits: waits until every background culprit says done (then it lingers, and is killed on exit with its
# process group) at most 10 s after the game; one that exited or never got its start time fails the scenario.
wait_culprits() {
	local p i
	for p in "${bg_pids[@]}"; do
		for ((i = 0; i < 1000; i++)); do
			has_line "${culprit_out[$p]}" done && break
			kill -0 "$p" 2>/dev/null || { wait "$p"; fail "culprit $p exited $?: $(cat "$work"/*.err 2>/dev/null)"; }
			nap 0.01
		done
		has_line "${culprit_out[$p]}" done || fail "culprit $p is not done 10 s after the game"
	done
}

# injected_by_game: the injection's window is the game's injected frame. injected_by NAME: it is when culprit NAME
# acted (its window line).
injected_by_game() { read -r _ _ _ _ _ inj_from _ inj_to _ < <(grep '^inject ' "$work/game.out"); }
injected_by() { read -r _ inj_from inj_to < <(grep '^window ' "$work/$1.out" | head -1); }

# finish EXPECT_CAUSE EXPECT_CULPRIT|- INJECTED...: checks that the first hitch is this scenario's (it overlaps the
# injection: from INJ_FROM ns to INJ_TO ns, which the scenario sets) and writes the rest of scenario.txt.
inj_from= inj_to=
finish() {
	local cause=$1 who=$2 gpid
	shift 2
	gpid=$(awk '/^game /{print $3}' "$work/game.out")
	[[ -n $inj_from && -n $inj_to ]] || fail "the scenario did not say when it injected"
	((frame_start <= inj_to && frame_end >= inj_from)) ||
		fail "the first hitch (frame $frame, $frame_ms ms, $frame_start..$frame_end) is not the injected one" \
			"($inj_from..$inj_to): $*"
	note scenario "$scenario"
	note injected "$*"
	note expect_cause "$cause"
	note expect_culprit "$who"
	note game "$game_name pid $gpid tid $game_tid cpu $cpu"
	note game_name "$game_name"
	note game_pid "$gpid"
	note game_tid "$game_tid"
	note game_cpu "$cpu"
	note frame "$frame"
	note frame_start_ns "$frame_start"
	note frame_end_ns "$frame_end"
	note frame_ms "$frame_ms"
	note median_ms "$median_ms"
	note frames_over_50ms "$hitches (the first is this one: the trigger fires on it, later ones join its snapshot)"
	note injected_from_ns "$inj_from"
	note injected_to_ns "$inj_to"
	echo "$scenario: frame $frame took $frame_ms ms (median $median_ms, $hitches over 50 ms): $*"
	hold
}

# hold: with HS_HOLD, says WORKDIR/ready and waits for the suite's release line; the game and culprits linger.
hold() {
	[[ -n ${HS_HOLD:-} ]] || return 0
	: >"$work/ready"
	read -r -t "${HS_HOLD_S:-300}" -u "$hold_fd" _ || fail "not released within ${HS_HOLD_S:-300} s"
}
