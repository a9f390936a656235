#!/usr/bin/env bash
# detect-test.sh: a watched key session's trigger-detection instance: exists while recording with exactly the watched events, the session's filter, clock and settings; catches a crash long before the session's flush; its copies are fed to the triggers once and never counted or written; removed at stop, and when a killed engine left it.
# usage: detect-test.sh ENGINE PROFILE   (root; the profile is tests/ftrace/detect.yaml, instances hindsight_test_det_*)
# HS_TEST_START_TIMEOUT (s, default 90): how long the engine may take to start or to snapshot (sanitizer builds are slow).
set -uo pipefail
ulimit -c 0 # the crashes must not write core files
engine=$1 profile=$2
keys=hindsight_test_det_keys det=hindsight_test_det_keys_trg
instances=(hindsight_test_det_ring "$keys" "$det")

. "$(dirname "$0")/lib.sh"
test_setup
cleanup() {
	kill_engine
	remove_instances "${instances[@]}"
	rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "detect test: FAIL: $*" >&2; [[ -f $tmp/out.txt ]] && grep '^engine' "$tmp/out.txt" | tail -30; exit 1; }
[[ $(id -u) == 0 ]] || fail "must run as root"
command -v jq >/dev/null || { echo "detect test: SKIP: no jq"; exit 77; }
command -v trace-cmd >/dev/null || { echo "detect test: SKIP: no trace-cmd"; exit 77; }
[[ -f $tracing/options/copy_trace_marker ]] || { echo "detect test: SKIP: no copy_trace_marker (Linux 6.17+)"; exit 77; }
for i in "${instances[@]}"; do held "$i" && { echo "detect test: SKIP: $i belongs to a running engine"; exit 77; }; done
cd "$tmp" || exit 1

# Starts the engine (extra arguments passed on) into $1 and waits until it records; sets epid and dir.
start() {
	local out=$1
	shift
	start_engine "$out" "$engine" --rules "$profile" "$@"
}
folders() { snapshot_folders crash; }

start out.txt

# 1. The detection instance: only the watched event (ftrace:print, the frame trigger's, has no enable
#    file), the session's filter, clock, copy_trace_marker and self-exclusion; small, not overwriting.
d=$tracing/instances/$det
[[ -d $d ]] || fail "no detection instance $det while recording"
[[ $(cat "$d/set_event") == "signal:signal_deliver" ]] || fail "$det enables '$(cat "$d/set_event")', not only signal:signal_deliver"
want=$(cat "$tracing/instances/$keys/events/signal/signal_deliver/filter")
[[ $want == "sig == 11 || sig == 7" ]] || fail "the key session's filter is '$want'"
[[ $(cat "$d/events/signal/signal_deliver/filter") == "$want" ]] || fail "$det's filter is not the session's ($want)"
[[ $(cat "$d/trace_clock") == *"[mono]"* ]] || fail "$det's clock is not the session's mono"
[[ $(cat "$d/options/copy_trace_marker") == 1 ]] || fail "$det does not copy trace_marker writes as its session does"
[[ $(cat "$d/options/overwrite") == 0 ]] || fail "$det overwrites: a lost detection would not be counted"
[[ $(cat "$d/options/event-fork") == 1 ]] || fail "$det lacks event-fork (the engine's exclusion)"
grep -qw "$epid" "$d/set_event_notrace_pid" || fail "$det does not leave the engine (pid $epid) out"
kb=$(cat "$d/buffer_size_kb") session_kb=$(cat "$tracing/instances/$keys/buffer_size_kb")
((kb < session_kb)) || fail "$det's ring ($kb KB) is not smaller than the session's ($session_kb KB)"
[[ $(cat "$d/tracing_on") == 1 ]] || fail "$det is not tracing"
held "$det" || fail "the engine does not hold $det's lock"

