#!/usr/bin/env bash
# report-test.sh: `analyze report` on snapshots the engine takes by itself of real incidents: a segfault (hs_segv),
# a crash of a program with a hostile name beside an exec of a file whose name is not UTF-8, an OOM kill in a
# 32 MB memory cgroup (with its reclaim stalls), a 240 Hz frame loop's 100 ms frame, a thread that sleeps 0.6 s and
# spins 0.4 s before it crashes (its split, its waker), and (in the run's report) a storm of 200 x /bin/true, a
# refused TCP connection, a 64 MB dd conv=fsync from a 16 MB memory cgroup (its reclaim stalls) and one outside it
# (a long fsync).
# Each verdict must name the process and the cause within the report's first three lines; report.json must
# validate; report.html must hold no unescaped payload.
# usage: report-test.sh ENGINE PROFILE ANALYZE SEGV FRAMELOOP SOURCE_DIR [ARTIFACT_DIR]
#   With chromium and tests/analyze/browser's puppeteer-core, the hostile and the hitch report.html are also
#   opened in headless chromium and their screenshots kept in ARTIFACT_DIR.
#   (root; the profile is tests/ftrace/report.yaml, instances hindsight_test_rpt_*)
# HS_TEST_START_TIMEOUT (s, default 90): how long the engine may take to start (sanitizer builds are slow).
set -uo pipefail
ulimit -c 0
engine=$1 profile=$2 analyze=$3 segv=$4 frameloop=$5 src=$6 art=${7:-}
instances=(hindsight_test_rpt_ring hindsight_test_rpt_keys hindsight_test_rpt_keys_trg)
cgroot=/sys/fs/cgroup/memory # cgroup v1 on these VMs
[[ -d $cgroot ]] || cgroot=/sys/fs/cgroup
cg=$cgroot/hindsight_test_rpt_oom_$$ cg_dd=$cgroot/hindsight_test_rpt_dd_$$
hostile='<b>x&"'"'"'<i>' # no '/': it is a file name too; a comm is at most 15 bytes
badname=$'bad\xff\xfename'

. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../partial.sh"
test_setup
cleanup() {
	kill_engine
	for c in "$cg" "$cg_dd"; do
		[[ -d $c ]] || continue
		while read -r p; do kill -9 "$p" 2>/dev/null; done <"$c/cgroup.procs"
		sleep 0.2
		rmdir "$c"
	done
	remove_instances "${instances[@]}"
	[[ -n ${HS_REPORT_KEEP:-} && -n ${dir:-} && -d $tmp/$dir ]] && cp -r "$tmp/$dir" "$HS_REPORT_KEEP"
	rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "report test: FAIL: $*" >&2; [[ -f $tmp/out.txt ]] && grep '^engine' "$tmp/out.txt" | tail -30; exit 1; }
[[ $(id -u) == 0 ]] || { echo "report test: SKIP: not root"; exit 77; }
for i in "${instances[@]}"; do held "$i" && { echo "report test: SKIP: $i is held by a running recorder"; exit 77; }; done
command -v node >/dev/null || fail "node is needed (report.json's thread states; ./run.sh --test installs it)"
have_ajv=1
[[ -d $src/tests/schema/node_modules/ajv ]] ||
	{ have_ajv=0; partial_skip "report.json against its schema (every snapshot and the run)" "no tests/schema/node_modules (npm ci there)"; }
cd "$tmp" || exit 1

start_engine out.txt "$engine" --rules "$profile"

