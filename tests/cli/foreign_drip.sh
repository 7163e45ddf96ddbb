#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A stranger on the measured port of a cell between hosts, dripping one
# byte every 1.8 s (another local user: uid 65534 through setpriv when we
# are root). Each hello must be whole within its deadline (2 s), however
# it trickles in, and hellos are read side by side:
#  - a cell whose client never comes (asked for over the control
#    connection by tests/lib/rproto.py): the stranger is closed by its
#    hello deadline and the cell fails on its own deadline (10 s, "0 of 1
#    clients"), not when the stranger stops dripping (24 bytes: 43 s);
#  - a cell whose stranger came first (foreign_hook.so holds serve's cell
#    right after its listen() until the kernel queued the stranger): the
#    client's run succeeds with verified data, the stranger closed.
. "$(dirname "$0")/../lib/common.sh"
command -v python3 >/dev/null || { echo "skip: needs python3"; exit 77; }
SHIM=${FOREIGN_HOOK:-$(dirname "$IPCLAB")/tests/cli/foreign_hook.so}
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0
dir=$(mktemp -d)
srv= drip=
trap 'for p in $srv $drip; do kill $p 2>/dev/null; done; rm -rf "$dir"' EXIT
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
export IPCLAB_TOKEN=drip-$RANDOM-$RANDOM-the-token

# start_serve [ENV...]: serve on 127.0.0.1:$port, until it says it listens
start_serve() {
	env "$@" "$IPCLAB" serve --listen 127.0.0.1:$port >"$dir/serve.out" 2>"$dir/serve.log" &
	srv=$!
	for _ in $(seq 1 200); do
		grep -q 'listening on' "$dir/serve.log" && return 0
		kill -0 $srv 2>/dev/null || break
		sleep 0.05
	done
	fail "serve did not listen: $(cat "$dir/serve.log")"
	return 1
}
stop_serve() { kill $srv 2>/dev/null; wait $srv 2>/dev/null; srv=; port=$((port + 1)); }
# the accept queue of the listener on 127.0.0.1:PORT (hex), from /proc/net/tcp
queued() {
	awk -v a="$(printf '0100007F:%04X' "$1")" '$2 == a && $4 == "0A" { split($5, q, ":"); print q[2]; exit }' /proc/net/tcp
}

# 1. no client: the cell ends on its own deadline, the stranger on its hello's
if start_serve; then
	coproc CW { timeout 90 python3 "$rp" cellwait $port "$IPCLAB_TOKEN" 2>&1; }
	read -t 30 -r what mport <&"${CW[0]}"
	if [ "$what" != ready ]; then
		fail "no cell: $what $mport"
	else
		"${as_other[@]}" "$py" - drip "$mport" 1.8 24 <"$rp" >"$dir/drip1" 2>&1 &
		drip=$!
		read -t 80 -r done status secs reason <&"${CW[0]}"
		wait $drip
		drip=
		if [ "$done" = done ] && [ "$status" = failed ] && [[ $reason == *"0 of 1 clients connected within 10 s"* ]] &&
		   python3 -c 'import sys; sys.exit(not float(sys.argv[1]) < 25)' "$secs"; then
			echo "ok   a dripping stranger ($who), no client: the cell failed after ${secs} s (its 10 s deadline): $reason"
		else
			fail "a dripping stranger, no client: the cell's answer: $done $status $secs $reason"
		fi
		read -r how after <"$dir/drip1"
		[ "$how" = closed ] && python3 -c 'import sys; sys.exit(not float(sys.argv[1]) < 8)' "$after" &&
			echo "ok   the dripping stranger closed after $after s (its hello's deadline: 2 s)" ||
			fail "the dripping stranger: $how after $after s (expected closed within the 2 s hello deadline and a margin)"
	fi
	stop_serve
fi

# 2. the stranger first in the queue, dripping; then the client
if [ ! -r "$SHIM" ]; then
	echo "skip: $SHIM not built (make tests): the stranger-first case"
else
	mkfifo "$dir/req" "$dir/ack"
	exec 4<>"$dir/req" 5<>"$dir/ack"
	if start_serve LD_PRELOAD="$SHIM" IPCLAB_FOREIGN_HOOK="$dir" IPCLAB_FOREIGN_HOOK_SKIP=$port; then
		"$IPCLAB" run --peer 127.0.0.1:$port -t tcp -p pingpong -n 2000 --verify -q -f json \
			-o "$dir/r2.json" 2>"$dir/r2.err" &
		cpid=$!
		if read -t 30 -r proto mport <&4; then
			"${as_other[@]}" "$py" - drip "$mport" 1.8 24 <"$rp" >"$dir/drip2" 2>&1 &
			drip=$!
			for _ in $(seq 1 600); do
				q=$(queued "$mport")
				[ -n "$q" ] && [ $((16#$q)) -gt 0 ] && break
				sleep 0.05
			done
			[ -n "$q" ] && [ $((16#$q)) -gt 0 ] || fail "the kernel never queued the stranger on port $mport"
		else
			fail "serve's cell never reached its listen: $(cat "$dir/serve.log")"
		fi
		echo go >&5
		wait $cpid
		rc=$?
		if [ $rc = 0 ] && python3 - "$dir/r2.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
assert r["status"] == "ok", r
assert r["metrics"]["msgs"] >= 2000, r["metrics"]
PY
		then
			echo "ok   a dripping stranger ($who) first on the measured port: the cell ran, data verified"
		else
			fail "a dripping stranger first on the measured port: exit $rc: $(head -c 300 "$dir/r2.err")"
		fi
		[ -n "$drip" ] && wait $drip
		drip=
		read -r how after <"$dir/drip2"
		[ "$how" = closed ] && echo "ok   that stranger closed after $after s" ||
			fail "that stranger: $how after $after s"
		stop_serve
	fi
	exec 4>&- 5>&-
fi

left=$(new_leftovers "$before" "$(leftovers)")
[ -z "$left" ] || fail "left behind: $left"
finish
