#!/usr/bin/env bash
# trigger_storm.sh: a crash loop of N processes against a live engine: snapshots must stay at the rate cap, and key-event streaming must lose nothing.
# usage: sudo bench/trigger_storm.sh ENGINE [N=1000]   (bench/trigger-storm.yaml; instances hindsight_bench_storm_*)
# Prints: snapshots taken (cap 6/hour), key events seen vs expected, kernel-side losses of the key session, the
# crash loop's wall time with the engine recording against the same loop without it (a ratio, same machine, same run).
# The ratio is printed only for a valid run (the engine recorded the loop: its key events and the crash trigger's
# hits are there, and at least one snapshot was taken); otherwise it exits 1 saying why.
set -uo pipefail
engine=$(realpath "$1") n=${2:-1000}
profile=$(dirname "$(realpath "$0")")/trigger-storm.yaml
tmp=$(mktemp -d)
trap 'kill -9 $epid 2>/dev/null; rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
ulimit -c 0
invalid() { echo "trigger_storm: INVALID: $*; no ratio" >&2; exit 1; }
loop() { local t0; t0=$(date +%s%N); for _ in $(seq "$n"); do sh -c 'kill -ABRT $$' 2>/dev/null; done; echo $((($(date +%s%N) - t0) / 1000000)); }
base_ms=$(loop)
"$engine" --rules "$profile" >out.txt 2>&1 &
epid=$!
until grep -q '^engine: recording' out.txt; do sleep 0.1; kill -0 $epid || { cat out.txt; exit 1; }; done
dir=$(sed -n 's/^engine: run folder \(.*\) (pid.*/\1/p' out.txt)
rec_ms=$(loop)
sleep 8 # post_delay and the snapshots that are due
kill -INT $epid
wait $epid
epid=
[[ -f $dir/run.json ]] || invalid "the engine left no run.json in '$dir'"
snaps=$(ls -d "$dir"/snapshots/[0-9]*-crash 2>/dev/null | wc -l)
read -r seen hits < <(jq -r '"\(.key_events_observed) \(.triggers[0].hits)"' "$dir/run.json")
jq -r --arg n "$n" '
  (.sessions[] | select(.name == "keyevents")) as $k
  | "key events seen \(.key_events_observed) (the loop alone makes >= \(($n|tonumber) * 4): fork, exec, signal, exit per process)",
    "key session kernel losses: dropped \([$k.cpus[].dropped] | add), overrun \([$k.cpus[].overrun] | add), lost to a full disk \($k.bytes_lost_disk) bytes",
    "crash trigger: hits \(.triggers[0].hits), fired \(.triggers[0].fired), dropped by the rate cap \(.triggers[0].dropped_rate)"' "$dir/run.json"
echo "snapshot folders: $snaps (cap 6 per hour, keep 5)"
((seen >= n * 4)) || invalid "the engine saw $seen key events, fewer than the loop's $((n * 4))"
((hits >= n)) || invalid "the crash trigger counted $hits hits for $n crashes"
((snaps >= 1)) || invalid "no crash snapshot was taken"
((base_ms > 0 && rec_ms > 0)) || invalid "a loop took no time ($base_ms ms, $rec_ms ms)"
echo "crash loop of $n: ${base_ms} ms without the engine, ${rec_ms} ms while recording (ratio $(awk -v a="$rec_ms" -v b="$base_ms" 'BEGIN{printf "%.2f", a/b}'))"
