#!/usr/bin/env bash
# coverage-test.sh: the engine never loses coverage silently: an event or filter the kernel refuses stops it before recording, unless the rules mark it optional.
# usage: coverage-test.sh ENGINE DIR ANALYZE   (root; DIR holds coverage-*.yaml, instance hindsight_test_cov)
# A refused filter (a field signal_deliver lacks; rulecheck cannot see it, the
# test catalog has no formats) and a missing event each make the engine exit 1
# with the kernel's word and nothing recorded or left behind; marked optional,
# the engine records, and main.log, run.json and the report's coverage box
# list both as skipped.
set -uo pipefail
engine=$1 src=$2 analyze=$3
tracing=/sys/kernel/tracing
[[ -d $tracing/instances ]] || mount -t tracefs nodev $tracing
tmp=$(mktemp -d)
epid=
fail() { echo "coverage test: FAIL: $*" >&2; for f in "$tmp"/*.txt; do [[ -f $f ]] && { echo "--- $f"; tail -20 "$f"; }; done; exit 1; }
source "$src/lib.sh"
cleanup() {
	[[ -n $epid ]] && kill -9 "$epid" 2>/dev/null && wait "$epid" 2>/dev/null
	remove_instances hindsight_test_cov
	cd / && rm -rf "$tmp"
}
trap cleanup EXIT
[[ $(id -u) == 0 ]] || fail "must run as root"
held hindsight_test_cov && fail "another engine holds hindsight_test_cov"
remove_instances hindsight_test_cov
cd "$tmp" || exit 1

refused() { # NAME WHAT: the profile must stop the engine with exit 1 before recording
	"$engine" --rules "$src/coverage-$1.yaml" --duration-sec 2 >"$tmp/$1.txt" 2>&1
	local rc=$?
	[[ $rc == 1 ]] || fail "$1: the engine exited $rc, not 1 (rules the kernel refuses)"
	grep -q '^engine: recording' "$tmp/$1.txt" && fail "$1: the engine recorded"
	grep -q "$2" "$tmp/$1.txt" || fail "$1: the engine did not say '$2'"
	[[ -d $tracing/instances/hindsight_test_cov ]] && fail "$1: the instance was left behind"
	echo "coverage test: $1: exit 1 before recording: $(grep -m1 "$2" "$tmp/$1.txt")"
}
refused bad-filter 'signal:signal_deliver: .*sgi == 11.*the rules need it'
grep -q 'sgi' "$tmp/bad-filter.txt" || fail "bad-filter: the kernel's message does not name the field"
refused missing 'signal:hs_no_such_event: .*the rules need it'

start_engine "$tmp/optional.txt" "$engine" --rules "$src/coverage-optional.yaml"
sleep 1.5
kill -INT "$epid"
wait "$epid"
rc=$?
epid=
[[ $rc == 0 ]] || fail "optional: the engine exited $rc"
for ev in signal_generate hs_no_such_event; do
	grep -q "signal:$ev.*optional" "$dir/main.log" || fail "optional: main.log does not list $ev as a skipped optional event"
done
node -e '
const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
const s = r.sessions.find(x => x.name === "keyevents");
const names = (s.skipped || []).map(x => x.event).sort().join(",");
if (names !== "signal:hs_no_such_event,signal:signal_generate") { console.error("run.json skipped: " + JSON.stringify(s.skipped)); process.exit(1); }
if (!s.skipped.every(x => x.optional === true && x.why)) { console.error("run.json: skipped entries need optional and why"); process.exit(1); }
' "$dir/run.json" || fail "optional: run.json does not list the two skipped events"
mkdir "$tmp/report" && "$analyze" report "$dir" -o "$tmp/report" >"$tmp/report.txt" 2>&1 || fail "optional: analyze report failed"
for ev in signal_generate hs_no_such_event; do
	sed -n '/^COVERAGE/,$p' "$tmp/report.txt" | grep -q "does not record 2 events the rules mark optional.*signal:$ev" ||
		fail "optional: the report's coverage box does not say $ev is not recorded"
done
echo "coverage test: optional: recorded; skipped and listed: $(grep -c 'optional' "$dir/main.log") lines in main.log, 2 in run.json and the report"
echo "coverage test: OK"