# 1. A real NULL dereference. (Other programs on the machine may crash too: each snapshot is found by its pid.)
"$segv" 2>/dev/null &
segv_pid=$!
wait $segv_pid
wait_snapshots 1 $limit crash || fail "no crash snapshot after a segfault"
sleep 1.5 # past post_delay: the next crash gets a snapshot of its own
n=$(snapshot_folders crash)
# 2. An exec of a file whose name is not UTF-8, then a crash of a program named like markup.
cp /bin/true "$tmp/$badname"
"$tmp/$badname" || fail "cannot run $tmp/$badname"
cp "$segv" "$tmp/$hostile"
"$tmp/$hostile" 2>/dev/null &
hostile_pid=$!
wait $hostile_pid
wait_snapshots $((n + 1)) $limit crash || fail "no second crash snapshot"
sleep 1.5
# 2b. A thread whose last second the test knows: it spins 0.2 s, sleeps 0.6 s in wait4 (for an external sleep, the
# waker the report must name), spins 0.4 s and raises SIGSEGV. Over the second before the crash the report must find
# it sleeping ~60 % and on a CPU (running, or runnable when the machine is busy) ~40 %.
# Another program's crash (other tests run hs_segv too) may take the snapshot within our post-delay: up to 3 tries.
for try in 1 2 3; do
	k=$(snapshot_folders crash)
	bash -c 'spin() { local t=$((${EPOCHREALTIME/./} + $1)); while ((${EPOCHREALTIME/./} < t)); do :; done; }
		spin 200000; sleep 0.6; spin 400000; kill -SEGV $$' 2>/dev/null &
	split_pid=$!
	wait $split_pid
	wait_snapshots $((k + 1)) $limit crash || fail "no crash snapshot for the sleep-spin-crash thread"
	sleep 1.5
	grep -qE "\"pid\": *$split_pid([^0-9]|$)" "$dir"/snapshots/[0-9]*-crash/snapshot.json && break
	echo "report test: note: try $try: another program's crash took the snapshot; the workload runs again"
done
# 2c. A real fsync of 64 MB (dd conv=fsync) on the test's own disk, written from a 16 MB memory cgroup: the run's
# report lists the fsync wait and the reclaim the cgroup's page cache cost dd (measured: ~50 memcg reclaim stalls
# and ~7 writeback throttles in 0.11 s; 300 MB from 32 MB gave ~270 and ~40, and once a 1 s stall of the engine
# that hitched the frame loop below).
mkdir "$cg_dd" || fail "cannot create memory cgroup $cg_dd"
if [[ -f $cg_dd/memory.limit_in_bytes ]]; then echo 16M >"$cg_dd/memory.limit_in_bytes"; else echo 16M >"$cg_dd/memory.max"; fi
sh -c "echo \$\$ > $cg_dd/cgroup.procs; exec dd if=/dev/zero of=$tmp/fsync.bin bs=1M count=64 conv=fsync status=none" ||
	fail "dd conv=fsync failed"
rmdir "$cg_dd"
rm -f "$tmp/fsync.bin"
# That dd's fsync is short (the cgroup's limit wrote its pages back already: 2-5 ms measured), so another program's
# fsync on the machine could be longer (CI once saw the finding name another task). 64 MB outside the cgroup stay
# dirty until the fsync (dirty_ratio of 24 GB), which then writes them all: the longest fsync in the window.
dd if=/dev/zero of="$tmp/fsync2.bin" bs=1M count=64 conv=fsync status=none || fail "dd conv=fsync (64 MB dirty) failed"
rm -f "$tmp/fsync2.bin"
# ... and one that fails: fsync on a pipe is EINVAL (-22).
dd if=/dev/zero bs=1 count=1 conv=fsync status=none 2>/dev/null | cat >/dev/null
# 3. An OOM kill in a memory cgroup of 32 MB.
mkdir "$cg" || fail "cannot create memory cgroup $cg"
if [[ -f $cg/memory.limit_in_bytes ]]; then echo 32M >"$cg/memory.limit_in_bytes"; else echo 32M >"$cg/memory.max"; fi
sh -c "echo \$\$ > $cg/cgroup.procs; exec tail /dev/zero" 2>/dev/null &
oom_pid=$!
wait $oom_pid
[[ $? == 137 ]] || fail "the memory hog was not OOM-killed"
rmdir "$cg"
wait_snapshots 1 $limit oom-kill || fail "no oom-kill snapshot after an OOM kill"
# 4. A 240 Hz frame loop with one 100 ms frame (real-time priority: only the hitch it makes).
rt=()
command -v chrt >/dev/null && chrt -f 10 true 2>/dev/null && rt=(chrt -f 10)
"${rt[@]}" "$frameloop" 240 720 360 100 Frame >frames.txt &
frame_pid=$!
wait $frame_pid || fail "frameloop failed"
wait_snapshots 1 $limit hitch || fail "no hitch snapshot for a 100 ms frame"
# 5. A process storm: 200 x /bin/true as fast as the shell can start them, at the frame loop's real-time priority:
# at normal priority, beside builds on both CPUs, the loop ran at 47/s and was no storm against their execs.
"${rt[@]}" bash -c 'for _ in $(seq 200); do /bin/true; done'
# 6. A refused connection: the kernel answers the SYN with a reset (sent and received).
port=$(comm -23 <(seq 20000 20100) <(ss -Htan | awk '{ n = split($4, a, ":"); print a[n] }' | sort -u) | head -1)
bash -c "exec 3<>/dev/tcp/127.0.0.1/$port" 2>/dev/null && fail "port $port accepted a connection"
sleep 1.5
kill -INT "$epid"
wait "$epid"
rc=$?
epid=
[[ $rc == 0 ]] || fail "engine exited $rc after SIGINT"

