// keys_agree.mjs: the loader's key tables (rulecheck --dump-keys) against the JSON Schema and docs/rules-language.md.
// usage: node keys_agree.mjs RULECHECK PROJECT_DIR
// A key added to one of the three places only fails here, so the copies cannot drift.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const [rulecheck, top] = process.argv.slice(2);
const YAML = createRequire(`${top}/tests/schema/package.json`)('yaml');
const dump = JSON.parse(execFileSync(rulecheck, ['--dump-keys'], { encoding: 'utf8' }));
const schema = JSON.parse(readFileSync(`${top}/schemas/rules.schema.json`, 'utf8'));
const doc = readFileSync(`${top}/docs/rules-language.md`, 'utf8');

const problems = [];
const bad = (msg) => problems.push(msg);
const tables = new Map(dump.tables.map((t) => [t.name, t]));
const allKeys = (t) => (t.base ? allKeys(tables.get(t.base)) : []).concat(t.keys);
const same = (a, b) => a.length === b.length && [...a].sort().every((x, i) => x === [...b].sort()[i]);

// ---- the schema ----
const at = (ptr) => ptr.split('/').slice(1).reduce((o, p) => (o === undefined ? o : o[p]), schema);
const deref = (o) => (o && o.$ref ? deref(at(o.$ref.slice(1))) : o);
const schemaType = { string: 'string', ident: 'string', story: 'string', guid: 'string', enum: 'string',
	uint: 'integer', number: 'number', bool: 'boolean', list: 'array', map: 'object' };

for (const t of dump.tables) {
	for (const k of t.keys)
		if (k.sub && !tables.has(k.sub))
			bad(`table ${t.name}: key '${k.name}' names table '${k.sub}', which --dump-keys does not print`);
	const obj = deref(t.schema === '' ? schema : at(t.schema));
	if (!obj || !obj.properties) {
		bad(`table ${t.name}: schema ${t.schema || '(root)'} is not an object with properties`);
		continue;
	}
	const keys = allKeys(t);
	const names = keys.map((k) => k.name);
	const props = Object.keys(obj.properties);
	for (const n of names.filter((n) => !props.includes(n)))
		bad(`table ${t.name}: key '${n}' is not a property of schema ${t.schema || '(root)'}`);
	for (const n of props.filter((n) => !names.includes(n)))
		bad(`schema ${t.schema || '(root)'}: property '${n}' is not a key of table ${t.name}`);
	const req = keys.filter((k) => k.required).map((k) => k.name);
	if (!same(req, obj.required || []))
		bad(`table ${t.name}: required [${req}] but schema ${t.schema || '(root)'} requires [${obj.required || []}]`);
	for (const k of keys) {
		const p = deref(obj.properties[k.name]);
		if (!p)
			continue;
		const where = `table ${t.name}, key '${k.name}'`;
		if (p.type && schemaType[k.type] && p.type !== schemaType[k.type])
			bad(`${where}: type ${k.type} but the schema says ${p.type}`);
		const en = p.enum || (p.then && p.then.enum);
		// A derived mapping may pin a base key to one of its values (kind: const catalog).
		if (k.values && p.const !== undefined && k.values.includes(p.const))
			continue;
		if (k.values && !(en && same(k.values, en)))
			bad(`${where}: values [${k.values}] but the schema says [${en || 'no enum'}]`);
		if (!k.values && en && k.type !== 'custom')
			bad(`${where}: the schema has values [${en}] the table does not`);
		const range = k.type === 'uint' || k.type === 'number' ? p : p.else;
		if (k.min !== undefined && range && range.minimum !== undefined &&
		    (range.minimum !== k.min || BigInt(range.maximum) !== BigInt(k.max)))
			bad(`${where}: range ${k.min}..${k.max} but the schema says ${range.minimum}..${range.maximum}`);
		if (k.type === 'list' && k.items === 'string' && p.items && deref(p.items).type !== 'string')
			bad(`${where}: a list of strings but the schema's items are not strings`);
	}
}

// ---- the language doc ----
// A section runs from its heading to the next heading of the same or a higher level.
function section(title) {
	const lines = doc.split('\n');
	const i = lines.findIndex((l) => /^#+ /.test(l) && l.replace(/^#+ /, '').startsWith(title));
	if (i < 0)
		return null;
	const level = lines[i].match(/^#+/)[0].length;
	let j = i + 1;
	while (j < lines.length && !(/^#+ /.test(lines[j]) && lines[j].match(/^#+/)[0].length <= level))
		j++;
	return lines.slice(i, j).join('\n');
}
const yamlBlocks = (text) => [...text.matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => YAML.parse(m[1]));
// Names a section mentions: keys of its YAML examples and identifiers inside `backticks`.
function mentioned(text) {
	const out = new Set();
	for (const m of text.matchAll(/^\s*(?:- )?([A-Za-z_][A-Za-z0-9_]*):/gm))
		out.add(m[1]);
	for (const m of text.matchAll(/`([^`\n]+)`/g))
		for (const w of m[1].matchAll(/[A-Za-z_][A-Za-z0-9_]*/g))
			out.add(w[0]);
	return out;
}

for (const t of dump.tables) {
	if (!t.doc)
		continue;
	const text = section(t.doc);
	if (text === null) {
		bad(`table ${t.name}: docs/rules-language.md has no section '${t.doc}'`);
		continue;
	}
	const seen = mentioned(text);
	for (const k of t.keys)
		if (!seen.has(k.name))
			bad(`table ${t.name}: key '${k.name}' is not mentioned in section '${t.doc}' of docs/rules-language.md`);
}

// Every key the examples use belongs to the table of the mapping it is written in.
function walk(node, tname, path) {
	const t = tables.get(tname);
	if (!t || node === null || typeof node !== 'object' || Array.isArray(node))
		return;
	const keys = allKeys(t);
	for (const [name, value] of Object.entries(node)) {
		const k = keys.find((k) => k.name === name);
		if (!k) {
			bad(`docs/rules-language.md: example key '${path}${name}' is not a key of table ${tname}`);
			continue;
		}
		const sub = k.sub && tables.get(k.sub);
		if (!sub)
			continue;
		if (Array.isArray(value))
			value.forEach((v) => walk(v, sub.name, `${path}${name}[].`));
		else
			walk(value, sub.name, `${path}${name}.`);
	}
}
const rootTable = { catalog: 'catalog', profile: 'profile' };
for (const title of ['Catalogs', 'Profiles'])
	for (const ex of yamlBlocks(section(title) || ''))
		if (ex && rootTable[ex.kind])
			walk(ex, rootTable[ex.kind], '');
// The doc's key tables: the first column's `key`s belong to the table the section lists.
const docTables = { 'Provider entries': 'session_provider', 'Session keys by mode': 'session' };
for (const [title, tname] of Object.entries(docTables)) {
	const names = allKeys(tables.get(tname)).map((k) => k.name);
	for (const m of (section(title) || '').matchAll(/^\| ([^|]*)\|/gm))
		for (const w of m[1].split('(')[0].matchAll(/`([a-z_0-9]+)`/g))
			if (!names.includes(w[1]) && w[1] !== 'key')
				bad(`docs/rules-language.md: '${w[1]}' in table '${title}' is not a key of table ${tname}`);
}

if (problems.length) {
	for (const p of problems)
		console.error(`keys_agree: ${p}`);
	process.exit(1);
}
console.log(`keys_agree: ${dump.tables.length} tables agree with the schema and docs/rules-language.md`);
