#!/usr/bin/env bash
# report-browser-test.sh: analyze report's report.html of the committed fixture opened in headless chromium
# (tests/analyze/browser/check-html.mjs): no console errors, no request, the verdict visible, the timeline drawn;
# the screenshot is kept as ARTIFACT_DIR/report-fixture.png.
# usage: report-browser-test.sh ANALYZE SOURCE_DIR ARTIFACT_DIR   (exit 77: no chromium, node or puppeteer-core)
set -uo pipefail
analyze=$1 src=$2 art=$3
command -v node >/dev/null || { echo "report browser test: SKIP: no node"; exit 77; }
[[ -d $src/tests/analyze/browser/node_modules/puppeteer-core ]] ||
	{ echo "report browser test: SKIP: run npm ci in tests/analyze/browser"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$analyze" report "$src/tests/replay/fixture.dat" -o "$tmp" --rules "$src/rules/stutter.yaml" >/dev/null ||
	{ echo "report browser test: FAIL: analyze report exited $?"; exit 1; }
mkdir -p "$art"
node "$src/tests/analyze/browser/check-html.mjs" "$tmp/report.html" "$art/report-fixture.png"
