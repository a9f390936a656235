#!/usr/bin/env bash
# check-fullprofile.sh: hs_fullprofile's output for each profile loads cleanly (rulecheck --strict), keeps
# every session under a "_full" logger name and has no event whitelist left.
# usage: check-fullprofile.sh HS_FULLPROFILE RULECHECK PROFILE...
set -uo pipefail
tool=$1 rulecheck=$2
shift 2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }
for p in "$@"; do
	out=$tmp/$(basename "$p" .yaml)-full.yaml
	"$tool" "$p" -o "$out" || { bad "hs_fullprofile failed on $p"; continue; }
	"$rulecheck" --strict "$out" || bad "the full profile of $p fails rulecheck --strict"
	grep -qE '^ *events:' "$out" && bad "the full profile of $p still has a whitelist"
	n=$(grep -c '^ *logger_name:' "$out")
	nf=$(grep -c '^ *logger_name: ".*_full"$' "$out")
	((n > 0 && n == nf)) || bad "$p: $nf of $n logger names end in _full"
	grep -q '^ *output: "full-' "$out" || bad "$p: outputs are not renamed"
	# --platform and the file-session sizes.
	"$tool" "$p" --platform linux --file-mb 4096 --buffer-kb 65536 -o "$out.linux" || { bad "--platform linux failed"; continue; }
	grep -q '^  windows:' "$out.linux" && bad "$p: --platform linux kept the windows section"
	if grep -q 'mode: "file-circular"' "$out.linux"; then
		grep -q 'max_file_mb: 4096' "$out.linux" && grep -q 'buffer_size_kb: 65536' "$out.linux" ||
			bad "$p: --file-mb/--buffer-kb not applied to the file-circular session"
	fi
done
"$tool" "$tmp/missing.yaml" >/dev/null 2>&1
[[ $? == 2 ]] || bad "a missing profile must exit 2"
((fail == 0)) && echo "hs_fullprofile: all checks passed"
exit $fail
