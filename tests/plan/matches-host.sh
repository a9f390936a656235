#!/usr/bin/env bash
# matches-host.sh: a cross-built engine's plans (host platform windows) must equal the native Linux engine's --platform windows plans.
# usage: matches-host.sh HOST_ENGINE SOURCE_DIR [EMULATOR...] ENGINE
# Both plan the shipped profiles, text and JSON, for this machine's CPU count;
# the Windows engine's text-mode CRLF line ends are read as LF.
set -uo pipefail
host=$1
src=$2
shift 2
[[ -x $host ]] || { echo "FAIL: the Linux build's engine is missing: $host (build it first)"; exit 1; }
cd "$src" || exit 1
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0
for profile in stutter cpu-sample; do
	for json in "" --json; do
		what="$profile${json:+ $json}"
		"$host" --rules "rules/$profile.yaml" --plan --platform windows $json >"$tmp/linux" ||
			{ echo "FAIL $what: the Linux engine exited $?"; fail=1; continue; }
		"$@" --rules "rules/$profile.yaml" --plan $json >"$tmp/windows.crlf" ||
			{ echo "FAIL $what: the Windows engine exited $?"; fail=1; continue; }
		sed 's/\r$//' "$tmp/windows.crlf" >"$tmp/windows"
		if cmp -s "$tmp/linux" "$tmp/windows"; then
			echo "ok $what: $(wc -l <"$tmp/linux") identical lines"
		else
			echo "FAIL $what: the plans differ (- Linux --platform windows, + Windows):"
			diff -u "$tmp/linux" "$tmp/windows" | head -40
			fail=1
		fi
	done
done
exit $fail
