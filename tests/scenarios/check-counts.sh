#!/usr/bin/env bash
# check-counts.sh: the committed scenario counts (DIR/<scenario>/{full,filtered}.counts) keep the format
# docs/scenarios.md defines, which rulegen reads: the header, SYSTEM<TAB>event=NAME<TAB>COUNT lines, and a
# TOTAL that is their sum.
# usage: check-counts.sh DIR
set -uo pipefail
dir=$1
fail=0
bad() { echo "FAIL: $*"; fail=1; }
shopt -s nullglob
files=("$dir"/*/*.counts)
((${#files[@]})) || { echo "FAIL: no .counts files under $dir"; exit 1; }
for f in "${files[@]}"; do
	scen=$(basename "$(dirname "$f")") kind=$(basename "$f" .counts)
	[[ $(head -1 "$f") == "# hindsight scenario counts, format 1" ]] || bad "$f: first line is not the format line"
	hdr() { sed -n "s/^# $1: //p" "$f"; }
	[[ $(hdr scenario) == "$scen" ]] || bad "$f: header scenario '$(hdr scenario)' is not its folder '$scen'"
	[[ $(hdr capture) == "$kind" ]] || bad "$f: header capture '$(hdr capture)' is not '$kind'"
	[[ $(hdr seconds) =~ ^[0-9]+(\.[0-9]+)?$ ]] || bad "$f: seconds '$(hdr seconds)' is not a number"
	awk -F'\t' -v f="$f" '
		/^#/ { if (body) { print f ": header line after the counts: " $0; bad = 1 } next }
		$1 == "TOTAL" { total = $2; seen = 1; next }
		{ body = 1
		  if (seen || NF != 3 || $2 !~ /^event=[A-Za-z0-9_]+$/ || $3 !~ /^[0-9]+$/) { print f ": bad line: " $0; bad = 1 }
		  sum += $3 }
		END { if (!seen) { print f ": no TOTAL line"; bad = 1 }
		      else if (total != sum) { print f ": TOTAL " total " is not the sum " sum; bad = 1 }
		      exit bad }' "$f" || fail=1
done
((fail == 0)) && echo "scenario counts: ${#files[@]} files in the documented format"
exit $fail
