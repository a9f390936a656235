# ETL cpu: the kernel event decoders (unit test on the real fixtures) and `analyze cpu`
# end to end: speedscope output against speedscope's own JSON Schema, folded totals,
# the top process against an independent tally, and stacks that resolve to modules.
# Included from tests/CMakeLists.txt; fixtures are read from ../shared at run time.
set(HS_CPU_FIXTURES ${PROJECT_SOURCE_DIR}/../shared/fixtures/etl)
set(HS_CPU_NET ${HS_CPU_FIXTURES}/microsoft_perfview/net.4.5.2.x86.etl)

add_executable(test_etl_kernel ${CMAKE_CURRENT_LIST_DIR}/test_etl_kernel.c)
target_link_libraries(test_etl_kernel PRIVATE hindsight)
target_include_directories(test_etl_kernel PRIVATE ${PROJECT_SOURCE_DIR}/engine/src ${CMAKE_CURRENT_SOURCE_DIR}/unit)
target_compile_definitions(test_etl_kernel PRIVATE _POSIX_C_SOURCE=200809L
                           HS_TEST_FIXTURES_DIR="${HS_CPU_FIXTURES}")
# The test fails (never skips) when the fixtures are missing.
add_test(NAME unit:etl_kernel COMMAND test_etl_kernel)

# node and bash run analyze directly: native builds only.
if(NOT CMAKE_CROSSCOMPILING)
# The expected numbers: SampledProfile records in the fixture's independent
# .counts file, which every sample must reach in the folded and speedscope output.
add_test(NAME cpu:net.4.5.2.x86
         COMMAND bash -c [=[
set -uo pipefail
analyze=$1 kernel_test=$2 trace=$3 counts=$4 checker=$5
fail() { echo "cpu test: $*" >&2; exit 1; }
[[ -f $trace && -f $counts ]] || fail "fixture missing: $trace / $counts"
command -v node >/dev/null || fail "node is not installed (./run.sh --test installs it)"
[[ -d $(dirname "$checker")/node_modules/speedscope ]] ||
	fail "tests/schema/node_modules/speedscope is missing: run 'npm ci' in tests/schema"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

"$analyze" cpu "$trace" --speedscope "$tmp/ss.json" --folded "$tmp/folded.txt" >"$tmp/table.txt" ||
	fail "analyze cpu exited $?"
"$analyze" cpu "$trace" --json >"$tmp/cpu.json" || fail "analyze cpu --json exited $?"

# 1. The speedscope file is what speedscope's schema (and importer) accept.
v=$(node "$checker" "$tmp/ss.json") || fail "speedscope file rejected"
echo "$v"

# 2. Totals: the SampledProfile count from the independent parser, the folded
#    sum, the speedscope weights and the table's sample line agree.
want=$(awk -F'\t' '$1 == "kernel:0x0f" && $2 == "opcode=46" { print $3 }' "$counts")
[[ -n $want ]] || fail "no SampledProfile count in $counts"
folded=$(awk '{ s += $NF } END { print s + 0 }' "$tmp/folded.txt")
[[ $folded == "$want" ]] || fail "folded total $folded, expected $want"
[[ $v == *"weight=$want"* ]] || fail "speedscope weights do not sum to $want: $v"
grep -q "^samples: $want " "$tmp/table.txt" || fail "table does not report $want samples"
grep -q "\"samples\": $want," "$tmp/cpu.json" || fail "JSON does not report $want samples"
bad=$(awk '$0 !~ /^[^;]+( \([0-9]+\))?(;[^; ]+)+ [0-9]+$/' "$tmp/folded.txt" | head -3)
[[ -z $bad ]] || fail "folded lines not in flamegraph.pl form: $bad"

# 3. The table's top process is the independent tally's.
read -r tpid tname tsamples < <("$kernel_test" --top-process "$trace") || fail "independent tally failed"
row=$(awk 'f && NF { print; exit } /^PROCESS/ { f = 1 }' "$tmp/table.txt")
read -r name pid samples _ <<<"$row"
[[ $name == "$tname" && $pid == "$tpid" && $samples == "$tsamples" ]] ||
	fail "top process '$row', independent tally says $tname ($tpid) with $tsamples samples"
echo "top process: $name ($pid), $samples samples"

# 4. Stacks resolve: leaf frames name real modules for nearly every sample,
#    and the hot process's stacks run from ntdll into the CLR.
awk '{
	n = split($0, f, ";"); leaf = f[n]; sub(/ [0-9]+$/, "", leaf); w = $NF; total += w
	if (tolower(leaf) ~ /^[a-z0-9_.-]+\.(dll|exe|sys)!\+0x[0-9a-f]+$/) mod += w
} END {
	printf "leaf frames in a module: %d of %d samples\n", mod, total
	exit !(mod * 100 >= total * 95)
}' "$tmp/folded.txt" || fail "too few leaf frames resolved to a module"
hot=$(awk '/^Test\.x86\.exe \(3644\);ntdll\.dll!\+0x[0-9a-f]+;.*;clr\.dll!\+0x/ { s += $NF } END { print s + 0 }' "$tmp/folded.txt")
(( hot * 100 >= 4900 * 90 )) || fail "only $hot of Test.x86.exe's 4900 samples have ntdll..clr.dll stacks"
echo "Test.x86.exe samples with ntdll -> clr.dll stacks: $hot"
grep -q '"frames_resolved_percent": ' "$tmp/cpu.json" || fail "no frames_resolved_percent in JSON"

# 5. --process filters by PCRE2 and keeps the percentages of the whole trace.
"$analyze" cpu "$trace" --process '^Test\.' --folded "$tmp/test.txt" >"$tmp/test-table.txt" ||
	fail "analyze cpu --process exited $?"
[[ $(cut -d';' -f1 "$tmp/test.txt" | sort -u) == "Test.x86.exe (3644)" ]] || fail "--process kept other processes"
awk 'f && NF { print $1; exit } /^PROCESS/ { f = 1 }' "$tmp/test-table.txt" | grep -qx 'Test.x86.exe' ||
	fail "--process table does not start with Test.x86.exe"
"$analyze" cpu "$trace" --process '(' >/dev/null 2>"$tmp/err.txt"
[[ $? == 2 ]] && grep -q 'offset' "$tmp/err.txt" || fail "a bad --process pattern is not a usage error with its offset"
echo ok
]=] _ $<TARGET_FILE:analyze> $<TARGET_FILE:test_etl_kernel> ${HS_CPU_NET}
                 ${HS_CPU_FIXTURES}/expected/microsoft_perfview/net.4.5.2.x86.etl.counts
                 ${PROJECT_SOURCE_DIR}/tests/schema/speedscope-check.mjs)
endif()
