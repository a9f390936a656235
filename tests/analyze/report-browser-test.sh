#!/usr/bin/env bash
# report-browser-test.sh: analyze report's report.html of the committed fixture opened in headless chromium
# (tests/analyze/browser/check-html.mjs): no console errors, no request, the verdict visible, the timeline drawn;
# the screenshots are kept as ARTIFACT_DIR/report-fixture.png and report-thread-fixture.png (the crashed thread's
# state bar).
# usage: report-browser-test.sh ANALYZE SOURCE_DIR ARTIFACT_DIR   (exit 77: no chromium, node or puppeteer-core)
set -uo pipefail
analyze=$1 src=$2 art=$3
command -v node >/dev/null || { echo "report browser test: SKIP: no node"; exit 77; }
[[ -d $src/tests/analyze/browser/node_modules/puppeteer-core ]] ||
	{ echo "report browser test: SKIP: run npm ci in tests/analyze/browser"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/thr"
"$analyze" report "$src/tests/replay/fixture.dat" -o "$tmp" --rules "$src/rules/stutter.yaml" >/dev/null ||
	{ echo "report browser test: FAIL: analyze report exited $?"; exit 1; }
"$analyze" report "$src/tests/analyze/thread-fixture.dat" -o "$tmp/thr" --rules "$src/rules/stutter.yaml" >/dev/null ||
	{ echo "report browser test: FAIL: analyze report on the thread fixture exited $?"; exit 1; }
mkdir -p "$art"
node "$src/tests/analyze/browser/check-html.mjs" "$tmp/report.html" "$art/report-fixture.png" || exit
node "$src/tests/analyze/browser/check-html.mjs" "$tmp/thr/report.html" "$art/report-thread-fixture.png"
