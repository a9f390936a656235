#!/usr/bin/env bash
# report_ring.sh: records a crash snapshot of a full stutter.yaml ring (256 MB, about 5 M events) for
# bench_report_speed, and says how long the engine's own capture-time report of it took.
# usage (root): bench/report_ring.sh ENGINE SEGV OUTDIR [PROFILE]
#   ENGINE  build/engine/engine; SEGV  build/tests/hs_segv; OUTDIR  where the snapshot folder is copied
#   Holds /tmp/hs-root.lock while it records (other recorders wait); stress-ng --switch fills the ring.
set -uo pipefail
engine=$(realpath -m "$1") segv=$(realpath -m "$2") out=$(realpath -m "$3")
profile=$(realpath -m "${4:-$(dirname "$0")/../rules/stutter.yaml}")
[[ $(id -u) == 0 ]] || { echo "report_ring: needs root" >&2; exit 2; }
command -v stress-ng >/dev/null || { echo "report_ring: needs stress-ng" >&2; exit 2; }
tmp=$(mktemp -d)
epid= spid=
cleanup() {
	[[ -n $spid ]] && kill "$spid" 2>/dev/null
	[[ -n $epid ]] && { kill -INT "$epid" 2>/dev/null; wait "$epid" 2>/dev/null; }
	rm -rf "$tmp"
}
trap cleanup EXIT
exec 9>/tmp/hs-root.lock
flock 9
cd "$tmp" || exit 1
"$engine" --rules "$profile" --quiet >out.txt 2>&1 &
epid=$!
for _ in $(seq 900); do grep -q '^engine: recording' out.txt && break; sleep 0.1; done
grep -q '^engine: recording' out.txt || { echo "report_ring: the engine did not start" >&2; tail out.txt >&2; exit 1; }
dir=$(sed -n 's/^engine: run folder \(.*\) (pid.*/\1/p' out.txt)
stress-ng --switch 2 --timeout 600 >/dev/null 2>&1 &
spid=$!
# the ring is full when the engine's status says so (and the triggers are past their warm-up)
fill=0
for i in $(seq 600); do
	fill=$("$engine" ctl --rules "$profile" status --json 2>/dev/null |
		python3 -c 'import json,sys; d=json.load(sys.stdin); print(max(s["ring_fill"] or 0 for s in d["sessions"] if s["mode"]=="buffering"))' 2>/dev/null)
	((i > 15)) && python3 -c "import sys; sys.exit(0 if float('${fill:-0}') >= 0.97 else 1)" && break
	sleep 1
done
kill "$spid" 2>/dev/null
wait "$spid" 2>/dev/null
spid=
echo "report_ring: ring fill ${fill:-?}, crashing hs_segv"
"$segv" 2>/dev/null
t0=$(date +%s.%N)
snap=
for _ in $(seq 1200); do
	snap=$(ls -d "$dir"/snapshots/[0-9]*-crash 2>/dev/null | head -1)
	[[ -n $snap && -s $snap/report.html ]] && break
	sleep 0.1
done
[[ -n $snap && -s $snap/report.html ]] || { echo "report_ring: no crash snapshot with a report" >&2; tail out.txt >&2; exit 1; }
grep -E '^engine: (hindsight_stutter_ring: wrote .*snapshots|trigger crash fired|snapshot [0-9]+-crash)' "$dir/main.log"
mkdir -p "$out"
rm -rf "${out:?}/${snap##*/}"
cp -r "$snap" "$out/"
echo "report_ring: $out/${snap##*/} ($(du -sh "$snap" | cut -f1)); report $(grep -o '"seconds": [0-9.]*' "$snap/snapshot.json" | tail -1)"
