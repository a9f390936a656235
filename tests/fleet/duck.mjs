// duck.mjs: runs docs/fleet.md's DuckDB recipes, as written there, over an NDJSON file of `analyze fleet --ndjson`.
// usage: node duck.mjs DOCS/fleet.md FLEET.ndjson
// Every ```sql block of the doc whose first line is "-- duckdb: NAME" is run with its file name 'fleet.ndjson'
// replaced by the file given; a recipe that fails to run fails here. The rows of the recipe named top-buckets are
// printed as JSON lines (bucket_id, reports, incidents, machines) for the test to compare with analyze fleet's own
// counts; the others print how many rows they gave.
import { readFileSync } from 'node:fs';
import { DuckDBInstance } from '@duckdb/node-api';

const [doc, ndjson] = process.argv.slice(2);
if (!doc || !ndjson) {
	process.stderr.write('usage: node duck.mjs DOCS/fleet.md FLEET.ndjson\n');
	process.exit(2);
}
const text = readFileSync(doc, 'utf8');
const recipes = [...text.matchAll(/```sql\n(-- duckdb: ([a-z0-9-]+)[^\n]*\n[\s\S]*?)```/g)].map((m) => ({ name: m[2], sql: m[1] }));
if (!recipes.some((r) => r.name === 'top-buckets')) {
	process.stderr.write(`${doc}: no DuckDB recipe named top-buckets\n`);
	process.exit(1);
}
const quoted = `'${ndjson.replaceAll("'", "''")}'`;
const instance = await DuckDBInstance.create(':memory:');
const con = await instance.connect();
let failed = 0;
for (const r of recipes) {
	const sql = r.sql.replaceAll("'fleet.ndjson'", quoted);
	if (sql === r.sql) {
		process.stderr.write(`recipe ${r.name}: it reads no 'fleet.ndjson'\n`);
		failed++;
		continue;
	}
	try {
		const reader = await con.runAndReadAll(sql);
		const rows = reader.getRowObjectsJson();
		if (r.name === 'top-buckets') {
			for (const row of rows)
				process.stdout.write(`${JSON.stringify({ bucket_id: row.bucket_id, reports: Number(row.reports),
					incidents: Number(row.incidents), machines: Number(row.machines) })}\n`);
		} else {
			process.stderr.write(`recipe ${r.name}: ${rows.length} rows\n`);
		}
	} catch (e) {
		process.stderr.write(`recipe ${r.name} failed: ${e.message}\n`);
		failed++;
	}
}
con.closeSync();
process.exit(failed ? 1 : 0);