validate() { # report.json must pass the schema and be UTF-8; report.html and .txt UTF-8 too
	local d=$1
	for f in report.txt report.json report.html; do
		[[ -s $d/$f ]] || fail "$d/$f missing"
		iconv -f UTF-8 -t UTF-8 "$d/$f" >/dev/null 2>&1 || fail "$d/$f is not valid UTF-8"
	done
	if ((have_ajv)); then
		node "$src/tests/schema/check.mjs" "$src/schemas/report.schema.json" "$d/report.json" | grep -q $'\tvalid$' ||
			fail "$d/report.json does not validate: $(node "$src/tests/schema/check.mjs" "$src/schemas/report.schema.json" "$d/report.json")"
	fi
	grep -qiE 'src=|href=' "$d/report.html" && fail "$d/report.html has an outside reference"
	[[ $(grep -o '<script' "$d/report.html" | wc -l) == 1 ]] || fail "$d/report.html has other scripts than the timeline's zoom"
	return 0
}
report() { # FOLDER: runs analyze report, prints the first three lines
	"$analyze" report "$1" >"$1.stdout" 2>"$1.stderr"
	local rc=$?
	[[ $rc == 0 ]] || fail "analyze report $1 exited $rc: $(cat "$1.stderr")"
	validate "$1"
	head -3 "$1/report.txt"
}
# The snapshot of TRIGGER whose report names (pid PID) in its first three lines; prints those lines.
pick() { # TRIGGER PID
	local d h
	for d in $(ls -d "$dir"/snapshots/[0-9]*-"$1" | sort); do
		h=$(report "$d") || exit 1
		if grep -q "(pid $2)" <<<"$h"; then
			echo "$d"
			echo "$h"
			return 0
		fi
		echo "$d: $h" >>others.txt
	done
	echo "report test: FAIL: no $1 snapshot's verdict names pid $2; the verdicts were:" >&2
	cat others.txt >&2
	exit 1
}

out=$(pick crash "$segv_pid") || fail "crash"
echo "$out"
head3=$(sed 1d <<<"$out")
grep -q "hs_segv (pid $segv_pid) crashed with SIGSEGV" <<<"$head3" || fail "the crash verdict does not name hs_segv and SIGSEGV"
grep -q 'NULL-pointer access' <<<"$head3" || fail "the crash verdict does not say NULL-pointer access"

out=$(pick crash "$hostile_pid") || fail "hostile crash"
echo "$out"
c2=$(head -1 <<<"$out")
head3=$(sed 1d <<<"$out")
grep -qF "$hostile (pid $hostile_pid) crashed with SIGSEGV" <<<"$head3" || fail "the second crash's verdict does not name $hostile and SIGSEGV"
grep -qF '<b>x' "$c2/report.html" && fail "report.html holds the hostile name unescaped"
grep -qF '&lt;b&gt;x&amp;&quot;&#39;&lt;i&gt;' "$c2/report.html" || fail "report.html lacks the escaped hostile name"
# (every kept event is a tick of the HTML timeline; the text lists only the most frequent programs)
grep -qF $'bad\xef\xbf\xbd\xef\xbf\xbdname' "$c2/report.html" || fail "the non-UTF-8 file name is not shown with U+FFFD"

