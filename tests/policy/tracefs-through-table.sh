#!/usr/bin/env bash
# tracefs-through-table.sh: fails if any engine source other than ftrace/tracefs_api.c calls libtracefs (tracefs_*()) directly.
# usage: tracefs-through-table.sh PROJECT_DIR
#
# The engine calls tracefs only through the reviewed call table (engine/src/ftrace/tracefs_api.h), so that the
# recorder of tests/ftrace can stand in for it and the goldens (tests/ftrace/golden/*.calls) show every call
# (docs/backends.md). Comments and string literals are blanked first (a comment may name a libtracefs function);
# then every `tracefs_<name>(` left, and every use of one as a pointer (`= tracefs_<name>;`), fails with its file
# and line.
set -uo pipefail
root=$(cd "$1" && pwd)
cd "$root/engine/src" || { echo "no engine/src under $root"; exit 1; }
fail=0
checked=0
while IFS= read -r f; do
	[[ $f == ftrace/tracefs_api.c ]] && continue
	checked=$((checked + 1))
	while IFS= read -r hit; do
		echo "engine/src/$f:$hit: a direct libtracefs call; call it through hs_tracefs_api_get() (ftrace/tracefs_api.h)"
		fail=1
	done < <(perl -0777 -pe 's{/\*.*?\*/}{ my $c = $&; $c =~ s/[^\n]//g; $c }gse; s{//[^\n]*}{}g; s{^(?!\s*#\s*include)([^\n]*)}{ my $l = $1; $l =~ s/"(?:[^"\\\n]|\\.)*"/""/g; $l }gme' "$f" |
		grep -n -P '(?<!struct )(?<!enum )\btracefs_[a-z0-9_]+\s*[(;,}]' | cut -c1-160)
done < <(find . -name '*.c' -o -name '*.h' | sed 's|^\./||' | sort)
# The table itself must exist and be the one place that names the library's functions.
if ! grep -q 'tracefs_instance_create' ftrace/tracefs_api.c; then
	echo "engine/src/ftrace/tracefs_api.c does not point the table at libtracefs: the check would check nothing"
	fail=1
fi
if ((checked < 50)); then
	echo "only $checked files checked under engine/src: the tree moved?"
	exit 1
fi
exit $fail
