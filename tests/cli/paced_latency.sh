#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A paced (--rate) ping-pong's round trip both ways: lat_* from the actual
# send (the IPC's own), lat_intended_* from the intended send time, and
# send_late_* the sender's lateness. Each intended round trip is its actual
# one plus a lateness >= 0, so every intended quantile is at least the
# actual one; the actual p50 is far under the pacing interval; the table
# shows the lateness beside the round trip; a flood ping-pong has none of
# these fields. One client and two (each client paced on its own); a paced
# stream has its one-way latency from the actual send and the lateness.
. "$(dirname "$0")/../lib/common.sh"
command -v jq >/dev/null || { echo "skip: no jq"; exit 77; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
before=$(leftovers)

for c in 1 2; do
	"$IPCLAB" run -t pipe -p pingpong -s 64 --rate 50 -n 40 --warmup 5 --clients $c -q -f json \
		-o "$dir/paced-$c.json" 2>"$dir/err" || { fail "paced run ($c clients): $(cat "$dir/err")"; continue; }
	jq -e '.results[0] | .status == "ok" and .rate_per_s == 50 and (.metrics |
		.lat_intended_p50_ns >= .lat_p50_ns and .lat_intended_p99_ns >= .lat_p99_ns and
		.lat_intended_max_ns >= .lat_max_ns and .send_late_p50_ns >= 0 and
		.send_late_p99_ns >= .send_late_p50_ns and .send_late_max_ns >= .send_late_p99_ns and
		.lat_p50_ns < 20000000)' "$dir/paced-$c.json" >/dev/null ||
		fail "$c clients: paced figures inconsistent: $(jq -c '.results[0].metrics | {lat_p50_ns, lat_p99_ns, lat_max_ns, lat_intended_p50_ns, lat_intended_p99_ns, lat_intended_max_ns, send_late_p50_ns, send_late_p99_ns, send_late_max_ns}' "$dir/paced-$c.json")"
done
echo "paced pipe, 1 client: $(jq -c '.results[0].metrics | {lat_p50_ns, lat_intended_p50_ns, send_late_p50_ns}' "$dir/paced-1.json" 2>/dev/null)"

# a paced stream: one-way from the actual send, the lateness beside it
"$IPCLAB" run -t pipe -p stream -s 64 --rate 100 -n 40 --warmup 5 -q -f json -o "$dir/pstream.json" 2>"$dir/err" ||
	fail "paced stream: $(cat "$dir/err")"
jq -e '.results[0].metrics | .lat_p50_ns < 10000000 and .send_late_p50_ns >= 0 and
	.send_late_max_ns >= .send_late_p50_ns and (has("lat_intended_p50_ns") | not)' "$dir/pstream.json" >/dev/null ||
	fail "paced stream: $(jq -c '.results[0].metrics | {lat_p50_ns, send_late_p50_ns, send_late_max_ns, lat_intended_p50_ns}' "$dir/pstream.json")"

"$IPCLAB" run -t pipe -p pingpong -s 64 -n 2000 -q -f json -o "$dir/flood.json" 2>"$dir/err" ||
	fail "flood run: $(cat "$dir/err")"
jq -e '.results[0].metrics | has("lat_p50_ns") and (has("lat_intended_p50_ns") or has("send_late_p50_ns") | not)' \
	"$dir/flood.json" >/dev/null || fail "a flood ping-pong carries paced fields"

"$IPCLAB" run -t pipe -p pingpong -s 64 --rate 50 -n 20 --warmup 2 -q >"$dir/table" 2>"$dir/err" ||
	fail "paced table run: $(cat "$dir/err")"
head -1 "$dir/table" | grep -Eq ' max +late ' || fail "the paced table has no 'late' column beside max: $(head -1 "$dir/table")"
"$IPCLAB" run -t pipe -p pingpong -s 64 -n 2000 -q >"$dir/ftable" 2>"$dir/err"
head -1 "$dir/ftable" | grep -q ' late ' && fail "a flood table shows a 'late' column"

after=$(leftovers)
[ -z "$(new_leftovers "$before" "$after")" ] || fail "left behind: $(new_leftovers "$before" "$after")"
finish
