#!/usr/bin/env bash
# causes-test.sh: the cause scenarios with golden verdicts (issue 21): one engine with stutter.yaml's own sessions snapshots each injected hitch, and each report must name the reason and the culprit.
# usage: causes-test.sh ENGINE ANALYZE STUTTER_YAML GAME CULPRIT [--out DIR] [--keep DIR] [--only A,B] [--no-stress]
#   ENGINE, ANALYZE     build's engine/engine and tools/analyze/analyze
#   STUTTER_YAML        rules/stutter.yaml: the test profile is derived from it at run time, changing only trigger
#                       behaviour (warm-up, cool-down, rate cap), so that each hitch gets a snapshot of its own
#   GAME, CULPRIT       hs_hitchgame and hs_culprit (tests/causes/hitchgame.c, culprit.c)
#   --out DIR           where the run, each scenario's work folder and snapshot go (replaced; default: a temporary
#                       folder, removed at the end)
#   --keep DIR          also copy each scenario's snapshot folder (with scenario.txt) to DIR/<scenario>/
#   --only A,B          run only these scenarios (names of tests/causes/scenarios/*.sh)
#   --no-stress         without `stress-ng --cpu N` on every CPU (the default loads them all, as CI must pass)
# Root (tracefs, cgroups, network namespaces). Instances hindsight_stutter_* (skipped, 77, while a real recorder
# holds them). Exit 0 when every scenario's checks hold, 1 otherwise; each scenario prints its own PASS or FAIL.
set -uo pipefail
ulimit -c 0
here=$(cd "$(dirname "$0")" && pwd)
engine=${1:?usage: causes-test.sh ENGINE ANALYZE STUTTER_YAML GAME CULPRIT [options]} analyze=${2:?} rules=${3:?}
export HS_GAME=${4:?} HS_CULPRIT=${5:?}
shift 5
# Absolute: the test runs in its output folder.
engine=$(realpath "$engine") analyze=$(realpath "$analyze") rules=$(realpath "$rules")
HS_GAME=$(realpath "$HS_GAME") HS_CULPRIT=$(realpath "$HS_CULPRIT")
out= keep= only= stress=1
while (($#)); do
	case $1 in
	--out) out=$2; shift 2 ;;
	--keep) keep=$(realpath -m "$2"); shift 2 ;;
	--only) only=$2; shift 2 ;;
	--no-stress) stress=; shift ;;
	*) echo "causes-test: unknown option $1" >&2; exit 2 ;;
	esac
done
t_start=$(date +%s.%N)

. "$here/../ftrace/lib.sh"
fail() {
	echo "causes test: FAIL: $*" >&2
	[[ -f ${out:-/nonexistent}/engine.txt ]] && grep '^engine' "$out/engine.txt" | tail -20
	exit 1
}
[[ $(id -u) == 0 ]] || fail "must run as root (tracefs, cgroups, network namespaces)"
for t in jq ip tc ${stress:+stress-ng}; do
	command -v "$t" >/dev/null || { echo "causes test: SKIP: no $t"; exit 77; }
done
mapfile -t instances < <(sed -n 's/^ *logger_name: *\(hindsight_stutter_[a-z_]*\).*/\1/p' "$rules" | sort -u)
for i in "${instances[@]}"; do held "$i" && { echo "causes test: SKIP: a running recorder holds $i"; exit 77; }; done

mapfile -t scenarios < <(cd "$here/scenarios" && ls -- *.sh | sed 's/\.sh$//')
if [[ -n $only ]]; then
	IFS=, read -ra want <<<"$only"
	for w in "${want[@]}"; do [[ -f $here/scenarios/$w.sh ]] || fail "no scenario $w"; done
	scenarios=("${want[@]}")
fi

test_setup
own_out=
[[ -n $out ]] || { out=$tmp/out; own_out=1; }
rm -rf "$out"
mkdir -p "$out/profile" "$out/work" "$out/snapshots" || fail "cannot create $out"
out=$(cd "$out" && pwd)
st_pid=
cleanup() {
	[[ -n ${sc_pid:-} ]] && kill -TERM "$sc_pid" 2>/dev/null && wait "$sc_pid" 2>/dev/null
	[[ -n $st_pid ]] && kill "$st_pid" 2>/dev/null && wait "$st_pid" 2>/dev/null
	kill_engine
	remove_instances "${instances[@]}" "${instances[@]/%/_trg}"
	rm -rf "$tmp"
}
trap cleanup EXIT

