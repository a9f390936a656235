#!/usr/bin/env bash
# case.sh: runs one rulegen test case on a private copy of tests/rulegen/synthetic and prints what the
# golden compares (golden.sh adds the exit status).
# usage: case.sh RULEGEN RULECHECK ANALYZE MK_KEYTRACE SRC_DIR CASE
set -uo pipefail
rulegen=$1 rulecheck=$2 analyze=$3 mk=$4 src=$5 case=$6
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cp -r "$src/synthetic" "$dir/" || exit 2
cd "$dir" || exit 2
# The windows config counts one scenario straight from an .etl trace.
"$mk" synthetic/k.etl >/dev/null || { echo "mk_keytrace failed"; exit 2; }

# In place, then: the result passes rulecheck (stubs are warnings: exit 0), -o writes the same bytes,
# and a second run changes nothing (--check exits 0): the output is a fixed point.
fixed_point() {
	local cfg=synthetic/$1.yaml profile=synthetic/$1-profile.yaml
	"$rulegen" -o expected.yaml "$cfg" 2>/dev/null || { echo "rulegen -o failed"; return 1; }
	"$rulegen" --in-place "$cfg" 2>/dev/null || { echo "rulegen --in-place failed"; return 1; }
	cmp -s expected.yaml "$profile" || echo "FAIL: --in-place and -o wrote different files"
	"$rulecheck" "$profile"
	local rc=$?
	"$rulecheck" --strict --quiet "$profile" >/dev/null && echo "FAIL: --strict passed with stubs"
	"$rulegen" --check "$cfg" 2>&1 || echo "FAIL: a second run would change the profile"
	return $rc
}

case $case in
linux-explain) "$rulegen" --explain synthetic/linux.yaml 2>&1 ;;
linux-output) "$rulegen" synthetic/linux.yaml ;;
linux-diff) "$rulegen" --diff synthetic/linux.yaml ;;
linux-check) "$rulegen" --check synthetic/linux.yaml 2>&1 ;; # the profile is stale: the diff, exit 1
linux-rulecheck) fixed_point linux ;;
windows-explain) "$rulegen" --explain synthetic/windows.yaml 2>&1 ;;
windows-output) "$rulegen" synthetic/windows.yaml ;;
windows-rulecheck) fixed_point windows ;;
counts-etl)
	# rulegen counts a trace exactly as analyze counts does; the length comes from its first and last event.
	"$rulegen" --counts synthetic/k.etl >mine || exit 1
	"$analyze" counts synthetic/k.etl >theirs || exit 1
	diff -u theirs <(grep -v '^#' mine) && grep '^# seconds:' mine
	;;
bad-config | bad-names | bad-session | bad-counts) "$rulegen" "synthetic/$case.yaml" 2>&1 ;;
*)
	echo "case.sh: unknown case '$case'" >&2
	exit 2
	;;
esac
