#!/usr/bin/env bash
# check-triggers.sh: trigger decisions without root or a kernel: fixture.dat replayed through a profile with triggers;
# the snapshot folders and run.json must show the rate cap, a field condition, a regex with cool-down and a warm-up.
# usage: check-triggers.sh ENGINE PROFILE FIXTURE_DAT   (as root, the engine runs as nobody)
set -uo pipefail
engine=$(realpath -m "$1") profile=$(realpath -m "$2") dat=$(realpath -m "$3")
command -v jq >/dev/null || { echo "SKIP: no jq"; exit 77; }
fail=0
bad() { echo "FAIL: $*"; fail=1; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
chmod 0777 "$dir"
as_user=()
[[ $(id -u) == 0 ]] && as_user=(setpriv --reuid=nobody --regid=nogroup --clear-groups)

# Paced as recorded and as fast as possible: decisions are made in the trace's time, so both agree.
for speed in 0 1; do
	d=$dir/speed$speed
	mkdir -p "$d" && chmod 0777 "$d"
	(cd "$d" && timeout -k 5 "${HS_TEST_RUN_TIMEOUT:-120}" "${as_user[@]}" "$engine" --rules "$profile" \
		--replay "$dat" --replay-speed $speed >out.txt 2>&1)
	rc=$?
	[[ $rc == 0 ]] || { bad "speed $speed: engine exited $rc"; tail -20 "$d/out.txt"; continue; }
	run=$(ls -d "$d"/logs/runs/*/ | head -n1)
	[[ -f $run/run.json ]] || { bad "speed $speed: no run.json"; continue; }
	t() { jq -r --arg n "$1" ".triggers[] | select(.name == \$n) | .$2" "$run/run.json"; }
	folders() { ls -d "$run"/snapshots/[0-9]*-"$1" 2>/dev/null | wc -l; }
	echo "speed $speed: $(jq -c '[.triggers[] | {name, hits, fired, joined, dropped_rate, ignored_warmup}]' "$run/run.json")"
	[[ $(t fsync hits) == 6 ]] || bad "speed $speed: fsync hits $(t fsync hits), want 6"
	[[ $(t fsync fired) == 3 && $(folders fsync) == 3 ]] || bad "speed $speed: fsync fired $(t fsync fired) / $(folders fsync) folders, want 3 (max_per_hour)"
	[[ $(t fsync dropped_rate) == 3 ]] || bad "speed $speed: fsync dropped_rate $(t fsync dropped_rate), want 3"
	[[ $(t exit3 hits) == 1 && $(t exit3 fired) == 1 && $(folders exit3) == 1 ]] || bad "speed $speed: exit3 hits $(t exit3 hits) fired $(t exit3 fired), want 1 and 1"
	[[ $(t true-exec hits) == 6 && $(t true-exec fired) == 1 && $(t true-exec joined) == 5 ]] ||
		bad "speed $speed: true-exec hits/fired/joined $(t true-exec hits)/$(t true-exec fired)/$(t true-exec joined), want 6/1/5"
	[[ $(t warm fired) == 0 ]] && (($(t warm ignored_warmup) >= 18)) || bad "speed $speed: warm fired $(t warm fired), ignored_warmup $(t warm ignored_warmup)"
	# Every folder complete: snapshot.json names its trigger, the hit's fields, and both session files exist.
	for s in "$run"/snapshots/[0-9]*; do
		name=${s##*/[0-9][0-9][0-9]-}
		jq -e --arg n "$name" '.trigger.name == $n and (.sessions | length == 2) and (.files | length == 3)
			and (.sessions[] | select(.mode == "buffering") | .cpu_windows | length >= 1)' \
			"$s/snapshot.json" >/dev/null || bad "$s/snapshot.json is incomplete"
		for f in keyevents.dat snap.dat; do [[ -f $s/$f ]] || bad "$s has no $f"; done
	done
	e=$(ls -d "$run"/snapshots/[0-9]*-exit3 | head -1)
	jq -e '.hit | tostring | test("error_code")' "$e/snapshot.json" >/dev/null || bad "exit3's evidence does not show error_code"
	ls -a "$run/snapshots" | grep -q partial && bad "a .partial folder was left"
done
((fail == 0)) && echo "check-triggers: OK"
exit $fail