# 2. A crash: the key session is flushed once an hour and its ring holds a page of filtered signals, so
#    only the detection instance can bring the SIGSEGV to the trigger while the engine records.
sh -c 'kill -SEGV $$' 2>/dev/null
for _ in $(seq $((limit * 10))); do
	(($(folders) >= 1)) && break
	kill -0 "$epid" 2>/dev/null || fail "engine exited while waiting for the crash snapshot"
	sleep 0.1
done
(($(folders) >= 1)) || fail "no crash snapshot while recording: the trigger did not see the SIGSEGV before the session's flush"
[[ -f $dir/keyevents.dat ]] && fail "the key session was flushed during the test (flush_interval_s 3600)"
sd=$(ls -d "$dir"/snapshots/[0-9]*-crash | head -1)
jq -e '.first_hit_ns > 0 and .detect_ns >= .first_hit_ns and (.detection_latency_ms | type == "number")' \
	"$sd/snapshot.json" >/dev/null || fail "$sd/snapshot.json lacks first_hit_ns, detect_ns or detection_latency_ms"
echo "crash detected $(jq -r .detection_latency_ms "$sd/snapshot.json") ms after it happened (the key session flushes every 3600 s)"
# Two more crashes: hits must count each once (the copy, not the streamed event too).
sh -c 'kill -SEGV $$' 2>/dev/null
sh -c 'kill -BUS $$' 2>/dev/null # streamed and copied, but no crash trigger hit (sig 7)
sh -c 'kill -SEGV $$' 2>/dev/null
sleep 1

# 3. Ctrl+C: the instance and its lock go; the counters count the streamed events, the triggers the copies.
kill -INT "$epid"
wait "$epid"
rc=$?
epid=
[[ $rc == 0 ]] || fail "engine exited $rc after SIGINT"
grep -q '^engine: DONE' out.txt || fail "no DONE line"
[[ -d $d ]] && fail "$det is still there after stop"
[[ -f /run/hindsight/$det.lock ]] && fail "$det's lock file is still there after a clean stop"
trace-cmd report "$dir/keyevents.dat" >keys.txt 2>/dev/null || fail "trace-cmd cannot read keyevents.dat"
events=$(grep -cE '\[[0-9]+\] +[0-9]+\.[0-9]+: ' keys.txt)
segv=$(grep -cE 'signal_deliver: +sig=11 ' keys.txt)
observed=$(jq -r .key_events_observed "$dir/run.json")
hits=$(jq -r '.triggers[] | select(.name == "crash") | .hits' "$dir/run.json")
lost=$(jq -r '.sessions[] | select(.instance == "'$keys'") | .trigger_events_lost' "$dir/run.json")
echo "keyevents.dat: $events events, $segv SIGSEGV deliveries; run.json: key_events_observed $observed, crash hits $hits, trigger_events_lost $lost"
((segv >= 3)) || fail "keyevents.dat holds $segv SIGSEGV deliveries, the test made 3"
((observed == events)) || fail "key_events_observed $observed != $events events in keyevents.dat (copies counted?)"
[[ $lost == 0 ]] || fail "the detection instance lost $lost events"
((hits == segv)) || fail "the crash trigger had $hits hits for $segv SIGSEGVs: each must be fed once (the copy)"

# 4. A killed engine leaves the instance; the next one removes it and makes its own.
start out2.txt
[[ -d $d ]] || fail "no detection instance on the second start"
kill -9 "$epid"
wait "$epid" 2>/dev/null
epid=
[[ -d $d ]] || fail "kill -9 removed $det (the test expects what a dead engine leaves)"
start out3.txt --duration-sec 2
grep -q "removed tracefs instance '$det' left by an engine" out3.txt || fail "the stale $det was not removed at start"
wait "$epid"
rc=$?
epid=
[[ $rc == 0 ]] || fail "the third engine exited $rc"
[[ -d $d ]] && fail "$det is still there after the third engine stopped"
echo "detect test: OK"
