#!/usr/bin/env bash
# report-browser-test.sh: analyze report's report.html of the committed fixture opened in headless chromium
# (tests/analyze/browser/check-html.mjs): no console errors, no request, the verdict visible, the timeline drawn;
# the screenshots are kept as ARTIFACT_DIR/report-fixture.png and report-thread-fixture.png (the crashed thread's
# state bar), and, given MK_REPORT_ETL, a synthetic GPU reset's .etl report as report-etl-tdr.png.
# usage: report-browser-test.sh ANALYZE SOURCE_DIR ARTIFACT_DIR [MK_REPORT_ETL]
#        (exit 77, saying what was not opened: no chromium, node or puppeteer-core; with CI=true, where
#        ./run.sh --test installs them, a missing one fails instead)
set -uo pipefail
analyze=$1 src=$2 art=$3 mk=${4:-}
skip() { # WHY: nothing more is opened in a browser
	if [[ ${CI:-} == true ]]; then
		echo "report browser test: FAIL: $1; CI=true, where ./run.sh --test installs it"
		exit 1
	fi
	echo "report browser test: SKIPPED (not opened in a browser: the report.html pages still to check): $1"
	exit 77
}
browse() { # HTML PNG: check-html.mjs, whose 77 (no chromium, no puppeteer-core) is a skip as above
	node "$src/tests/analyze/browser/check-html.mjs" "$1" "$2"
	local rc=$?
	((rc == 77)) && skip "check-html.mjs found no chromium or no puppeteer-core (HS_CHROMIUM, npm ci in tests/analyze/browser)"
	((rc == 0)) || exit "$rc"
}
command -v node >/dev/null || skip "no node"
[[ -d $src/tests/analyze/browser/node_modules/puppeteer-core ]] || skip "no puppeteer-core (run npm ci in tests/analyze/browser)"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/thr"
"$analyze" report "$src/tests/replay/fixture.dat" -o "$tmp" --rules "$src/rules/stutter.yaml" >/dev/null ||
	{ echo "report browser test: FAIL: analyze report exited $?"; exit 1; }
"$analyze" report "$src/tests/analyze/thread-fixture.dat" -o "$tmp/thr" --rules "$src/rules/stutter.yaml" >/dev/null ||
	{ echo "report browser test: FAIL: analyze report on the thread fixture exited $?"; exit 1; }
mkdir -p "$art"
browse "$tmp/report.html" "$art/report-fixture.png"
browse "$tmp/thr/report.html" "$art/report-thread-fixture.png"
[[ -n $mk ]] || exit 0
# an .etl report: the GPU reset, its marker and the ETL coverage lines in a real browser
guid_of() { awk -v n="$1" '$0 ~ "- name: "n"$" {f=1; next} f && /guid:/ {print $2; exit}' "$src/rules/providers/windows.yaml"; }
mkdir "$tmp/etl"
"$mk" "$tmp/etl/snap.etl" tdr "$(guid_of Microsoft-Windows-Kernel-Process)" "$(guid_of Microsoft-Windows-DxgKrnl)" \
	"$(guid_of Microsoft-Windows-Kernel-PnP)" "$(guid_of Hindsight-Marker)" "$(guid_of Microsoft-Windows-TCPIP)" || { echo "report browser test: FAIL: mk_report_etl"; exit 1; }
"$analyze" report "$tmp/etl/snap.etl" --rules "$src/rules/stutter.yaml" >/dev/null ||
	{ echo "report browser test: FAIL: analyze report on the .etl exited $?"; exit 1; }
browse "$tmp/etl/report.html" "$art/report-etl-tdr.png"
