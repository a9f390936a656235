#!/usr/bin/env bash
# tests/policy/exitcodes.sh: exit statuses live in hindsight/exitcodes.h; README's table agrees with it, the engine and the tools define none of their own.
# usage: exitcodes.sh SOURCE_DIR
# Scripts and tests branch on these numbers, so a drift between the header, the table users read and a
# program's own names is a silent behaviour change; this catches it at test time.
set -u
src=${1:?usage: exitcodes.sh SOURCE_DIR}
hdr=$src/engine/include/hindsight/exitcodes.h
readme=$src/README.md
fail=0
bad() {
	echo "exitcodes: $*" >&2
	fail=1
}

# The header's names and values: "HS_EXIT_NAME = N,".
declare -A val
while read -r name v; do
	val[$name]=$v
done < <(sed -n 's/^[[:space:]]*\(HS_EXIT_[A-Z_]*\) = \([0-9][0-9]*\),.*/\1 \2/p' "$hdr")
((${#val[@]} >= 5)) || bad "$hdr: expected at least 5 'HS_EXIT_NAME = N,' lines, found ${#val[@]}"

# README: the "## Exit status" table, rows "| N | `HS_EXIT_NAME` | meaning |", one per header name.
declare -A seen
while IFS='|' read -r _ status name _; do
	status=${status//[[:space:]]/}
	name=${name//[[:space:]\`]/}
	[[ $name == HS_EXIT_* ]] || continue
	seen[$name]=1
	if [[ -z ${val[$name]+x} ]]; then
		bad "README.md lists $name, which $hdr does not define"
	elif [[ ${val[$name]} != "$status" ]]; then
		bad "README.md says $name is $status, $hdr says ${val[$name]}"
	fi
done < <(sed -n '/^## Exit status/,/^## /p' "$readme" | grep '^|')
for name in "${!val[@]}"; do
	[[ -n ${seen[$name]+x} ]] || bad "README.md's exit status table has no row for $name"
done

# The engine: no local exit-status enums or EXIT_ names left; the header is the one definition.
while IFS= read -r hit; do
	bad "engine defines its own exit status (use hindsight/exitcodes.h): $hit"
done < <(grep -rnE 'enum[[:space:]]*\{[^}]*EXIT_|#[[:space:]]*define[[:space:]]+[A-Z_]*EXIT_' "$src/engine/src" || true)
while IFS= read -r hit; do
	bad "engine uses an exit name that is not HS_EXIT_*: $hit"
done < <(grep -rnE '(^|[^A-Z_])EXIT_[A-Z]' "$src/engine/src/main.c" "$src/engine/src/run" | grep -v 'HS_EXIT_' || true)

# The tools: no exit-status names of their own; they include hindsight/exitcodes.h and use HS_EXIT_*.
# A definition is a #define of an *EXIT_* name, an enum constant *EXIT_* = a number or another exit name,
# or an unprefixed EXIT_* enum constant (DEC_EXIT_GROUP, a decoder, is none of these); no exceptions.
while IFS= read -r hit; do
	rel=${hit#"$src"/}
	bad "a tool defines its own exit status (include hindsight/exitcodes.h, use HS_EXIT_*): $rel"
done < <(grep -rnE '#[[:space:]]*define[[:space:]]+[A-Z0-9_]*EXIT_|(^|[^A-Za-z0-9_])[A-Z0-9_]*EXIT_[A-Z0-9_]*[[:space:]]*=[[:space:]]*([0-9]|[A-Z0-9_]*EXIT_)|enum[[:space:]]*\{([^}]*[^A-Za-z0-9_])?EXIT_' \
	"$src/tools" --include='*.c' --include='*.h' || true)
while IFS= read -r hit; do
	bad "a tool uses an exit name that is not HS_EXIT_*: ${hit#"$src"/}"
done < <(grep -rnE '(^|[^A-Za-z0-9_])EXIT_[A-Z]' "$src/tools" --include='*.c' --include='*.h' || true)

((fail)) && exit 1
echo "exitcodes: ${#val[@]} names; README.md agrees with $hdr; engine and tools define no exit status of their own"
