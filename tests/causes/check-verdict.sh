#!/usr/bin/env bash
# check-verdict.sh: checks a cause scenario's snapshot: its report.json names the reason and the culprit that scenario.txt says were injected.
# usage: check-verdict.sh SNAPSHOT_DIR [ANALYZE]
#   SNAPSHOT_DIR holds the engine's snapshot (snapshot.json, snap.dat, keyevents.dat) and the scenario's scenario.txt.
#   Without report.json there, `ANALYZE report SNAPSHOT_DIR` writes it first.
# Prints one "ok" or "FAIL" line per check; exits 0 when all hold, 1 when one does not, 2 on bad input. No root needed.
set -uo pipefail
d=${1:?usage: check-verdict.sh SNAPSHOT_DIR [ANALYZE]}
analyze=${2:-}
s=$d/scenario.txt
[[ -f $s ]] || { echo "check-verdict: $s: missing" >&2; exit 2; }
command -v jq >/dev/null || { echo "check-verdict: needs jq" >&2; exit 2; }
get() { sed -n "s/^$1: //p" "$s" | head -1; }
scenario=$(get scenario) cause=$(get expect_cause) who=$(get expect_culprit)
game_pid=$(get game_pid) cpids=$(get culprit_pids) ctid=$(get culprit_tid)
[[ -n $cpids ]] || cpids=$(get culprit_pid)
[[ -n $scenario && -n $cause && -n $who && -n $game_pid ]] || { echo "check-verdict: $s is incomplete" >&2; exit 2; }

r=$d/report.json
if [[ -s $r ]]; then
	echo "     $scenario: report.json: $(jq -r '.generator // "?"' "$r")"
elif [[ -n $analyze ]]; then
	"$analyze" report "$d" >"$d/analyze.out" 2>&1 ||
		{ echo "FAIL $scenario: analyze report exited $?: $(tail -3 "$d/analyze.out")"; exit 1; }
	echo "     $scenario: report.json: analyze report"
fi
[[ -s $r ]] || { echo "FAIL $scenario: no report.json in $d"; exit 1; }
jq -e . "$r" >/dev/null 2>&1 || { echo "FAIL $scenario: report.json is not JSON"; exit 1; }

bad=0
# check DESCRIPTION JQ_FILTER: one assertion on report.json; the filter sees $cause, $who, $pids (numbers), $tid.
check() {
	local what=$1 f=$2 pids
	pids=$(jq -cn --arg p "$cpids" '$p | split(" ") | map(select(. != "") | tonumber)')
	if jq -e --arg cause "$cause" --arg who "$who" --argjson pids "$pids" --arg tid "$ctid" \
		--argjson game "$game_pid" "$f" "$r" >/dev/null 2>&1; then
		echo "ok   $scenario: $what"
	else
		echo "FAIL $scenario: $what"
		bad=1
	fi
}
# The closed list of reason ids (issue 21).
ids='["app-cpu","cpu-contention","cgroup-throttle","irq","io-wait","fault-io","memory-stall","lock-wait","ipc-wait",
      "sleep","stopped","power","gpu","display","runtime-pause","process-start","device-event","not-perceivable",
      "insufficient-data"]'
# The frame-hitch finding of the game's process (the snapshot's trigger).
fh='(first(.findings[]? | select(.kind == "frame-hitch" and .pid == $game)) // null)'

check "verdict is an object with text, cause and culprit" \
	'.verdict | type == "object" and (.text | type == "string") and (.cause | type == "string") and
	 (.culprit == null or (.culprit | type == "string"))'
check "verdict cause is $cause" '.verdict.cause == $cause'
check "a frame-hitch finding for the game (pid $game_pid)" "$fh != null"
check "the finding's cause is $cause" "$fh.cause.id == \$cause"
check "the finding's cause has a share >= 0.5" "$fh.cause.share >= 0.5 and $fh.cause.share <= 1"
check "the finding's cause has evidence" "$fh.cause.evidence | type == \"array\" and length > 0"
check "the finding's reasons use the closed list, each with id, share, ns and culprit" \
	"$fh.cause.reasons | type == \"array\" and length > 0 and
	 all(.[]; (.id as \$i | $ids | index(\$i)) != null and (.share | type == \"number\")
	          and (.ns | type == \"number\") and has(\"culprit\"))"
check "the finding's reasons cover >= 90 % of the window" "($fh.cause.reasons | map(.share) | add) >= 0.9"
if [[ $who != - ]]; then
	check "verdict culprit is $who" '.verdict.culprit == $who'
	check "verdict text names $who" '.verdict.text | contains($who)'
	check "the finding's culprit is $who with pid, tid, tgid, policy and priority" \
		"$fh.cause.culprit | .name == \$who and (.pid | type == \"number\") and (.tid | type == \"number\") and
		 (.tgid | type == \"number\") and has(\"policy\") and has(\"priority\")"
	[[ -n $cpids ]] && check "the finding's culprit is process $cpids" \
		"$fh.cause.culprit.tgid as \$p | \$pids | index(\$p) != null"
	[[ -n $ctid ]] && check "the finding's culprit is tid $ctid" "$fh.cause.culprit.tid == (\$tid | tonumber)"
fi
exit $bad
