#!/usr/bin/env bash
# check-verdict.sh: checks a cause scenario's snapshot: its report.json names the reason and the culprit that scenario.txt says were injected.
# usage: check-verdict.sh SNAPSHOT_DIR [ANALYZE]
#   SNAPSHOT_DIR holds the engine's snapshot (snapshot.json, snap.dat, keyevents.dat, the engine's report.json) and
#   the scenario's scenario.txt. Without report.json there, `ANALYZE report SNAPSHOT_DIR` writes it first.
# scenario.txt's expectations (tests/causes/lib.sh, finish and expect):
#   expect_cause          the reason id of the verdict and of the game's frame-hitch finding, dominant: a share >= 0.5,
#                         or >= 1.5x the share of the next reason
#   expect_culprit        a task's name (the verdict names it; culprit_pid(s)/culprit_tid its process and thread),
#                         or - when the culprit is not a task (then expect_culprit_what says what it is)
#   expect_culprit_what   an extended regex the culprit's `what` must match (an interrupt, the disk, a CPU quota)
#   expect_what           an extended regex the cause's `what` must match (the file, the cgroup, the CPU)
#   expect_policy         the culprit's policy (fifo, normal: tasks.json names it while the culprit lives)
#   expect_priority       the culprit's priority (a real-time hog's)
# The reason ids are the schema's (schemas/report.schema.json, definitions.reason_id).
# Prints one "ok" or "FAIL" line per check; exits 0 when all hold, 1 when one does not, 2 on bad input. No root needed.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
d=${1:?usage: check-verdict.sh SNAPSHOT_DIR [ANALYZE]}
analyze=${2:-}
s=$d/scenario.txt
schema=$here/../../schemas/report.schema.json
[[ -f $s ]] || { echo "check-verdict: $s: missing" >&2; exit 2; }
command -v jq >/dev/null || { echo "check-verdict: needs jq" >&2; exit 2; }
ids=$(jq -c '.definitions.reason_id.enum | select(type == "array" and length > 0)' "$schema" 2>/dev/null)
[[ -n $ids ]] || { echo "check-verdict: no reason ids in $schema" >&2; exit 2; }
get() { sed -n "s/^$1: //p" "$s" | head -1; }
scenario=$(get scenario) cause=$(get expect_cause) who=$(get expect_culprit)
game_pid=$(get game_pid) game_tid=$(get game_tid) cpids=$(get culprit_pids) ctid=$(get culprit_tid)
kwhat=$(get expect_culprit_what) what=$(get expect_what) prio=$(get expect_priority) policy=$(get expect_policy)
frame_start=$(get frame_start_ns) frame_end=$(get frame_end_ns)
[[ -n $cpids ]] || cpids=$(get culprit_pid)
[[ -n $scenario && -n $cause && -n $who && -n $game_pid && -n $game_tid && -n $frame_start && -n $frame_end ]] || { echo "check-verdict: $s is incomplete" >&2; exit 2; }
jq -e --arg c "$cause" 'index($c) != null' <<<"$ids" >/dev/null ||
	{ echo "check-verdict: $s expects $cause, which is not a reason id of $schema" >&2; exit 2; }
[[ $who != - || -n $kwhat ]] || { echo "check-verdict: $s: a culprit that is not a task needs expect_culprit_what" >&2; exit 2; }

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
# check DESCRIPTION JQ_FILTER: one assertion on report.json; the filter sees $cause, $who, $pids (numbers), $tid,
# $game, $gtid, $kwhat, $what, $prio, $policy and $ids.
check() {
	local desc=$1 f=$2 pids
	pids=$(jq -cn --arg p "$cpids" '$p | split(" ") | map(select(. != "") | tonumber)')
	if jq -e --arg cause "$cause" --arg who "$who" --argjson pids "$pids" --arg tid "$ctid" \
		--argjson game "$game_pid" --arg gtid "$game_tid" --arg kwhat "$kwhat" --arg what "$what" \
		--arg prio "$prio" --arg policy "$policy" --argjson ids "$ids" "$f" "$r" >/dev/null 2>&1; then
		echo "ok   $scenario: $desc"
	else
		echo "FAIL $scenario: $desc"
		bad=1
	fi
}
# The frame-hitch finding of the game's process (the snapshot's trigger), and the finding the report explains (the
# one with a cause: the verdict's, about the game's thread, over a window that holds the frame; it may be another
# finding of the same moment, a slow system call or a memory stall, when the report ranks it first).
fh='(first(.findings[]? | select(.kind == "frame-hitch" and .pid == $game)) // null)'
ex='(first(.findings[]? | select(.cause != null)) // null)'

