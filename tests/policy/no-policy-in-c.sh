#!/usr/bin/env bash
# no-policy-in-c.sh: fails if engine or tool C sources hold policy that belongs in rules/*.yaml:
# provider GUIDs or names, catalog event names, file names of run outputs, or session sizes.
# usage: no-policy-in-c.sh ENGINE_DIR [TOOLS_DIR]   (rules are read from ENGINE_DIR/../rules)
set -uo pipefail
engine=$1
tools=${2:-}
rules=$engine/../rules
mapfile -t sources < <(find "$engine" ${tools:+"$tools"} -name '*.[ch]' | sort)
fail=0
report() { echo "policy in C: $1"; shift; printf '  %s\n' "$@"; fail=1; }

# Tools name things the trace formats define, which is knowledge, not policy
# (policy is what to record and where: the rules). Each entry is
# "path under the tree|text on the hit line|why"; a hit in that file whose line
# holds that text is not reported. An entry that covers no hit fails the test
# (a stale entry would hide the next real hit). An entry whose reason starts
# with POLICY covers a real policy literal that its owner has not moved yet: it
# is printed on every run, so it cannot be forgotten.
allow=(
  "engine/src/etl/kernel.c|return \"|ETW's names for the classic kernel event groups (EVENT_TRACE_GROUP_*), format facts: the library's table (hs_etl_kernel_group_name), the fallback when no catalog names an event"
  "tools/analyze/tracedat_crash.c|DEC_|the tracepoints whose fields the crash decoder reads (to be removed: a catalog 'means:' key picks them, as it does for ETL process exits)"
  "tools/analyze/tracedat.c|:\"trace.dat\"|the file format's name in JSON output (\"format\": \"trace.dat\"), not a file name"
  "tools/analyze/tracedat_crash.c|:\"trace.dat\"|the file format's name in JSON output (\"format\": \"trace.dat\"), not a file name"
  "tools/analyze/tracedat_crash.c|hs_json_kstr(j, \"signal\"|a JSON key (the signal's name), not the tracepoint system"
  "tools/rulegen/rulegen.h|/* One row:|a comment"
  "tools/scenarios/sigcheck.c|/* \"signal\", \"signal_deliver\" */|a comment"
  "tools/scenarios/load.c|hs_load.%lu.dat|the load scenario's scratch file, not a run output"
  "engine/src/main.c|it always goes to main.log|POLICY: --help names stutter.yaml's 'log: main.log'; the log is whatever the rules' run.log says (reported in issue 25; engine/src/main.c's owner rewords it)"
)
used=$(mktemp)
trap 'rm -f "$used"' EXIT
# Drops the hits that an entry covers (stdin to stdout, one hit a line) and
# notes which entries were used.
allowed() {
	local line e p t i
	while IFS= read -r line; do
		for i in "${!allow[@]}"; do
			e=${allow[i]}
			p=${e%%|*}
			t=${e#*|}
			t=${t%%|*}
			if [[ $line == *"$p:"* && $line == *"$t"* ]]; then
				echo "$i" >>"$used"
				continue 2
			fi
		done
		printf '%s\n' "$line"
	done
}

# 1. Any GUID literal.
hits=$(grep -nHoP '[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}' "${sources[@]}" | allowed)
[[ -n $hits ]] && report "GUIDs (provider and event GUIDs live in rules/providers/*.yaml)" "$hits"

# 2. Windows provider names.
hits=$(grep -nHo 'Microsoft-Windows-[A-Za-z0-9-]*' "${sources[@]}" | allowed)
[[ -n $hits ]] && report "provider names" "$hits"

# 3. Every provider, system and event name the catalogs define, as a C string literal.
mapfile -t names < <(grep -hoP '\b(?:name|system): \K[A-Za-z_][A-Za-z0-9_.-]{2,}' "$rules"/providers/*.yaml | sort -u)
# One grep for all names, then the hits grouped by name (the same line may name two).
all=$(grep -nHF -f <(printf '"%s"\n' "${names[@]}") "${sources[@]}" | allowed)
if [[ -n $all ]]; then
	for n in "${names[@]}"; do
		hits=$(grep -F "\"$n\"" <<<"$all")
		[[ -n $hits ]] && report "catalog name \"$n\"" "$hits"
	done
fi

# 4. Output and log file names (a base name with the extension of a run file),
# looked for inside string literals only: char literals are removed first so
# '"' does not open a string, and a literal may hold escapes (\n, \", \\).
# Two kinds of token are not file names: a metavariable of usage text (FILE.etl,
# OUT.etl: an upper-case base) and a format's own name (trace.dat, perf.data) in
# a sentence (a literal with a space). A bare "trace.dat" or "%s/trace.dat" is
# a file name, and is reported.
literals() {
	local f
	for f in "${sources[@]}"; do
		sed -E "s/'(\\\\.|[^'\\\\])'//g" "$f" | grep -noP '"(?:[^"\\]|\\.)*"' | sed "s|^|$f:|"
	done
}
file_names() { # keeps the hits (FILE:LINE:"LITERAL") that name a file, as above (one perl, not a fork a line)
	perl -ne '
		my ($lit) = /^[^:]*:[0-9]+:(.*)$/ or next;
		for my $tok ($lit =~ /(?<![A-Za-z0-9_%.-])([A-Za-z0-9_%.-]+\.(?:etl|dat|data|log))\b/g) {
			next if $tok =~ /^[A-Z][A-Z0-9_]*\./;
			next if $lit =~ / / && ($tok eq "trace.dat" || $tok eq "perf.data");
			print;
			last;
		}'
}
lits=$(literals)
n_literals=$(wc -l <<<"$lits")
hits=$(file_names <<<"$lits" | allowed)
[[ -n $hits ]] && report "file names (outputs are named by the rules)" "$hits"

# 5. Session sizes, intervals and rates given a number in C.
hits=$(grep -nHP '\b(buffer_size_kb|min_buffers|max_buffers|max_file_mb|ring_mb|sample_hz|flush_interval_s|stats_interval_s|per_cpu_kb|flush_timer|level)\s*=\s*[0-9]' "${sources[@]}" | allowed)
[[ -n $hits ]] && report "sizes or levels set in C" "$hits"

# 6. The program's voice: library code reports through the message channel
# (hindsight/msg.h: a level, a source, the text) and the program decides the
# prefix and the stream, so no library source spells "engine: " in a string
# literal. Only the engine program (src/main.c, which makes the sinks) does;
# run/ is library code too.
hits=$(grep -rnHE '"(\\n)?engine: ' "$engine/src" --include='*.c' --include='*.h' | grep -v "^$engine/src/main\.c:")
[[ -n $hits ]] && report "\"engine: \" in library code (say it through hs_msg; the program adds the prefix)" "$hits"

# The allow-list is checked too: an entry that covers nothing is stale, and a
# POLICY entry is said out loud on every run.
for i in "${!allow[@]}"; do
	e=${allow[i]}
	if ! grep -qx "$i" "$used"; then
		report "an allow-list entry that covers no hit (remove it)" "${e%|*}"
	elif [[ ${e##*|} == POLICY* ]]; then
		echo "known policy in C, allowed until moved: ${e%%|*}: ${e##*|}"
	fi
done

# The check must have looked at something: an empty scan proves nothing.
((${#sources[@]} > 10)) || report "too few sources scanned (${#sources[@]}) under $engine ${tools}" "-"
((n_literals > 1000)) || report "too few string literals found ($n_literals): the literal pattern is broken" "-"
((${#names[@]} > 50)) || report "too few catalog names read (${#names[@]}) from $rules/providers" "-"

if ((fail == 0)); then
	echo "no policy in C: ${#sources[@]} sources scanned against ${#names[@]} catalog names"
fi
exit $fail
