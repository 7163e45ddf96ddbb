#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# ipclab serve under a flood of wrong tokens from many addresses, on the
# loopback (Linux routes all of 127/8 to lo). A flood opens 60 connections
# a second, each from a fresh source address 127.0.X.Y (X from 1: not the
# client's 127.0.0.0/24), each sending a hello with a wrong token; while it
# runs, `ipclab run --peer` with the right token runs 3 times, and all 3
# get in. Every flood connection is told why it was dropped (a "refused"
# frame with a reason, never a bare close). The flood is bounded: at most
# 40 s and 2400 connections, each answer awaited 12 s at most. A client
# told it is throttled or that serve is busy prints why and exits 1 (try
# again), one told its token is wrong exits 2.
. "$(dirname "$0")/../lib/common.sh"
command -v python3 >/dev/null || { echo "skip: needs python3"; exit 77; }
dir=$(mktemp -d)
srv= fl=
trap 'for p in $srv $fl; do kill $p 2>/dev/null; done; rm -rf "$dir"' EXIT
before=$(leftovers)
port=$(( 20000 + RANDOM % 20000 ))
tok=flood-$RANDOM-$RANDOM-right-token
export IPCLAB_TOKEN=$tok

cat >"$dir/flood.py" <<'PY'
# flood PORT TOKEN RATE STOPFILE NETS SILENT: first SILENT connections
# from 127.0.250.1 that send nothing; then RATE connections a second, each
# from a fresh 127.0.X.Y (X from 1 to NETS) with a wrong token, until
# STOPFILE exists (15 s at most). One line per connection: "START OUTCOME
# REASON"; first "flooding" once a second's worth is under way.
import errno, json, os, random, selectors, socket, struct, sys, time
port, token, rate, stop = int(sys.argv[1]), sys.argv[2], float(sys.argv[3]), sys.argv[4]
nets, silent = int(sys.argv[5]), int(sys.argv[6])
srcs = ["127.0.%d.%d" % (x, y) for x in range(1, nets + 1) for y in range(1, 255)]
random.shuffle(srcs)
hello = json.dumps({"type": "hello", "proto": "ipclab-remote", "version": 1,
                    "token": "wrong-" + token}).encode()
frame = struct.pack(">I", len(hello)) + hello
sel = selectors.DefaultSelector()
conns, out, said = {}, [], False
t0 = time.monotonic()

def done(s, outcome, reason=""):
    c = conns.pop(s)
    sel.unregister(s)
    s.close()
    out.append("%.3f %s %s" % (c["t"], outcome, reason))

def step(s, ev):
    c = conns[s]
    try:
        if not c["sent"]:
            s.send(frame)	# small: all of it fits the socket buffer
            c["sent"] = True
            sel.modify(s, selectors.EVENT_READ)
            return
        b = s.recv(65536)
    except OSError as e:
        done(s, "error", errno.errorcode.get(e.errno, str(e.errno)))
        return
    if not b:
        done(s, "closed")
        return
    c["buf"] += b
    if len(c["buf"]) >= 4:
        n = struct.unpack(">I", c["buf"][:4])[0]
        if len(c["buf"]) >= 4 + n:
            m = json.loads(c["buf"][4:4 + n])
            done(s, m.get("type", "?"), m.get("reason", ""))

for _ in range(silent):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind(("127.0.250.1", 0))
    s.connect(("127.0.0.1", port))
    s.setblocking(False)
    conns[s] = {"t": time.monotonic(), "sent": True, "buf": b""}
    sel.register(s, selectors.EVENT_READ)
n = 0
while True:
    now = time.monotonic()
    flooding = now - t0 < 40 and n < 2400 and not os.path.exists(stop)
    while flooding and n < (now - t0) * rate:	# catch up when behind
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setblocking(False)
        s.bind((srcs[n % len(srcs)], 0))
        s.connect_ex(("127.0.0.1", port))
        conns[s] = {"t": time.monotonic(), "sent": False, "buf": b""}
        sel.register(s, selectors.EVENT_WRITE)
        n += 1
    if not said and n >= rate:
        print("flooding", flush=True)
        said = True
    if not flooding and not conns:
        break
    for k, ev in sel.select(0.005):
        step(k.fileobj, ev)
    for s in [s for s, c in conns.items() if time.monotonic() - c["t"] > 12]:
        done(s, "unanswered")
print("\n".join(out), flush=True)
print("end %.3f %d" % (time.monotonic() - t0, n + silent), flush=True)
PY

