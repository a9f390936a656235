#!/usr/bin/env bash
# check-crash.sh: `analyze crash` on a synthetic key-event trace: order, stories, crash flag, whitelist.
# usage: check-crash.sh MK_KEYTRACE ANALYZE RULES
set -uo pipefail
mk=$1 analyze=$2 rules=$3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$mk" "$dir/k.etl" || { echo "FAIL: mk_keytrace"; exit 1; }
out=$("$analyze" crash "$dir/k.etl" --rules "$rules") || { echo "FAIL: analyze crash exit $?"; exit 1; }
echo "$out"
fail=0
# The events, oldest first, with the noise (id 21) left out.
order=$(grep -oE '(ProcessStart|TdrPayloadEngineTimeout|TcpAbortTcbRequest|ProcessStop|ThreadWorkOnBehalfUpdate) ' <<<"$out" | tr -d ' ' | paste -sd,)
[[ $order == "ProcessStart,TdrPayloadEngineTimeout,TcpAbortTcbRequest,ProcessStop" ]] ||
	{ echo "FAIL: order/whitelist is '$order'"; fail=1; }
grep -q 'CRASH: game.exe exited with 0xc0000005 STATUS_ACCESS_VIOLATION' <<<"$out" || { echo "FAIL: crash line"; fail=1; }
grep -q '^4 key events, 1 crash, 1 gpu-reset, 1 disconnect$' <<<"$out" || { echo "FAIL: totals"; fail=1; }
grep -qE 'TdrPayloadEngineTimeout +pid 4 +tid 5 +\[gpu-reset\]$' <<<"$out" || { echo "FAIL: TDR not flagged"; fail=1; }
grep -q 'A GPU engine stopped making progress' <<<"$out" || { echo "FAIL: TDR story"; fail=1; }
json=$("$analyze" crash --json "$dir/k.etl" --rules "$rules") || fail=1
node -e 'const d=JSON.parse(require("fs").readFileSync(0,"utf8")); const x=d.timeline.filter(e=>e.exit); if (d.crashes!==1||x.length!==1||x[0].exit.code!==0xC0000005||!x[0].exit.crash||d.alerts["gpu-reset"]!==1||d.alerts.disconnect!==1) process.exit(1)' <<<"$json" ||
	{ echo "FAIL: --json"; fail=1; }
((fail == 0)) && echo "crash checks: all passed"
exit $fail
