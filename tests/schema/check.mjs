#!/usr/bin/env node
// check.mjs: validate hindsight rules files against the JSON Schema.
//
//   node check.mjs SCHEMA FILE...     one line per file on stdout:
//                                       <file>\tvalid
//                                       <file>\tinvalid\t<where> <what>
//   node check.mjs --compile SCHEMA   only compile the schema
//
// Exit: 0 when every file was processed (valid or not) / the schema compiles;
//       1 when the schema itself is bad (not JSON, not a valid draft-07 schema,
//         or rejected by Ajv's strict mode);
//       2 on a usage or I/O error (a file that cannot be read is reported on
//         stderr, the other files are still checked).
//
// The YAML is read as docs/rules-language.md says the loader reads it: UTF-8,
// YAML 1.2 core types, unique keys, one document, no anchors, aliases or tags
// (diagnostic HS002), and string keys only. Any parse error or warning makes the
// file invalid. Integers stay exact (0x10 is 16, 2^64 is out of range) and YAML
// floats (1.0, 1e3) never pass for integers, as the language has no floats.

import { readFileSync } from 'node:fs';
import AjvModule from 'ajv';
import { LineCounter, parseDocument, visit, isScalar } from 'yaml';

const Ajv = AjvModule.default ?? AjvModule;

const EXIT_OK = 0;
const EXIT_BAD_SCHEMA = 1;
const EXIT_USAGE = 2;

const USAGE = 'usage: node check.mjs SCHEMA FILE...\n       node check.mjs --compile SCHEMA\n';

const U64_MAX = 18446744073709551615n;

const utf8 = new TextDecoder('utf-8', { fatal: true }); // strips a leading BOM

/** One line, no tabs: output is tab-separated and line-based. */
function oneLine(s) {
	return String(s).replace(/[\t\r\n]+/g, ' ').trim();
}

function compileSchema(schemaPath) {
	let text;
	try {
		text = readFileSync(schemaPath, 'utf8');
	} catch (e) {
		process.stderr.write(`${schemaPath}: cannot read schema: ${e.message}\n`);
		return { exit: EXIT_USAGE };
	}
	let schema;
	try {
		schema = JSON.parse(text);
	} catch (e) {
		process.stderr.write(`${schemaPath}: schema is not valid JSON: ${e.message}\n`);
		return { exit: EXIT_BAD_SCHEMA };
	}
	try {
		// strict: true = strictSchema, strictNumbers, strictTypes, strictTuples,
		// strictRequired; the schema must also pass the draft-07 meta-schema.
		const ajv = new Ajv({ strict: true, allErrors: true, verbose: true });
		return { validate: ajv.compile(schema) };
	} catch (e) {
		process.stderr.write(`${schemaPath}: schema does not compile: ${oneLine(e.message)}\n`);
		return { exit: EXIT_BAD_SCHEMA };
	}
}

/** "line L, column C" for a character offset. */
function where(lineCounter, offset) {
	const { line, col } = lineCounter.linePos(offset);
	return `line ${line}, column ${col}`;
}

/**
 * Parses YAML the way the loader does. Returns { value } or { error }.
 */
