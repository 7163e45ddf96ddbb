#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# A client of ipclab serve's control connection for the tests (frames of
# a 4-byte big-endian length and a JSON object; docs/remote.md), playing
# what ipclab run --peer would not: a guesser, a hostile cell request, a
# silent or dripping stranger. Loopback only. Each mode prints one line
# per event for the test to check; times are time.monotonic() seconds.
# Another user may not read this file where it lies: it can come on stdin
# (python3 - MODE ARGS <rproto.py).
#
#   rproto.py guess PORT TOKEN N [SRC]  N hellos with TOKEN, one after the
#       other: "SENT RECEIVED TYPE REASON" per attempt (from address SRC)
#   rproto.py cell PORT TOKEN SCHED CPU  a hello, then one cell asking for
#       SCHED and the server side on CPU (65536: none): "TYPE REASON"
#   rproto.py cellwait PORT TOKEN  a hello, then one tcp cell whose client
#       never comes: "ready PORT" (its measured port), then
#       "done STATUS SECONDS REASON" (seconds since ready)
#   rproto.py idle PORT N SECONDS  N connections that never say anything,
#       held SECONDS: "idle N" once all are under way
#   rproto.py drip PORT GAP BYTES  one connection, a byte each GAP seconds,
#       at most BYTES: "closed AFTER" when the other side hung up, else "held AFTER"
import json
import select
import socket
import struct
import sys
import time


def send(s, obj):
    b = json.dumps(obj).encode()
    s.sendall(struct.pack(">I", len(b)) + b)


def recv(s, timeout=30):
    s.settimeout(timeout)
    buf = b""
    while len(buf) < 4:
        c = s.recv(4 - len(buf))
        if not c:
            return {"type": "closed", "reason": ""}
        buf += c
    n = struct.unpack(">I", buf)[0]
    body = b""
    while len(body) < n:
        c = s.recv(n - len(body))
        if not c:
            return {"type": "closed", "reason": ""}
        body += c
    return json.loads(body)


def hello(token):
    return {"type": "hello", "proto": "ipclab-remote", "version": 1, "token": token}


def connect(port, src=None):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if src:
        s.bind((src, 0))
    s.connect(("127.0.0.1", port))
    return s


def guess(port, token, n, src=None):
    for _ in range(n):
        s = connect(port, src)
        t0 = time.monotonic()
        send(s, hello(token))
        m = recv(s)
        t1 = time.monotonic()
        print("%.6f %.6f %s %s" % (t0, t1, m.get("type"), m.get("reason", "")), flush=True)
        s.close()


def cell(port, token, sched, cpu):
    s = connect(port)
    send(s, hello(token))
    m = recv(s)
    if m.get("type") != "welcome":
        print("%s %s" % (m.get("type"), m.get("reason", "")))
        return
    send(s, {"type": "cell", "transport": "tcp", "pattern": "pingpong", "tp_opts": "",
             "pat_opts": "", "sched": sched, "size_bytes": 64, "count": 100, "warmup": 10,
             "duration_ns": 0, "clients": 1, "threads": False, "verify": False,
             "timeout_ns": 2000000000, "max_time_ns": 5000000000, "think": 0,
             "server_cpu": cpu})
    m = recv(s)
    print("%s %s" % (m.get("type"), m.get("reason", "")), flush=True)
    send(s, {"type": "bye"})
    s.close()


def cellwait(port, token):
    s = connect(port)
    send(s, hello(token))
    m = recv(s)
    if m.get("type") != "welcome":
        print("%s %s" % (m.get("type"), m.get("reason", "")))
        return
    send(s, {"type": "cell", "transport": "tcp", "pattern": "pingpong", "tp_opts": "",
             "pat_opts": "", "sched": "other", "size_bytes": 64, "count": 100, "warmup": 10,
             "duration_ns": 0, "clients": 1, "threads": False, "verify": False,
             "timeout_ns": 60000000000, "max_time_ns": 90000000000, "think": 0,
             "server_cpu": 65536})
    m = recv(s)
    if m.get("type") != "ready":
        print("%s %s" % (m.get("type"), m.get("reason", "")))
        return
    t0 = time.monotonic()
    print("ready %d" % m["port"], flush=True)
    m = recv(s, 120)
    print("%s %s %.1f %s" % (m.get("type"), m.get("status"), time.monotonic() - t0,
                             m.get("reason", "")), flush=True)
    send(s, {"type": "bye"})
    s.close()


def idle(port, n, secs):
    ss = []
    for _ in range(n):	# not waiting for each: a full listener queue holds none up
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setblocking(False)
        s.connect_ex(("127.0.0.1", port))
        ss.append(s)
    print("idle %d" % len(ss), flush=True)
    time.sleep(secs)
    for s in ss:
        s.close()


def drip(port, gap, nbytes):
    s = connect(port)
    t0 = time.monotonic()
    for _ in range(nbytes):
        r, _, _ = select.select([s], [], [], gap)
        if r:
            try:
                if not s.recv(64):
                    break
            except OSError:
                break
            continue
        try:
            s.send(b"\x00")
        except OSError:
            break
    else:
        print("held %.1f" % (time.monotonic() - t0), flush=True)
        return
    print("closed %.1f" % (time.monotonic() - t0), flush=True)


if __name__ == "__main__":
    a = sys.argv[1:]
    if a[0] == "guess":
        guess(int(a[1]), a[2], int(a[3]), a[4] if len(a) > 4 else None)
    elif a[0] == "cell":
        cell(int(a[1]), a[2], a[3], int(a[4]))
    elif a[0] == "cellwait":
        cellwait(int(a[1]), a[2])
    elif a[0] == "idle":
        idle(int(a[1]), int(a[2]), float(a[3]))
    elif a[0] == "drip":
        drip(int(a[1]), float(a[2]), int(a[3]))
