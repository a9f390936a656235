#!/usr/bin/env python3
# ctl-clients.py: hostile and concurrent clients of an engine's control socket (ctl-test.sh); exit 1 on a wrong answer.
# usage: ctl-clients.py SOCKET   Each case prints one line; the engine must answer or hang up as docs/ctl.md says.
import json
import socket
import sys
import time

path = sys.argv[1]
failed = False


def conn():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)  # blocking, as engine ctl's: a full backlog waits for the loop's next accept
    s.settimeout(15)
    return s


def read_line(s):
    buf = b""
    while b"\n" not in buf:
        chunk = s.recv(65536)
        if not chunk:
            break
        buf += chunk
    return buf.split(b"\n", 1)[0]


def check(case, ok, detail):
    global failed
    print(("ok   " if ok else "FAIL ") + case + ": " + detail)
    failed |= not ok


# Not JSON: an error reply, and the connection still takes a good request after it.
s = conn()
s.sendall(b"this is not json\n")
r = json.loads(read_line(s))
check("malformed", r.get("ok") is False and r.get("code") == "malformed", json.dumps(r))
s.sendall(b'{"id":7,"cmd":"status"}\n')
r = json.loads(read_line(s))
check("after malformed", r.get("ok") is True and r.get("id") == 7 and "status" in r, "id %s" % r.get("id"))
s.close()

# JSON but not a request, and an unknown command.
for case, line, code in (("array", b"[1,2,3]\n", "malformed"), ("no cmd", b'{"id":1}\n', "malformed"),
                         ("unknown cmd", b'{"id":"a","cmd":"format-disk"}\n', "unknown"),
                         ("deep", b"[" * 100000 + b"\n", "too_long"), ("bad name", b'{"cmd":"snapshot","name":""}\n',
                                                                     "bad_name"),
                         ("nesting", b"[" * 1000 + b"]" * 1000 + b"\n", "malformed")):
    s = conn()
    try:
        s.sendall(line)
    except OSError:
        pass  # the engine may hang up while a too-long line is still being sent
    r = json.loads(read_line(s))
    check(case, r.get("ok") is False and r.get("code") == code, json.dumps(r)[:160])
    s.close()

# Longer than HS_CTL_MAX_REQUEST_BYTES without a newline: one error reply, then the end.
s = conn()
try:
    s.sendall(b'{"cmd":"status","pad":"' + b"x" * 10000)
except OSError:
    pass
r = json.loads(read_line(s))
check("oversized", r.get("code") == "too_long", json.dumps(r))
try:
    end = s.recv(100)
except ConnectionResetError:
    end = b""  # it closed with the rest of the line unread: a reset, as good as an end
check("oversized hang-up", end == b"", "the connection ends after the error")
s.close()

# Two clients at once, each with a request in flight; a third pipelines two requests.
a, b, c = conn(), conn(), conn()
a.sendall(b'{"id":1,"cmd":"status"}\n')
b.sendall(b'{"id":2,"cmd":"status"}\n')
c.sendall(b'{"id":3,"cmd":"status"}\n{"id":4,"cmd":"status"}\n')
ra, rb = json.loads(read_line(b)), json.loads(read_line(a))  # read in the other order
check("two clients", ra.get("id") == 2 and rb.get("id") == 1 and ra["ok"] and rb["ok"], "ids %s %s" % (ra.get("id"),
                                                                                                         rb.get("id")))
buf = b""
while buf.count(b"\n") < 2:
    chunk = c.recv(65536)
    if not chunk:
        break
    buf += chunk
ids = [json.loads(x).get("id") for x in buf.split(b"\n")[:2]]
check("pipelined", ids == [3, 4], "ids %s" % ids)
for x in (a, b, c):
    x.close()

# Disconnects mid-reply: many status requests, close without reading (the engine gets EPIPE, not SIGPIPE).
for _ in range(20):
    s = conn()
    s.sendall(b'{"cmd":"status"}\n' * 50)
    s.close()
s = conn()
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
s.sendall(b'{"cmd":"status"}\n' * 200)
time.sleep(0.3)
s.close()
# The engine is still there (a SIGPIPE would have killed it: connect is refused) and every slot is free again at
# once: eight clients, all of HS_CTL_MAX_CLIENTS, answered within 4 s; a slot a dead connection still held would
# keep one waiting for the 5 s idle drop, or for ever.
t0 = time.time()
try:
    after = [conn() for _ in range(8)]
    for i, x in enumerate(after):
        x.sendall(b'{"id":%d,"cmd":"status"}\n' % (200 + i))
    got = [json.loads(read_line(x) or b"{}").get("id") for x in after]
    for x in after:
        x.close()
except OSError as e:
    got = ["%s: %s" % (type(e).__name__, e)]
took = time.time() - t0
check("disconnect mid-reply", got == list(range(200, 208)) and took < 4,
      "21 connections closed with replies unread; then 8 clients answered in %.2f s, ids %s" % (took, got))

# Connects and never writes: the engine hangs up after HS_CTL_CLIENT_IDLE_MS (5 s) and serves others meanwhile.
idle = [conn() for _ in range(3)]
t0 = time.time()
s = conn()
s.sendall(b'{"id":9,"cmd":"status"}\n')
r = json.loads(read_line(s))
check("served beside idle ones", r.get("id") == 9 and time.time() - t0 < 3, "%.2f s" % (time.time() - t0))
s.close()
idle[0].settimeout(20)
r = json.loads(read_line(idle[0]))
waited = time.time() - t0
check("never writes", r.get("code") == "timeout" and 4 < waited < 12, "%s after %.1f s" % (r.get("code"), waited))
for x in idle:
    x.close()

# More connections than slots (HS_CTL_MAX_CLIENTS 8): the later ones wait their turn, all are answered.
many = [conn() for _ in range(12)]
for i, x in enumerate(many):
    x.sendall(b'{"id":%d,"cmd":"status"}\n' % (100 + i))
got = [json.loads(read_line(x)).get("id") for x in many]
check("more than 8 clients", got == list(range(100, 112)), "ids %s..%s" % (got[0], got[-1]))
for x in many:
    x.close()

sys.exit(1 if failed else 0)
