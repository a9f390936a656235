#!/usr/bin/env bash
# run-names-no-platform.sh: fails if the run layer's code (engine/src/run/) names a trace platform outside its OS layer.
# usage: run-names-no-platform.sh PROJECT_DIR
#
# The run layer drives every backend through hs_backend_ops (docs/architecture.md): what is tracefs's or ETW's
# (session-name claims, task names, status counters, wake interval, delivery lag, launch mode) is the backend
# table's. The OS layer (files named *_posix.c / *_win.c) may call the operating system, Windows through the
# reviewed call table (etw/etw_api.h); threads and locks under #ifdef _WIN32 are the OS's, not a trace
# platform's. Comments may name platforms; code may not: comments and strings are
# blanked first, then each identifier that names a platform fails with its file and line.
set -uo pipefail
root=$(cd "$1" && pwd)
cd "$root/engine/src/run" || { echo "no engine/src/run under $root"; exit 1; }
# What names a platform: a backend's symbols or headers, the plan's platform switch, platform limits.
pattern='(\<hs_etw_|\<hs_ftrace_|\<tracefs_|\<etw_[a-z]|\<HS_PLATFORM_(LINUX|WINDOWS)\>|\<HS_(LINUX|ETW)_[A-Z_]+|"(etw|ftrace|perf)/|<tracefs|\<linux_\.|->etw\.)'
fail=0
checked=0
for f in *.c *.h; do
	case $f in *_posix.c | *_win.c) continue ;; esac
	checked=$((checked + 1))
	# Blank /* */ and // comments (line numbers kept) and string literals other than #include's.
	while IFS= read -r hit; do
		echo "$f:$hit: the run layer names a platform (its backend or the OS layer's *_posix.c / *_win.c should)"
		fail=1
	done < <(perl -0777 -pe 's{/\*.*?\*/}{ my $c = $&; $c =~ s/[^\n]//g; $c }gse; s{//[^\n]*}{}g; s{^(?!\s*#\s*include)([^\n]*)}{ my $l = $1; $l =~ s/"(?:[^"\\\n]|\\.)*"/""/g; $l }gme' "$f" |
		grep -n -E "$pattern" | cut -c1-160)
done
if ((checked < 20)); then
	echo "only $checked files checked under engine/src/run: the layer moved?"
	exit 1
fi
((fail)) && exit 1
echo "run layer: $checked files, no platform named outside the OS layer"
