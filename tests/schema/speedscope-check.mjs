#!/usr/bin/env node
// speedscope-check.mjs: validate a speedscope file against speedscope's own published JSON Schema.
//
//   node speedscope-check.mjs FILE
//
// The schema is the one the speedscope npm package ships
// (node_modules/speedscope/dist/release/file-format-schema.json, the file
// https://www.speedscope.app/file-format-schema.json names). The schema cannot
// say that frame indices exist or that every sample has a weight, and
// speedscope's importer assumes both, so those are checked here too.
//
// On success prints one line: `<file>\tvalid\tprofiles=P frames=F samples=S weight=W`
// (S distinct stacks, W the sum of all weights), so tests can compare totals.
// Exit: 0 valid; 1 invalid (each problem on stderr); 2 usage or I/O error, or
// the schema is missing (run `npm ci` in tests/schema).

import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import AjvModule from 'ajv';

const Ajv = AjvModule.default ?? AjvModule;
const here = dirname(fileURLToPath(import.meta.url));
const schemaPath = join(here, 'node_modules', 'speedscope', 'dist', 'release', 'file-format-schema.json');

function fail(code, msg) {
	process.stderr.write(`speedscope-check: ${msg}\n`);
	process.exit(code);
}

const args = process.argv.slice(2);
if (args.length !== 1)
	fail(2, 'usage: node speedscope-check.mjs FILE');
const file = args[0];

let schema;
try {
	schema = JSON.parse(readFileSync(schemaPath, 'utf8'));
} catch (e) {
	fail(2, `cannot read speedscope's schema at ${schemaPath} (run 'npm ci' in tests/schema): ${e.message}`);
}

let doc;
try {
	doc = JSON.parse(readFileSync(file, 'utf8'));
} catch (e) {
	fail(e instanceof SyntaxError ? 1 : 2, `${file}: ${e instanceof SyntaxError ? 'not JSON: ' : ''}${e.message}`);
}

const ajv = new Ajv({ allErrors: true });
let validate;
try {
	validate = ajv.compile(schema);
} catch (e) {
	fail(2, `speedscope's schema does not compile: ${e.message}`);
}

const problems = [];
if (!validate(doc)) {
	for (const err of validate.errors)
		problems.push(`schema: ${err.instancePath || '/'} ${err.message}`);
}

// What the importer relies on beyond the schema.
let samples = 0;
let weight = 0;
const frames = doc?.shared?.frames ?? [];
for (const [i, p] of (Array.isArray(doc?.profiles) ? doc.profiles : []).entries()) {
	if (p?.type !== 'sampled')
		continue;
	const s = Array.isArray(p.samples) ? p.samples : [];
	const w = Array.isArray(p.weights) ? p.weights : [];
	if (s.length !== w.length)
		problems.push(`/profiles/${i}: ${s.length} samples but ${w.length} weights`);
	for (const [k, stack] of s.entries()) {
		if (!Array.isArray(stack))
			continue;
		for (const f of stack) {
			if (!Number.isInteger(f) || f < 0 || f >= frames.length) {
				problems.push(`/profiles/${i}/samples/${k}: frame index ${f} is not in shared.frames (${frames.length})`);
				break;
			}
		}
	}
	let sum = 0;
	for (const x of w) {
		if (typeof x !== 'number' || !(x >= 0))
			problems.push(`/profiles/${i}/weights: ${x} is not a non-negative number`);
		else
			sum += x;
	}
	if (typeof p.startValue === 'number' && typeof p.endValue === 'number' && p.endValue < p.startValue)
		problems.push(`/profiles/${i}: endValue ${p.endValue} is before startValue ${p.startValue}`);
	samples += s.length;
	weight += sum;
}
if (typeof doc?.activeProfileIndex === 'number' &&
    !(Number.isInteger(doc.activeProfileIndex) && doc.activeProfileIndex >= 0 &&
      doc.activeProfileIndex < (doc.profiles?.length ?? 0)))
	problems.push(`/activeProfileIndex: ${doc.activeProfileIndex} names no profile`);

if (problems.length) {
	for (const p of problems)
		process.stderr.write(`${file}: ${p}\n`);
	process.exit(1);
}
const nprofiles = Array.isArray(doc.profiles) ? doc.profiles.length : 0;
process.stdout.write(`${file}\tvalid\tprofiles=${nprofiles} frames=${frames.length} samples=${samples} weight=${weight}\n`);
