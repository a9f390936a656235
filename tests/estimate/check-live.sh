#!/usr/bin/env bash
# check-live.sh: `engine --estimate 3` with the real profile (root): the report's structure, its totals
# against the files it read (analyze counts and analyze estimate on each), the backend's counters, the
# projection formulas, and the folder it leaves. Nothing here depends on how fast the machine is.
# usage: check-live.sh ENGINE ANALYZE RULES   (exit 77 = cannot run here)
set -uo pipefail
engine=$1 analyze=$2 rules=$3
[[ $(id -u) == 0 ]] || { echo "SKIP: needs root for tracefs"; exit 77; }
command -v node >/dev/null || { echo "FAIL: node is needed to check the JSON"; exit 1; }
tracing=/sys/kernel/tracing
[[ -d $tracing/instances ]] || mount -t tracefs nodev $tracing 2>/dev/null
[[ -d $tracing/instances ]] || { echo "SKIP: no tracefs"; exit 77; }
# The profile's instance names: a live engine holds them (its lock, as tests/ftrace/lib.sh's held() asks), and
# this run must not take its rings. A folder that no engine holds is a dead run's: the engine removes it and says so.
. "$(dirname "$0")/../ftrace/lib.sh"
for inst in $(sed -n 's/^ *logger_name: *\(hindsight_[A-Za-z0-9_.-]*\).*/\1/p' "$rules"); do
	held "$inst" && { echo "SKIP: instance $inst is held by a live engine (pid $(head -1 "/run/hindsight/$inst.lock" 2>/dev/null))"; exit 77; }
	[[ -d $tracing/instances/$inst ]] && echo "note: instance $inst is left from a dead run; the engine removes it"
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
fail=0
bad() { echo "FAIL: $*"; fail=1; }

