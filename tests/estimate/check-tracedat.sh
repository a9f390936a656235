#!/usr/bin/env bash
# check-tracedat.sh: `analyze estimate` on a trace.dat this test records (a private tracefs instance, forks and
# the scheduler, then trace-cmd extract), against trace-cmd report: its record count, its first and last
# timestamps, and stored record sizes computed from the sizes `report --debug` prints.
# usage: check-tracedat.sh ANALYZE RULES   (root, tracefs, trace-cmd, node; exit 77 = cannot run here)
set -uo pipefail
analyze=$1 rules=$2
[[ $(id -u) == 0 ]] || { echo "SKIP: needs root for tracefs"; exit 77; }
command -v trace-cmd >/dev/null || { echo "SKIP: no trace-cmd"; exit 77; }
command -v node >/dev/null || { echo "FAIL: node is needed to check the JSON"; exit 1; }
tracefs=/sys/kernel/tracing
[[ -d $tracefs/instances ]] || mount -t tracefs nodev $tracefs 2>/dev/null
[[ -d $tracefs/instances ]] || { echo "SKIP: no tracefs at $tracefs"; exit 77; }

inst=hs_test_estimate_$$_$RANDOM
dir=$(mktemp -d)
cleanup() {
	if [[ -d $tracefs/instances/$inst ]]; then
		echo 0 >"$tracefs/instances/$inst/tracing_on" 2>/dev/null
		rmdir "$tracefs/instances/$inst" || echo "cleanup: could not remove instance $inst"
	fi
	rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
fail=0
bad() { echo "FAIL: $*"; fail=1; }

mkdir "$tracefs/instances/$inst" || { echo "FAIL: cannot create instance $inst"; exit 1; }
i=$tracefs/instances/$inst
echo mono >"$i/trace_clock"
# The test checks that nothing was lost, so it records its own process tree only (set_event_pid with event-fork),
# not every task's scheduling: with all tasks, the default 1410 KB per CPU wrapped while other work ran (a run.sh:
# a page of uncounted losses among 17594 events), and under stress-ng --switch 2 even 32 MB per CPU held only
# 0.94 s of the 1.5 s (1.3 M sched events). 4 MB per CPU is ample for the few thousand events of the tree.
echo $$ >"$i/set_event_pid" && echo 1 >"$i/options/event-fork" || bad "cannot scope the instance to this test"
echo 4096 >"$i/buffer_size_kb" || bad "cannot size the instance's ring"
for e in sched task signal/signal_generate syscalls/sys_enter_exit_group; do
	echo 1 >"$i/events/$e/enable" || bad "cannot enable $e"
done
echo 1 >"$i/tracing_on"
for n in $(seq 30); do /bin/true; done
sleep 1.2
for n in $(seq 30); do sh -c 'exit 3'; done
echo 0 >"$i/tracing_on"
dat=$dir/trace.dat
trace-cmd extract -B "$inst" -o "$dat" >"$dir/extract.log" 2>&1 || { cat "$dir/extract.log"; bad "trace-cmd extract failed"; exit 1; }

# Independent numbers from trace-cmd: every record's payload size (the last field of `report --debug`), stored
# with a 4-byte ring-buffer event header, 8 bytes when the payload is over 112 bytes (the kernel's
# RB_MAX_SMALL_DATA: 28 four-byte units fit the header's type_len); and the first and last timestamps in ns.
trace-cmd report --debug "$dat" 2>/dev/null | grep -oE '\[[0-9]+:0x[0-9a-f]+:[0-9]+\]$' |
	awk -F'[]:]' '{ s = $3 + 0; b += (s <= 112 ? s + 4 : s + 8); n++ } END { print n + 0, b + 0 }' >"$dir/sizes"
read -r n_report bytes_report <"$dir/sizes"
trace-cmd report -t "$dat" 2>/dev/null | grep -oE '\] +[0-9]+\.[0-9]{9}: ' | grep -oE '[0-9]+\.[0-9]{9}' |
	tr -d . | sort -n | sed -n '1p;$p' >"$dir/ts"
first=$(sed -n 1p "$dir/ts") last=$(sed -n 2p "$dir/ts")
((n_report >= 100)) || bad "only $n_report records in the test trace"

"$analyze" estimate "$dat" --rules "$rules" --json >"$dir/est.json"
rc=$?
((rc == 0)) || bad "analyze estimate exited $rc"
"$analyze" counts "$dat" >"$dir/counts.txt" || bad "analyze counts failed"
total=$(awk -F'\t' '$1 == "TOTAL" {print $2}' "$dir/counts.txt")
node - "$dir/est.json" "$n_report" "$bytes_report" "$total" "$((last - first))" <<'JS' || fail=1
const fs = require('fs');
const [file, nReport, bytesReport, total, spanNs] = process.argv.slice(2).map((x, i) => i ? Number(x) : x);
const j = JSON.parse(fs.readFileSync(file, 'utf8'));
const s = j.sessions[0];
let bad = 0;
const fail = (m) => { console.log('FAIL: ' + m); bad = 1; };
const sum = (a, k) => a.reduce((x, y) => x + y[k], 0);
if (j.mode !== 'offline' || j.platform !== 'linux' || s.format !== 'tracedat') fail('not an offline linux trace.dat report');
if (s.events !== nReport || s.events !== total) fail(`events ${s.events}; trace-cmd report has ${nReport}, analyze counts ${total}`);
if (s.bytes !== bytesReport) fail(`bytes ${s.bytes}; the report's sizes give ${bytesReport}`);
if (Math.abs(s.span_s - spanNs / 1e9) > 2e-6) fail(`span ${s.span_s} s; trace-cmd report's first to last is ${spanNs / 1e9} s`);
if (s.window_s !== s.span_s || s.window_from !== 'events') fail('the window is not the event span');
if (sum(s.providers, 'events') !== s.events || sum(s.providers, 'bytes') !== s.bytes) fail('provider rows do not add up');
if (sum(s.cpus, 'events') !== s.events || sum(s.cpus, 'bytes') !== s.bytes) fail('CPU rows do not add up');
const sched = s.providers.find((p) => p.provider === 'sched');
const fork = sched && sched.events_by_kind.find((e) => e.event === 'sched_process_fork');
if (!fork || fork.events < 60) fail('fewer than 60 sched_process_fork events for 60 forks');
if (s.lost.source !== 'ring pages' || s.lost.events !== 0) fail(`losses ${JSON.stringify(s.lost)}`);
const pr = s.projections;
if (!pr.ok) fail(`no projections: ${pr.why_not}`);
else {
	// The file does not match a session's output name: the sizes are stutter's linux ones, assumed.
	if (s.name !== null || pr.file.session !== 'keyevents' || pr.file.max_file_mb !== 64 || !pr.file.assumed_representative)
		fail('file projection is not stutter\'s linux keyevents (64 MB), assumed representative');
	if (pr.ring.session !== 'snap' || pr.ring.ring_mb !== 256 || pr.ring.split_cpus !== s.cpus.length)
		fail(`ring projection: ${JSON.stringify(pr.ring)}`);
	// Per-CPU rings: the busiest CPU's share of bytes fills its 1/n of every size first.
	const MB = 1048576, r = s.bytes_per_s, busiest = Math.max(...s.cpus.map((c) => c.bytes_per_s));
	const split = pr.ring.split_cpus;
	for (const x of pr.ring.sizes) {
		const want = split > 1 ? (x.mb * MB / split) / busiest / 60 : x.mb * MB / r / 60;
		if (Math.abs(x.minutes - want) > Math.max(2e-3, 1e-3 * want)) fail(`${x.mb} MB: ${x.minutes} min, expected ${want}`);
	}
	const holds = split > 1 ? (64 * MB / split) / busiest : 64 * MB / r;
	if (Math.abs(pr.file.max_file_holds_s - holds) > Math.max(0.2, 1e-3 * holds)) fail(`max_file_holds_s ${pr.file.max_file_holds_s}, expected ${holds}`);
}
process.exit(bad);
JS

# Named like a session's output, the trace stands for that session.
cp "$dat" "$dir/snap.dat"
"$analyze" estimate "$dir/snap.dat" --rules "$rules" --json >"$dir/snap.json" || bad "analyze estimate snap.dat failed"
node -e 'const s = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).sessions[0];
	process.exit(s.name === "snap" && s.mode === "buffering" && s.projections.ring.session === "snap" ? 0 : 1)' \
	"$dir/snap.json" || bad "a file named snap.dat is not taken for the snap session"
out=$("$analyze" estimate "$dir/snap.dat" --rules "$rules")
grep -qE '^== session snap \(buffering\): ' <<<"$out" || bad "text: no session header for snap"
grep -qE '^ +[0-9]+ +[0-9.]+ +[0-9]+ +[0-9.]+    sched_process_fork$' <<<"$out" || bad "text: no sched_process_fork row"
grep -qE '^ +256 MB  .*<- ring_mb of the rules$' <<<"$out" || bad "text: no ring_mb row"

((fail)) && exit 1
echo "ok: $n_report records, $bytes_report bytes, the same as trace-cmd report"
