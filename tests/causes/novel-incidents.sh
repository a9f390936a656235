#!/usr/bin/env bash
# novel-incidents.sh: a manual check (not a CTest) that the verdicts name cause and culprit on incidents the suite never makes.
# usage: sudo tests/causes/novel-incidents.sh BUILD_DIR [WORK_DIR]
#
# The scenario suite (causes-test.sh) uses its own C game and culprits; this one records with the shipped
# rules/stutter.yaml (only run.dir changed) a Python frame loop at 90 Hz that names itself `orbitview` by prctl
# after its exec, and injects four things with programs the suite does not use (perl culprits renamed with $0):
# a SCHED_FIFO hog `texbake` for 220 ms on the loop's CPU, SIGSTOP from `syswatch` for 350 ms, an flock held 300 ms
# by `indexer` (not a futex), and 3.5 s of the loop's own computing (a hang while it lasts). It prints each
# snapshot's verdict; read them: each should name the mechanism and the culprit (2026-12-04: all four did, after
# three fixes it found). Needs root, python3, perl, chrt, taskset; about 3 minutes; takes the machine lock.
set -uo pipefail
build=$(cd "${1:?usage: novel-incidents.sh BUILD_DIR [WORK_DIR]}" && pwd)
root=$(cd "$(dirname "$0")/../.." && pwd)
work=${2:-$(mktemp -d /tmp/hs-novel.XXXXXX)}
mkdir -p "$work/runs"
rules=$root/rules/.novel-$$.yaml # beside stutter.yaml: its includes are relative
trap 'rm -f "$rules" "$work"/*.go; [[ -n ${E:-} ]] && kill -INT $E 2>/dev/null' EXIT
sed "s|dir: logs/runs|dir: $work/runs|" "$root/rules/stutter.yaml" >"$rules"
cat >"$work/game.py" <<'PY'
import ctypes, os, sys, time, fcntl
work, seconds = sys.argv[1], float(sys.argv[2])
ctypes.CDLL(None).prctl(15, b"orbitview", 0, 0, 0)
os.sched_setaffinity(0, {1})
m = open("/sys/kernel/tracing/trace_marker", "w", buffering=1)
pid = os.getpid()
open(f"{work}/game.pid", "w").write(str(pid))
def work_for(sec):
    t = time.monotonic() + sec
    while time.monotonic() < t:
        pass
period, nxt = 1 / 90, time.monotonic()
end = nxt + seconds
while time.monotonic() < end:
    m.write(f"B|{pid}|DrawFrame\n")
    work_for(0.003)
    if os.path.exists(f"{work}/lock.go"):
        os.unlink(f"{work}/lock.go")
        fd = os.open(f"{work}/x.lock", os.O_RDWR | os.O_CREAT)
        fcntl.flock(fd, fcntl.LOCK_EX)
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
    if os.path.exists(f"{work}/freeze.go"):
        os.unlink(f"{work}/freeze.go")
        work_for(3.5)
    m.write(f"E|{pid}\n")
    nxt += period
    d = nxt - time.monotonic()
    if d > 0:
        time.sleep(d)
    else:
        nxt = time.monotonic()
PY
exec 9>/tmp/hs-root.lock
flock 9
"$build/engine/engine" --rules "$rules" --quiet >"$work/engine.log" 2>&1 &
E=$!
sleep 6
python3 "$work/game.py" "$work" 170 &
G=$!
sleep 20 # past stutter.yaml's 10 s warm-up and the frame median's 120 frames
echo "$(date +%T) SCHED_FIFO hog texbake, 220 ms on CPU 1"
taskset -c 1 chrt -f 30 perl -e '$0="texbake"; use Time::HiRes qw(time); $e=time+0.22; while(time<$e){}'
sleep 35 # frame-hitch's cool-down is 30 s
gp=$(cat "$work/game.pid")
echo "$(date +%T) SIGSTOP from syswatch, 350 ms"
perl -e '$0="syswatch"; use Time::HiRes qw(sleep); kill "STOP", '"$gp"'; sleep 0.35; kill "CONT", '"$gp"';'
sleep 35
echo "$(date +%T) flock held by indexer, 300 ms"
perl -e '$0="indexer"; use Fcntl qw(:flock); use Time::HiRes qw(sleep); open(F,">>'"$work"'/x.lock"); flock(F,LOCK_EX); open(G,">'"$work"'/lock.go"); close G; sleep 0.3; flock(F,LOCK_UN);'
sleep 35
echo "$(date +%T) 3.5 s of the loop's own computing"
touch "$work/freeze.go"
wait $G
sleep 8 # the last reports
kill -INT $E
wait $E
E=
for d in "$work"/runs/*/snapshots/*/; do
	echo "== ${d#"$work"/runs/}"
	sed -n 2p "$d/report.txt"
done
echo "run folder: $(ls -d "$work"/runs/*)"
