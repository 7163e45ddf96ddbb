#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# ipclab serve before authentication, on the loopback. Twenty connections
# of another local user (uid 65534 through setpriv when we are root) that
# never send a hello do not keep a client out: its run succeeds while they
# are held, and serve closes them after its hello deadline. While a
# session runs, a client with the right token is answered busy with the
# reason (whose session, for how long), one with a wrong token is told its
# token is wrong: the session slot is taken only after authentication.
# A client whose connect() times out (a listener whose queue is full)
# says "timed out connecting to HOST:PORT after N s".
. "$(dirname "$0")/../lib/common.sh"
command -v python3 >/dev/null || { echo "skip: needs python3"; exit 77; }
dir=$(mktemp -d)
srv= idle= lst=
trap 'for p in $srv $idle $lst; do kill $p 2>/dev/null; done; rm -rf "$dir"' EXIT
before=$(leftovers)
rp=$(cd "$(dirname "$0")/../lib" && pwd)/rproto.py
py=/usr/bin/python3
[ -x "$py" ] || py=$(command -v python3)
as_other=()
who="a process of our own uid"
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	as_other=(setpriv --reuid=65534 --regid=65534 --clear-groups)
	who="uid 65534"
fi
port=$(( 20000 + RANDOM % 20000 ))
export IPCLAB_TOKEN=hs-$RANDOM-$RANDOM-right-token

# a connect that times out (10 s, meanwhile the rest): a listener that
# never accepts, its queue full
lport=$((port + 1))
"$py" -c 'import socket, sys, time
l = socket.socket(); l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
l.bind(("127.0.0.1", int(sys.argv[1]))); l.listen(0)
c = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
print("full", flush=True); time.sleep(60)' $lport >"$dir/lst" 2>&1 &
lst=$!
for _ in $(seq 1 200); do grep -q full "$dir/lst" && break; sleep 0.05; done
timeout 60 "$IPCLAB" run --peer 127.0.0.1:$lport -t tcp -n 100 -q >/dev/null 2>"$dir/to.err" &
tocl=$!

"$IPCLAB" serve --listen 127.0.0.1:$port >"$dir/serve.out" 2>"$dir/serve.log" &
srv=$!
serve_listening "$dir/serve.log" $srv || { fail "serve did not listen: $(cat "$dir/serve.log")"; finish; }

# 20 silent connections of a stranger, then a client
"${as_other[@]}" "$py" - idle $port 20 60 <"$rp" >"$dir/idle" 2>&1 &
idle=$!
for _ in $(seq 1 200); do grep -q '^idle 20' "$dir/idle" && break; sleep 0.05; done
# until the kernel has them all connected (those a full queue drops stay unconnected)
for _ in $(seq 1 100); do
	[ "$(ss -Htn state established "dport = :$port" 2>/dev/null | wc -l)" -ge 20 ] && break
	sleep 0.05
done
if ! grep -q '^idle 20' "$dir/idle"; then
	fail "the stranger ($who) could not open 20 connections: $(cat "$dir/idle")"
elif "$IPCLAB" run --peer 127.0.0.1:$port -t tcp -n 1000 -q -f json -o "$dir/r1.json" 2>"$dir/r1.err"; then
	echo "ok   20 silent connections of $who: a client's run still succeeds"
else
	fail "20 silent connections of $who: the client's run failed: $(cat "$dir/r1.err")"
fi
# and they are closed at their deadline (5 s), not held
for _ in $(seq 1 300); do
	[ "$(grep -c 'no hello within' "$dir/serve.log")" -ge 20 ] && break
	sleep 0.05
done
n=$(grep -c 'no hello within' "$dir/serve.log")
[ "$n" -ge 20 ] && echo "ok   the silent connections closed by serve at their hello deadline ($n)" ||
	fail "silent connections closed by serve: $n of 20: $(tail -3 "$dir/serve.log")"
kill $idle 2>/dev/null
wait $idle 2>/dev/null
idle=

# a session runs: the right token is told why it is busy, a wrong one is wrong
"$IPCLAB" run --peer 127.0.0.1:$port -t tcp -d 4s -q >/dev/null 2>"$dir/long.err" &
long=$!
for _ in $(seq 1 200); do grep -q 'session open' <(tail -1 "$dir/serve.log") && break; sleep 0.05; done
"$IPCLAB" run --peer 127.0.0.1:$port -t tcp -n 100 -q >/dev/null 2>"$dir/busy.err"
rc=$?
if [ $rc = 1 ] && [ "$(wc -l <"$dir/busy.err")" = 1 ] && grep -q 'busy: .*the session of 127.0.0.1:[0-9]* has run for' "$dir/busy.err"; then
	echo "ok   busy, with the reason: $(cat "$dir/busy.err")"
else
	fail "a second client during a session: exit $rc, expected 1 and one line saying whose session: $(cat "$dir/busy.err")"
fi
IPCLAB_TOKEN=$IPCLAB_TOKEN-not "$IPCLAB" run --peer 127.0.0.1:$port -t tcp -n 100 -q >/dev/null 2>"$dir/wrong.err"
rc=$?
[ $rc = 2 ] && grep -q 'wrong or missing token' "$dir/wrong.err" &&
	echo "ok   a wrong token during a session: told so, not busy (exit 2)" ||
	fail "a wrong token during a session: exit $rc, expected 2 naming the token: $(cat "$dir/wrong.err")"
wait $long || fail "the session that ran meanwhile: $(cat "$dir/long.err")"
kill $srv
wait $srv 2>/dev/null
srv=

wait $tocl
rc=$?
if [ $rc = 1 ] && [ "$(wc -l <"$dir/to.err")" = 1 ] &&
   grep -q "timed out connecting to 127.0.0.1:$lport after [0-9]* s" "$dir/to.err"; then
	echo "ok   a connect that times out: $(cat "$dir/to.err")"
else
	fail "a connect that times out: exit $rc: $(cat "$dir/to.err")"
fi
kill $lst
wait $lst 2>/dev/null
lst=

left=$(new_leftovers "$before" "$(leftovers)")
[ -z "$left" ] || fail "left behind: $left"
finish
