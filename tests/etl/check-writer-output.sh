#!/usr/bin/env bash
# check-writer-output.sh: summary and cpu work on files the writer produced: a cpu-sample filter of a
# real sampled trace keeps every sample, stack and image event, so cpu must report exactly the same.
# usage: check-writer-output.sh ANALYZE FIXTURES_DIR RULES_DIR
set -uo pipefail
analyze=$1 fx=$2 rules=$3
in=$fx/microsoft_perfview/net.4.5.2.x86.etl
[[ -f $in ]] || { echo "FAIL: fixture missing: $in"; exit 1; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$analyze" filter "$in" --rules "$rules/cpu-sample.yaml" -o "$dir/f.etl" || { echo "FAIL: filter"; exit 1; }
fail=0
a=$("$analyze" cpu "$in" | sed 1d) b=$("$analyze" cpu "$dir/f.etl" | sed 1d)
[[ -n $a && $a == "$b" ]] || { echo "FAIL: cpu differs on the filtered copy"; diff <(echo "$a") <(echo "$b") | head; fail=1; }
s=$("$analyze" summary "$dir/f.etl") || { echo "FAIL: summary on the filtered copy"; fail=1; }
grep -qE '^ +88809  kernel PerfInfo \(0x0f\) / opcode 46$' <<<"$s" || { echo "FAIL: summary lost samples"; fail=1; }
grep -qE '^buffers: +[0-9]+ \([0-9]+ compressed' <<<"$s" || { echo "FAIL: summary header"; fail=1; }
((fail == 0)) && echo "writer output checks: all passed"
exit $fail
