#!/usr/bin/env bash
# run.sh: installs what is missing (Debian/Ubuntu, apt-get), builds, then runs the engine
# with the default rules (`./run.sh [engine args]`) or every test (`./run.sh --test`).
set -euo pipefail
cd "$(dirname "$0")"

mode=run
if [[ "${1:-}" == "--test" ]]; then
	mode=test
	shift
fi

# What the build needs, and what the tests add: clang + its runtime for the
# sanitizer/libFuzzer build, node + npm for the JSON Schema validator (ajv).
pkgs=(build-essential cmake pkg-config libyaml-dev libpcre2-dev
	libtracefs-dev libtraceevent-dev libtracecmd-dev trace-cmd linux-perf)
if [[ $mode == test ]]; then
	pkgs+=(clang libclang-rt-dev nodejs npm)
fi

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# A working node + npm from anywhere (Debian, NodeSource, nvm) will do; Debian's
# npm package conflicts with NodeSource's nodejs, so never ask apt for it then.
if command -v node >/dev/null && command -v npm >/dev/null; then
	kept=()
	for p in "${missing[@]}"; do
		[[ $p == nodejs || $p == npm ]] || kept+=("$p")
	done
	missing=("${kept[@]}")
fi
if ((${#missing[@]})); then
	echo "run.sh: installing ${missing[*]}"
	sudo=()
	[[ $(id -u) -eq 0 ]] || sudo=(sudo)
	"${sudo[@]}" apt-get update -qq
	DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

jobs=$(nproc 2>/dev/null || echo 2)
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$jobs"

if [[ $mode == run ]]; then
	if (($#)); then
		exec ./build/engine/engine "$@"
	fi
	exec ./build/engine/engine --rules stutter.yaml
fi

# Tests. First the product build as shipped, then the same tests under
# ASan+UBSan in a clang build that also runs the libFuzzer targets for a bounded
# time; that run's CTest summary closes the output.
(cd tests/schema && npm ci --no-audit --no-fund --loglevel=error)
ctest --test-dir build --output-on-failure -j"$jobs"
CC=clang cmake -S . -B build-check -DCMAKE_BUILD_TYPE=Debug -DHS_SANITIZE=ON -DHS_FUZZ=ON \
	-DHS_FUZZ_SECONDS="${HS_FUZZ_SECONDS:-60}" >/dev/null
cmake --build build-check -j"$jobs"
# Leaks inside libtraceevent/libtracecmd/libtracefs are theirs, not ours.
export LSAN_OPTIONS="suppressions=$PWD/tests/sanitizer/lsan.supp:print_suppressions=0"
ctest --test-dir build-check --output-on-failure -j"$jobs"
