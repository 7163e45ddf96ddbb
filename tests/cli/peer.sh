#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Between hosts: `ipclab serve` in one network namespace, `ipclab run
# --peer` in another, joined by a veth pair made here and removed after.
# tcp, udp, zmq-tcp and nng-tcp (when built with libzmq, libnng) ping-pong
# and stream arrive intact (--verify); over IPv6 addresses on the same veth
# pair (serve --listen [ADDR6]:PORT, --peer [ADDR6]:PORT), tcp ping-pong and
# a udp cell, and nng-tcp and zmq-tcp ping-pong, intact too; -t all skips what cannot cross hosts, a named one is
# refused; --pin split pins the server side to a CPU chosen there; a
# tbf-limited link (20 mbit) is what a tcp stream of 4 KiB messages measures; a wrong
# token is refused (exit 2, one line); a client killed mid-cell leaves the
# server serving, with the same descriptors and no process left; after a
# SIGKILL of serve, `ipclab clean` leaves nothing. Traffic stays inside the
# two namespaces.
. "$(dirname "$0")/../lib/common.sh"
[ "$(id -u)" = 0 ] || { echo "skip: needs root (network namespaces, veth, tc)"; exit 77; }
command -v ip >/dev/null && ip netns list >/dev/null 2>&1 || { echo "skip: no 'ip netns' (iproute2)"; exit 77; }
command -v tc >/dev/null || { echo "skip: no tc (iproute2)"; exit 77; }
dir=$(mktemp -d)
ns_s=ilps-$$ ns_c=ilpc-$$ port=7227
(umask 077 && echo "peer-test-token-$RANDOM$RANDOM" >"$dir/tok" && echo "a-wrong-token-of-20-bytes" >"$dir/wrong")
SRV=10.77.$(( $$ % 200 )).1 CLI=10.77.$(( $$ % 200 )).2
SRV6=fd00:77:$(( $$ % 200 + 1 ))::1 CLI6=fd00:77:$(( $$ % 200 + 1 ))::2
serve_pid= serve6_pid=
cleanup() {
	[ -n "$serve_pid" ] && kill -9 "$serve_pid" 2>/dev/null
	[ -n "$serve6_pid" ] && kill -9 "$serve6_pid" 2>/dev/null
	ip netns del "$ns_s" 2>/dev/null
	ip netns del "$ns_c" 2>/dev/null
	rm -rf "$dir"
}
trap cleanup EXIT
if ! ip netns add "$ns_s" 2>"$dir/err" || ! ip netns add "$ns_c" 2>>"$dir/err"; then
	echo "skip: cannot make network namespaces: $(head -1 "$dir/err")"
	exit 77
fi
ip link add ilv$$a netns "$ns_s" type veth peer name ilv$$b netns "$ns_c" || { echo "skip: no veth"; exit 77; }
ip -n "$ns_s" addr add $SRV/24 dev ilv$$a && ip -n "$ns_s" link set ilv$$a up && ip -n "$ns_s" link set lo up
ip -n "$ns_c" addr add $CLI/24 dev ilv$$b && ip -n "$ns_c" link set ilv$$b up && ip -n "$ns_c" link set lo up
# nodad: usable at once, no duplicate address detection to wait out
ip -n "$ns_s" -6 addr add $SRV6/64 dev ilv$$a nodad && ip -n "$ns_c" -6 addr add $CLI6/64 dev ilv$$b nodad ||
	{ echo "skip: no IPv6 on the veth pair"; exit 77; }
before=$(leftovers)
in_s() { ip netns exec "$ns_s" "$@"; }
in_c() { ip netns exec "$ns_c" "$@"; }

start_serve() {
	ip netns exec "$ns_s" "$IPCLAB" serve --listen $SRV:$port --token-file "$dir/tok" 2>"$dir/serve.log" &
	serve_pid=$!
	# bounded poll for the listening port
	for _ in $(seq 1 200); do
		in_s ss -Hltn "sport = :$port" 2>/dev/null | grep -q . && return 0
		kill -0 $serve_pid 2>/dev/null || break
		sleep 0.05
	done
	fail "serve did not listen on $SRV:$port: $(cat "$dir/serve.log")"
	return 1
}
start_serve || finish

