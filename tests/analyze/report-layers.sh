#!/usr/bin/env bash
# report-layers.sh: no circle of files in the report layer: from the library's own symbol tables (nm on
# libhs_report.a), file A depends on file B when A uses a function or object B defines; tsort must find an order.
# The cause attribution (report/cause/) is its own module and is checked the same way when it is in the archive.
# usage: report-layers.sh LIBHS_REPORT.a
set -uo pipefail
lib=$1
command -v nm >/dev/null && command -v tsort >/dev/null || { echo "report layers: SKIP: no nm or tsort"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# "member defined-symbol" and "member undefined-symbol" lines
nm -A --defined-only "$lib" 2>/dev/null | awk '$(NF-1) ~ /^[TDRBC]$/ { split($1, a, ":"); print a[2], $NF }' | sort -k2 >"$tmp/def"
nm -A --undefined-only "$lib" 2>/dev/null | awk '{ split($1, a, ":"); print a[2], $NF }' | sort -k2 >"$tmp/use"
[[ -s $tmp/def ]] || { echo "report layers: FAIL: no symbols in $lib"; exit 1; }
join -1 2 -2 2 "$tmp/use" "$tmp/def" | awk '$2 != $3 { print $2, $3 }' | sort -u >"$tmp/edges"
n=$(wc -l <"$tmp/edges")
if ! tsort "$tmp/edges" >/dev/null 2>"$tmp/loop"; then
	echo "report layers: FAIL: files of the report layer call each other in a circle:"
	cat "$tmp/loop"
	exit 1
fi
# a circle of two is a loop tsort reports too; say what was checked
echo "report layers: OK: $(awk '{ print $1 } END {}' "$tmp/def" | sort -u | wc -l) files, $n calls between them, no circle"
