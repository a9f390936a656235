#!/usr/bin/env bash
# golden.sh: runs a command and compares its stdout and exit status with a golden file.
# usage: golden.sh EXPECTED_FILE WORKDIR -- COMMAND [ARGS...]
# The golden file is the command's stdout followed by a line "exit: N".
# HS_UPDATE_GOLDEN=1 rewrites the golden file instead of comparing.
set -uo pipefail
expected=$1
workdir=$2
shift 3
actual=$(mktemp)
trap 'rm -f "$actual"' EXIT
(cd "$workdir" && "$@") >"$actual" 2>/dev/null
echo "exit: $?" >>"$actual"
if [[ "${HS_UPDATE_GOLDEN:-}" == 1 ]]; then
	cp "$actual" "$expected"
	echo "updated $expected"
	exit 0
fi
if ! diff -u "$expected" "$actual"; then
	echo "golden mismatch: $expected (rerun with HS_UPDATE_GOLDEN=1 to accept)" >&2
	exit 1
fi
