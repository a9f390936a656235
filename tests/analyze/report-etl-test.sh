#!/usr/bin/env bash
# report-etl-test.sh: `analyze report` on .etl files: synthetic TDR, device removal and crash-exit traces (verdict in
# the first three lines, the WPA regions file well-formed and naming the catalog's events), a Windows snapshot
# folder, and every real ETL fixture (a report, a sensible verdict, a well-formed regions file).
# usage: report-etl-test.sh ANALYZE MK_REPORT_ETL SRC_DIR FIXTURES_DIR [EMULATOR...]
# (the cross build passes its emulator, scripts/wine-run.sh: both programs then run under Wine)
set -uo pipefail
analyze_bin=$1 mk_bin=$2 src=$3 fixtures=$4
shift 4
emu=("$@")
analyze() { "${emu[@]}" "$analyze_bin" "$@"; }
mk() { "${emu[@]}" "$mk_bin" "$@"; }
tmp=$(mktemp -d)
trap '[[ -n ${HS_KEEP:-} ]] || rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }
cat=$src/rules/providers/windows.yaml
schema=$src/schemas/report.schema.json
check=$src/tests/schema/check.mjs

# The providers' GUIDs as the catalog gives them.
guid_of() { awk -v n="$1" '$0 ~ "- name: "n"$" {f=1; next} f && /guid:/ {print $2; exit}' "$cat"; }
proc=$(guid_of Microsoft-Windows-Kernel-Process) dxg=$(guid_of Microsoft-Windows-DxgKrnl)
pnp=$(guid_of Microsoft-Windows-Kernel-PnP) mark=$(guid_of Hindsight-Marker) tcp=$(guid_of Microsoft-Windows-TCPIP)
[[ -n $proc && -n $dxg && -n $pnp && -n $mark && -n $tcp ]] || { echo "FAIL: GUIDs not found in $cat"; exit 1; }

# Well-formed XML: xmllint (Debian's libxml2-utils), else python3's parser.
wellformed() {
	if command -v xmllint >/dev/null; then
		xmllint --noout "$1"
	else
		python3 -c 'import sys, xml.dom.minidom; xml.dom.minidom.parse(sys.argv[1])' "$1"
	fi
}

validate() { # report.json against the schema, when the checker is installed
	if command -v node >/dev/null && [[ -d $src/tests/schema/node_modules ]]; then
		node "$check" "$schema" "$1" | grep -q $'\tvalid$' || bad "$1 is not valid against report.schema.json"
	fi
}

# KIND VERDICT-REGEX GUID ID (tdr, removal, crash, disconnect): the verdict in the first three lines; the regions file names GUID/ID and the marker.
synthetic() {
	local kind=$1 want=$2 guid=$3 id=$4
	mkdir -p "$tmp/$kind"
	mk "$tmp/$kind/snap.etl" "$kind" "$proc" "$dxg" "$pnp" "$mark" "$tcp" || { bad "mk_report_etl $kind"; return; }
	analyze report "$tmp/$kind/snap.etl" --rules "$src/rules/stutter.yaml" >"$tmp/$kind.out" 2>"$tmp/$kind.err"
	local rc=$?
	((rc == 0)) || bad "$kind: exit $rc: $(cat "$tmp/$kind.err")"
	head -3 "$tmp/$kind.out" | grep -qE "$want" || { bad "$kind: verdict"; head -3 "$tmp/$kind.out"; }
	local x=$tmp/$kind/snap.regions.xml
	[[ -f $x ]] || { bad "$kind: no regions file"; return; }
	wellformed "$x" || bad "$kind: regions file not well-formed"
	grep -q "<Event Provider=\"{$guid}\" Id=\"$id\" Version=\"[0-9]*\" />" "$x" || { bad "$kind: regions lack {$guid} id $id"; cat "$x"; }
	grep -q "<Event Provider=\"{$mark}\" Id=\"0\" Version=\"0\" />" "$x" || bad "$kind: regions lack the marker"
	grep -q 'Name="hindsight-Moment"' "$x" || bad "$kind: no moment region"
	grep -q "WPA regions of interest: snap.regions.xml" "$tmp/$kind.out" || bad "$kind: the report does not name its regions file"
	validate "$tmp/$kind/report.json"
	# names come from the catalog, not from the C: the events shown are the catalog's names
	echo "$kind: $(sed -n 2p "$tmp/$kind.out" | cut -c1-160)"
}
synthetic tdr '^VERDICT: The GPU was reset \(a TDR.*Microsoft-Windows-DxgKrnl/TdrPayloadEngineTimeout' "$dxg" 540
synthetic removal '^VERDICT: A device was removed at 3\.500100 s: Microsoft-Windows-Kernel-PnP/DeviceRemovalStart.*USB\\VID_046D' "$pnp" 831
synthetic crash '^VERDICT: game\.exe \(pid 4242\) crashed with exit status 0xC0000005 STATUS_ACCESS_VIOLATION at 3\.500100 s' "$proc" 2
synthetic disconnect '^VERDICT: A TCP connection was aborted at 3\.500100 s: Microsoft-Windows-TCPIP/TcpAbortTcbRequest \(id 1039\) \(pid 4242\); 2 aborts' "$tcp" 1039
# the marker makes the trigger: its name and the detection latency, on the verdict's second line
sed -n 3p "$tmp/crash.out" | grep -q 'Snapshot 001 was taken by trigger crash (kind from the marker), 1 hit, detected 30.0 ms after the hit' ||
	{ bad "crash: trigger line from the marker"; sed -n 3p "$tmp/crash.out"; }
