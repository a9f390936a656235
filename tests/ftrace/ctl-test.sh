#!/usr/bin/env bash
# ctl-test.sh: engine ctl against a real recording: status agrees with run.json, a named snapshot while recording goes on, hostile clients, non-root refused, stop, a stale socket.
# usage: ctl-test.sh ENGINE PROFILE CLIENTS   (root; PROFILE is tests/ftrace/ctl.yaml, instances hindsight_test_ctl_*;
# CLIENTS is ctl-clients.py). HS_TEST_START_TIMEOUT (s, default 90): how long the engine may take to start.
set -uo pipefail
engine=$(realpath "$1") profile=$(realpath "$2") clients=$(realpath "$3")
instances=(hindsight_test_ctl_ring hindsight_test_ctl_keys)
. "$(dirname "$0")/lib.sh"
test_setup

cleanup() {
	kill_engine
	remove_instances "${instances[@]}"
	rm -rf "$tmp"
}
trap cleanup EXIT
fail() {
	echo "ctl test: FAIL: $*" >&2
	[[ -f $tmp/out.txt ]] && grep '^engine' "$tmp/out.txt" | tail -20
	exit 1
}
[[ $(id -u) == 0 ]] || fail "must run as root"
for t in jq trace-cmd python3 setpriv; do
	command -v $t >/dev/null || { echo "ctl test: SKIP: no $t"; exit 77; }
done
cd "$tmp" || exit 1
ctl() { "$engine" ctl --rules "$profile" "$@"; }
alive() { kill -0 "$epid" 2>/dev/null || fail "engine stopped after $1: recording must go on"; }
sock=logs/runs/.ctl-ftrace-ctl-test.sock

# Nothing runs yet: a clear error, exit 2.
ctl status >no.txt 2>&1
rc=$?
((rc == 2)) && grep -q 'no engine is running' no.txt || fail "no engine: exit $rc, $(cat no.txt)"

: >out.txt # before the engine's own redirection, which races start_engine's first look
start_engine out.txt "$engine" --rules "$profile"
grep -q "^engine: control channel $sock" out.txt || fail "the engine does not name its control socket"
[[ -S $sock && $(stat -c %a "$sock") == 600 && $(stat -c %u "$sock") == 0 ]] ||
	fail "the socket is not root's with mode 0600: $(stat -c '%A %U' "$sock")"

# 1. Status, as JSON and as text.
sleep 1.5 # one status update after the start
ctl status --json >st1.json || fail "ctl status --json failed"
jq -e --argjson pid "$epid" '.pid == $pid and .profile == "ftrace-ctl-test" and (.sessions | length) == 2' st1.json \
	>/dev/null || fail "status --json: $(head -c 400 st1.json)"
ctl status >st1.txt || fail "ctl status failed"
grep -q '^profile: ftrace-ctl-test' st1.txt && grep -q '^  - keyevents' st1.txt || fail "status text: $(head st1.txt)"

# 2. A named snapshot while recording goes on; a key event after it is still recorded.
snap=$(ctl snapshot --name x) || fail "ctl snapshot --name x failed: $snap"
[[ $snap == "$dir/snapshots/"[0-9][0-9][0-9]-x && -d $snap ]] || fail "snapshot folder '$snap'"
for f in snapshot.json snap.dat keyevents.dat; do [[ -s $snap/$f ]] || fail "$snap has no $f"; done
jq -e '.trigger.kind == "manual"' "$snap/snapshot.json" >/dev/null || fail "snapshot.json: $(head -c 300 "$snap/snapshot.json")"
alive "ctl snapshot"
cp /bin/true hsctlafter && ./hsctlafter
# A name with slashes and dots stays one folder inside snapshots/.
snap2=$(ctl snapshot --name '../evil name') || fail "ctl snapshot with an odd name failed"
[[ $snap2 == "$dir/snapshots/"[0-9][0-9][0-9]-_._evil_name && -d $snap2 ]] || fail "odd name gave '$snap2'"
alive "the second snapshot"

