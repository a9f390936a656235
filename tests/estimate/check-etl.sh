#!/usr/bin/env bash
# check-etl.sh: `analyze estimate` on every real ETL fixture, checked by check-etl.js against the fixture's
# independent counts and record sizes summed from the buffers; a few text-mode lines too.
# usage: check-etl.sh FIXTURES_DIR RULES ANALYZE...   (ANALYZE may start with an emulator)
set -uo pipefail
fx=$1 rules=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
command -v node >/dev/null || { echo "FAIL: node is needed to check the JSON"; exit 1; }
[[ -d $fx/expected ]] || { echo "FAIL: fixtures missing at $fx"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0 n=0
while read -r expected; do
	rel=${expected#"$fx"/expected/}
	rel=${rel%.counts}
	etl=$fx/$rel
	[[ -f $etl ]] || { echo "FAIL: $etl missing"; fail=1; continue; }
	"$@" estimate "$etl" --rules "$rules" --json 2>"$tmp/err" | tr -d '\r' >"$tmp/est.json"
	rc=${PIPESTATUS[0]}
	((rc == 0)) || { echo "FAIL $rel: analyze estimate exited $rc: $(head -c 2000 "$tmp/err")"; fail=1; continue; }
	"$@" counts "$etl" 2>"$tmp/err" | tr -d '\r' >"$tmp/counts.txt"
	rc=${PIPESTATUS[0]}
	((rc == 0)) || { echo "FAIL $rel: analyze counts exited $rc: $(head -c 2000 "$tmp/err")"; fail=1; continue; }
	node "$here/check-etl.js" "$etl" "$expected" "$tmp/counts.txt" "$tmp/est.json" || fail=1
	n=$((n + 1))
done < <(find "$fx/expected" -name '*.counts' | sort)
((n > 0)) || { echo "FAIL: no fixtures checked"; fail=1; }

# Text: names from the catalogs, the file projection's caveat, and the reason when there is no projection.
expect() { # expect WHAT TEXT PATTERN
	grep -qE -- "$3" <<<"$2" || { echo "FAIL text $1: no line matches /$3/"; fail=1; }
}
out=$("$@" estimate "$fx/microsoft_perfview/net.4.5.2.x86.etl" --rules "$rules" | tr -d '\r')
expect net "$out" '^measured: over 13\.208 s, the first to the last event$'
expect net "$out" '^ +2 +[0-9.]+ +647 +[0-9.]+  Microsoft-Windows-Kernel-Process$'
expect net "$out" '^ +1 +[0-9.]+ +414 +[0-9.]+    ProcessStart \(id 1\)$'
expect net "$out" '^file projection for keyevents \(max_file_mb 500\), assuming this trace is representative of it:$'
expect net "$out" '^  +256 MB  .*<- ring_mb of the rules$'
out=$("$@" estimate "$fx/airbus-cert_etl-parser/lxcore_kernel.etl" --rules "$rules" | tr -d '\r')
expect lxcore "$out" '^no projections: the capture holds 4 events, fewer than the 10 a projection needs$'
out=$("$@" estimate "$fx/microsoft_perfview/diaghub.user_injected.1.etl" --rules "$rules" | tr -d '\r')
expect diaghub "$out" '^no projections: the capture covers 0\.046 s, less than the 1 s a projection needs$'
out=$("$@" estimate "$fx/airbus-cert_etl-parser/AMSITrace.etl" --rules "$rules" | tr -d '\r')
expect amsi "$out" '^lost: +the logger counted 3 events and 0 buffers lost$'
expect amsi "$out" 'losses make the rates below an undercount'

((fail == 0)) && echo "estimate on $n ETL fixtures: all checks passed"
exit $fail