grep -q 'LOST\|lost events: none (ETW header' "$tmp/crash.out" || bad "crash: coverage says nothing of losses"
grep -q 'game.exe (pid 4242) died of 0xC0000005 STATUS_ACCESS_VIOLATION (.*), after running 2.500 s' "$tmp/crash.out" ||
	bad "crash: the exit's detail (status, lifetime)"
# a second report into the same folder replaces the first (Windows' rename refuses an existing file)
analyze report "$tmp/crash/snap.etl" --rules "$src/rules/stutter.yaml" >/dev/null 2>"$tmp/again.err" ||
	bad "a second report over the first: $(cat "$tmp/again.err")"

# A Windows snapshot folder: snapshot.json names the ring's .etl and the hit (the session clock's ns).
snap=$tmp/run/snapshots/001-crash
mkdir -p "$snap"
cp "$tmp/crash/snap.etl" "$snap/snap.etl"
cat >"$snap/snapshot.json" <<EOF
{"snapshot": 1, "trigger": {"name": "crash", "kind": "event"}, "hits": 1, "first_hit_ns": 3500100000,
 "detection_latency_ms": 30.0, "taken_at": "2026-12-03T07:00:00+0000",
 "hit": {"ts_ns": 3500100000, "pid": 4242, "system": "Microsoft-Windows-Kernel-Process", "event": "ProcessStop"},
 "sessions": [{"name": "ring", "file": "snap.etl", "wrapped": false}]}
EOF
analyze report "$snap" --rules "$src/rules/stutter.yaml" >"$tmp/snap.out" 2>&1 || bad "snapshot folder: exit $?"
head -3 "$tmp/snap.out" | grep -q '^VERDICT: game.exe (pid 4242) crashed with exit status 0xC0000005' || { bad "snapshot: verdict"; head -3 "$tmp/snap.out"; }
head -3 "$tmp/snap.out" | grep -q 'Snapshot 001 was taken by trigger crash (kind event) on Microsoft-Windows-Kernel-Process/ProcessStop' ||
	bad "snapshot: trigger line"
[[ -f $snap/snap.regions.xml ]] && wellformed "$snap/snap.regions.xml" || bad "snapshot: regions file"
validate "$snap/report.json"

# A Windows run folder: run.json beside the key-event file and the ring's final file; one crash in both is shown once.
run=$tmp/winrun
mkdir -p "$run"
cp "$tmp/crash/snap.etl" "$run/keyevents.etl"
cp "$tmp/crash/snap.etl" "$run/snap.etl"
printf '{"rules": "%s", "sessions": [{"name": "keyevents", "mode": "file"}, {"name": "ring", "mode": "buffering"}]}\n' \
	"$src/rules/stutter.yaml" >"$run/run.json"
