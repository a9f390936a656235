#!/usr/bin/env bash
# report-browser-test.sh: analyze report's report.html of the committed fixture opened in headless chromium
# (tests/analyze/browser/check-html.mjs): no console errors, no request, the verdict visible, the timeline drawn;
# the screenshots are kept as ARTIFACT_DIR/report-fixture.png and report-thread-fixture.png (the crashed thread's
# state bar), and, given MK_REPORT_ETL, a synthetic GPU reset's .etl report as report-etl-tdr.png.
# usage: report-browser-test.sh ANALYZE SOURCE_DIR ARTIFACT_DIR [MK_REPORT_ETL]
#        (exit 77: no chromium, node or puppeteer-core)
set -uo pipefail
analyze=$1 src=$2 art=$3 mk=${4:-}
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
node "$src/tests/analyze/browser/check-html.mjs" "$tmp/thr/report.html" "$art/report-thread-fixture.png" || exit
[[ -n $mk ]] || exit 0
# an .etl report: the GPU reset, its marker and the ETL coverage lines in a real browser
guid_of() { awk -v n="$1" '$0 ~ "- name: "n"$" {f=1; next} f && /guid:/ {print $2; exit}' "$src/rules/providers/windows.yaml"; }
mkdir "$tmp/etl"
"$mk" "$tmp/etl/snap.etl" tdr "$(guid_of Microsoft-Windows-Kernel-Process)" "$(guid_of Microsoft-Windows-DxgKrnl)" \
	"$(guid_of Microsoft-Windows-Kernel-PnP)" "$(guid_of Hindsight-Marker)" "$(guid_of Microsoft-Windows-TCPIP)" || { echo "report browser test: FAIL: mk_report_etl"; exit 1; }
"$analyze" report "$tmp/etl/snap.etl" --rules "$src/rules/stutter.yaml" >/dev/null ||
	{ echo "report browser test: FAIL: analyze report on the .etl exited $?"; exit 1; }
node "$src/tests/analyze/browser/check-html.mjs" "$tmp/etl/report.html" "$art/report-etl-tdr.png"
