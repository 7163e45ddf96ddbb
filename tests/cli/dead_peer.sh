#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A peer killed mid-run is reported within 2 s by name and message count
# (exit 1); SIGINT and SIGTERM stop a run cleanly (130/143). Nothing is left.
. "$(dirname "$0")/../lib/common.sh"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
tp=pipe
"$IPCLAB" list | grep -q '^  pipe ' || tp=null
before=$(leftovers)

# wait until the run has children that are moving messages, then kill one
kill_child() {
	local role=$1 pid=$2 kids
	for _ in $(seq 1 200); do
		kids=$(pgrep -P "$pid" | sort -n)
		[ "$(echo "$kids" | grep -c .)" -ge 2 ] && break
		sleep 0.05
	done
	sleep 0.3
	if [ "$role" = server ]; then echo "$kids" | head -1; else echo "$kids" | tail -1; fi
}

for role in server client; do
	"$IPCLAB" run -t $tp -p pingpong -d 60s -q >"$dir/out" 2>"$dir/err" &
	pid=$!
	victim=$(kill_child $role $pid)
	[ -n "$victim" ] || { fail "$role: no child found"; kill -9 $pid; continue; }
	kill -9 "$victim"
	t0=$(date +%s%N)
	wait $pid
	rc=$?
	ms=$(( ($(date +%s%N) - t0) / 1000000 ))
	[ $rc = 1 ] || fail "$role killed: exit $rc, expected 1"
	grep -q "$role 0 (pid $victim) died: killed by signal 9" "$dir/err" || fail "$role killed: report lacks who died: $(cat "$dir/err")"
	grep -q 'after [0-9]* messages' "$dir/err" || fail "$role killed: report lacks message count"
	[ $ms -lt 2000 ] || fail "$role killed: reported after $ms ms (limit 2000)"
	echo "ok   $role killed: reported in $ms ms: $(head -1 "$dir/err")"
done

for sig in INT TERM; do
	"$IPCLAB" run -t $tp -p pingpong -d 60s -q >"$dir/out" 2>"$dir/err" &
	pid=$!
	kill_child server $pid >/dev/null
	kill -$sig $pid
	wait $pid
	rc=$?
	want=$((128 + $(kill -l $sig)))
	[ $rc = $want ] || fail "SIG$sig: exit $rc, expected $want"
	echo "ok   SIG$sig: exit $rc"
done

# threads: SIGINT stops blocked endpoint threads too
"$IPCLAB" run -t $tp -p pingpong -e thread -d 60s -q >"$dir/out" 2>"$dir/err" &
pid=$!
wait_handler $pid INT || fail "thread SIGINT: ipclab never handled SIGINT"
sleep 0.5
kill -INT $pid
wait $pid
rc=$?
[ $rc = 130 ] || fail "thread SIGINT: exit $rc, expected 130"

sleep 0.2
after=$(leftovers)
new=$(new_leftovers "$before" "$after")
[ -z "$new" ] || fail "left behind: $new"
finish