analyze report "$run" >"$tmp/run.out" 2>&1 || bad "run folder: exit $?"
head -3 "$tmp/run.out" | grep -q '^VERDICT: game.exe (pid 4242) crashed with exit status 0xC0000005' || { bad "run folder: verdict"; head -3 "$tmp/run.out"; }
grep -q '^  keyevents.etl' "$tmp/run.out" && grep -q '^  snap.etl' "$tmp/run.out" || bad "run folder: both files in the coverage"
# (the activity list is background to a crash: below the fold, its title only)
[[ $(grep -c 'died of 0xC0000005 .*, after running 2.500 s' "$tmp/run.out") == 1 ]] &&
	sed -n '/^BACKGROUND/,/^$/p' "$tmp/run.out" | grep -q '0 programs started in the window; 2 more ended' ||
	bad "run folder: the crash recorded by both files is not shown once (in its finding; the activity list in the background)"
[[ -f $run/keyevents.regions.xml && -f $run/snap.regions.xml ]] || bad "run folder: a regions file per .etl"

# A truncated .etl (diaghub.kernel.1 cut at 100,000 bytes, inside its second buffer): exit 1, the reader's problems
# in the coverage, and still a report of what was readable (its process starts).
mkdir -p "$tmp/cut"
head -c 100000 "$fixtures/microsoft_perfview/diaghub.kernel.1.etl" >"$tmp/cut/cut.etl"
analyze report "$tmp/cut/cut.etl" --rules "$src/rules/stutter.yaml" >"$tmp/cut.out" 2>&1
rc=$?
((rc == 1)) || bad "truncated .etl: exit $rc, 1 expected"
grep -q 'PROBLEM: at file offset 0x10000: buffer of 65536 bytes is cut short by the end of the file' "$tmp/cut.out" &&
	grep -q 'Some data could not be read' "$tmp/cut.out" && grep -q '^VERDICT: .*programs started' "$tmp/cut.out" ||
	{ bad "truncated .etl: the problem, the warning or the readable part"; head -5 "$tmp/cut.out"; }
wellformed "$tmp/cut/cut.regions.xml" || bad "truncated .etl: regions file"

# Every real fixture: a report (exit 0, or 1 when the reader met damage), a verdict, a well-formed regions file.
n=0
while IFS= read -r f; do
	b=$(basename "$f" .etl)
	out=$tmp/fx/$b
	mkdir -p "$out"
	analyze report "$f" -o "$out" --rules "$src/rules/stutter.yaml" >"$out.txt" 2>"$out.err"
	rc=$?
	((rc <= 1)) || { bad "$b: exit $rc: $(head -2 "$out.err")"; continue; }
	grep -q '^VERDICT: ' "$out.txt" || bad "$b: no verdict"
	wellformed "$out/$b.regions.xml" || bad "$b: regions file"
	validate "$out/report.json"
	echo "fixture $b (exit $rc): $(sed -n 2p "$out.txt" | cut -c10-170)"
	n=$((n + 1))
done < <(find "$fixtures" -name '*.etl' | sort)
((n == 14)) || bad "$n fixtures reported, 14 expected"
# the fixtures with process exits name them
grep -q 'locProject.exe (pid 2140) exited with 0xC000013A STATUS_CONTROL_C_EXIT' "$tmp/fx/diaghub.kernel.1.txt" ||
	bad "diaghub.kernel.1: its Ctrl+C exit"
grep -q 'SenseCE.exe (pid 6956) exited with 0x8007042B' "$tmp/fx/diaghub.kernel.1.txt" || bad "diaghub.kernel.1: SenseCE's exit"
grep -q 'Test.x86.exe start -> exit 0x00000000' "$tmp/fx/net.4.5.2.x86.txt" || bad "net.4.5.2.x86: Test.x86.exe's exit"
grep -q 'LOST (ETW header): 3 events lost' "$tmp/fx/AMSITrace.txt" || bad "AMSITrace: the header's 3 lost events"
grep -q 'LOST (ETW header): 41 events lost' "$tmp/fx/WindowsUpdate.20251008.140245.443.8.txt" || bad "WindowsUpdate: 41 lost events"
grep -q 'cpu 31:' "$tmp/fx/powershell.txt" || bad "powershell: 32 CPUs in the coverage"
((fail == 0)) && echo "report etl test: all passed"
exit $fail
