// columns.mjs: docs/fleet.md's ClickHouse table against analyze fleet's NDJSON rows, since no ClickHouse runs here:
// every row has exactly the table's columns, and each value fits its column's type as JSONEachRow reads it (a null
// only in a Nullable column, integers in UInt columns, booleans in Bool, ISO 8601 UTC in DateTime64).
// usage: node columns.mjs DOCS/fleet.md FLEET.ndjson   (prints the column count; exit 1 with what differs)
import { readFileSync } from 'node:fs';

const [doc, ndjson] = process.argv.slice(2);
if (!doc || !ndjson) {
	process.stderr.write('usage: node columns.mjs DOCS/fleet.md FLEET.ndjson\n');
	process.exit(2);
}
const text = readFileSync(doc, 'utf8');
const m = text.match(/CREATE TABLE hindsight_fleet\s*\(([\s\S]*?)\n\)\s*\nENGINE/);
if (!m) {
	process.stderr.write(`${doc}: no CREATE TABLE hindsight_fleet ( ... ) ENGINE block\n`);
	process.exit(1);
}
// "name Type" pairs; a type's own parentheses may hold commas (DateTime64(0, 'UTC')).
const cols = [];
let depth = 0, cur = '';
for (const ch of m[1] + ',') {
	if (ch === '(') depth++;
	if (ch === ')') depth--;
	if (ch === ',' && depth === 0) {
		const def = cur.trim().match(/^(\w+)\s+(.+)$/s);
		if (def) cols.push({ name: def[1], type: def[2].replace(/\s+/g, ' ') });
		else if (cur.trim()) {
			process.stderr.write(`${doc}: cannot read the column '${cur.trim()}'\n`);
			process.exit(1);
		}
		cur = '';
	} else cur += ch;
}
const fits = (type, v) => {
	if (v === null) return /Nullable\(/.test(type);
	const base = type.replace(/^LowCardinality\((.*)\)$/, '$1').replace(/^Nullable\((.*)\)$/, '$1');
	if (base === 'String') return typeof v === 'string';
	if (base === 'Bool') return typeof v === 'boolean';
	if (/^UInt\d+$/.test(base)) return Number.isInteger(v) && v >= 0;
	if (/^Float\d+$/.test(base)) return typeof v === 'number';
	if (/^DateTime64/.test(base)) return typeof v === 'string' && /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/.test(v);
	return false; // a type this check does not know: say so rather than pass it
};
let bad = 0, rows = 0;
const names = cols.map((c) => c.name).sort().join(',');
for (const line of readFileSync(ndjson, 'utf8').split('\n')) {
	if (!line) continue;
	rows++;
	const row = JSON.parse(line);
	const keys = Object.keys(row).sort().join(',');
	if (keys !== names) {
		process.stderr.write(`row ${rows}: keys ${keys}\n  table: ${names}\n`);
		bad++;
		continue;
	}
	for (const c of cols)
		if (!fits(c.type, row[c.name])) {
			process.stderr.write(`row ${rows}: ${c.name} = ${JSON.stringify(row[c.name])} does not fit ${c.type}\n`);
			bad++;
		}
}
if (!rows) {
	process.stderr.write(`${ndjson}: no rows\n`);
	process.exit(1);
}
process.stdout.write(`${cols.length} columns, ${rows} rows\n`);
process.exit(bad ? 1 : 0);
