#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Two ipclab builds alternated (A B A B ...) on the cells that show how a
# spin-then-sleep wait behaves unpinned, when the scheduler may put both
# ends on one CPU: ring-ipc against libqb-ipc flooding with 1 and 4
# clients and paced at 20/s, ring ping-pong, and a 64 B stream of ring,
# libqb-rb and pipe. One line per cell and build:
# "A|B CASE transport:msgs_per_s/p50_ns/p99_ns ...".
# Usage: bench/ab_polite.sh BUILD_A/ipclab BUILD_B/ipclab [ROUNDS]
set -u
a=${1:?usage: $0 IPCLAB_A IPCLAB_B [ROUNDS]} b=${2:?usage: $0 IPCLAB_A IPCLAB_B [ROUNDS]}
rounds=${3:-5}
run() {
	"$1" run "${@:2}" -f json -q 2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(" ".join("%s:%d/%s/%s" % (r["transport"], r["metrics"]["msgs_per_s"], r["metrics"]["lat_p50_ns"],
                                 r["metrics"]["lat_p99_ns"]) for r in d["results"] if r["status"] == "ok"))'
}
for ((i = 0; i < rounds; i++)); do
	for v in A B; do
		bin=$a
		[ $v = B ] && bin=$b
		echo "$v flood1 $(run "$bin" -t ring-ipc,libqb-ipc -p pingpong -s 64 -d 1s)"
		echo "$v flood4 $(run "$bin" -t ring-ipc,libqb-ipc -p pingpong -s 64 --clients 4 -d 1s)"
		echo "$v paced20 $(run "$bin" -t ring-ipc,libqb-ipc -p pingpong -s 64 --rate 20/s -n 40)"
		echo "$v ring-pp $(run "$bin" -t ring -p pingpong -s 64 -d 1s)"
		echo "$v ring-stream $(run "$bin" -t ring,libqb-rb,pipe -p stream -s 64 -d 1s)"
	done
done