# The profile: stutter.yaml as shipped (its sessions, the ring and the frame-hitch thresholds are what is tested),
# with only trigger behaviour changed in its Linux part: frame-hitch has no warm-up (start-up churn is not what this
# test makes), no cool-down and the highest rate cap, 3600 an hour (each scenario's hitch, a few seconds after the
# last, gets its own snapshot); every other trigger inherits a 600 s warm-up, so none fires during the suite: a
# snapshot drains the ring, and one taken between a hitch and its own snapshot (a crash elsewhere on the machine,
# the memcg scenario's memory pressure) would leave the hitch in neither. The files it includes are linked beside it.
p=$out/profile/stutter.yaml
for f in "$(cd "$(dirname "$rules")" && pwd)"/*; do
	[[ $(basename "$f") == "$(basename "$rules")" ]] || ln -s "$f" "$out/profile/" || fail "cannot link $f"
done
awk '
	/^  [a-z]+:/ { linux = ($1 == "linux:") }
	linux && /^    trigger_defaults:/ { td = 1; print; next }
	linux && /^    [a-z_]+:/ { td = 0 }
	linux && /^      - / { hitch = 0 }
	linux && td && /^      warmup_s:/ { sub(/warmup_s: *[0-9]+/, "warmup_s: 600") }
	linux && hitch && /^        (warmup_s|cooldown_s|max_per_hour):/ { next }
	{ print }
	linux && /^      - name: frame-hitch *$/ {
		hitch = 1
		print "        warmup_s: 0"
		print "        cooldown_s: 0"
		print "        max_per_hour: 3600"
	}' "$rules" >"$p"
keys='^ +(warmup_s|cooldown_s|max_per_hour):'
diff <(grep -Ev "$keys" "$rules") <(grep -Ev "$keys" "$p") >/dev/null ||
	fail "the derived profile changes more than trigger behaviour: $(diff "$rules" "$p")"
[[ $(grep -c '^        max_per_hour: 3600$' "$p") == 1 && $(grep -c '^      warmup_s: 600' "$p") == 1 ]] ||
	fail "could not derive the profile from $rules (no Linux frame-hitch trigger or trigger_defaults?)"
echo "causes test: profile $p (stutter.yaml; frame-hitch: no warm-up, no cool-down; other triggers unarmed)"

cd "$out" || exit 1
start_engine engine.txt "$engine" --rules "$p"
echo "causes test: engine recording (pid $epid) in $dir"
if [[ -n $stress ]]; then
	stress-ng --cpu "$(nproc)" --quiet &
	st_pid=$!
	sleep 0.5
	kill -0 "$st_pid" 2>/dev/null || fail "stress-ng did not start"
	echo "causes test: stress-ng --cpu $(nproc) running (pid $st_pid)"
fi
t_engine=$(date +%s.%N)

# The folders of every trigger, to tell a snapshot this scenario did not make (another program's crash drains the
# ring too: the hitch may then be in no snapshot).
all_folders() { ls -d "$dir"/snapshots/[0-9]* 2>/dev/null | sort; }

# The state of the engine's report of snapshot folder $1 (pending, written, failed; none: the engine writes none).
report_state() { jq -r '.report.state // "none"' "$1/snapshot.json" 2>/dev/null; }

# quiet: waits until no snapshot is pending (post_delay of a hitch just made), being written, or being reported on,
# so that a new try does not run while an earlier try's snapshot drains the ring (120 s at most).
quiet() {
	local i last
	sleep 2.5
	for ((i = 0; i < 1200; i++)); do
		last=$(ls -d "$dir"/snapshots/[0-9]*-frame-hitch 2>/dev/null | tail -1)
		ls -d "$dir"/snapshots/.*.partial >/dev/null 2>&1 ||
			[[ -n $last && $(report_state "$last") == pending ]] ||
			return 0
		sleep 0.1
	done
}

# nap SECONDS: a sleep without a fork (a read that times out on a FIFO nobody writes): while a scenario's game draws
# its frames, a process this script started on the game's CPU would be one more cause in the frame.
mkfifo "$tmp/nap" && exec {nap_fd}<>"$tmp/nap" || fail "cannot create $tmp/nap"
nap() { read -r -t "$1" -u "$nap_fd" _; }

# The scenario running now (its pid and work folder), released and reaped by finish_scenario.
sc_pid= sc_work=
finish_scenario() { # releases the scenario's game and culprits and waits for its exit (its cleanup); sets sc_rc
	sc_rc=
	[[ -n $sc_pid ]] || return 0
	[[ -p $sc_work/release.fifo ]] && echo go 1<>"$sc_work/release.fifo"
	wait "$sc_pid"
	sc_rc=$?
	sc_pid=
}

declare -A result note
run_scenario() { # NAME: runs it, waits for its snapshot, keeps it; returns 0, 1 when worth one more try, 2 if not
	local n=$1 w=$out/work/$1 before new h pid ms i f
	local t0 t1 t2
	note[$n]= # a try's note is its own: a retry that works shows its frame, not the first try's failure
	t0=$EPOCHREALTIME
	before=$(all_folders)
	rm -rf "$w"
	mkdir -p "$w"
	# The scenario holds its game and culprits (HS_HOLD) once it has written scenario.txt (WORKDIR/ready): they
	# go on, as programs do after a hitch, until its snapshot is taken and reported on (tasks.json sees them).
	HS_HOLD=1 "$here/scenarios/$n.sh" "$w" >"$w.log" 2>&1 &
	sc_pid=$! sc_work=$w
	for ((i = 0; i < 6000; i++)); do
		[[ -e $w/ready ]] && break
		kill -0 "$sc_pid" 2>/dev/null || break
		nap 0.02
	done
	if [[ ! -e $w/ready ]]; then
		finish_scenario
		cat "$w.log"
		if [[ $sc_rc == 4 ]]; then
			note[$n]="cannot run here: $(tail -1 "$w.log")"
			return 2
		fi
		note[$n]="the scenario failed (exit ${sc_rc:-?}): $(tail -1 "$w.log")"
		return 1
	fi
	cat "$w.log"
	t1=$EPOCHREALTIME
	# The snapshot of this game's hitch: post_delay_ms (2 s) + draining and writing the ring (0.3-30 s measured
	# on a loaded machine). A late snapshot of an earlier try's game is not this one.
	pid=$(sed -n 's/^game_pid: //p' "$w/scenario.txt") ms=$(sed -n 's/^frame_ms: //p' "$w/scenario.txt")
	h=
	for ((i = 0; i < 1800 && !${#h}; i++)); do
		for f in $(comm -13 <(echo "$before") <(all_folders)); do
			[[ $f == *-frame-hitch ]] || continue
			[[ $(jq '.hit.frame_pid // .hit.pid' "$f/snapshot.json" 2>/dev/null) == "$pid" ]] &&
				h=$f && break
		done
		kill -0 "$epid" 2>/dev/null || fail "engine exited while waiting for the snapshot of $n"
		((${#h})) || sleep 0.1
	done
	if [[ -z $h ]]; then
		finish_scenario
		note[$n]="no frame-hitch snapshot of game pid $pid within 180 s"
		return 1
	fi
	# The engine writes the snapshot's report itself (report.json, and report.state in snapshot.json): wait for it,
	# so the copy holds it and its work (the engine leaves itself out of its trace) never overlaps the next
	# scenario. An engine that writes none has no report in snapshot.json. The game and culprits stay meanwhile.
	t2=$EPOCHREALTIME
	for ((i = 0; i < 1800; i++)); do
		[[ $(report_state "$h") != pending ]] && break
		kill -0 "$epid" 2>/dev/null || fail "engine exited while writing the report of $h"
		sleep 0.1
	done
	finish_scenario
	awk -v n="$n" -v a="$t0" -v b="$t1" -v c="$t2" -v d="$EPOCHREALTIME" 'BEGIN {
		printf "causes test: %s: scenario %.1f s, snapshot %.1f s later, its report %.1f s after that\n",
			n, b - a, c - b, d - c }'
	if [[ $sc_rc != 0 ]]; then
		tail -3 "$w.log"
		note[$n]="the scenario failed after its hitch (exit $sc_rc): $(tail -1 "$w.log")"
		return 1
	fi
	new=$(comm -13 <(echo "$before") <(all_folders))
	if grep -qv -- '-frame-hitch$' <<<"$new"; then
		note[$n]="another trigger took a snapshot meanwhile:"
		note[$n]+=" $(grep -v -- '-frame-hitch$' <<<"$new" | xargs -n1 basename | tr '\n' ' ')"
		return 1
	fi
	if ! jq -e --argjson ms "$ms" '(.hit.frame_ms - $ms | fabs) < 3' "$h/snapshot.json" >/dev/null; then
		note[$n]="the snapshot is not of this hitch (${ms} ms):"
		note[$n]+=" $(jq -c '.hit | {pid, frame_pid, frame_ms}' "$h/snapshot.json")"
		return 1
	fi
	rm -rf "${out:?}/snapshots/$n"
	cp -a "$h" "$out/snapshots/$n" && cp "$w/scenario.txt" "$out/snapshots/$n/" || fail "cannot copy $h"
	echo "snapshot: $(basename "$h")" >>"$out/snapshots/$n/scenario.txt"
	if [[ -n $keep ]]; then
		mkdir -p "$keep" && rm -rf "${keep:?}/$n" && cp -a "$out/snapshots/$n" "$keep/$n" ||
			fail "cannot copy to $keep/$n"
	fi
	return 0
}

# A scenario that did not end with its own snapshot reported on may have left a hitch whose snapshot is still to
# come: the next one waits for it (quiet), or that snapshot would drain the ring between its hitch and its own.
settle=
for n in "${scenarios[@]}"; do
	for try in 1 2; do
		[[ -n $settle ]] && quiet
		run_scenario "$n"
		rc=$?
		settle=
		((rc != 0)) && settle=1
		((rc == 1 && try == 1)) && { echo "causes test: $n: ${note[$n]}; once more"; continue; }
		break
	done
	case $rc in
	0) result[$n]=recorded ;;
	*) result[$n]=FAIL ;;
	esac
done
t_recorded=$(date +%s.%N)

[[ -n $st_pid ]] && kill "$st_pid" && wait "$st_pid" 2>/dev/null
st_pid=
kill -INT "$epid"
wait "$epid"
rc=$?
epid=
[[ $rc == 0 ]] || fail "engine exited $rc after SIGINT"

# Each snapshot's report.json against its scenario.txt: the engine's own (written at capture time) or, where it
# wrote none, analyze's, now that the engine and the load are gone.
failed=0
for n in "${scenarios[@]}"; do
	if [[ ${result[$n]} == recorded ]]; then
		if "$here/check-verdict.sh" "$out/snapshots/$n" "$analyze" >"$out/snapshots/$n.check" 2>&1; then
			result[$n]=PASS
		else
			result[$n]=FAIL
			note[$n]="$(grep -c '^FAIL' "$out/snapshots/$n.check") checks failed"
		fi
		sed 's/^/  /' "$out/snapshots/$n.check"
		[[ -n $keep && -f $out/snapshots/$n/report.json ]] && cp "$out/snapshots/$n"/report.* "$keep/$n/"
	fi
	[[ ${result[$n]} == PASS ]] || failed=1
done
t_end=$(date +%s.%N)

get() { sed -n "s/^$1: //p" "$s"; }
echo
echo "causes test: scenario results (stress-ng: $([[ -n $stress ]] && echo on || echo off))"
for n in "${scenarios[@]}"; do
	s=$out/snapshots/$n/scenario.txt
	what=${note[$n]:-}
	[[ -z $what && -f $s ]] && what="frame $(get frame_ms) ms; want $(get expect_cause), $(get expect_culprit)"
	printf '%-4s %-16s %s\n' "${result[$n]}" "$n" "$what"
done
awk -v a="$t_start" -v b="$t_engine" -v c="$t_recorded" -v d="$t_end" \
	'BEGIN { printf "causes test: %.1f s (engine start %.1f s, scenarios %.1f s, reports %.1f s)\n",
		d - a, b - a, c - b, d - c }'
if ((failed)); then
	[[ -z $own_out ]] && echo "causes test: snapshots, reports and checks are in $out/snapshots"
	echo "causes test: FAIL"
	exit 1
fi
echo "causes test: OK"
