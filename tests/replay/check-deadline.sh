#!/usr/bin/env bash
# check-deadline.sh: deadline decisions without root or a kernel: deadline-fixture.dat replayed through a profile with a
# deadline trigger, paced and as fast as possible: the 3 s freeze gives a snapshot at its last frame + 2 s and one
# at its end (hang_ms ~3000), the same at both speeds; the loop that exits and the one with 5 frames give none.
# usage: check-deadline.sh ENGINE PROFILE FIXTURE_DAT   (as root, the engine runs as nobody)
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
declare -A hit
for speed in 0 1; do
	d=$dir/speed$speed
	mkdir -p "$d" && chmod 0777 "$d"
	(cd "$d" && timeout -k 5 "${HS_TEST_RUN_TIMEOUT:-120}" "${as_user[@]}" "$engine" --rules "$profile" \
		--replay "$dat" --replay-speed $speed >out.txt 2>&1)
	rc=$?
	[[ $rc == 0 ]] || { bad "speed $speed: engine exited $rc"; tail -20 "$d/out.txt"; continue; }
	run=$(ls -d "$d"/logs/runs/*/ | head -n1)
	[[ -f $run/run.json ]] || { bad "speed $speed: no run.json"; continue; }
	echo "speed $speed: $(jq -c '.triggers[] | {name, hits, fired, excused}' "$run/run.json")"
	mapfile -t f < <(ls -d "$run"/snapshots/[0-9]*-hang 2>/dev/null)
	((${#f[@]} == 2)) || { bad "speed $speed: ${#f[@]} hang snapshots, want 2 (the freeze and its end)"; continue; }
	jq -e '.hit.phase == "frozen" and .hit.frames >= 170 and .hit.median_frame_ms > 15 and .hit.median_frame_ms < 18
		and .first_hit_ns == .hit.freeze_start_ns + 2000000000' "${f[0]}/snapshot.json" >/dev/null ||
		bad "speed $speed: the first snapshot is not the freeze at its last frame + 2 s: $(jq -c .hit "${f[0]}/snapshot.json")"
	jq -e '.hit.phase == "ended" and .hit.ended_by == "frame" and .hit.hang_ms > 2950 and .hit.hang_ms < 3100' \
		"${f[1]}/snapshot.json" >/dev/null ||
		bad "speed $speed: the second snapshot is not the freeze's end after ~3 s: $(jq -c .hit "${f[1]}/snapshot.json")"
	hit[$speed]=$(jq -r '.first_hit_ns' "${f[0]}/snapshot.json")
	for s in "${f[@]}"; do
		for x in keyevents.dat snap.dat snapshot.json; do [[ -f $s/$x ]] || bad "$s has no $x"; done
	done
done
[[ ${hit[0]:-a} == "${hit[1]:-b}" ]] || bad "the freeze's hit differs between speeds: ${hit[0]:-} vs ${hit[1]:-}"
((fail == 0)) && echo "check-deadline: OK"
exit $fail