function parseRules(text) {
	const lineCounter = new LineCounter();
	const doc = parseDocument(text, {
		version: '1.2',
		schema: 'core', // also when the file says %YAML 1.1
		merge: false,
		uniqueKeys: true,
		strict: true,
		intAsBigInt: true, // ints -> BigInt, floats -> number: tells them apart
		prettyErrors: false,
		lineCounter,
	});
	const problem = doc.errors[0] ?? doc.warnings[0];
	if (problem) {
		const pos = problem.pos ? `${where(lineCounter, problem.pos[0])}: ` : '';
		return { error: `yaml: ${pos}${oneLine(problem.message)} (${problem.code})` };
	}

	// Language restrictions on the YAML itself (diagnostic HS002 and keys).
	let feature = null;
	const at = (node) => (node && node.range ? `${where(lineCounter, node.range[0])}: ` : '');
	const checkNode = (node) => {
		if (feature) return visit.BREAK;
		if (node.anchor) feature = `yaml: ${at(node)}anchors are not allowed (&${node.anchor})`;
		else if (node.tag) feature = `yaml: ${at(node)}tags are not allowed (${node.tag.replace(/^tag:yaml\.org,2002:/, '!!')})`;
		return feature ? visit.BREAK : undefined;
	};
	visit(doc, {
		Alias(_, node) {
			feature = `yaml: ${at(node)}aliases are not allowed (*${node.source})`;
			return visit.BREAK;
		},
		Scalar: (_, node) => checkNode(node),
		Map: (_, node) => checkNode(node),
		Seq: (_, node) => checkNode(node),
		Pair(_, pair) {
			const k = pair.key;
			if (!isScalar(k) || typeof k.value !== 'string') {
				const shown = isScalar(k) ? String(k.source ?? k.value) : k ? 'a collection' : 'an empty key';
				feature = `yaml: ${at(k ?? pair.value)}mapping keys must be strings, not ${shown}`;
				return visit.BREAK;
			}
			return undefined;
		},
	});
	if (feature) return { error: oneLine(feature) };

	return { value: toValidationValue(doc.toJS({ maxAliasCount: 0 })) };
}

/**
 * Maps the parsed tree to what Ajv sees: YAML ints (BigInt) become numbers,
 * clamped so that anything above 2^64-1 still compares above it. YAML floats
 * stay numbers for the few "number" keys (trigger thresholds), but never pass
 * for integers, as the loader rejects them there: a finite float that is a
 * whole number (50.0) is nudged by one ulp up so that Ajv does not see an
 * integer (50.0 as ceiling_ms at exactly its maximum is the one value the
 * schema then rejects and the loader accepts); infinities and NaN become NaN,
 * which nothing in the schema allows.
 */
function toValidationValue(v) {
	if (typeof v === 'bigint') {
		if (v > U64_MAX) return Math.max(Number(v), 2 ** 65);
		return Number(v);
	}
	if (typeof v === 'number') {
		if (!Number.isFinite(v)) return Number.NaN;
		if (!Number.isInteger(v)) return v;
		return v === 0 ? Number.MIN_VALUE : v + Math.abs(v) * Number.EPSILON;
	}
	if (Array.isArray(v)) return v.map(toValidationValue);
	if (v !== null && typeof v === 'object') {
		const out = {};
		for (const [k, x] of Object.entries(v)) {
			Object.defineProperty(out, k, { value: toValidationValue(x), enumerable: true, writable: true, configurable: true });
		}
		return out;
	}
	return v;
}

/** Keys of a subschema whose alternatives are all plain `required` lists. */
function requiredAlternatives(branches) {
	if (!Array.isArray(branches)) return null;
	const alts = branches.map((b) => (b && Array.isArray(b.required) ? b.required.join('+') : null));
	return alts.every((a) => a) ? alts : null;
}

/**
 * For an error raised inside the `then` of an if/then, the condition of that
 * `if` as text ("mode is buffering"), taken from the `if` error that Ajv
 * reports after it (verbose mode carries the `if` subschema).
 */
function condition(errors, i) {
	const e = errors[i];
	const k = e.schemaPath.lastIndexOf('/then/');
	if (k < 0) return '';
	const ifPath = `${e.schemaPath.slice(0, k)}/if`;
	const c = errors.slice(i + 1).find((x) => x.keyword === 'if' && x.schemaPath === ifPath
		&& (x.instancePath === e.instancePath || e.instancePath.startsWith(`${x.instancePath}/`)));
	const props = c && c.schema && typeof c.schema === 'object' ? c.schema.properties : undefined;
	if (!props) return '';
	const parts = [];
	for (const [key, s] of Object.entries(props)) {
		if (s && s.const !== undefined) parts.push(`${key} is ${s.const}`);
		else if (s && Array.isArray(s.enum)) parts.push(`${key} is ${s.enum.slice(0, -1).join(', ')} or ${s.enum[s.enum.length - 1]}`);
	}
	return parts.length ? ` (when ${parts.join(' and ')})` : '';
}

