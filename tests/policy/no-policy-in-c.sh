#!/usr/bin/env bash
# no-policy-in-c.sh: fails if engine C sources hold policy that belongs in rules/*.yaml:
# provider GUIDs or names, catalog event names, file names of run outputs, or session sizes.
# usage: no-policy-in-c.sh ENGINE_DIR   (rules are read from ENGINE_DIR/../rules)
set -uo pipefail
engine=$1
rules=$engine/../rules
mapfile -t sources < <(find "$engine" -name '*.[ch]' | sort)
fail=0
report() { echo "policy in C: $1"; shift; printf '  %s\n' "$@"; fail=1; }

# 1. Any GUID literal.
hits=$(grep -nHoP '[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}' "${sources[@]}")
[[ -n $hits ]] && report "GUIDs (provider and event GUIDs live in rules/providers/*.yaml)" "$hits"

# 2. Windows provider names.
hits=$(grep -nHo 'Microsoft-Windows-[A-Za-z0-9-]*' "${sources[@]}")
[[ -n $hits ]] && report "provider names" "$hits"

# 3. Every provider, system and event name the catalogs define, as a C string literal.
mapfile -t names < <(grep -hoP '\b(?:name|system): \K[A-Za-z_][A-Za-z0-9_.-]{2,}' "$rules"/providers/*.yaml | sort -u)
for n in "${names[@]}"; do
	hits=$(grep -nHF "\"$n\"" "${sources[@]}")
	[[ -n $hits ]] && report "catalog name \"$n\"" "$hits"
done

# 4. Output and log file names (a base name with the extension of a run file),
# looked for inside string literals only (char literals removed first so '"'
# does not open a string).
literals() {
	for f in "${sources[@]}"; do
		sed -E "s/'(\\\\.|[^'\\\\])'//g" "$f" | grep -noP '"(?:[^"\\\\]|\\\\.)*"' | sed "s|^|$f:|"
	done
}
hits=$(literals | grep -P '\b[A-Za-z0-9_-]+\.(etl|dat|data|log)\b')
[[ -n $hits ]] && report "file names (outputs are named by the rules)" "$hits"

# 5. Session sizes, intervals and rates given a number in C.
hits=$(grep -nHP '\b(buffer_size_kb|min_buffers|max_buffers|max_file_mb|ring_mb|sample_hz|flush_interval_s|stats_interval_s|per_cpu_kb|flush_timer|level)\s*=\s*[0-9]' "${sources[@]}")
[[ -n $hits ]] && report "sizes or levels set in C" "$hits"

# The check must have looked at something: an empty scan proves nothing.
((${#sources[@]} > 10)) || report "too few sources scanned (${#sources[@]}) under $engine" "-"
((${#names[@]} > 50)) || report "too few catalog names read (${#names[@]}) from $rules/providers" "-"

if ((fail == 0)); then
	echo "no policy in C: ${#sources[@]} sources scanned against ${#names[@]} catalog names"
fi
exit $fail
