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

# Tests: docs/ci.md has the phases, what runs beside what (the labels of tests/ci.cmake) and their measured times.
#   1. The product build's tests that use the machine (label machine: root, tracefs, cgroups, perf_event_open,
#      timing), one at a time and nothing else from the suite beside them, while the sanitizer, Windows and
#      Release builds compile in the background at the lowest CPU and I/O priority (nice 19, idle I/O): those
#      tests mostly wait on the kernel, and a compile only gets what they leave.
#   2. The sanitizer build's machine tests, one at a time (its long root scenarios are DISABLED: tests/ci.cmake
#      says why), and beside them its libFuzzer targets (label fuzz, HS_FUZZ_SECONDS each, one at a time): the
#      machine tests there use about one CPU (ftrace:record under ASan is 2 min of one CPU), the fuzzers the
#      other. At normal priority: at nice 19 a fuzz input that takes 0.75 s alone took over 10 s (libFuzzer's
#      -timeout) while ftrace:record's workload ran. Not the other tests: run beside them, ftrace:record under
#      ASan took over 400 s and timed out.
#   3. Every other test of three builds at once: the product build, the ASan+UBSan build and the mingw-w64 build
#      under Wine; each one's output follows in turn.
# Every phase runs even when an earlier one failed; the summary at the end gives each phase's time and result.
(cd tests/schema && npm ci --no-audit --no-fund --loglevel=error)
(cd tests/analyze/browser && npm ci --no-audit --no-fund --loglevel=error)
(cd tests/fleet && npm ci --no-audit --no-fund --loglevel=error)
# Leaks inside libtraceevent/libtracecmd/libtracefs are theirs, not ours.
export LSAN_OPTIONS="suppressions=$PWD/tests/sanitizer/lsan.supp:print_suppressions=0"
summary=$PWD/build/ci-summary.txt
: >"$summary"
t_all=$SECONDS
timed() { # NAME CMD...: runs CMD and adds its time and result to the summary; returns its status
	local name=$1 t=$SECONDS rc=0
	shift
	"$@" || rc=$?
	printf '%-62s %5d s  %s\n' "$name" $((SECONDS - t)) "$( ((rc == 0)) && echo ok || echo "FAILED (exit $rc)")" >>"$summary"
	return "$rc"
}
# Packagers build Release: gcc's -O3 finds warnings (-Werror) that -O2 does not, so the whole tree (engine,
# tools, tests, benches) must compile that way too.
build_release() {
	cmake -S . -B build-release -DCMAKE_BUILD_TYPE=Release >/dev/null && cmake --build build-release -j"$jobs"
}
build_check() {
	CC=clang cmake -S . -B build-check -DCMAKE_BUILD_TYPE=Debug -DHS_SANITIZE=ON -DHS_FUZZ=ON \
		-DHS_FUZZ_SECONDS="${HS_FUZZ_SECONDS:-30}" >/dev/null && cmake --build build-check -j"$jobs"
}
# The Windows build: the same sources cross-compiled with mingw-w64 (packages installed above), tested under Wine.
build_win() {
	scripts/build-win-deps.sh "$PWD/build-win-deps" &&
		cmake -S . -B build-win -DCMAKE_TOOLCHAIN_FILE=cmake/mingw-w64-x86_64.cmake \
			-DCMAKE_PREFIX_PATH="$PWD/build-win-deps" -DCMAKE_BUILD_TYPE=Release \
			-DHS_HOST_ENGINE="$PWD/build/engine/engine" >/dev/null && cmake --build build-win -j"$jobs"
}
# The background builds, one after another, each leaving DIR/.ci-built (its exit status) for wait_built.
rm -f build-check/.ci-built build-win/.ci-built build-release/.ci-built build/ci-rest.log build-check/ci-rest.log \
	build-check/ci-fuzz.log build-win/ci-rest.log