check "verdict is an object with text, cause and culprit" \
	'.verdict | type == "object" and (.text | type == "string") and (.cause | type == "string") and
	 (.culprit == null or (.culprit | type == "string"))'
check "verdict cause is $cause" '.verdict.cause == $cause'
check "a frame-hitch finding for the game (pid $game_pid)" "$fh != null"
check "the first finding is explained (the verdict's)" "$ex != null and $ex == .findings[0]"
check "the explained finding is about the game's thread (tid $game_tid)" \
	"$ex.cause.thread | .tgid == \$game and .tid == (\$gtid | tonumber)"
check "its window holds the frame ($frame_start..$frame_end)" \
	"$ex.cause.window | .first_ns <= $frame_start + 3000000 and .last_ns >= $frame_end - 3000000"
check "its cause is $cause" "$ex.cause.id == \$cause"
# The cause dominates: half the window, or the largest reason by half again over the next (a 72 ms memcg frame
# under stress-ng: reclaim 46 %, the CPU hog 28 %, its own copying 26 %).
check "its cause dominates (a share >= 0.5, or >= 1.5x the next reason's)" \
	"$ex.cause.share <= 1 and ($ex.cause.share >= 0.5 or
	 ([$ex.cause.reasons[] | select(.id != \$cause) | .share] | max // 0) * 1.5 <= $ex.cause.share)"
check "its cause has evidence" "$ex.cause.evidence | type == \"array\" and length > 0"
check "its reasons use the closed list, each with id, share, ns and culprit" \
	"$ex.cause.reasons | type == \"array\" and length > 0 and
	 all(.[]; (.id as \$i | \$ids | index(\$i)) != null and (.share | type == \"number\")
	          and (.ns | type == \"number\") and has(\"culprit\"))"
check "its reasons cover >= 90 % of the window" "($ex.cause.reasons | map(.share) | add) >= 0.9"
check "verdict culprit is its culprit's name, or what it is when not a task" \
	"$ex.cause.culprit as \$k | .verdict.culprit == (\$k.name // \$k.what)"
if [[ $who != - ]]; then
	check "verdict culprit is $who" '.verdict.culprit == $who'
	check "verdict text names $who" '.verdict.text | contains($who)'
	check "its culprit is $who with pid, tid, tgid, policy and priority" \
		"$ex.cause.culprit | .name == \$who and (.pid | type == \"number\") and (.tid | type == \"number\") and
		 (.tgid | type == \"number\") and has(\"policy\") and has(\"priority\")"
	[[ -n $cpids ]] && check "its culprit is process $cpids" \
		"$ex.cause.culprit.tgid as \$p | \$pids | index(\$p) != null"
	[[ -n $ctid ]] && check "its culprit is tid $ctid" "$ex.cause.culprit.tid == (\$tid | tonumber)"
fi
if [[ -n $kwhat ]]; then
	# A culprit that is not a task: what it is, and no task's pid or name.
	check "its culprit is /$kwhat/, not a task" \
		"$ex.cause.culprit | (.what | type == \"string\" and test(\$kwhat)) and .pid == null and .name == null"
fi
[[ -n $what ]] && check "its cause is about /$what/" "$ex.cause.what | type == \"string\" and test(\$what)"
[[ -n $policy ]] && check "its culprit's policy is $policy" "$ex.cause.culprit.policy == \$policy"
[[ -n $prio ]] && check "its culprit has priority $prio" "$ex.cause.culprit.priority == (\$prio | tonumber)"
# A failed check says what the report said instead: CI keeps no snapshot folder, so this line is all there is.
if ((bad)); then
	echo "     $scenario: the report said: $(jq -c "{verdict: .verdict.text, first: (.findings[0] | {kind, pid, tid}),
		cause: ($ex | .cause // null | if . == null then null else {id, share, what, culprit,
		reasons: [.reasons[]? | {id, share, ns, culprit: (.culprit | if type == \"object\" then
		(.name // .what) else . end)}], evidence: (.evidence[:6])} end)}" "$r" 2>&1)"
fi
exit $bad
