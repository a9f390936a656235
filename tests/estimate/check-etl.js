// check-etl.js: checks one `analyze estimate --json` report on a real .etl against numbers made without the
// project's reader: the fixture's expected .counts (an independent parser) and record sizes summed here.
// usage: node check-etl.js FILE.etl EXPECTED.counts COUNTS_OUTPUT ESTIMATE_JSON
'use strict';
const fs = require('fs');
const [etlPath, expectedPath, countsPath, jsonPath] = process.argv.slice(2);
const name = etlPath.split('/').slice(-2).join('/');
let failed = 0;
const fail = (msg) => { console.log(`FAIL ${name}: ${msg}`); failed = 1; };
const close = (a, b, what, rel = 1e-3, abs = 2e-3) => {
	if (a === null || b === null || !(Math.abs(a - b) <= Math.max(abs, rel * Math.abs(b))))
		fail(`${what}: ${a}, expected ${b}`);
};
const total = (text) => {
	const m = text.match(/^TOTAL\t(\d+)\s*$/m);
	return m ? Number(m[1]) : NaN;
};

// Record sizes straight from the buffers (etl-format.md sections 2 and 4): every buffer's records from 0x48 to
// its Offset, each 8-byte aligned; kernel headers keep the size at +4, all others at +0. Compressed buffers
// would need LZ77; a file with any is left to the record count only.
function independent(buf) {
	let off = 0, records = 0, bytes = 0, compressed = false;
	while (off + 0x48 <= buf.length) {
		const size = buf.readUInt32LE(off), end = buf.readUInt32LE(off + 0x30), flags = buf.readUInt16LE(off + 0x34);
		if (size < 0x48 || off + size > buf.length)
			break;
		if (flags & 0x40) {
			compressed = true;
		} else {
			let p = off + 0x48;
			while (p + 8 <= off + Math.min(end, size)) {
				const b3 = buf[p + 3], ht = buf[p + 2];
				if (!(b3 & 0x80))
					break;
				const kernel = !(b3 & 0x10) && [0x01, 0x02, 0x03, 0x04, 0x10, 0x11].includes(ht);
				const n = kernel ? buf.readUInt16LE(p + 4) : buf.readUInt16LE(p);
				if (n === 0)
					break;
				records++;
				bytes += n;
				p += (n + 7) & ~7;
			}
		}
		off += size;
	}
	return { records, bytes, compressed };
}

const j = JSON.parse(fs.readFileSync(jsonPath, 'utf8'));
const expectedTotal = total(fs.readFileSync(expectedPath, 'utf8'));
const countsTotal = total(fs.readFileSync(countsPath, 'utf8'));
const ind = independent(fs.readFileSync(etlPath));
if (j.mode !== 'offline' || j.sessions.length !== 1)
	fail('not one offline session');
const s = j.sessions[0];
if (s.read_error !== null || s.format !== 'etl')
	fail(`read_error ${s.read_error}, format ${s.format}`);
if (s.file_bytes !== fs.statSync(etlPath).size)
	fail(`file_bytes ${s.file_bytes}, the file has ${fs.statSync(etlPath).size}`);

// Totals: the independent parser's TOTAL, analyze counts' TOTAL, and the sums of the report's own rows.
if (s.events !== expectedTotal || s.events !== countsTotal)
	fail(`events ${s.events}; expected .counts TOTAL ${expectedTotal}, analyze counts TOTAL ${countsTotal}`);
const sum = (a, k) => a.reduce((x, y) => x + y[k], 0);
if (sum(s.providers, 'events') !== s.events || sum(s.providers, 'bytes') !== s.bytes)
	fail('provider rows do not add up to the totals');
for (const p of s.providers)
	if (sum(p.events_by_kind, 'events') !== p.events || sum(p.events_by_kind, 'bytes') !== p.bytes)
		fail(`the events of ${p.provider} do not add up to it`);
if (sum(s.cpus, 'events') !== s.events || sum(s.cpus, 'bytes') !== s.bytes)
	fail('per-CPU rows do not add up to the totals');
if (!ind.compressed) {
	if (ind.records !== s.events)
		fail(`the buffers hold ${ind.records} records, the report says ${s.events}`);
	if (ind.bytes !== s.bytes)
		fail(`record sizes sum to ${ind.bytes} bytes, the report says ${s.bytes}`);
}

// Rates over the first-to-last event span; projections only from >= 1 s and >= 10 events.
if (s.window_from !== 'events' || s.window_s !== s.span_s)
	fail(`window ${s.window_s} from ${s.window_from}, span ${s.span_s}`);
if (s.window_s > 0) {
	close(s.events_per_s, s.events / s.window_s, 'events_per_s');
	close(s.bytes_per_s, s.bytes / s.window_s, 'bytes_per_s');
}
if (s.lost.source !== 'etl header')
	fail(`losses from ${s.lost.source}`);
const pr = s.projections;
const want = s.window_s >= 1 && s.events >= 10;
if (pr.ok !== want)
	fail(`projections ok=${pr.ok} over ${s.window_s} s and ${s.events} events`);
if (!pr.ok) {
	if (!pr.why_not || pr.file !== null || pr.ring !== null)
		fail('no projections, but no reason or some projection anyway');
} else {
	const MB = 1048576, r = s.bytes_per_s, f = pr.file, g = pr.ring;
	if (!f || f.session !== 'keyevents' || f.max_file_mb !== 500 || f.assumed_representative !== true)
		fail('the file projection is not for stutter\'s windows keyevents (500 MB), assumed representative');
	else {
		close(f.mb_per_min, r * 60 / MB, 'mb_per_min');
		close(f.gb_per_day, r * 86400 / (MB * 1024), 'gb_per_day');
		close(f.tb_per_year, r * 365 * 86400 / (MB * MB), 'tb_per_year');
		close(f.max_file_holds_s, 500 * MB / r, 'max_file_holds_s');
	}
	if (!g || g.session !== 'snap' || g.ring_mb !== 256 || g.split_cpus !== 0)
		fail('the ring projection is not for stutter\'s windows snap ring (256 MB, one pool)');
	else {
		const sizes = g.sizes.map((x) => x.mb).join(',');
		if (sizes !== '64,128,256,512,1024,2048,4096')
			fail(`ring sizes ${sizes}`);
		for (const x of g.sizes)
			close(x.minutes, x.mb * MB / r / 60, `${x.mb} MB ring minutes`);
		close(g.ring_mb_minutes, 256 * MB / r / 60, 'ring_mb minutes');
	}
}
if (!failed)
	console.log(`ok ${name}: ${s.events} events, ${s.bytes} bytes${ind.compressed ? ' (compressed: bytes not re-summed)' : ' = the buffers\' record sizes'}, ` +
		(pr.ok ? `${s.bytes_per_s} B/s` : `no projections (${pr.why_not})`));
process.exit(failed);
