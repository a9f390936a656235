#!/usr/bin/env bash
# cpus-test.sh: --cpus only sizes a printed plan; with recording, --launch or --estimate it is a usage error (exit 2) that says so.
# usage: cpus-test.sh ENGINE PROFILE   (any user; the profile's instance names are hindsight_test_lock_*)
set -uo pipefail
engine=$1 profile=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
fail=0
check() { # expected-exit description args...
	local want=$1 what=$2
	shift 2
	# --duration-sec 1: an engine that wrongly records stops by itself.
	"$engine" "$@" >out.txt 2>&1
	local rc=$?
	if [[ $rc != "$want" ]]; then
		echo "FAIL: $what: exit $rc, want $want"; sed 's/^/  /' out.txt | head -5; fail=1
	elif [[ $want == 2 ]] && ! grep -q -- '--cpus goes with --plan' out.txt; then
		echo "FAIL: $what: no message saying --cpus goes with --plan"; sed 's/^/  /' out.txt | head -5; fail=1
	else
		echo "ok: $what (exit $rc)"
	fi
}
check 2 "record with --cpus" --rules "$profile" --cpus 3 --duration-sec 1
check 2 "--estimate with --cpus" --rules "$profile" --cpus 3 --estimate 1
check 2 "--launch with --cpus" --rules "$profile" --cpus 3 --launch /bin/true
check 0 "--plan with --cpus" --rules "$profile" --plan --cpus 3
grep -q 'per CPU x 3 CPUs' out.txt || { echo "FAIL: the plan does not size for 3 CPUs"; grep -i cpu out.txt | head -3; fail=1; }
[[ -e logs ]] && { echo "FAIL: a run folder was made: $(find logs | head -3)"; fail=1; }
((fail == 0)) && echo "cpus test: OK"
exit $fail