# intact: tcp, udp, zmq-tcp and nng-tcp, ping-pong and stream, payload verified
tps="tcp udp"
for lt in zmq-tcp nng-tcp; do
	lib_why=$("$IPCLAB" run -t $lt -n 100 -q -f csv 2>&1 | grep -o 'built without [^,"]*' | head -1)
	if [ -n "$lib_why" ]; then echo "skip $lt across namespaces: $lib_why"; else tps="$tps $lt"; fi
done
for t in $tps; do
	for p in pingpong stream; do
		if in_c "$IPCLAB" run --peer $SRV:$port --token-file "$dir/tok" -t $t -p $p -n 3000 --verify -q \
			-f json -o "$dir/$t-$p.json" 2>"$dir/err"; then
			python3 - "$dir/$t-$p.json" "$t" "$p" <<'PY' || fail "$t $p: result record"
import json, sys
d = json.load(open(sys.argv[1]))
r = d["results"][0]
assert r["status"] == "ok", r
assert r["remote"]["host"].startswith("10.77."), r["remote"]
assert d["remote_env"]["kernel"], d.get("remote_env")
assert r["remote"]["clock_offset_err_ns"] is not None
if sys.argv[3] == "stream":
    assert r["metrics"]["lat_p50_ns"] is None, "one-way latency from two clocks"
else:
    assert r["metrics"]["lat_p50_ns"] > 0
assert r["metrics"]["msgs_per_s"] > 0
print("ok   %s %s across namespaces: %.0f msgs/s" % (sys.argv[2], sys.argv[3], r["metrics"]["msgs_per_s"]))
PY
		else
			fail "$t $p across namespaces: $(head -c 300 "$dir/err")"
		fi
	done
done

# IPv6: a second server on [SRV6]:port+1, the clients on CLI6
port6=$((port + 1))
ip netns exec "$ns_s" "$IPCLAB" serve --listen "[$SRV6]:$port6" --token-file "$dir/tok" 2>"$dir/serve6.log" &
serve6_pid=$!
for _ in $(seq 1 200); do
	in_s ss -Hltn "sport = :$port6" 2>/dev/null | grep -q . && break
	kill -0 $serve6_pid 2>/dev/null || break
	sleep 0.05
