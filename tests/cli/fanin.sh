#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Fan-in: a server with several clients waits on all of them at once where
# the transport has a pollable descriptor (serve "ready"; "ready-spin"
# where it can also tell readiness without sleeping, ring-ipc: it spins
# over every client first, -O serve=epoll keeps the plain wait), each in
# turn where it has none or with -O serve=in-turn (serve "in-turn"), and one
# client is always served in turn. Either way every client's every message
# is served and checked (--verify), in process and thread mode, by count and
# by duration; a killed client is still reported by name.
. "$(dirname "$0")/../lib/common.sh"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
before=$(leftovers)

run_json() {
	"$IPCLAB" run "$@" -q -f json -o "$dir/r.json" 2>"$dir/err" || fail "ipclab run $*: $(tail -n 2 "$dir/err")"
}
# expect SERVE MSGS: every result ok, served that way, with that many messages
expect() {
	python3 - "$dir/r.json" "$1" "$2" <<'PY' || fail "$3"
import json, sys
rs = json.load(open(sys.argv[1]))["results"]
want, msgs = sys.argv[2], sys.argv[3]
for r in rs:
    assert r["status"] == "ok", (r["transport"], r.get("reason"))
    assert r["metrics"]["serve"] == want, (r["transport"], r["pattern"], r["metrics"]["serve"], want)
    if msgs != "-":
        assert r["metrics"]["msgs"] == int(msgs), (r["transport"], r["pattern"], r["metrics"]["msgs"])
PY
}

for e in process thread; do
	run_json -t pipe,unix-stream,posix-mq -p pingpong,stream --clients 4 -n 2000 -e $e --verify
	expect ready 8000 "pollable transports, 4 clients, $e: not served ready with every message"
	run_json -t pipe,unix-stream -p pingpong,stream --clients 4 -n 2000 -e $e -O serve=in-turn
	expect in-turn 8000 "-O serve=in-turn, $e"
	run_json -t pipe -p pingpong,stream --clients 3 -d 200ms -e $e
	expect ready - "by duration, $e"
done
run_json -t pipe -p pingpong,stream -n 2000
expect in-turn 2000 "one client is served in turn"
if "$IPCLAB" list | grep -q '^  ring '; then
	run_json -t ring -p pingpong --clients 3 -n 2000
	expect in-turn 6000 "ring (no pollable descriptor) falls back to in turn"
fi
if "$IPCLAB" list | grep -q '^  ring-ipc '; then
	# a readiness check without sleeping: spin over every client, then epoll
	for e in process thread; do
		run_json -t ring-ipc -p pingpong,stream --clients 4 -n 2000 -e $e --verify
		expect ready-spin 8000 "ring-ipc, 4 clients, $e: not served ready-spin with every message"
	done
	run_json -t ring-ipc -p pingpong,stream --clients 3 -n 2000 -O fanin_spin=0 --verify
	expect ready-spin 6000 "ring-ipc, fanin_spin=0 (arm and sleep at once)"
	run_json -t ring-ipc -p pingpong,stream --clients 3 -n 2000 -O serve=epoll --verify
	expect ready 6000 "ring-ipc, -O serve=epoll: the plain epoll wait"
	run_json -t ring-ipc -p pingpong --clients 3 -d 200ms
	expect ready-spin - "ring-ipc by duration"
fi
run_json -t pipe -p pingpong -O serve=epoll --clients 3 -n 2000
expect ready 6000 "-O serve=epoll on a transport without a readiness check is the same as auto"
run_json -t pipe -p stream -O dir=s2c --clients 3 -n 2000
expect in-turn 6000 "s2c stream: the server only sends"

# a client killed mid-run: the report names it, the server does not hang
"$IPCLAB" run -t pipe -p pingpong --clients 3 -n 100M -q 2>"$dir/err" >/dev/null &
pid=$!
# the endpoints in the order they were forked: server, clients 0, 1, 2
# (polled for, 5 s at most)
for _ in $(seq 500); do
	kids=$(ps -o pid=,comm= --ppid $pid --sort=start_time 2>/dev/null | awk '$2 == "ipclab" {print $1}')
	[ "$(echo "$kids" | grep -c .)" -ge 4 ] && break
	sleep 0.01
done
victim=$(echo "$kids" | sed -n 3p)
[ -n "$victim" ] && kill -9 "$victim"
wait $pid
rc=$?
[ $rc = 1 ] && grep -q "client 1 (pid $victim) died" "$dir/err" ||
	fail "killed client under fan-in: exit $rc: $(head -c 300 "$dir/err")"

[ -z "$(new_leftovers "$before" "$(leftovers)")" ] || fail "left behind: $(new_leftovers "$before" "$(leftovers)")"
finish
