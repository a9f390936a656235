#!/usr/bin/env bash
# check-analyze.sh: end-to-end checks of `analyze summary` and `analyze crash` on real fixtures.
# usage: check-analyze.sh ANALYZE FIXTURES_DIR
set -uo pipefail
analyze=$1
fx=$2
fail=0
expect() { # expect NAME OUTPUT PATTERN...
	local name=$1 out=$2
	shift 2
	for pat in "$@"; do
		if ! grep -qE -- "$pat" <<<"$out"; then
			echo "FAIL $name: no line matches /$pat/"
			fail=1
		fi
	done
}
[[ -d $fx ]] || { echo "FAIL: fixtures missing at $fx"; exit 1; }

net=$fx/microsoft_perfview/net.4.5.2.x86.etl
out=$("$analyze" summary "$net") || { echo "FAIL summary exit $?"; fail=1; }
expect summary-net "$out" \
	'^logger: +Relogger$' \
	'^mode: +0x04010001 SEQUENTIAL\|RELOG\|COMPRESSED$' \
	'^buffers: +276 \(275 compressed, 0 flagged lost\)$' \
	'^events: +168298;' \
	'^ +88809  kernel PerfInfo \(0x0f\) / opcode 46$' \
	'^  Microsoft-Windows-Kernel-Process: 2$' \
	'ProcessStart \(id 1\) - A process was created'

out=$("$analyze" summary "$fx/microsoft_perfview/primitive-types.etl") || fail=1
expect summary-tracelogging "$out" 'PrimitiveTypesTest \(id 0\)' '^  solar_system \{d3dd3dd4-'

json=$("$analyze" summary --json "$net") || fail=1
node -e 'const d=JSON.parse(require("fs").readFileSync(0,"utf8")); if (d.events!==168298||d.buffers!==276||!(d.span_s>13&&d.span_s<14)) process.exit(1)' <<<"$json" ||
	{ echo "FAIL summary --json: not valid or wrong numbers"; fail=1; }

out=$("$analyze" crash "$net") || fail=1
expect crash-net "$out" \
	'Microsoft-Windows-Kernel-Process +ProcessStart +pid 3508' \
	'exit: Test\.x86\.exe exited with 0x00000000' \
	'^2 key events, 0 crashes$'

# A damaged file: every readable event still counted, the damage reported, exit 1.
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
head -c 300000 "$fx/airbus-cert_etl-parser/AMSITrace.etl" >"$tmp"
out=$("$analyze" counts "$tmp" 2>&1)
rc=$?
[[ $rc == 1 ]] || { echo "FAIL truncated file: exit $rc, expected 1"; fail=1; }
expect truncated "$out" 'cut short by the end of the file' '^TOTAL	[0-9]+$'

((fail == 0)) && echo "analyze checks: all passed"
exit $fail
