#!/usr/bin/env bash
# check-damaged.sh: every analyze command that reads trace.dat, on damaged copies of real files: a clear error, never a crash.
# The copies are tracedat_damage's first N mutations of each file (truncations, byte flips, numbers overwritten,
# bytes scrambled). For each copy, counts, summary --json, crash, estimate and report must exit 0 (read, no problem),
# 1 (read with damage) or 2 (refused), never die of a signal or a sanitizer report, and a non-zero exit must come
# with the reader's reason (a file offset, or "not readable as a trace.dat") on stderr or in the report (a copy cut
# inside the magic is no trace.dat: then analyze's own "not an .etl").
# usage: check-damaged.sh ANALYZE TRACEDAT_DAMAGE RULES N FILE.dat...
set -uo pipefail
analyze=$1 damage=$2 rules=$3 n=$4
shift 4
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }
# A cut before the trace.dat magic is no trace.dat: analyze then says it is not an .etl either.
reason='at file offset 0x|not readable as a trace\.dat|no event format in the file|cannot be read|not an \.etl|neither a trace'

declare -A by_rc=()
runs=0

for f in "$@"; do
	"$damage" --flips "$n" --write "$dir" "$n" "$f" >/dev/null || bad "$damage could not write the mutations of $f"
	# The undamaged file reads cleanly with every command.
	for cmd in counts crash; do
		"$analyze" "$cmd" "$f" --rules "$rules" >/dev/null 2>"$dir/err" || bad "$cmd $f (undamaged) exited $?: $(head -c 300 "$dir/err")"
	done
done

for m in "$dir"/*.dat; do
	name=$(basename "$m")
	for cmd in counts summary crash estimate report; do
		args=("$cmd" "$m" --rules "$rules")
		[[ $cmd == summary ]] && args+=(--json)
		[[ $cmd == report ]] && args+=(-o "$dir/report")
		"$analyze" "${args[@]}" >"$dir/out" 2>"$dir/err"
		rc=$?
		runs=$((runs + 1))
		by_rc[$rc]=$((${by_rc[$rc]:-0} + 1))
		if ((rc > 2)); then
			bad "analyze $cmd $name: exit $rc$( ((rc > 128)) && echo " (signal $((rc - 128)))"): $(head -c 400 "$dir/err")"
			continue
		fi
		if grep -qE 'Sanitizer|runtime error:' "$dir/err"; then
			bad "analyze $cmd $name: a sanitizer report: $(grep -m3 -E 'Sanitizer|runtime error:|#[0-9] ' "$dir/err")"
		fi
		if ((rc != 0)) && ! grep -qE "$reason" "$dir/err" "$dir/out"; then
			bad "analyze $cmd $name: exit $rc without the reader's reason: $(head -c 300 "$dir/err")"
		fi
		if [[ $cmd == summary && $rc != 2 ]] && command -v jq >/dev/null && ! jq -e . "$dir/out" >/dev/null 2>&1; then
			bad "analyze summary --json $name: exit $rc but not JSON"
		fi
	done
done
echo "analyze on $(ls "$dir"/*.dat | wc -l) damaged files: $runs runs, exit 0: ${by_rc[0]:-0}, 1 (damage): ${by_rc[1]:-0}," \
	"2 (refused): ${by_rc[2]:-0}"
exit $fail
