// agree.mjs: the JSON Schema (via check.mjs/ajv) and rulecheck must agree on every file's structure:
// ajv rejects a file exactly when rulecheck reports a structural-class diagnostic in that file.
// usage: node agree.mjs RULECHECK SCHEMA FILE...
import { execFileSync, spawnSync } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const [rulecheck, schema, ...files] = process.argv.slice(2);
if (!rulecheck || !schema || files.length === 0) {
  console.error('usage: node agree.mjs RULECHECK SCHEMA FILE...');
  process.exit(2);
}

const ajvOut = spawnSync(process.execPath, [join(here, 'check.mjs'), schema, ...files], { encoding: 'utf8' });
if (ajvOut.status !== 0) {
  console.error(ajvOut.stdout + ajvOut.stderr);
  console.error(`check.mjs failed with status ${ajvOut.status}`);
  process.exit(2);
}
const ajv = new Map();
for (const line of ajvOut.stdout.split('\n').filter(Boolean)) {
  const [file, verdict, why] = line.split('\t');
  ajv.set(resolve(file), { valid: verdict === 'valid', why: why ?? '' });
}

let disagree = 0;
let structuralFiles = 0;
for (const f of files) {
  const r = spawnSync(rulecheck, ['--format', 'json', f], { encoding: 'utf8' });
  if (r.status === null || r.status > 2) {
    console.error(`${f}: rulecheck crashed (status ${r.status}, signal ${r.signal})`);
    disagree++;
    continue;
  }
  const report = JSON.parse(r.stdout);
  const mine = report.diagnostics.filter(
    (d) => d.class === 'structural' && d.file && resolve(d.file) === resolve(f));
  const a = ajv.get(resolve(f));
  if (!a) {
    console.error(`${f}: no verdict from check.mjs`);
    disagree++;
    continue;
  }
  const rcStructural = mine.length > 0;
  if (rcStructural) structuralFiles++;
  if (a.valid === rcStructural) {
    disagree++;
    console.log(`DISAGREE ${f}`);
    console.log(`  ajv: ${a.valid ? 'valid' : 'invalid: ' + a.why}`);
    console.log(`  rulecheck: ${rcStructural ? mine.map((d) => `${d.line}:${d.col} ${d.code} ${d.message}`).join('; ') : 'no structural finding'}`);
  }
}
// A run that compared nothing, or only one side of the question, proves nothing.
if (files.length < 10 || structuralFiles === 0 || structuralFiles === files.length) {
  console.log(`too little to compare: ${files.length} files, ${structuralFiles} with structural findings`);
  process.exit(1);
}
console.log(`schema agreement: ${files.length - disagree} passed, ${disagree} failed`);
process.exit(disagree ? 1 : 0);