# phase WHAT NETS SILENT: serve, a flood of 60 a second from X = 1..NETS
# (and SILENT silent connections), 3 runs with the right token meanwhile
phase() {
	local what=$1 nets=$2 silent=$3 ok=0 i t0 t1
	rm -f "$dir/stop" "$dir"/r?.json
	"$IPCLAB" serve --listen 127.0.0.1:$port >"$dir/serve.out" 2>"$dir/serve.log" &
	srv=$!
	serve_listening "$dir/serve.log" $srv || { fail "$what: serve did not listen: $(cat "$dir/serve.log")"; return; }
	python3 "$dir/flood.py" $port "$tok" 60 "$dir/stop" $nets $silent >"$dir/flood" 2>&1 &
	fl=$!
	# (30 s at most: Python's start and a served ASan build under CI's load
	# took more than 10 once, with nothing printed yet)
	for _ in $(seq 1 600); do grep -q '^flooding' "$dir/flood" && break; sleep 0.05; done
	grep -q '^flooding' "$dir/flood" || fail "$what: the flood did not start: $(head -3 "$dir/flood")"
	t0=$(python3 -c 'import time; print(time.monotonic())')
	for i in 1 2 3; do
		if timeout 30 "$IPCLAB" run --peer 127.0.0.1:$port -t tcp -n 200 -q -f json \
			-o "$dir/r$i.json" 2>"$dir/r$i.err"; then	# exit 0: its cell ran, ok
			ok=$((ok + 1))
		else
			echo "     run $i: $(cat "$dir/r$i.err")"
		fi
	done
	t1=$(python3 -c 'import time; print(time.monotonic())')
	touch "$dir/stop"
	wait $fl
	fl=
	[ $ok = 3 ] && echo "ok   $what: the right token got in $ok times of 3" ||
		fail "$what: the right token got in $ok times of 3"
	kill $srv
	wait $srv 2>/dev/null
	srv=
	port=$((port + 1))
	python3 - "$dir/flood" "$t0" "$t1" $silent <<'PY' || fail "$what: the flood's connections (above); serve's log: $(tail -5 "$dir/serve.log")"
import collections, sys
lines = [l.split(None, 2) for l in open(sys.argv[1]) if l[0].isdigit()]
end = [l.split() for l in open(sys.argv[1]) if l.startswith("end ")]
assert end, "the flood did not end"
secs, n = float(end[0][1]), int(end[0][2])
assert len(lines) == n, "%d connections, %d outcomes" % (n, len(lines))
r0, r1 = float(sys.argv[2]), float(sys.argv[3])
during = sum(1 for l in lines if r0 <= float(l[0]) <= r1)
print("     flood: %d connections in %.1f s, %d of them during the 3 runs (%.1f s, %.0f a second)" % (n, secs, during, r1 - r0, during / (r1 - r0)))
assert during >= 30 * (r1 - r0), "the flood fell behind during the runs: the test proves nothing"
kinds = collections.Counter((l[1], (l[2] if len(l) > 2 else "").split(":")[0].strip()) for l in lines)
print("     outcomes: %s" % (", ".join("%s %r: %d" % (a, b, c) for (a, b), c in kinds.most_common())))
untold = [l for l in lines if l[1] != "refused" or len(l) < 3 or not l[2].strip()]
assert not untold, "%d of %d flood connections were dropped without a reason, e.g. %s" % (len(untold), n, untold[:3])
print("ok   every one of the flood's %d connections was told why it was dropped" % n)
if int(sys.argv[4]):	# hellos waited their turn, and silent ones made room
    why = {b for (a, b) in kinds}
    assert "throttled" in why and "serve is busy" in why, "expected some throttled and some busy: %s" % why
    print("ok   of them, hellos throttled while others waited their turn, and silent ones dropped to make room")
PY
}

phase "a flood from fresh addresses of 254 networks" 254 0
phase "a flood from fresh addresses of 4 networks, 40 silent connections of one address" 4 40

# the client prints a refusal's reason in one line: exit 1 when the
# server is busy or throttles (try again), 2 for a wrong token (a server
# of our own that answers every hello with REASON)
refusal() {
	local want=$1 reason=$2 rc
	python3 -c 'import json, socket, struct, sys
l = socket.socket(); l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
l.bind(("127.0.0.1", int(sys.argv[1]))); l.listen(1); print("up", flush=True)
l.settimeout(30); c, _ = l.accept(); c.settimeout(10); c.recv(65536)
b = json.dumps({"type": "refused", "reason": sys.argv[2]}).encode()
c.sendall(struct.pack(">I", len(b)) + b); c.close()' $port "$reason" >"$dir/fake" 2>&1 &
	fl=$!
	for _ in $(seq 1 200); do grep -q up "$dir/fake" && break; sleep 0.05; done
	timeout 30 "$IPCLAB" run --peer 127.0.0.1:$port -t tcp -n 100 -q >/dev/null 2>"$dir/ref.err"
	rc=$?
	wait $fl
	fl=
	port=$((port + 1))
	[ $rc = "$want" ] && [ "$(wc -l <"$dir/ref.err")" = 1 ] &&
		grep -qF "refused the connection: $reason" "$dir/ref.err" &&
		echo "ok   told '${reason%%:*}': exit $rc: $(cat "$dir/ref.err")" ||
		fail "told '$reason': exit $rc (expected $want with one line): $(cat "$dir/ref.err")"
}
refusal 1 "throttled: 5 wrong tokens in a row from this address; its next hello is checked in 3.6 s"
refusal 1 "serve is busy: 63 connections from other addresses are in their handshake, and this one sent no hello in 4.2 s; try again"
refusal 2 "wrong or missing token (give the server's token with --token-file, IPCLAB_TOKEN or --token)"

left=$(new_leftovers "$before" "$(leftovers)")
[ -z "$left" ] || fail "left behind: $left"
finish
