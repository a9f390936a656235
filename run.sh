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
# sanitizer/libFuzzer build, node + npm for the JSON Schema validator (ajv),
# stress-ng for the tests that must hold under load, jq for the replay test,
# chromium for the report page's headless-browser test (puppeteer-core from npm),
# tmux to drive the live view in a terminal. libncurses-dev gives the engine its
# full-screen live view (without it: plain lines).
pkgs=(build-essential cmake pkg-config libyaml-dev libpcre2-dev
	libtracefs-dev libtraceevent-dev libtracecmd-dev libzstd-dev libncurses-dev trace-cmd linux-perf)
if [[ $mode == test ]]; then
	pkgs+=(clang libclang-rt-dev nodejs npm stress-ng jq chromium libxml2-utils tmux)
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
sudo=()
[[ $(id -u) -eq 0 ]] || sudo=(sudo)
apt_updated=0
if ((${#missing[@]})); then
	echo "run.sh: installing ${missing[*]}"
	"${sudo[@]}" apt-get update -qq
	apt_updated=1
	DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# For the tests, the Windows cross build needs mingw-w64 and Wine (Debian and
# CI have both; elsewhere that leg is skipped with the reason). Installed
# before the Linux builds configure, since they also build small PE images
# with mingw for the PE-reader tests.
win_skip=
if [[ $mode == test ]]; then
	win_pkgs=(gcc-mingw-w64-x86-64-win32 wine64)
	win_missing=()
	for p in "${win_pkgs[@]}"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || win_missing+=("$p")
	done
	candidates() { # prints the packages of $@ that apt cannot install
		local p c
		for p in "$@"; do
			c=$(apt-cache policy "$p" 2>/dev/null | awk '/Candidate:/ { print $2 }')
			[[ -n $c && $c != "(none)" ]] || echo "$p"
		done
	}
	if ((${#win_missing[@]})); then
		uninstallable=$(candidates "${win_missing[@]}")
		if [[ -n $uninstallable && $apt_updated == 0 ]]; then
			"${sudo[@]}" apt-get update -qq
			uninstallable=$(candidates "${win_missing[@]}")
		fi
		if [[ -n $uninstallable ]]; then
			win_skip="apt has no installable candidate for $(echo $uninstallable) (apt-cache policy shows none)"
		else
			echo "run.sh: installing ${win_missing[*]}"
			DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends --no-upgrade \
				"${win_missing[@]}" >/dev/null
		fi
	fi
fi

jobs=$(nproc 2>/dev/null || echo 2)
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$jobs"

if [[ $mode == run ]]; then
	# The default rules unless the arguments name rules (or ask for help):
	# `./run.sh --duration-sec 20` records with stutter.yaml for 20 s.
	for a in "$@"; do
		case $a in --rules | -h | --help) exec ./build/engine/engine "$@" ;; esac
	done
	exec ./build/engine/engine --rules stutter.yaml "$@"
fi

# Tests. First the product build as shipped, then the same tests under
# ASan+UBSan in a clang build that also runs the libFuzzer targets for a bounded
# time, then the Windows build (mingw-w64 cross build, tests under Wine); that
# run's CTest summary closes the output.
(cd tests/schema && npm ci --no-audit --no-fund --loglevel=error)
(cd tests/analyze/browser && npm ci --no-audit --no-fund --loglevel=error)
ctest --test-dir build --output-on-failure -j"$jobs"
# Packagers build Release: gcc's -O3 finds warnings (-Werror) that -O2 does not,
# so the whole tree (engine, tools, tests, benches) must compile that way too.
cmake -S . -B build-release -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build-release -j"$jobs"
CC=clang cmake -S . -B build-check -DCMAKE_BUILD_TYPE=Debug -DHS_SANITIZE=ON -DHS_FUZZ=ON \
	-DHS_FUZZ_SECONDS="${HS_FUZZ_SECONDS:-60}" >/dev/null
cmake --build build-check -j"$jobs"
# Leaks inside libtraceevent/libtracecmd/libtracefs are theirs, not ours.
export LSAN_OPTIONS="suppressions=$PWD/tests/sanitizer/lsan.supp:print_suppressions=0"
ctest --test-dir build-check --output-on-failure -j"$jobs"

# The Windows build: the same sources cross-compiled with mingw-w64 (packages
# installed above), its tests run under Wine.
if [[ -n $win_skip ]]; then
	echo "run.sh: the Windows leg (mingw-w64 build, tests under Wine) was SKIPPED: $win_skip"
	exit 0
fi
scripts/build-win-deps.sh "$PWD/build-win-deps"
cmake -S . -B build-win -DCMAKE_TOOLCHAIN_FILE=cmake/mingw-w64-x86_64.cmake -DCMAKE_PREFIX_PATH="$PWD/build-win-deps" \
	-DCMAKE_BUILD_TYPE=Release -DHS_HOST_ENGINE="$PWD/build/engine/engine" >/dev/null
cmake --build build-win -j"$jobs"
# The Wine prefix lives in the build tree (created on first use, ~700 MB);
# scripts/wine-run.sh runs each test; the last wineserver is stopped at the end.
export WINEPREFIX=$PWD/build-win/wineprefix
win_rc=0
ctest --test-dir build-win --output-on-failure -j"$jobs" --timeout 300 || win_rc=$?
/usr/lib/wine/wineserver64 -k 2>/dev/null || true
exit $win_rc
