#!/usr/bin/env node
// check-html.mjs: opens a report.html in Debian's headless chromium (puppeteer-core) and checks it renders:
// no console errors or page errors, no network request of any kind, the verdict visible, the timeline drawn.
//
//   node check-html.mjs REPORT.html SCREENSHOT.png
//
// Prints one line per check; exit 0 all good, 1 a check failed, 77 no chromium or no puppeteer-core
// (run `npm ci` in tests/analyze/browser), 2 usage.
// HS_CHROMIUM overrides the browser path (default /usr/bin/chromium).

import { existsSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

const [file, shot] = process.argv.slice(2);
if (!file || !shot) {
	process.stderr.write('usage: node check-html.mjs REPORT.html SCREENSHOT.png\n');
	process.exit(2);
}
const browserPath = process.env.HS_CHROMIUM || '/usr/bin/chromium';
if (!existsSync(browserPath)) {
	console.log(`SKIP: no browser at ${browserPath}`);
	process.exit(77);
}
let puppeteer;
try {
	puppeteer = (await import('puppeteer-core')).default;
} catch (e) {
	console.log('SKIP: puppeteer-core is not installed (npm ci in tests/analyze/browser)');
	process.exit(77);
}

const failures = [];
const check = (ok, what) => {
	console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}`);
	if (!ok) failures.push(what);
};

const browser = await puppeteer.launch({
	executablePath: browserPath,
	headless: true,
	// root in a VM: no user namespace sandbox; no GPU here
	args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run'],
});
try {
	const page = await browser.newPage();
	await page.setViewport({ width: 1200, height: 900 });
	const consoleErrors = [];
	const requests = [];
	page.on('console', (m) => {
		if (m.type() === 'error') consoleErrors.push(m.text());
	});
	page.on('pageerror', (e) => consoleErrors.push(String(e)));
	await page.setRequestInterception(true);
	const url = pathToFileURL(file).href;
	page.on('request', (r) => {
		if (r.url() !== url) {
			requests.push(r.url());
			r.abort();
		} else {
			r.continue();
		}
	});
	const resp = await page.goto(url, { waitUntil: 'load' });
	check(resp !== null, 'the page loads');
	check(requests.length === 0, `no request beyond the file itself${requests.length ? ': ' + requests.join(', ') : ''}`);
	check(consoleErrors.length === 0, `no console or page errors${consoleErrors.length ? ': ' + consoleErrors.join(' | ') : ''}`);
	const verdict = await page.$eval('#verdict', (el) => {
		const b = el.getBoundingClientRect();
		const s = getComputedStyle(el);
		return { text: el.innerText, w: b.width, h: b.height, top: b.top, visible: s.display !== 'none' && s.visibility !== 'hidden' };
	});
	check(verdict.visible && verdict.w > 100 && verdict.h > 10 && verdict.top < 900, 'the verdict is visible in the first screen');
	check(verdict.text.trim().length > 20, `the verdict has text: ${verdict.text.split('\n')[0].slice(0, 120)}`);
	const tl = await page.$eval('svg', (svg) => {
		const b = svg.getBoundingClientRect();
		return { w: b.width, h: b.height, ticks: svg.querySelectorAll('line.tick').length, moment: svg.querySelectorAll('line.moment').length };
	});
	check(tl.w > 300 && tl.h > 50, `the timeline is drawn (${Math.round(tl.w)}x${Math.round(tl.h)} px)`);
	check(tl.ticks > 0, `the timeline has event ticks (${tl.ticks})`);
	// The zoom script runs only if the page's CSP hash matches it (else a console error above).
	const ctl = await page.$eval('#tl-ctl', (el) => !el.hidden).catch(() => false);
	check(ctl, 'the timeline zoom controls are shown (its script ran)');
	if (ctl) {
		const box = await page.$eval('svg.tlv', (v) => { const b = v.getBoundingClientRect(); return { x: b.x + b.width / 2, y: b.y + 10 }; });
		await page.mouse.move(box.x, box.y);
		await page.mouse.wheel({ deltaY: -400 });
		await new Promise((r) => setTimeout(r, 100));
		const zoom = await page.$eval('#tl', (d) => +d.dataset.zoom);
		const vb = await page.$eval('svg.tlv', (v) => v.getAttribute('viewBox'));
		check(zoom > 1, `the wheel zooms the timeline in (x${zoom}, viewBox ${vb})`);
		await page.click('#tl-ctl button[data-z="100000000"]');
		const z2 = await page.$eval('#tl', (d) => +d.dataset.zoom);
		check(z2 >= 1, `the moment +-100 ms button sets a view (x${z2})`);
		await page.click('#tl-ctl button[data-z="0"]');
		const z3 = await page.$eval('#tl', (d) => +d.dataset.zoom);
		check(z3 === 1, `whole window restores x1 (x${z3})`);
	}
	const findings = await page.$$eval('div.f', (d) => d.length);
	check(findings > 0, `findings are shown (${findings})`);
	await page.screenshot({ path: shot, fullPage: process.env.HS_SHOT_FULL !== "0" });
	check(existsSync(shot), `screenshot kept: ${shot}`);
} finally {
	await browser.close();
}
process.exit(failures.length ? 1 : 0);