background_builds() {
	local d rc
	for d in check win release; do
		[[ $d == win && -n $win_skip ]] && continue
		rc=0
		timed "build: build-$d (background, nice 19)" "build_$d" >"build/ci-build-$d.log" 2>&1 || rc=$?
		mkdir -p "build-$d" && echo "$rc" >"build-$d/.ci-built"
	done
}
nice -n 19 ionice -c 3 bash -c "$(declare -f timed build_release build_check build_win background_builds)
	jobs=$jobs win_skip='$win_skip' summary='$summary' background_builds" </dev/null &
bg=$!
wait_built() { # DIR: waits for the background build of DIR; true when it built (else its log is shown)
	while [[ ! -f $1/.ci-built ]] && kill -0 "$bg" 2>/dev/null; do sleep 2; done
	[[ -f $1/.ci-built && $(<"$1/.ci-built") == 0 ]] && return 0
	echo "run.sh: the background build of $1 failed; the end of build/ci-build-${1#build-}.log:" >&2
	tail -40 "build/ci-build-${1#build-}.log" >&2
	return 1
}
failed=0

# 1. The product build's machine tests, alone.
timed "tests: build, label machine (one at a time)" ctest --test-dir build --output-on-failure -L machine || failed=1

leg() { # NAME DIR LOG [CTEST ARGS...]: ctest on DIR with its output in DIR/LOG
	local name=$1 dir=$2 log=$3
	shift 3
	timed "$name" ctest --test-dir "$dir" --output-on-failure "$@" >"$dir/$log" 2>&1
}
rest() { # NAME DIR [CTEST ARGS...]: ctest -jN on DIR with its output in DIR/ci-rest.log
	local name=$1 dir=$2
	shift 2
	leg "$name" "$dir" ci-rest.log -j"$jobs" "$@"
}
pids=()
# 2. The sanitizer build's machine tests, and its fuzzers beside them.
check_ok=0
if wait_built build-check; then
	check_ok=1
	leg "tests: build-check, the fuzzers (one at a time)" build-check ci-fuzz.log -L fuzz &
	pids+=($!)
	timed "tests: build-check, label machine (one at a time)" \
		ctest --test-dir build-check --output-on-failure -L machine || failed=1
else
	failed=1
fi

# 3. Everything else, the three builds at once; each output is shown when all are done.
rest "tests: build, the rest (-j$jobs)" build -LE machine &
pids+=($!)
if ((check_ok)); then
	rest "tests: build-check, the rest (-j$jobs)" build-check -LE 'machine|fuzz' &
	pids+=($!)
fi
win_ok=0
if [[ -z $win_skip ]] && wait_built build-win; then
	win_ok=1
	rest "tests: build-win under Wine (-j$jobs)" build-win --timeout 300 &
	pids+=($!)
fi
for p in "${pids[@]}"; do wait "$p" || failed=1; done
[[ -f build-check/ci-fuzz.log ]] && echo "run.sh: ---- build-check: the fuzzers ----" && cat build-check/ci-fuzz.log
for d in build build-check build-win; do
	[[ -f $d/ci-rest.log ]] || continue
	echo "run.sh: ---- $d: the tests not labelled machine ----"
	cat "$d/ci-rest.log"
done
[[ -z $win_skip && $win_ok == 0 ]] && failed=1
# A Wine run cut short leaves the fixture's server (it lingers 15 min): stop it.
if [[ -x /usr/lib/wine/wineserver64 ]]; then
	WINEPREFIX=$PWD/build-win/wineprefix /usr/lib/wine/wineserver64 -k 2>/dev/null || true
fi
wait_built build-release || failed=1
wait "$bg" || true

echo "run.sh: ---- summary (the background builds overlap the phases beside them) ----"
cat "$summary"
printf '%-62s %5d s  %s\n' "total" $((SECONDS - t_all)) "$( ((failed == 0)) && echo ok || echo FAILED)"
if [[ -n $win_skip ]]; then
	echo "run.sh: the Windows leg (mingw-w64 build, tests under Wine) was SKIPPED: $win_skip"
fi
exit "$failed"
