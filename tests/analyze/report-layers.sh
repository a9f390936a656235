#!/usr/bin/env bash
# report-layers.sh: no circle of files in the report layer: from its object files' symbol tables (nm), file A
# depends on file B when A uses a function or object B defines; tsort must find an order. The cause attribution
# (report/cause/) is part of the layer's target and is checked the same way.
# usage: report-layers.sh OBJECT.o... | LIBHS_REPORT.a
#   Object files are named by their path (two model.c of different folders stay apart); an archive by member name.
set -uo pipefail
(($# >= 1)) || { echo "usage: report-layers.sh OBJECT.o... | LIB.a" >&2; exit 2; }
command -v nm >/dev/null && command -v tsort >/dev/null || { echo "report layers: SKIP: no nm or tsort"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# "file defined-symbol" and "file undefined-symbol" lines
if [[ $# == 1 && $1 == *.a ]]; then
	nm -A --defined-only "$1" 2>/dev/null | awk '$(NF-1) ~ /^[TDRBC]$/ { split($1, a, ":"); print a[2], $NF }' >"$tmp/d"
	nm -A --undefined-only "$1" 2>/dev/null | awk '{ split($1, a, ":"); print a[2], $NF }' >"$tmp/u"
else
	# one nm for all objects (-A: each line starts "path:"), not two per object: 124 runs of nm took 21-60 s on
	# a loaded 2-CPU machine and this test timed out
	nm -A --defined-only "$@" 2>/dev/null |
		awk '$(NF-1) ~ /^[TDRBC]$/ { f = $1; sub(/:[^:]*$/, "", f); sub(/^.*\/src\//, "", f); print f, $NF }' >"$tmp/d"
	nm -A --undefined-only "$@" 2>/dev/null |
		awk '{ f = $1; sub(/:[^:]*$/, "", f); sub(/^.*\/src\//, "", f); print f, $NF }' >"$tmp/u"
fi
sort -k2 "$tmp/d" >"$tmp/def"
sort -k2 "$tmp/u" >"$tmp/use"
[[ -s $tmp/def ]] || { echo "report layers: FAIL: no symbols in $*"; exit 1; }
join -1 2 -2 2 "$tmp/use" "$tmp/def" | awk '$2 != $3 { print $2, $3 }' | sort -u >"$tmp/edges"
n=$(wc -l <"$tmp/edges")
if ! tsort "$tmp/edges" >/dev/null 2>"$tmp/loop"; then
	echo "report layers: FAIL: files of the report layer call each other in a circle:"
	cat "$tmp/loop"
	exit 1
fi
# a circle of two is a loop tsort reports too; say what was checked
echo "report layers: OK: $(awk '{ print $1 } END {}' "$tmp/def" | sort -u | wc -l) files, $n calls between them, no circle"
