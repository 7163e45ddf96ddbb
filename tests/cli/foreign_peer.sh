#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A foreign peer on the loopback ports. While a tcp or udp cell is being
# set up, another local user (uid 65534 through setpriv when we are root,
# else just another process) connects to the server's listening port and
# sends a hello claiming to be client 0 (tcp), or sends a datagram to the
# server's socket (udp). An LD_PRELOAD helper (foreign_hook.so) holds
# ipclab right after that listen()/bind(); the test lets it go only once the
# kernel holds the foreign connection (the listener's accept queue in
# /proc/net/tcp) or datagram (the socket's receive queue in /proc/net/udp).
# The cell must still complete with verified data from its own client, and
# the foreign peer must be counted in the result's settings
# (foreign_connections, foreign_datagrams). nng-tcp (pair0 keeps its first
# peer): a stranger that does not speak nng's protocol is dropped by nng and
# the cell completes; one that does, and sends a wrong hello, fails the cell
# (exit 1, the reason names it) and nothing is measured.
. "$(dirname "$0")/../lib/common.sh"

SHIM=${FOREIGN_HOOK:-$(dirname "$IPCLAB")/tests/cli/foreign_hook.so}
[ -r "$SHIM" ] || { echo "skip: $SHIM not built (make tests)"; exit 77; }
command -v python3 >/dev/null || { echo "skip: needs python3"; exit 77; }
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0
as_other=()
who="a process of our own uid"
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	as_other=(setpriv --reuid=65534 --regid=65534 --clear-groups)
	who="uid 65534"
fi

# queued PROTO PORT: the queue of 127.0.0.1:PORT in /proc/net/PROTO: a tcp
# listener's accept queue, a udp socket's receive queue (bytes), in hex.
queued() {
	local want
	want=$(printf '0100007F:%04X' "$2")
	awk -v a="$want" -v proto="$1" \
		'NR > 1 && $2 == a && (proto == "udp" || $4 == "0A") { split($5, q, ":"); print q[2]; exit }' \
		"/proc/net/$1"
}

# the other user may not reach a python3 of ours (e.g. one under /root)
stranger_pid=
py=/usr/bin/python3
[ -x "$py" ] || py=$(command -v python3)

# foreign PROTO PORT: play the other local user.
foreign() {
	case $1 in
	sp)	# nng's SP header for pair0, then a message: a 20-byte wrong hello,
		# the connection held open a while
		"${as_other[@]}" "$py" -c 'import socket, struct, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(b"\x00SP\x00\x00\x10\x00\x00" + struct.pack(">Q", 20) + bytes(20))
time.sleep(5)' "$2" &
		stranger_pid=$! ;;
	tcp)	# the hello ipclab's client 0 used to send: magic "iplb", id 0
		"${as_other[@]}" bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$0" &&
			printf "\x62\x6c\x70\x69\x00\x00\x00\x00" >&3' "$2" ;;
	udp)	"${as_other[@]}" bash -c 'printf "a foreign datagram" >"/dev/udp/127.0.0.1/$0"' "$2" ;;
	esac
}

# run_case TRANSPORT ENDPOINTS PATTERN KEY [STRANGER]: KEY "fail" expects
# the cell to fail; STRANGER replaces the hook's protocol (sp)
run_case() {
	local tp=$1 ep=$2 pat=$3 key=$4 stranger=${5:-} d proto="" port="" q="" rc what
	what="$tp $ep $pat, foreign peer as $who"
	d=$(mktemp -d)
	mkfifo "$d/req" "$d/ack"
	exec 4<>"$d/req" 5<>"$d/ack"	# read-write: neither open blocks
	IPCLAB_FOREIGN_HOOK=$d LD_PRELOAD=$SHIM "$IPCLAB" run -t "$tp" -e "$ep" -p "$pat" \
		-n 2000 -s 256 --verify -q -f json >"$d/out.json" 2>"$d/err" &
	local pid=$!
	if ! read -t 30 -r proto port <&4; then
		fail "$what: ipclab never reached its listen/bind: $(head -c 300 "$d/err")"
	else
		foreign "${stranger:-$proto}" "$port" || fail "$what: the foreign peer could not reach port $port"
		for _ in $(seq 3000); do
			q=$(queued "$proto" "$port")
			[ -n "$q" ] && [ $((16#$q)) -gt 0 ] && break
			sleep 0.01
		done
		[ -n "$q" ] && [ $((16#$q)) -gt 0 ] || fail "$what: the kernel never queued the foreign peer on $proto port $port"
	fi
	echo go >&5
	wait $pid
	rc=$?
	if [ -n "$stranger_pid" ]; then
		kill "$stranger_pid" 2>/dev/null
		wait "$stranger_pid" 2>/dev/null
		stranger_pid=
	fi
	exec 4>&- 5>&-
	if [ "$key" = fail ]; then
		if [ $rc = 1 ] && grep -q "not ours (wrong hello)" "$d/err" && python3 - "$d/out.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
assert r["status"] == "failed" and "wrong hello" in r["reason"], r
assert not r.get("metrics"), "a cell whose first peer was a stranger measured something"
PY
		then
			echo "ok   $what: the cell failed, nothing measured: $(head -1 "$d/err" | cut -c1-120)"
		else
			fail "$what: exit $rc, expected 1 naming the wrong hello: $(head -c 300 "$d/err")"
		fi
	elif [ $rc != 0 ]; then
		fail "$what: exit $rc: $(head -c 300 "$d/err") $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["results"][0].get("reason",""))' "$d/out.json" 2>/dev/null)"
	elif ! python3 - "$d/out.json" "$key" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
r = doc["results"][0]
assert r["status"] == "ok", r
if sys.argv[2] != "foreign_none":	# nng-tcp: nng itself drops the stranger
    got = r["settings"].get(sys.argv[2])
    assert got == 1, "settings.%s = %r, expected 1 (settings %r)" % (sys.argv[2], got, r["settings"])
assert r["metrics"]["msgs"] >= 2000, r["metrics"]
PY
	then
		fail "$what: result not as expected (above)"
	else
		echo "ok   $what: cell ok with verified data$([ "$key" = foreign_none ] || echo ", settings.$key = 1")"
	fi
	rm -rf "$d"
}

before=$(leftovers)
run_case tcp process pingpong foreign_connections
run_case tcp thread stream foreign_connections
run_case udp process pingpong foreign_datagrams
run_case udp thread pingpong foreign_datagrams
if "$IPCLAB" run -t nng-tcp -n 100 -q -f csv 2>&1 | grep -q 'built without'; then
	echo "skip nng-tcp: built without nng"
else
	run_case nng-tcp process pingpong foreign_none
	run_case nng-tcp process pingpong fail sp
	run_case nng-tcp thread stream fail sp
fi
left=$(new_leftovers "$before" "$(leftovers)")
[ -z "$left" ] || fail "left behind: $left"
finish
