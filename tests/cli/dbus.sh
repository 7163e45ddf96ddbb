#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# dbus -O via=bus: the private dbus-daemon is started (a dbus-daemon child
# of ipclab, its socket in the run's private directory), used (ping-pong
# and streams intact, 1 and 3 clients, processes and threads) and stopped:
# no daemon and no socket left after a normal run, after a client process
# is SIGKILLed (the dead peer reported, exit 1), and after ipclab itself
# is SIGKILLed and `ipclab clean` has run; SIGINT and SIGTERM end a run cleanly.
. "$(dirname "$0")/../lib/common.sh"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

command -v dbus-daemon >/dev/null || { echo "skip: dbus-daemon not installed (Debian package dbus-daemon: make deps)"; exit 77; }
"$IPCLAB" run -t dbus -O via=bus -p pingpong -n 200 -q -f csv >"$dir/probe.csv" 2>"$dir/err"
if ! awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "status") s = i } NR == 2 { exit $s != "ok" }' "$dir/probe.csv"; then
	why=$(grep -o 'built without sd-bus[^,]*' "$dir/probe.csv" | head -1)
	[ -n "$why" ] && { echo "skip: $why"; exit 77; }
	fail "a first via=bus run did not run: $(cat "$dir/err") $(tail -1 "$dir/probe.csv")"
	finish
fi
before=$(leftovers)

# dbus-daemon processes this test started (they inherit its tag).
test_daemons() {
	local p
	for p in $(pgrep -x dbus-daemon 2>/dev/null); do
		tr '\0' '\n' 2>/dev/null <"/proc/$p/environ" |
			grep -qxF "IPCLAB_TEST_TAG=$IPCLAB_TEST_TAG" && echo "$p"
	done
}
sockets() { ls -1 "$TMPDIR"/ipclab-*/dbus-*.sock 2>/dev/null; }

# poll (bounded, 10 s) until "$@" succeeds; 1 if it never does
wait_for() {
	for _ in $(seq 1 200); do
		"$@" && return 0
		sleep 0.05
	done
	return 1
}
# the process has ended (a zombie its new parent has not reaped yet counts)
gone() { local st; st=$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null); [ -z "$st" ] || [ "$st" = Z ]; }
# the bus daemon a run started (--nofork), not the short-lived child that
# asks dbus-daemon --version first
bus_daemon() {
	local p
	for p in $(pgrep -P "$1" -x dbus-daemon); do
		tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | grep -q -- '--nofork' && echo "$p"
	done
}
daemon_of() { [ -n "$(bus_daemon "$1")" ]; }
no_daemons() { [ -z "$(test_daemons)" ]; }
endpoints_of() { [ "$(pgrep -P "$1" -x ipclab | grep -c .)" -ge "$2" ]; }

# nothing of via=bus left: no daemon, no socket, nothing else either
check_clean() {
	local what=$1 new
	wait_for no_daemons || fail "$what: dbus-daemon left running: $(test_daemons | tr '\n' ' ')"
	[ -z "$(sockets)" ] || fail "$what: socket left: $(sockets)"
	new=$(new_leftovers "$before" "$(leftovers)")
	[ -z "$new" ] || fail "$what: left behind: $new"
}

# used: every pattern and direction, 1 and 3 clients, processes and threads, verified
for dirn in c2s s2c; do
	"$IPCLAB" run -t dbus -O via=bus -O dir=$dirn -p stream,pingpong -n 3000 -e process,thread \
		--clients 1,3 --verify -q -f json -o "$dir/r.json" 2>"$dir/err"
	rc=$?
	[ $rc = 0 ] || fail "dir=$dirn: exit $rc: $(head -3 "$dir/err")"
	python3 - "$dir/r.json" "$dirn" <<'PY' || fail "dir=$dirn: results"
import json, sys
rows = json.load(open(sys.argv[1]))["results"]
assert len(rows) == 8, f"{len(rows)} rows, expected 8"
for r in rows:
    cell = f'{r["pattern"]} {r["endpoints"]} x{r["clients"]}'
    assert r["status"] == "ok", (cell, r["status"], r.get("reason"))
    msgs = sum(s["msgs"] for s in r["sides"] if s["role"] == "server")
    assert msgs >= 3000 * int(r["clients"]), (cell, msgs)
    st = r["settings"]
    assert st["via"].startswith("bus"), (cell, st["via"])
    assert st["daemon"].startswith("dbus-daemon "), (cell, st["daemon"])
    assert st["address"].startswith("unix:path="), (cell, st["address"])