done
cells6="tcp:pingpong udp:pingpong udp:stream"
for lt in zmq-tcp nng-tcp; do case " $tps " in *" $lt "*) cells6="$cells6 $lt:pingpong";; esac; done
for tp in $cells6; do
	t=${tp%%:*} p=${tp#*:}
	if in_c "$IPCLAB" run --peer "[$SRV6]:$port6" --token-file "$dir/tok" -t $t -p $p -n 3000 --verify -q \
		-f json -o "$dir/v6-$t-$p.json" 2>"$dir/err"; then
		python3 - "$dir/v6-$t-$p.json" "$t" "$p" "$SRV6" <<'PY' || fail "IPv6 $t $p: result record"
import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
assert r["status"] == "ok", r
assert r["remote"]["host"].startswith("[" + sys.argv[4] + "]"), r["remote"]
assert r["metrics"]["msgs_per_s"] > 0
print("ok   IPv6 %s %s across namespaces: %.0f msgs/s" % (sys.argv[2], sys.argv[3], r["metrics"]["msgs_per_s"]))
PY
	else
		fail "IPv6 $t $p across namespaces: $(head -c 300 "$dir/err")"
	fi
done
grep -q "\[$CLI6\]:[0-9]*: session open" "$dir/serve6.log" ||
	fail "IPv6: serve did not see a client from [$CLI6]: $(head -c 300 "$dir/serve6.log")"
kill $serve6_pid
wait $serve6_pid 2>/dev/null
# a bad address: one line naming it, exit 2
peer_err6() {
	local what=$1 out rc
	shift
	out=$(timeout 10 "$IPCLAB" "$@" 2>&1 >/dev/null)
	rc=$?
	if [ $rc = 2 ] && [ "$(echo "$out" | wc -l)" = 1 ] && [[ $out == *"$what"* ]]; then echo "ok   bad address $what: $out"
	else fail "bad address $what: exit $rc, expected 2 with one line naming it: $out"; fi
}
peer_err6 "[$SRV6" run --peer "[$SRV6" --token-file "$dir/tok" -t tcp -n 10 -q
peer_err6 "fd00::zz" serve --listen "[fd00::zz]:$port6" --token-file "$dir/tok" --once

# refused: a wrong token (from a file of mode 0600), a transport that cannot cross hosts, a limit
peer_err() {
	local what=$1 out rc
	shift
	out=$(in_c "$IPCLAB" "$@" 2>&1 >/dev/null)
	rc=$?
	if [ $rc = 2 ] && [ "$(echo "$out" | wc -l)" = 1 ]; then echo "ok   $what: $out"
	else fail "$what: exit $rc, expected 2 with one line: $out"; fi
}
peer_err "wrong token (netns)" run --peer $SRV:$port --token-file "$dir/wrong" -t tcp -n 100 -q
peer_err "pipe refused" run --peer $SRV:$port --token-file "$dir/tok" -t pipe -n 100 -q
peer_err "over the size limit" run --peer $SRV:$port --token-file "$dir/tok" -t tcp -s 256M -n 10 -q
peer_err "pipe named among others" run --peer $SRV:$port --token-file "$dir/tok" -t tcp,pipe -n 100 -q

# -t all: what cannot cross hosts is skipped with the reason, the rest runs
if in_c "$IPCLAB" run --peer $SRV:$port --token-file "$dir/tok" -t all -n 500 -q -f json -o "$dir/all.json" 2>"$dir/err"; then
	python3 - "$dir/all.json" <<'PY' || fail "-t all --peer: results"
import json, sys
rs = json.load(open(sys.argv[1]))["results"]
st = {r["transport"]: r for r in rs}
assert st["tcp"]["status"] == "ok" and st["udp"]["status"] == "ok", st["tcp"]
assert st["pipe"]["status"] == "skipped" and "cannot cross hosts" in st["pipe"]["reason"], st["pipe"]
ran = sorted(t for t, r in st.items() if r["status"] == "ok")
assert all(r.get("remote") for r in rs if r["status"] == "ok")
print("ok   -t all --peer: %s ran, %d skipped (pipe: %s)" % (",".join(ran), len(rs) - len(ran), st["pipe"]["reason"][:40]))
PY
else
	fail "-t all --peer: exit $?: $(head -c 300 "$dir/err")"
fi

# --pin split: the server side on the CPU the server chose (its first allowed)
first=$(in_s python3 -c 'import os; print(min(os.sched_getaffinity(0)))')
if in_c "$IPCLAB" run --peer $SRV:$port --token-file "$dir/tok" -t tcp --pin split -n 1000 -q -f json -o "$dir/pin.json" 2>"$dir/err"; then
	python3 - "$dir/pin.json" "$first" <<'PY' || fail "--pin split --peer: server side's CPU"
import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
assert r["status"] == "ok" and r["pin"] == "split", r
assert r["remote"]["server_pin_cpu"] == int(sys.argv[2]), r["remote"]
assert r["remote"]["server_cpu"] == int(sys.argv[2]), r["remote"]
print("ok   --pin split --peer: server side pinned there to CPU %d" % r["remote"]["server_pin_cpu"])
PY
else
	fail "--pin split --peer: exit $?: $(head -c 300 "$dir/err")"
fi

# the link limited to 20 mbit: a 4 KiB tcp stream measures the link
in_s tc qdisc add dev ilv$$a root tbf rate 20mbit burst 32kbit latency 50ms
in_c tc qdisc add dev ilv$$b root tbf rate 20mbit burst 32kbit latency 50ms
if in_c "$IPCLAB" run --peer $SRV:$port --token-file "$dir/tok" -t tcp -p stream -s 4k -d 3s -q \
	-f json -o "$dir/tbf.json" 2>"$dir/err"; then
	python3 - "$dir/tbf.json" <<'PY' || fail "tbf stream outside 1.9-2.6 MB/s"
import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
mb = r["metrics"]["bytes_per_s"] / 1e6
print("     tbf 20mbit: tcp stream 4 KiB: %.2f MB/s" % mb)
assert 1.9 <= mb <= 2.6, mb
print("ok   tbf-limited link measured: %.2f MB/s (1.9-2.6)" % mb)
PY
else
	fail "tbf stream: $(head -c 300 "$dir/err")"
fi
in_s tc qdisc del dev ilv$$a root
in_c tc qdisc del dev ilv$$b root

# a client killed mid-cell: the server keeps serving and leaks nothing
fds0=$(ls /proc/$serve_pid/fd | wc -l)
ip netns exec "$ns_c" "$IPCLAB" run --peer $SRV:$port --token-file "$dir/tok" -t tcp -p pingpong -d 30s -q >/dev/null 2>&1 &
cpid=$!
for _ in $(seq 1 200); do
	[ -n "$(pgrep -P $serve_pid)" ] && break
	sleep 0.05
done
[ -n "$(pgrep -P $serve_pid)" ] || fail "no cell started on the server"
sleep 0.5
# the client's ipclab and its sides (netns exec runs it as a child)
for p in $(pgrep -P $cpid) $cpid; do pkill -9 -P "$p" 2>/dev/null; kill -9 "$p" 2>/dev/null; done
wait $cpid 2>/dev/null
for _ in $(seq 1 200); do
	[ -z "$(pgrep -P $serve_pid)" ] && break
	sleep 0.05
done
[ -z "$(pgrep -P $serve_pid)" ] || fail "the server's cell is still running after its client died"
# the killed client's own private directory stays: it ran in the mount
# namespace of `ip netns exec`, which the run registry does not sweep from
# here (by design); it is removed by hand, only it
for d in $(new_leftovers "$before" "$(leftovers)" | sed -n 's/^dir //p'); do rmdir "$d"; done
if in_c "$IPCLAB" run --peer $SRV:$port --token-file "$dir/tok" -t tcp -n 2000 -q >/dev/null 2>"$dir/err"; then
	echo "ok   server still serving after a client was killed mid-cell"
else
	fail "next run after a killed client: $(head -c 300 "$dir/err")"
fi
# the last client's session closes a moment after that client exits
for _ in $(seq 1 100); do
	fds1=$(ls /proc/$serve_pid/fd | wc -l)
	[ "$fds1" = "$fds0" ] && break
	sleep 0.05
done
[ "$fds0" = "$fds1" ] && echo "ok   serve's descriptors: $fds0 before, $fds1 after" ||
	fail "serve's descriptors: $fds0 before, $fds1 after"

# SIGKILL of serve mid-cell, then ipclab clean: nothing left
ip netns exec "$ns_c" "$IPCLAB" run --peer $SRV:$port --token-file "$dir/tok" -t tcp -p pingpong -d 30s -q >/dev/null 2>&1 &
cpid=$!
for _ in $(seq 1 200); do
	[ -n "$(pgrep -P $serve_pid)" ] && break
	sleep 0.05
done
kill -9 $serve_pid
wait $serve_pid 2>/dev/null
serve_pid=
wait $cpid
rc=$?
[ $rc = 1 ] && echo "ok   client of a killed server: exit 1" || fail "client of a killed server: exit $rc, expected 1"
for _ in $(seq 1 100); do	# the cell's process ends on its parent's death
	[ -z "$(test_procs)" ] && break
	sleep 0.05
done
"$IPCLAB" clean -q
for _ in $(seq 1 100); do
	[ -z "$(new_leftovers "$before" "$(leftovers)")" ] && break
	sleep 0.05
done
new=$(new_leftovers "$before" "$(leftovers)")
[ -z "$new" ] || fail "left behind: $new"
finish