out=$(pick crash "$split_pid") || fail "sleep-spin-crash"
echo "$out"
c3=$(head -1 <<<"$out")
head3=$(sed 1d <<<"$out")
grep -q "bash (pid $split_pid) crashed with SIGSEGV" <<<"$head3" || fail "the third crash's verdict does not name bash"
sed -n '/^THE THREAD BEFORE THE MOMENT/,/^$/p' "$c3/report.txt"
grep -q "^THE THREAD BEFORE THE MOMENT: bash (pid $split_pid)" "$c3/report.txt" || fail "no thread section for bash"
# the split, in percent of the covered part of the window (generous: the machine is shared)
share() { sed -n '/^THE THREAD BEFORE/,/^$/p' "$c3/report.txt" | awk -v k="$1" 'index($0, k) && $2 == "%" { print int($1); exit }'; }
run=$(share '  running') wait=$(share 'runnable, waiting') slp=$(share 'sleeping (S')
cov=$(sed -n '/^THE THREAD BEFORE/,/^$/p' "$c3/report.txt" | sed -nE 's/^  covered: .* \(([0-9]+) %\).*/\1/p')
echo "report test: thread split measured: running ${run:-?} %, runnable ${wait:-?} %, sleeping ${slp:-?} %, covered ${cov:-?} % (the workload: ~40 % on a CPU, ~60 % asleep)"
[[ ${cov:-0} -ge 90 ]] || fail "the ring covers only ${cov:-0} % of the second before the crash"
((${slp:-0} >= 45 && ${slp:-0} <= 75)) || fail "sleeping ${slp:-?} %, the workload slept ~60 %"
((${run:-0} + ${wait:-0} >= 25 && ${run:-0} + ${wait:-0} <= 55)) || fail "on a CPU or waiting ${run:-?} + ${wait:-?} %, the workload spun ~40 %"
((${run:-0} >= 10)) || fail "running only ${run:-?} %"
grep -qE '^  woken by: 1 x sleep \(pid [0-9]+\)' "$c3/report.txt" || fail "the waker (the sleep child's exit) is not named"
grep -q '^  CPU time by task .* bash ' "$c3/report.txt" || fail "bash is not among the CPU users"
grep -qE '^  interrupts: hardirq [0-9.]+ m?s, softirq [0-9.]+ m?s' "$c3/report.txt" || fail "the interrupt time is not given"
node -e 'const t = JSON.parse(require("fs").readFileSync(process.argv[1])).thread;
	const s = Object.values(t.states_ns).reduce((a, b) => a + b, 0);
	if (!t.analysed || s !== t.covered_last_ns - (t.born_ns ?? t.covered_first_ns)) { console.error("states sum", s); process.exit(1); }' \
	"$c3/report.json" || fail "report.json's thread states do not sum to the covered time"
[[ -n ${HS_REPORT_FIXTURE_OUT:-} ]] && cp "$c3/snap.dat" "$HS_REPORT_FIXTURE_OUT"

out=$(pick oom-kill "$oom_pid") || fail "oom"
echo "$out"
head3=$(sed 1d <<<"$out")
grep -q "OOM killer killed tail (pid $oom_pid)" <<<"$head3" || fail "the OOM verdict does not name tail"
grep -q 'memory cgroup' <<<"$head3" || fail "the OOM verdict does not say memory cgroup"
o3=$(head -1 <<<"$out")
grep -E '^[0-9]+\. Memory pressure: ' "$o3/report.txt" || fail "the OOM report has no memory-pressure finding (memcg reclaim)"

out=$(pick hitch "$frame_pid") || fail "hitch"
echo "$out"
head3=$(sed 1d <<<"$out")
grep -qE "A frame of Frame in hs_frameloop \(pid $frame_pid\) took (9[5-9]|[1-3][0-9][0-9])\.[0-9] ms" <<<"$head3" ||
	fail "the hitch verdict does not give hs_frameloop's ~100 ms frame"
# The frame loop slept through its long frame (clock_nanosleep to the next frame's time): the thread section over the
# frame finds it asleep, woken by the timer's interrupt.
h1=$(head -1 <<<"$out")
sed -n '/^THE THREAD BEFORE THE MOMENT/,/^$/p' "$h1/report.txt"
hslp=$(sed -n '/^THE THREAD BEFORE/,/^$/p' "$h1/report.txt" | awk 'index($0, "sleeping (S") && $2 == "%" { print int($1); exit }')
grep -q "^THE THREAD BEFORE THE MOMENT: hs_frameloop (pid $frame_pid), .* (the frame)" "$h1/report.txt" ||
	fail "the hitch report has no thread section over the frame"