print(f"ok   dir={sys.argv[2]}: {len(rows)} cells through the bus, intact")
PY
done
check_clean "normal runs"

# started: a dbus-daemon child of ipclab, its socket there, while the run goes on
for e in process thread; do
	"$IPCLAB" run -t dbus -O via=bus -p pingpong -e $e -d 3s -q >"$dir/out" 2>"$dir/err" &
	pid=$!
	if wait_for daemon_of $pid; then
		echo "ok   $e: dbus-daemon $(bus_daemon $pid) is a child of ipclab $pid"
		wait_for test -n "$(sockets)" || fail "$e: no bus socket in the private directory"
	else
		fail "$e: no dbus-daemon child of ipclab $pid"
	fi
	wait $pid
	rc=$?
	[ $rc = 0 ] || fail "$e: exit $rc: $(head -3 "$dir/err")"
	check_clean "$e run"
done

# a client process SIGKILLed: reported, exit 1, the daemon stopped
"$IPCLAB" run -t dbus -O via=bus -p pingpong -d 60s -q >"$dir/out" 2>"$dir/err" &
pid=$!
if wait_for daemon_of $pid && wait_for endpoints_of $pid 2; then
	victim=$(pgrep -P $pid -x ipclab | sort -n | tail -1)
	kill -9 "$victim"
	wait $pid
	rc=$?
	[ $rc = 1 ] || fail "client killed: exit $rc, expected 1"
	grep -q "client 0 (pid $victim) died: killed by signal 9" "$dir/err" ||
		fail "client killed: the report lacks who died: $(head -3 "$dir/err")"
	echo "ok   client killed: $(head -1 "$dir/err")"
else
	fail "client kill: no daemon or endpoints under ipclab $pid"
	kill -9 $pid
	wait $pid
fi
check_clean "client killed"

# SIGINT, SIGTERM: the run stops cleanly (130, 143) and stops its daemon
for sig in INT TERM; do
	"$IPCLAB" run -t dbus -O via=bus -p stream -O dir=s2c -d 60s -q >"$dir/out" 2>"$dir/err" &
	pid=$!
	if wait_for daemon_of $pid && wait_for endpoints_of $pid 2; then
		kill -$sig $pid
		wait $pid
		rc=$?
		if [ $rc = $((128 + $(kill -l $sig))) ]; then
			echo "ok   SIG$sig: exit $rc"
		else
			fail "SIG$sig: exit $rc: $(head -3 "$dir/err")"
		fi
	else
		fail "SIG$sig: no daemon or endpoints under ipclab $pid"
		kill -9 $pid
		wait $pid
	fi
	check_clean "SIG$sig"
done

# ipclab SIGKILLed: its daemon dies with it (PR_SET_PDEATHSIG), clean removes the rest
for e in process thread; do
	"$IPCLAB" run -t dbus -O via=bus -p stream -e $e -d 60s -q >"$dir/out" 2>"$dir/err" &
	pid=$!
	if wait_for daemon_of $pid; then
		daemon=$(bus_daemon $pid)
		kill -9 $pid
		wait $pid 2>/dev/null
		wait_for gone "$daemon" ||
			fail "$e: dbus-daemon $daemon outlived a SIGKILLed ipclab"
		"$IPCLAB" clean >"$dir/clean" 2>&1 || fail "$e: ipclab clean: exit $?: $(cat "$dir/clean")"
		grep -q "dbus-" "$dir/clean" || fail "$e: ipclab clean named no bus file: $(cat "$dir/clean")"
		echo "ok   $e: ipclab SIGKILLed, daemon gone, clean: $(grep -c . "$dir/clean") line(s)"
	else
		fail "$e: no dbus-daemon child of ipclab $pid"
		kill -9 $pid
		wait $pid 2>/dev/null
	fi
	check_clean "$e: SIGKILL + clean"
done

# bad input: a message past the bus's limit is refused before anything starts
expect_usage_error "-s past max_message" run -t dbus -O via=bus -O max_message=64k -p pingpong -s 128k -n 10
finish