# 3. Hostile and concurrent clients leave recording undisturbed.
k0=$(ctl status --json | jq .key_events_observed)
python3 "$clients" "$sock" || fail "a hostile or concurrent client got a wrong answer (above)"
alive "the hostile clients"
for _ in 1 2 3; do /bin/true; done
sleep 1.5
st=$(ctl status --json) || fail "status after the hostile clients failed"
k1=$(jq .key_events_observed <<<"$st")
((k1 > k0)) || fail "key events stopped being observed during the hostile clients ($k0 -> $k1)"
grep -q 'engine: streaming failed' out.txt && fail "streaming failed during the hostile clients"

# 4. Other users: the socket's mode refuses them, and so does SO_PEERCRED when the mode would let them in.
as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"; }
as_nobody "$engine" ctl --socket "$tmp/$sock" status >nb.txt 2>&1
rc=$?
((rc == 4)) && grep -q 'permission denied' nb.txt || fail "nobody through the mode: exit $rc, $(cat nb.txt)"
chmod 711 "$tmp" logs logs/runs && chmod 666 "$sock"
as_nobody "$engine" ctl --socket "$tmp/$sock" status >nb2.txt 2>&1
rc=$?
chmod 700 "$tmp" logs logs/runs && chmod 600 "$sock"
((rc == 4)) && grep -q 'refused: permission denied: uid' nb2.txt || fail "nobody through SO_PEERCRED: exit $rc, $(cat nb2.txt)"
grep -q 'engine: engine ctl: refused a connection from uid' out.txt || fail "the refusal is not in the engine's log"
alive "the refused clients"

# 5. Status just before stop agrees with run.json; ctl stop returns once the engine has exited, as Ctrl+C.
sleep 1.2
ctl status --json >st2.json || fail "the last status failed"
ctl stop >stop.txt 2>&1 || fail "ctl stop failed: $(cat stop.txt)"
state=$(awk '{print $3}' /proc/"$epid"/stat 2>/dev/null)
[[ -z $state || $state == Z ]] || fail "ctl stop returned while the engine still runs (state $state)"
wait "$epid"
rc=$?
epid=
((rc == 0)) || fail "the engine stopped by ctl exited $rc"
grep -q 'DONE, all files written' out.txt || fail "no DONE line after ctl stop"
[[ -e $sock ]] && fail "the socket is left after the engine exited"
run=$dir/run.json
jq -e --slurpfile s st2.json '
	($s[0]) as $st | . as $run |
	.profile == $st.profile and .exit_code == 0 and
	([.sessions[] | {name, instance, mode, events_enabled, events_skipped}] ==
	 [$st.sessions[] | {name, instance, mode, events_enabled, events_skipped}]) and
	([.triggers[] | {name, fired}] == [$st.triggers[] | {name, fired}]) and
	(.snapshots | map(select(.complete)) | length) == $st.snapshots_taken and
	.key_events_observed >= $st.key_events_observed and
	all(range($run.sessions | length); . as $i | $run.sessions[$i] as $r | $st.sessions[$i] as $q |
	    ($r.cpus | map(.overrun) | add) >= $q.overrun and
	    ($r.chunks_dropped // 0) == ($q.chunks_dropped // 0) and
	    ($r.bytes_streamed // 0) >= ($q.bytes_streamed // 0))' "$run" >/dev/null ||
	fail "status does not agree with run.json: $(jq -c '{key_events_observed, snapshots_taken, triggers}' st2.json)"
# (into a file: grep -q would end the pipe early, and pipefail count trace-cmd's SIGPIPE as a failure)
trace-cmd report "$dir/keyevents.dat" >keys.txt 2>&1
grep -q 'comm=hsctlafter' keys.txt || fail "the process that exited after the snapshot is not in keyevents.dat"

# 6. A socket left by a dead engine: the client says so; the next engine replaces it.
python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1])' "$sock"
ctl status >stale.txt 2>&1
rc=$?
((rc == 2)) && grep -q 'no engine answers' stale.txt || fail "stale socket: exit $rc, $(cat stale.txt)"
start_engine out2.txt "$engine" --rules "$profile"
grep -q "^engine: control channel $sock" out2.txt || fail "the stale socket was not replaced"
[[ $(stat -c %a "$sock") == 600 ]] || fail "the replacing socket has mode $(stat -c %a "$sock")"
ctl status --json | jq -e --argjson pid "$epid" '.pid == $pid' >/dev/null || fail "the new engine does not answer"
echo "ctl test: ok (snapshots $snap, $snap2; key events $k0 -> $k1)"
