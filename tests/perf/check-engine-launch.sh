#!/usr/bin/env bash
# check-engine-launch.sh: `engine --launch` end to end: DONE line, output path, perf report names the hot function.
# usage: check-engine-launch.sh ENGINE BUSY RULES
set -uo pipefail
engine=$1 busy=$2 rules=$3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
out=$("$engine" --rules "$rules" --launch "$busy" --args "0.5" --out "$dir/p.data" 2>&1)
rc=$?
echo "$out" | tail -5
fail=0
[[ $rc == 0 ]] || { echo "FAIL: exit $rc"; fail=1; }
grep -qE "^DONE .*perf_busy OK \([0-9]+ samples\)$" <<<"$out" || { echo "FAIL: no DONE line"; fail=1; }
[[ $(tail -1 <<<"$out") == "output: $dir/p.data" ]] || { echo "FAIL: last line must name the output"; fail=1; }
top=$(perf report -i "$dir/p.data" --stdio --no-children --sort symbol 2>/dev/null | grep -E '^ +[0-9.]+%' | head -1)
grep -q busy_hot_spin <<<"$top" || { echo "FAIL: top symbol is '$top'"; fail=1; }
# A program that cannot run: FAILED with the capture log, exit 2, no output file.
out=$("$engine" --rules "$rules" --launch "$dir/missing" --out "$dir/q.data" 2>&1)
rc=$?
[[ $rc == 2 ]] && grep -q "^FAILED" <<<"$out" && [[ ! -e $dir/q.data ]] || { echo "FAIL: missing program: rc $rc"; fail=1; }
((fail == 0)) && echo "engine --launch checks: all passed"
exit $fail
