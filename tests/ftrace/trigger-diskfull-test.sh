#!/usr/bin/env bash
# trigger-diskfull-test.sh: a triggered snapshot on a full disk fails cleanly (message, no folder under a final name, run.json says so) and recording goes on; the next one, with room again, is complete.
# usage: trigger-diskfull-test.sh ENGINE PROFILE   (root; tests/ftrace/triggers.yaml, instances hindsight_test_trg_*; the test mounts and unmounts a 4 MB tmpfs)
# HS_TEST_START_TIMEOUT (s, default 90): how long the engine may take to start (sanitizer builds are slow).
set -uo pipefail
engine=$1 profile=$2
instances=(hindsight_test_trg_ring hindsight_test_trg_keys hindsight_test_trg_keys_trg)
. "$(dirname "$0")/lib.sh"
test_setup
mnt=$tmp/disk

cleanup() {
	kill_engine
	remove_instances "${instances[@]}"
	cd /
	mountpoint -q "$mnt" && umount "$mnt"
	rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "trigger diskfull test: FAIL: $*" >&2; [[ -f $tmp/out.txt ]] && grep '^engine' "$tmp/out.txt" | tail -25; exit 1; }
[[ $(id -u) == 0 ]] || fail "must run as root"
command -v jq >/dev/null || { echo "SKIP: no jq"; exit 77; }
mkdir "$mnt" && mount -t tmpfs -o size=4m,mode=0700 hs_trgdiskfull "$mnt" || fail "cannot mount a tmpfs"
cd "$mnt" || exit 1

start_engine "$tmp/out.txt" "$engine" --rules "$profile"
# Fill the disk to the last block.
dd if=/dev/zero of="$mnt/filler" bs=64k status=none 2>/dev/null
kill -USR1 "$epid"
for _ in $(seq $((limit * 10))); do
	grep -qE '^engine: trigger manual: snapshot 001 FAILED|^engine: trigger manual fired' "$tmp/out.txt" && break
	kill -0 "$epid" 2>/dev/null || fail "engine exited on a full disk"
	sleep 0.1
done
grep -E '^engine: trigger manual' "$tmp/out.txt"
grep -q '^engine: trigger manual: snapshot 001 FAILED' "$tmp/out.txt" || fail "no clear failure for a snapshot on a full disk"
grep -q 'the ring keeps its events' "$tmp/out.txt" || fail "the ring was drained for a snapshot the disk could not take"
[[ -e $dir/snapshots/001-manual ]] && fail "a failed snapshot left a folder under its final name"
ls -A "$dir/snapshots" 2>/dev/null | grep -q partial && fail "a .partial folder was left: $(ls -A "$dir/snapshots")"
# Room again: the next request makes a complete snapshot.
rm -f "$mnt/filler"
kill -USR1 "$epid"
for _ in $(seq $((limit * 10))); do
	[[ -f $dir/snapshots/002-manual/snapshot.json ]] && break
	kill -0 "$epid" 2>/dev/null || fail "engine exited"
	sleep 0.1
done
[[ -f $dir/snapshots/002-manual/snapshot.json ]] || fail "no complete snapshot once there was room again"
kill -INT "$epid"
wait "$epid"
rc=$?
epid=
[[ $rc == 0 ]] || fail "engine exited $rc"
jq -e '.snapshots | length == 2 and (.[0].complete | not) and .[0].deleted == "failed" and .[1].complete' \
	"$dir/run.json" >/dev/null || fail "run.json does not list the failed and the complete snapshot: $(jq -c .snapshots "$dir/run.json")"
echo "trigger diskfull test: OK"
