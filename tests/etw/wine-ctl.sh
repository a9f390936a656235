#!/usr/bin/env bash
# wine-ctl.sh: engine ctl over the named pipe under Wine, end to end: engine.exe replaying an .etl with the channel, then status, snapshot and stop.
# usage: wine-ctl.sh EMULATOR ENGINE.exe RULES_DIR TRACE.etl WORKDIR CTL_CLIENTS.exe
# Both engine.exe processes and every client run under wine-run.sh, so they
# share one WINEPREFIX and one wineserver (the pipe lives there). Replay needs
# no privileges and no ETW, so this is the real channel, not a recorder.
set -uo pipefail
emu=$1 engine=$2 rules=$3 trace=$4 work=$5 clients=$6
epid=
fail() {
	echo "FAIL: $*" >&2
	for f in engine.out engine2.out status.err snap.err clients.out stop.out; do
		[[ -f $f ]] && { echo "--- $f" >&2; tail -30 "$f" >&2; }
	done
	# Killing wine-run.sh would leave engine.exe running: ask it to stop.
	if [[ -n $epid ]]; then
		ctl stop >/dev/null 2>&1 || kill "$epid" 2>/dev/null
		wait "$epid" 2>/dev/null
	fi
	exit 1
}
# Windows' stdout is text mode (CRLF): the checks read LF lines.
ctl() { timeout 180 "$emu" "$engine" ctl --rules replay-windows.yaml "$@" | tr -d '\r'; }

rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
cp "$rules/replay-windows.yaml" "$rules/replay-windows-catalog.yaml" . || exit 1

# 1. No engine: exit 2, and the pipe's name said.
ctl status >noeng.out 2>&1
rc=$?
[[ $rc == 2 ]] || fail "ctl status without an engine exited $rc, not 2"
grep -qF 'no engine is running for this profile (no control pipe \\.\pipe\hindsight-ctl-replay-windows-' noeng.out ||
	fail "ctl status without an engine did not say so: $(cat noeng.out)"

# 2. The engine, replaying at the recorded pace (137 s of input: it is
# stopped long before the end by ctl stop).
"$emu" "$engine" --rules replay-windows.yaml --replay "$trace" --replay-speed 1 >engine.out 2>&1 &
epid=$!
# Its output reaches engine.out only when it exits (wine-run.sh), so the
# channel is found by asking until it answers.
ok=
for _ in $(seq 60); do
	if ctl status --json >status.json 2>status.err; then
		ok=1
		break
	fi
	kill -0 "$epid" 2>/dev/null || fail "the engine exited before its channel answered"
	sleep 1
done
[[ $ok ]] || fail "ctl status --json never answered"
run_dir=$(sed -n 's/^  "run_dir": "\(.*\)",$/\1/p' status.json)
[[ -n $run_dir && -d $run_dir ]] || fail "status has no run_dir that exists: '$run_dir'"
for key in '"profile": "replay-windows"' '"backend": "replay"' '"key_events_observed": ' '"name": "keyevents"' \
	'"name": "snap"' '"mode": "file-circular"'; do
	grep -qF "$key" status.json || fail "status --json lacks $key"
done
ctl status >status.txt 2>status.err || fail "ctl status (text) failed"
grep -q '^profile: replay-windows$' status.txt || fail "the text status does not name the profile"

# 3. A second engine of the profile meanwhile: FILE_FLAG_FIRST_PIPE_INSTANCE
# refuses it the name, so it records without a channel and says so.
"$emu" "$engine" --rules replay-windows.yaml --replay "$trace" --replay-speed 0 >engine2.out 2>&1 ||
	fail "the second engine failed"
grep -qF 'no control channel (engine ctl): \\.\pipe\hindsight-ctl-replay-windows-' engine2.out &&
	grep -qF 'exists already' engine2.out || fail "the second engine did not say the pipe was taken"
ctl status --json >status2.json 2>status.err || fail "the first engine stopped answering after the second ran"
grep -qF "\"run_dir\": \"$run_dir\"" status2.json || fail "another engine than the first answered"

# 4. A named snapshot: the folder, complete, recording going on.
snap=$(ctl snapshot --name x 2>snap.err) || fail "ctl snapshot --name x failed"
[[ $snap == "$run_dir/snapshots/001-x" ]] || fail "ctl snapshot printed '$snap', not $run_dir/snapshots/001-x"
[[ -f $snap/snapshot.json ]] || fail "$snap has no snapshot.json"
grep -q 'engine ctl snapshot' "$snap/snapshot.json" || fail "snapshot.json does not say engine ctl asked"
kill -0 "$epid" 2>/dev/null || fail "the engine exited after the snapshot"

# 5. Hostile and concurrent clients (ctl_clients.c): not JSON, an array, an
# unknown command, two pipelined requests, 5000 bytes without a newline
# (too_long, then the end), 20 clients gone before their reply, a silent one
# timed out while another is answered, 12 at once; the engine goes on.
"$emu" "$clients" logs/runs replay-windows >clients.out 2>&1 || fail "ctl_clients failed"
kill -0 "$epid" 2>/dev/null || fail "the engine exited after the hostile clients"
ctl status --json >status3.json 2>status.err || fail "the engine stopped answering after the hostile clients"

# 6. Stop: returns once the engine has exited, which it does with 0 and run.json.
ctl stop >stop.out 2>&1 || fail "ctl stop failed"
grep -q 'stopped; run folder' stop.out || fail "ctl stop did not say it stopped"
wait "$epid"
erc=$?
epid=
[[ $erc == 0 ]] || fail "the engine exited $erc after ctl stop"
grep -q '"exit_code": 0' "$run_dir/run.json" || fail "run.json lacks exit_code 0"
grep -qF 'engine: control channel \\.\pipe\hindsight-ctl-replay-windows-' engine.out ||
	fail "the engine did not say its channel"
grep -qF 'stop asked for (engine ctl stop)' engine.out || fail "the engine did not log the stop request"
grep -q 'DONE, all files written' engine.out || fail "the engine did not finish with DONE"

# 7. The pipe went with the engine: no engine again.
ctl status >gone.out 2>&1
rc=$?
[[ $rc == 2 ]] || fail "ctl status after the stop exited $rc, not 2"
tr -d '\r' <clients.out
echo "wine-ctl: status, snapshot 001-x, a second engine refused the name, hostile clients, stop, no engine -> 2"
