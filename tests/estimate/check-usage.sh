#!/usr/bin/env bash
# check-usage.sh: engine --estimate's argument checks (no privileges needed: they fail before recording).
# usage: check-usage.sh ENGINE RULES
set -uo pipefail
engine=$1 rules=$2
fail=0
expect() { # expect STATUS PATTERN ARGS...
	local want=$1 pat=$2
	shift 2
	out=$("$engine" "$@" 2>&1)
	rc=$?
	[[ $rc == "$want" ]] || { echo "FAIL: engine $*: exit $rc, expected $want"; fail=1; }
	grep -qE -- "$pat" <<<"$out" || { echo "FAIL: engine $*: no line matches /$pat/"; echo "$out" | head -5; fail=1; }
}
expect 2 'takes a number of seconds from 1 to 86400' --rules "$rules" --estimate 0
expect 2 'takes a number of seconds from 1 to 86400' --rules "$rules" --estimate 3x
expect 2 'does not go with --plan, --launch or --duration-sec' --rules "$rules" --estimate 3 --plan
expect 2 'does not go with --plan, --launch or --duration-sec' --rules "$rules" --estimate 3 --duration-sec 5
expect 2 '^engine: --json goes with --plan or --estimate$' --rules "$rules" --json
expect 0 '--estimate N +record N seconds' --help
((fail == 0)) && echo "estimate usage: all checks passed"
exit $fail
