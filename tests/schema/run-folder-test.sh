#!/usr/bin/env bash
# run-folder-test.sh: the run folder's documents as the engine really writes them, against their schemas (Ajv,
# tests/schema/check.mjs): fixture.dat replayed through a profile with triggers (no root): run.json
# (schemas/run.schema.json), every snapshot.json (schemas/snapshot.schema.json) with its capture-time report's
# state, and analyze report's report.json on a snapshot and on the run (schemas/report.schema.json). Broken copies
# must fail (a wrong version, a missing key, an unknown report state), so the check checks.
# usage: run-folder-test.sh ENGINE ANALYZE SOURCE_DIR   (exit 77: no node or tests/schema/node_modules; with
# CI=true, where ./run.sh --test installs them, that fails instead)
set -uo pipefail
engine=$(realpath -m "$1") analyze=$(realpath -m "$2") src=$(realpath -m "$3")
check=$src/tests/schema/check.mjs schemas=$src/schemas
if ! command -v node >/dev/null || [[ ! -d $src/tests/schema/node_modules/ajv ]]; then
	[[ ${CI:-} == true ]] && { echo "run folder test: FAIL: no node or tests/schema/node_modules/ajv; CI=true, where ./run.sh --test installs them"; exit 1; }
	echo "run folder test: SKIPPED (no run.json, snapshot.json or report.json checked against its schema): no node or tests/schema/node_modules (npm ci there)"
	exit 77
fi
tmp=$(mktemp -d)
trap '[[ -n ${HS_KEEP:-} ]] || rm -rf "$tmp"' EXIT
chmod 0777 "$tmp"
fail() { echo "run folder test: FAIL: $*" >&2; exit 1; }
valid() { # SCHEMA FILE...: every file valid
	local s=$1
	shift
	node "$check" "$schemas/$s" "$@" >"$tmp/v.txt" || fail "check.mjs could not run on $s"
	grep -v $'\tvalid$' "$tmp/v.txt" && fail "not valid against $s"
	return 0
}
invalid() { # SCHEMA FILE WHAT
	node "$check" "$schemas/$1" "$2" | grep -q $'\tinvalid' || fail "$1 accepts $3"
}
as_user=()
[[ $(id -u) == 0 ]] && as_user=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
(cd "$tmp" && timeout -k 5 120 "${as_user[@]}" "$engine" --rules "$src/tests/replay/triggers-replay.yaml" \
	--replay "$src/tests/replay/fixture.dat" --replay-speed 0 --quiet >out.txt 2>&1) ||
	fail "engine --replay exited $?: $(tail -5 "$tmp/out.txt")"
run=$(ls -d "$tmp"/logs/runs/*/ | head -n1)
run=${run%/}
[[ -f $run/run.json ]] || fail "no run.json"
snaps=("$run"/snapshots/[0-9]*/snapshot.json)
((${#snaps[@]} >= 3)) || fail "only ${#snaps[@]} snapshots (the profile's triggers make 5)"
valid run.schema.json "$run/run.json"
valid snapshot.schema.json "${snaps[@]}"
# A replay's sessions write JSON lines: every snapshot and the run say why they have no report.
grep -q '"state": "none"' "${snaps[0]}" || fail "a replayed snapshot's report state is not none: $(grep -A2 '"report"' "${snaps[0]}")"
grep -q '"snapshot_version": 1' "${snaps[0]}" && grep -q '"run_version": 1' "$run/run.json" || fail "no document versions"
# analyze report reads both through their one reader: a snapshot folder whose ring is the fixture, and the run.
s=$(dirname "${snaps[0]}")
cp "$src/tests/replay/fixture.dat" "$s/snap.dat" # the replay wrote JSON lines there
"$analyze" report "$s" -o "$tmp/rs" --rules "$src/rules/stutter.yaml" >"$tmp/rs.txt" 2>&1
[[ $? -le 1 ]] || fail "analyze report on a snapshot exited $?: $(cat "$tmp/rs.txt")"
sed -n 3p "$tmp/rs.txt" | grep -q 'was taken by trigger' || fail "the snapshot's trigger line: $(sed -n 3p "$tmp/rs.txt")"
"$analyze" report "$src/tests/replay/fixture.dat" -o "$tmp/rf" --rules "$src/rules/stutter.yaml" >/dev/null 2>&1 ||
	fail "analyze report on fixture.dat exited $?"
valid report.schema.json "$tmp/rs/report.json" "$tmp/rf/report.json"
# broken copies
sed 's/"run_version": 1/"run_version": 2/' "$run/run.json" >"$tmp/bad-run.json"
invalid run.schema.json "$tmp/bad-run.json" "run_version 2"
sed 's/"state": "none"/"state": "maybe"/' "${snaps[0]}" >"$tmp/bad-snap.json"
invalid snapshot.schema.json "$tmp/bad-snap.json" "a report state it does not know"
grep -v '"backend"' "${snaps[0]}" >"$tmp/bad-snap2.json"
invalid snapshot.schema.json "$tmp/bad-snap2.json" "a snapshot.json without backend"
sed 's/"report_version": 2/"report_version": 1/' "$tmp/rf/report.json" >"$tmp/bad-report.json"
invalid report.schema.json "$tmp/bad-report.json" "report_version 1"
echo "run folder test: OK: run.json, ${#snaps[@]} snapshot.json, 2 report.json valid; 4 broken copies refused"
