#!/usr/bin/env bash
# coverage.sh RULECHECK TOP: rulecheck --windows-build on rules/stutter.yaml for the oldest and newest Windows 10
# and the newest Windows 11 build of the vendored listings, checked for real content (docs/windows-coverage.md).
set -u
rc=$1
top=$2
cd "$top" || exit 2
fail=0
expect() { # expect NAME TEXT PATTERN: the text holds a line matching the extended regex
	if ! grep -Eq -- "$3" <<<"$2"; then
		echo "FAIL: $1: no line matches /$3/"
		fail=1
	fi
}
refuse() { # refuse NAME TEXT PATTERN: no line of the text matches
	if grep -Eq -- "$3" <<<"$2"; then
		echo "FAIL: $1: a line matches /$3/:"
		grep -E -- "$3" <<<"$2" | head -3
		fail=1
	fi
}
line_of() { grep -n -- "              - $1\b" rules/stutter.yaml | head -1 | cut -d: -f1; }

old=$("$rc" --windows-build W10_1507 rules/stutter.yaml) || { echo "FAIL: W10_1507 exit $?"; fail=1; }
# The four TDR ids are missing there, each reported at its whitelist line.
for id in 540 541 547 548; do
	expect "W10_1507 TDR $id" "$old" "^rules/stutter.yaml:$(line_of $id):17: warning\[HS150\]: event $id \("
done
# SwDevice removal (1176) is missing, its fallback DeviceRemovalStart (831) is not.
expect "W10_1507 1176" "$old" "^rules/stutter.yaml:$(line_of 1176):17: warning\[HS150\]: event 1176 "
refuse "W10_1507 831" "$old" "event 831 .*does not exist"
expect "W10_1507 summary DxgKrnl" "$old" "^  keyevents +Microsoft-Windows-DxgKrnl +0/4 present, missing: 540 541 547 548$"
expect "W10_1507 summary PnP" "$old" "^  keyevents +Microsoft-Windows-Kernel-PnP +20/41 present, missing: 807 808 860 1102 "
expect "W10_1507 summary Process" "$old" "^  keyevents +Microsoft-Windows-Kernel-Process +6/6 present$"
# The system abort (1468) is missing, the abort request (1039) and its fallback, the retransmit timeout (1046), are not.
expect "W10_1507 summary TCPIP" "$old" "^  keyevents +Microsoft-Windows-TCPIP +36/64 present, missing: 1468 "
refuse "W10_1507 1039" "$old" "event 1039 .*does not exist"
refuse "W10_1507 1046" "$old" "event 1046 .*does not exist"

new10=$("$rc" --windows-build W10_20H2 rules/stutter.yaml) || { echo "FAIL: W10_20H2 exit $?"; fail=1; }
expect "W10_20H2 PnP" "$new10" "^  keyevents +Microsoft-Windows-Kernel-PnP +22/41 present, missing: 860 1102 "
expect "W10_20H2 Memory" "$new10" "^  keyevents +Microsoft-Windows-Kernel-Memory +5/6 present, missing: 14$"
# The full listing agrees with the catalog's names, keywords and levels: no HS151.
refuse "W10_20H2 mismatches" "$new10" "HS151"

w11=$("$rc" --windows-build 22000 rules/stutter.yaml) || { echo "FAIL: W11_21H2 exit $?"; fail=1; }
expect "W11_21H2 header" "$w11" "^rules/stutter.yaml: coverage on W11_21H2 \(Windows 11 21H2, build 22000\):$"
expect "W11_21H2 PnP" "$w11" "^  keyevents +Microsoft-Windows-Kernel-PnP +40/41 present, missing: 860$"
expect "W11_21H2 TDR still missing" "$w11" "warning\[HS150\]: event 540 "
expect "W11_21H2 TCPIP" "$w11" "^  keyevents +Microsoft-Windows-TCPIP +63/64 present, missing: 1603$"
expect "W11_21H2 total" "$w11" "^  total: 125 whitelisted ids: 117 present, 6 missing, 2 unknown \(no listing\), 0 disagree$"
refuse "W11_21H2 1176" "$w11" "event 1176 .*does not exist"

# --strict turns the coverage warnings into a failure (exit 1).
"$rc" --strict --quiet --windows-build W10_1507 rules/stutter.yaml >/dev/null
st=$?
[ "$st" = 1 ] || { echo "FAIL: --strict with HS150 exited $st, not 1"; fail=1; }

# A build between the reference ones: 2004 (19041) has TCPIP's system abort but no Kernel-Process listing.
mid=$("$rc" --windows-build 19041 rules/stutter.yaml) || { echo "FAIL: W10_2004 exit $?"; fail=1; }
expect "W10_2004 TCPIP" "$mid" "^  keyevents +Microsoft-Windows-TCPIP +59/64 present, missing: 1603 1544 1521 1524 1526$"
expect "W10_2004 Process unknown" "$mid" "^  keyevents +Microsoft-Windows-Kernel-Process +6 ids unknown"

# An unknown build is a usage error that lists the known ones.
err=$("$rc" --windows-build 22631 rules/stutter.yaml 2>&1 >/dev/null)
st=$?
[ "$st" = 2 ] || { echo "FAIL: unknown build exited $st, not 2"; fail=1; }
expect "unknown build list" "$err" "^  W10_1507 +10240  Windows 10 1507$"
expect "unknown build list 2004" "$err" "^  W10_2004 +19041  Windows 10 2004$"

[ "$fail" = 0 ] && echo "coverage: ok"
exit $fail
