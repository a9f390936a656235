#!/usr/bin/env bash
# tools-include-only-public-headers.sh: fails if a file under tools/ includes an engine header that is not public.
# usage: tools-include-only-public-headers.sh PROJECT_DIR
#
# Allowed: "hindsight/X.h" that exists under engine/include/; a tool's own
# header found next to the including file (inside tools/); <X> from the system
# or a third-party library. Anything else, and any <X> or "X" that names a
# file under engine/src/, fails: tools see the library through
# engine/include/hindsight/ only (their targets do not have engine/src on the
# include path, so this also catches a relative "../../engine/src/..." path).
set -uo pipefail
root=$(cd "$1" && pwd)
public=$root/engine/include
private=$root/engine/src

# Private includes kept for now, as "tools/path.c|header|why (to be removed: ...)".
# Empty: no tool includes a private header. An entry that no longer matches
# fails too, so the list only shrinks.
allow=()

mapfile -t files < <(cd "$root" && find tools -name '*.[ch]' | sort)
fail=0
checked=0
declare -A used=()
for f in "${files[@]}"; do
	dir=$(dirname "$root/$f")
	while IFS= read -r hit; do
		line=${hit%%:*}
		inc=${hit#*:}
		kind=${inc:0:1}
		hdr=${inc:1:-1}
		checked=$((checked + 1))
		bad=""
		if [[ -e $private/$hdr ]]; then
			bad="names a private header (engine/src/$hdr)"
		elif [[ $kind == '"' ]]; then
			if [[ $hdr == hindsight/* ]]; then
				[[ -f $public/$hdr ]] || bad="is not a public header (no engine/include/$hdr)"
			elif [[ -f $dir/$hdr ]]; then
				real=$(realpath "$dir/$hdr")
				[[ $real == "$root/tools/"* ]] || bad="resolves outside tools/ ($real)"
			else
				bad="is neither hindsight/*.h nor a header of the tool"
			fi
		fi
		[[ -z $bad ]] && continue
		for e in "${allow[@]}"; do
			if [[ ${e%%|*} == "$f" && $(cut -d'|' -f2 <<<"$e") == "$hdr" ]]; then
				used[$e]=1
				continue 2
			fi
		done
		echo "$f:$line: #include $inc $bad"
		fail=1
	done < <(grep -noP '^\s*#\s*include\s*\K("[^"]+"|<[^>]+>)' "$root/$f")
done
for e in "${allow[@]}"; do
	[[ -n ${used[$e]:-} ]] || { echo "allowlist entry no longer needed (remove it): $e"; fail=1; }
done

# An empty scan proves nothing.
((${#files[@]} > 10 && checked > 50)) || { echo "too little scanned: ${#files[@]} files, $checked includes"; fail=1; }
((fail == 0)) && echo "tools include only public headers: ${#files[@]} files, $checked includes"
exit $fail