/**
 * "<instancePath> <message>" for errors[i]: Ajv's message, with the detail Ajv
 * keeps in params added where it helps. An error inside one branch of a
 * oneOf/anyOf is summarized by the oneOf/anyOf error itself.
 */
function describe(errors, i) {
	let e = errors[i];
	const branch = /^(.*\/(oneOf|anyOf))\/\d+\/[^/]+$/.exec(e.schemaPath);
	if (branch) {
		const j = errors.findIndex((x, n) => n > i && x.keyword === branch[2]
			&& x.schemaPath === branch[1] && x.instancePath === e.instancePath);
		if (j > i) {
			i = j;
			e = errors[j];
		}
	}
	const path = e.instancePath === '' ? '/' : e.instancePath;
	let msg = e.message ?? e.keyword;
	switch (e.keyword) {
	case 'additionalProperties':
		msg += `: ${e.params.additionalProperty}`;
		break;
	case 'enum':
		msg += `: ${e.params.allowedValues.map((x) => JSON.stringify(x)).join(', ')}`;
		break;
	case 'const':
		msg += `: ${JSON.stringify(e.params.allowedValue)}`;
		break;
	case 'maximum':
		if (e.params.limit >= 2 ** 64) msg = 'must be <= 18446744073709551615 (0xFFFFFFFFFFFFFFFF)';
		break;
	case 'false schema':
		msg = 'is not allowed here';
		break;
	case 'oneOf': {
		const alts = requiredAlternatives(e.schema);
		if (alts) msg = `must have exactly one of: ${alts.join(', ')}`;
		break;
	}
	case 'anyOf': {
		const alts = requiredAlternatives(e.schema);
		if (alts) msg = `must have at least one of: ${alts.join(', ')}`;
		break;
	}
	default:
		break;
	}
	if (e.propertyName !== undefined) msg = `key '${e.propertyName}' ${msg}`;
	return oneLine(`${path} ${msg}${condition(errors, i)}`);
}

function main(argv) {
	if (argv[0] === '--compile') {
		if (argv.length !== 2) {
			process.stderr.write(USAGE);
			return EXIT_USAGE;
		}
		const r = compileSchema(argv[1]);
		if (!r.validate) return r.exit;
		process.stdout.write(`${argv[1]}\tcompiles\n`);
		return EXIT_OK;
	}
	if (argv.length < 2 || argv[0].startsWith('-')) {
		process.stderr.write(USAGE);
		return EXIT_USAGE;
	}
	const [schemaPath, ...files] = argv;
	const r = compileSchema(schemaPath);
	if (!r.validate) return r.exit;
	const validate = r.validate;

	let exit = EXIT_OK;
	for (const file of files) {
		let bytes;
		try {
			bytes = readFileSync(file);
		} catch (e) {
			process.stderr.write(`${file}: cannot read: ${e.message}\n`);
			exit = EXIT_USAGE;
			continue;
		}
		let text = null;
		try {
			text = utf8.decode(bytes);
		} catch {
			// bytes that are not UTF-8 are not a well-formed YAML stream
		}
		const parsed = text === null ? { error: 'yaml: the file is not valid UTF-8' } : parseRules(text);
		if (parsed.error) {
			process.stdout.write(`${file}\tinvalid\t${parsed.error}\n`);
		} else if (validate(parsed.value)) {
			process.stdout.write(`${file}\tvalid\n`);
		} else {
			process.stdout.write(`${file}\tinvalid\t${describe(validate.errors, 0)}\n`);
		}
	}
	return exit;
}

process.exitCode = main(process.argv.slice(2));