"$engine" --rules "$rules" --estimate 3 --json >est.json 2>err.txt
rc=$?
((rc == 0)) || { cat err.txt; bad "engine --estimate exited $rc"; exit 1; }
grep -q '^engine: 3 s are up (--estimate)$' err.txt || bad "the recording's messages are not on stderr"
dir=$(node -e 'console.log(JSON.parse(require("fs").readFileSync("est.json", "utf8")).run_dir)')
[[ -d $dir && $dir == logs/runs/*-estimate ]] || bad "run folder '$dir' is not logs/runs/<stamp>-estimate"
for f in main.log run.json keyevents.dat snap.dat; do
	[[ -f $dir/$f ]] || bad "$dir/$f missing"
done

# What the tools say about each file, for the comparison below.
for f in keyevents snap; do
	"$analyze" counts "$dir/$f.dat" | awk -F'\t' '$1 == "TOTAL" {print $2}' >"$f.total"
	"$analyze" estimate "$dir/$f.dat" --rules "$rules" --json >"$f.offline.json" || bad "analyze estimate $f.dat failed"
done
node - "$(nproc)" <<'JS' || fail=1
const fs = require('fs');
const read = (f) => JSON.parse(fs.readFileSync(f, 'utf8'));
const cpus = Number(process.argv[2]);
const j = read('est.json');
let bad = 0;
const fail = (m) => { console.log('FAIL: ' + m); bad = 1; };
const close = (a, b, what) => {
	if (a === null || !(Math.abs(a - b) <= Math.max(2e-3, 1e-3 * Math.abs(b)))) fail(`${what}: ${a}, expected ${b}`);
};
const sum = (a, k) => a.reduce((x, y) => x + y[k], 0);
if (j.mode !== 'live' || j.profile !== 'stutter' || j.platform !== 'linux' || j.requested_s !== 3) fail('header');
const names = j.sessions.map((s) => `${s.name}:${s.mode}`).join(',');
if (names !== 'keyevents:file-circular,snap:buffering') fail(`sessions ${names}`);
const MB = 1048576;
for (const s of j.sessions) {
	const off = read(`${s.name}.offline.json`).sessions[0];
	const total = Number(fs.readFileSync(`${s.name}.total`, 'utf8'));
	if (s.read_error !== null || s.format !== 'tracedat') fail(`${s.name}: ${s.read_error}`);
	// The totals are the files': analyze counts' TOTAL, and analyze estimate's bytes and rows.
	if (s.events !== total || s.events !== off.events) fail(`${s.name}: ${s.events} events; counts TOTAL ${total}, offline ${off.events}`);
	if (s.bytes !== off.bytes) fail(`${s.name}: ${s.bytes} bytes; offline ${off.bytes}`);
	if (JSON.stringify(s.providers.map((p) => [p.provider, p.events, p.bytes])) !==
	    JSON.stringify(off.providers.map((p) => [p.provider, p.events, p.bytes])))
		fail(`${s.name}: provider rows differ from analyze estimate's`);
	if (sum(s.providers, 'events') !== s.events || sum(s.cpus, 'bytes') !== s.bytes) fail(`${s.name}: rows do not add up`);
	// Rates over the recording (the loop ran at least the 3 s asked for), not over the events' span.
	if (s.window_from !== 'recording' || !(s.window_s >= 3)) fail(`${s.name}: window ${s.window_s} from ${s.window_from}`);
	close(s.bytes_per_s, s.bytes / s.window_s, `${s.name} bytes_per_s`);
	close(s.events_per_s, s.events / s.window_s, `${s.name} events_per_s`);
	// The backend's counters: every event the kernel took is in the file, or counted as lost.
	const l = s.lost;
	if (l.source !== 'backend') fail(`${s.name}: losses from ${l.source}`);
	if (l.chunks_dropped === 0 && s.events + l.overrun + l.dropped !== l.kernel_events)
		fail(`${s.name}: ${s.events} in the file + ${l.overrun} overwritten + ${l.dropped} dropped != ${l.kernel_events} counted by the kernel`);
	if (s.mode === 'file-circular' && !(l.bytes_streamed >= s.bytes)) fail(`${s.name}: streamed ${l.bytes_streamed} < ${s.bytes} record bytes`);
	const pr = s.projections;
	if (pr.ok !== (s.events >= 10)) fail(`${s.name}: projections ok=${pr.ok} with ${s.events} events`);
	if (!pr.ok) {
		if (!/fewer than the 10/.test(pr.why_not)) fail(`${s.name}: why_not ${pr.why_not}`);
		continue;
	}
	const busiest = Math.max(...s.cpus.map((c) => c.bytes_per_s));
	const holds = (mb) => (mb * MB / cpus) / busiest; // per-CPU buffers: the busiest CPU's share fills first
	if (s.mode === 'file-circular') {
		const f = pr.file;
		if (!f || pr.ring !== null || f.session !== 'keyevents' || f.max_file_mb !== 64 || f.assumed_representative)
			fail(`keyevents: file projection ${JSON.stringify(f)}`);
		close(f.mb_per_min, s.bytes_per_s * 60 / MB, 'mb_per_min');
		close(f.gb_per_day, s.bytes_per_s * 86400 / (1024 * MB), 'gb_per_day');
		close(f.tb_per_year, s.bytes_per_s * 365 * 86400 / (MB * MB), 'tb_per_year');
		close(f.max_file_holds_s, cpus > 1 ? holds(64) : 64 * MB / s.bytes_per_s, 'max_file_holds_s');
		close(f.streamed_bytes_per_s, l.bytes_streamed / s.window_s, 'streamed_bytes_per_s');
	} else {
		const g = pr.ring;
		if (!g || pr.file !== null || g.session !== 'snap' || g.ring_mb !== 256 || g.split_cpus !== cpus)
			fail(`snap: ring projection ${JSON.stringify(g)}`);
		if (g.sizes.map((x) => x.mb).join(',') !== '64,128,256,512,1024,2048,4096') fail('ring sizes');
		for (const x of g.sizes)
			close(x.minutes, (cpus > 1 ? holds(x.mb) : x.mb * MB / s.bytes_per_s) / 60, `${x.mb} MB minutes`);
		close(g.ring_mb_minutes, (cpus > 1 ? holds(256) : 256 * MB / s.bytes_per_s) / 60, 'ring_mb minutes');
		if ((g.measured_history_s !== null) !== l.ring_wrapped) fail('measured_history_s without a wrapped ring');
	}
}
process.exit(bad);
JS

# Text: a shorter run; the report's sections, nothing of the recording's chatter on stdout.
"$engine" --rules "$rules" --estimate 1 >est.txt 2>err1.txt || bad "engine --estimate 1 (text) failed"
grep -qE '^live: the profile.s sessions ran for 1 s as a recording would; run folder logs/runs/.*-estimate$' est.txt || bad "text: no live line"
grep -qE '^== session keyevents \(file-circular\): logs/runs/.*/keyevents\.dat ==$' est.txt || bad "text: no keyevents section"
grep -qE '^== session snap \(buffering\): logs/runs/.*/snap\.dat ==$' est.txt || bad "text: no snap section"
grep -qE '^kernel: +counted [0-9]+ events; lost [0-9]+ ' est.txt || bad "text: no kernel counters"
grep -qE '^(ring history at this rate for snap:|no projections: )' est.txt || bad "text: neither ring history nor the reason for none"
grep -q '^engine:' est.txt && bad "text: recording messages on stdout"
tdir=$(sed -n 's/^live: .*; run folder \(.*\)$/\1/p' est.txt)
grep -q '^engine: DONE' "$tdir/main.log" || bad "main.log lacks the recording's lines"
cmp -s <(sed -n '/^hindsight estimate: /,$p' "$tdir/main.log") est.txt || bad "main.log does not end with the report printed"

((fail)) && { echo "--- stderr"; tail -20 err.txt; exit 1; }
echo "ok: the live estimate's totals match its files and the backend's counters"