((${hslp:-0} >= 80)) || fail "the frame loop slept through its long frame, the report says ${hslp:-?} % asleep"
grep -qE '^  woken by: 1 x a (hard interrupt|softirq)' "$h1/report.txt" || fail "the timer's interrupt is not the frame loop's waker"

# The same pages in a real browser, when there is one.
if [[ -z $art ]]; then
	partial_skip "the hostile and the hitch report.html in headless chromium" "no ARTIFACT_DIR argument"
elif [[ ! -d $src/tests/analyze/browser/node_modules/puppeteer-core ]]; then
	partial_skip "the hostile and the hitch report.html in headless chromium" "no puppeteer-core (npm ci in tests/analyze/browser)"
else
	mkdir -p "$art"
	for d in "$c2" "$(ls -d "$dir"/snapshots/[0-9]*-hitch | head -1)"; do
		node "$src/tests/analyze/browser/check-html.mjs" "$d/report.html" "$art/report-$(basename "$d").png" >browser.txt
		rc=$?
		cat browser.txt
		if ((rc == 77)); then
			partial_skip "$d/report.html in headless chromium" "check-html.mjs found no chromium (HS_CHROMIUM)"
			break
		fi
		((rc == 0)) || fail "$d/report.html does not render cleanly in chromium"
	done
fi

# The run folder itself: its final rings, its counters and its snapshots listed.
"$analyze" report "$dir" >run.stdout 2>run.stderr || fail "analyze report on the run folder exited $?: $(cat run.stderr)"
validate "$dir"
grep -q 'snapshot .* by trigger oom-kill' "$dir/report.txt" || fail "the run report does not list the snapshots"
grep -qE '^[0-9]+\. [0-9]+ connection resets? ' "$dir/report.txt" || fail "the run report has no connection-reset finding"
grep -q 'connection reset sent' "$dir/report.txt" || fail "the run report does not show the reset the kernel sent"
grep -A3 'connection resets\?' "$dir/report.txt" | head -5
# A storm is judged against the window's own exec rate (5x the median 250 ms bin) or, when builds beside the test
# keep that rate high (13-14 starts in a median 250 ms, the loop 48-51: this VM execs at most ~270/s), against
# the program's own (/bin/true: 0). The run report may list it below the fold (background: indented).
grep -qE '^ *[0-9]+\. (Earlier .*: )?Process storm: ' "$dir/report.txt" ||
	fail "the run report has no process-storm finding for the 200 x /bin/true loop"
# (other tests on the machine may run /bin/true too: at least our 200, on one line)
# (the activity list is routine, below the fold in report.txt: its lines are in report.json)
n_true=$(grep -oE '"[0-9]+ x /(usr/)?bin/true exec -> exit 0' "$dir/report.json" | tr -dc '0-9 \n' | awk '{ print $1 }' | sort -n | tail -1)
[[ ${n_true:-0} -ge 200 ]] || fail "the run report does not collapse the 200 /bin/true runs into one line"
grep -E 'Process storm' "$dir/report.txt"
# The finding names the longest call's task (ours, unless the machine's own fsync was longer still), and lists the
# three longest calls: dd's 64 MB is among them whatever else synced.
grep -E '^[0-9]+\. (Earlier .*: )?fsync: [0-9]+ calls?, the longest [0-9.]+ ms \([^()]+ pid [0-9]+\)(, [0-9]+ failed)?  \[' "$dir/report.txt" ||
	fail "the run report has no fsync finding"
grep -E '^   - [0-9.]+ ms: dd \(pid [0-9]+\), fd 1, returned 0$' "$dir/report.txt" ||
	fail "the run report does not list dd's fsync wait"
grep -qE 'fsync failed [0-9]+ times?: dd \(pid [0-9]+\) got -22 \(Invalid argument\)' "$dir/report.json" ||
	fail "the run report does not give the fsync that failed on a pipe (EINVAL)"
grep -E '^[0-9]+\. (Earlier .*: )?Memory pressure: [0-9]+ reclaim stalls' "$dir/report.txt" || fail "the run report has no memory-pressure finding"
grep -E '^   - dd \(pid [0-9]+\): [0-9]+ reclaim stalls?, ' "$dir/report.txt" ||
	fail "the run report does not name dd among the tasks stalled in reclaim"
partial_end
echo "report test: OK"
