#!/usr/bin/env bash
# golden.sh: runs a command and compares its stdout and exit status with a golden file.
# usage: golden.sh [--strip-cr] EXPECTED_FILE WORKDIR -- COMMAND [ARGS...]
# The golden file is the command's stdout followed by a line "exit: N".
# --strip-cr reads CRLF line ends as LF (a Windows program's text-mode stdout).
# HS_UPDATE_GOLDEN=1 rewrites the golden file instead of comparing.
# stderr is not compared, but a mismatch shows it: a program that died before
# writing (a Wine client reset, a loader error) says why only there.
set -uo pipefail
strip_cr=0
if [[ ${1:-} == --strip-cr ]]; then
	strip_cr=1
	shift
fi
expected=$1
workdir=$2
shift 3
actual=$(mktemp)
errors=$(mktemp)
trap 'rm -f "$actual" "$errors"' EXIT
(cd "$workdir" && "$@") >"$actual" 2>"$errors"
rc=$?
if ((strip_cr)); then
	sed -i 's/\r$//' "$actual"
fi
echo "exit: $rc" >>"$actual"
if [[ "${HS_UPDATE_GOLDEN:-}" == 1 ]]; then
	cp "$actual" "$expected"
	echo "updated $expected"
	exit 0
fi
if ! diff -u "$expected" "$actual"; then
	if [[ -s $errors ]]; then
		echo "its stderr (not compared):" >&2
		sed 's/^/  | /' "$errors" >&2
	fi
	echo "golden mismatch: $expected (rerun with HS_UPDATE_GOLDEN=1 to accept)" >&2
	exit 1
fi
