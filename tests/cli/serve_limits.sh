#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# ipclab serve's limits, on the loopback: each of --max-size, --max-count,
# --max-duration and --max-clients refuses a cell over it (exit 2, one
# line naming the limit), a cell within them runs; --idle-timeout drops a
# control connection that says nothing; --once exits after one session.
# What a peer may ask of the server's placement: --sched fifo:99 (not in
# the default --allow-sched) and --pin on a CPU outside --allow-cpus are
# refused by run --peer (exit 2, one line naming the switch) and, asked
# for by a client of our own that does not check, by serve itself (its
# refusal names the switch); an unpinned cell's server side stays on the
# allowed CPUs; a bad --allow-sched is bad input.
# And suite fidelity's --transports reaches its plan.
. "$(dirname "$0")/../lib/common.sh"
command -v jq >/dev/null || { echo "skip: no jq"; exit 77; }
dir=$(mktemp -d)
srv=
trap '[ -n "$srv" ] && kill $srv 2>/dev/null; rm -rf "$dir"' EXIT
before=$(leftovers)

port=$(( 20000 + RANDOM % 20000 ))
export IPCLAB_TOKEN=limits-$RANDOM-$RANDOM-token
cpus=$(python3 -c 'import os; print(" ".join(map(str, sorted(os.sched_getaffinity(0)))))')
first=${cpus%% *} other=${cpus#* }
other=${other%% *}
[ "$other" = "$cpus" ] && other=
"$IPCLAB" serve --listen 127.0.0.1:$port --max-size 1k --max-count 200000 --max-duration 2s \
	--max-clients 2 --idle-timeout 1s --allow-cpus "$first" >"$dir/serve.log" 2>&1 &
srv=$!
up=
for _ in $(seq 1 200); do	# until it listens (bounded)
	(exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null && { up=1; break; }
	kill -0 $srv 2>/dev/null || break
	sleep 0.05
done
[ -n "$up" ] || { fail "serve did not listen: $(cat "$dir/serve.log")"; finish; }

refused() {	# refused WHAT WORD args...: exit 2, one line naming WORD
	local what=$1 word=$2 rc
	shift 2
	"$IPCLAB" run --peer 127.0.0.1:$port -t tcp -p pingpong "$@" -q >"$dir/out" 2>"$dir/err"
	rc=$?
	if [ $rc != 2 ]; then
		fail "$what: exit $rc, expected 2: $(head -3 "$dir/err")"
	elif [ "$(wc -l <"$dir/err")" != 1 ] || ! grep -q -- "$word" "$dir/err"; then
		fail "$what: expected one line naming $word: $(cat "$dir/err")"
	else
		echo "ok   $what: $(cat "$dir/err")"
	fi
}
refused "--max-size 1k" "max-size" -s 4k -n 100
refused "--max-count 200000" "max-count" -n 300000
refused "--max-duration 2s" "max-duration" -d 5s
refused "--max-clients 2" "max-clients" --clients 3 -n 100
refused "--sched fifo:99, not allowed" "allow-sched" --sched fifo:99 -n 100
if [ -n "$other" ]; then
	refused "--pin $other:$first, CPU $other not in --allow-cpus $first" "allow-cpus" --pin "$other:$first" -n 100
else
	echo "skip --allow-cpus refusal: one CPU only"
fi
# serve's own check, for a client that asks anyway
rp=$(cd "$(dirname "$0")/../lib" && pwd)/rproto.py
got=$(timeout 30 python3 "$rp" cell $port "$IPCLAB_TOKEN" fifo:99 65536 2>&1)
[[ $got == "refused "*"--sched fifo:99"*"ipclab serve --allow-sched"* ]] &&
	echo "ok   serve refuses a cell asking for fifo:99: ${got#refused }" ||
	fail "a cell asking for fifo:99, sent anyway: $got"
if [ -n "$other" ]; then
	got=$(timeout 30 python3 "$rp" cell $port "$IPCLAB_TOKEN" other "$other" 2>&1)
	[[ $got == "refused "*"CPU $other"*"ipclab serve --allow-cpus"* ]] &&
		echo "ok   serve refuses a cell pinned outside --allow-cpus: ${got#refused }" ||
		fail "a cell pinned to CPU $other, sent anyway: $got"
fi
# within them: batch is allowed; unpinned, the server side ran on the allowed CPU
if "$IPCLAB" run --peer 127.0.0.1:$port -t tcp -p pingpong --sched batch -n 2000 -q -f json \
	-o "$dir/batch.json" 2>"$dir/err"; then
	ran=$(jq -r '.results[0].remote.server_cpu' "$dir/batch.json")
	[ "$ran" = "$first" ] && echo "ok   --sched batch, unpinned: the server side ran on CPU $ran (--allow-cpus $first)" ||
		fail "unpinned with --allow-cpus $first: the server side ran on CPU $ran"
else
	fail "--sched batch within --allow-sched: $(cat "$dir/err")"
fi

"$IPCLAB" run --peer 127.0.0.1:$port -t tcp -p pingpong -s 512 -n 1000 --clients 2 -q \
	-f json -o "$dir/ok.json" 2>"$dir/err" &&
	echo "ok   within the limits: $(jq -r '.results[0].status' "$dir/ok.json" 2>/dev/null)" ||
	fail "a cell within the limits: $(cat "$dir/err")"

# a control connection that never says anything is dropped after 1 s
t0=$(date +%s%N)
exec 4<>/dev/tcp/127.0.0.1/$port
timeout 10 cat <&4 >/dev/null
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
exec 4<&-
[ $ms -ge 900 ] && [ $ms -lt 9000 ] && echo "ok   --idle-timeout 1s: a silent client dropped after $ms ms" ||
	fail "--idle-timeout 1s: a silent client was dropped after $ms ms"
kill $srv
wait $srv 2>/dev/null
srv=

# --once: one session, then serve exits by itself
# (ready when it says it listens: a probe connection would be its session)
"$IPCLAB" serve --listen 127.0.0.1:$((port + 1)) --once >"$dir/once.log" 2>&1 &
srv=$!
for _ in $(seq 1 200); do
	grep -q 'listening on' "$dir/once.log" && break
	sleep 0.05
done
"$IPCLAB" run --peer 127.0.0.1:$((port + 1)) -t tcp -p pingpong -n 500 -q -f json -o "$dir/once.json" 2>"$dir/err" ||
	fail "--once: the run failed: $(cat "$dir/err")"
for _ in $(seq 1 100); do kill -0 $srv 2>/dev/null || break; sleep 0.05; done
if kill -0 $srv 2>/dev/null; then
	fail "--once: serve still running after its session"
else
	wait $srv
	echo "ok   --once: serve exited $? after one session"
	srv=
fi

# a bad --allow-sched: bad input, one line
out=$(timeout 10 "$IPCLAB" serve --listen 127.0.0.1:$((port + 2)) --allow-sched other,fifo --once 2>&1 >/dev/null)
rc=$?
[ $rc = 2 ] && [ "$(echo "$out" | wc -l)" = 1 ] && [[ $out == *allow-sched* ]] &&
	echo "ok   --allow-sched other,fifo: $out" || fail "--allow-sched other,fifo: exit $rc: $out"

# suite fidelity --transports: its cells are those transports' only
"$IPCLAB" suite fidelity --quick --repeat 1 --transports null -q -f json -o "$dir/fid.json" \
	>"$dir/fid" 2>&1 || fail "suite fidelity --transports null: $(head -3 "$dir/fid")"
others=$(jq -r '[.results[].transport] | unique | join(" ")' "$dir/fid.json" 2>/dev/null)
[ "$others" = null ] && echo "ok   suite fidelity --transports null: null's cells only" ||
	fail "suite fidelity --transports null: cells of '$others'"

after=$(leftovers)
left=$(new_leftovers "$before" "$after")
[ -z "$left" ] || fail "left behind: $left"
finish
