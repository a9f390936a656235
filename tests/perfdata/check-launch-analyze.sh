#!/usr/bin/env bash
# check-launch-analyze.sh: `engine --launch` then `analyze cpu` on its perf.data: the program is the top process, its
# binary the top module, the sample total the launch's, the speedscope file valid.
# usage: check-launch-analyze.sh ENGINE ANALYZE BUSY RULES SPEEDSCOPE_CHECKER
set -uo pipefail
engine=$1 analyze=$2 busy=$3 rules=$4 checker=$5
fail() { echo "perfdata launch test: $*" >&2; exit 1; }
((EUID == 0)) || fail "needs root (perf_event_open with kernel frames, /proc/kallsyms)"
command -v jq >/dev/null || fail "jq is not installed"
command -v node >/dev/null || fail "node is not installed (./run.sh --test installs it)"
[[ -d $(dirname "$checker")/node_modules/speedscope ]] ||
	fail "tests/schema/node_modules/speedscope is missing: run 'npm ci' in tests/schema"
dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT
prog=$(basename "$busy")

out=$("$engine" --rules "$rules" --launch "$busy" --args 0.5 --out "$dir/p.data" 2>&1) || { echo "$out"; fail "engine --launch exited $?"; }
echo "$out" | tail -3
n=$(sed -n 's/^DONE .* OK (\([0-9]*\) samples)$/\1/p' <<<"$out")
[[ -n $n ]] || fail "no DONE line with a sample count"
((n > 0)) || fail "the launch took no samples"

"$analyze" cpu "$dir/p.data" --speedscope "$dir/ss.json" --folded "$dir/folded.txt" >"$dir/table.txt" ||
	{ cat "$dir/table.txt"; fail "analyze cpu exited $?"; }
cat "$dir/table.txt"
"$analyze" cpu "$dir/p.data" --json >"$dir/cpu.json" || fail "analyze cpu --json exited $?"

# 1. Every sample the launch counted, none more.
total=$(jq .samples "$dir/cpu.json")
[[ $total == "$n" ]] || fail "analyze counts $total samples, the launch said $n"
folded=$(awk '{ s += $NF } END { print s + 0 }' "$dir/folded.txt")
[[ $folded == "$n" ]] || fail "the folded stacks sum to $folded, the launch said $n"
grep -q "^samples: $n at " "$dir/table.txt" || fail "the table does not say $n samples"
[[ $(jq -r .interval_source "$dir/cpu.json") == sample_freq ]] || fail "the interval is not the attr's sample_freq"

# 2. The program is the top process (its comm: the binary's name, cut to 15 characters).
top=$(jq -r '.processes[0].name' "$dir/cpu.json")
[[ $top == "${prog:0:15}" ]] || fail "top process is '$top', not $prog"
[[ $(jq '.processes[0].threads[0].samples' "$dir/cpu.json") -gt 0 ]] || fail "no thread of the program has samples"

# 3. Its binary is the top module of the leaf frames ("module!+0xoffset").
module=$(awk '{ w = $NF; sub(/ [0-9]+$/, ""); n = split($0, f, ";"); leaf = f[n]; sub(/!.*/, "", leaf); m[leaf] += w }
	END { for (k in m) print m[k], k }' "$dir/folded.txt" | sort -rn | head -n1 | cut -d' ' -f2-)
[[ $module == "$prog" ]] || fail "top module is '$module', not $prog"
grep -q "\[kernel\]!+0x" "$dir/folded.txt" || echo "note: no kernel frames in this run"

# 4. speedscope's own schema accepts the file.
node "$checker" "$dir/ss.json" || fail "speedscope file rejected"
echo "perfdata launch checks: $n samples, top process $top, top module $module: all passed"
