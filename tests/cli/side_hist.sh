#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Every side's latency histogram (the runner maps one per side, in the
# memory the sides share) reaches the result, for as many clients as a
# cell may have (64), as threads and as processes: a ping-pong's round
# trips are timed by each client (count each), a stream's one-way times
# by whichever side receives (the server, c2s, as threads; each client,
# s2c, as processes). The
# result's histogram holds every sample (its buckets add up to its count,
# which is lat_samples), and nothing is left behind.
. "$(dirname "$0")/../lib/common.sh"
command -v jq >/dev/null || { echo "skip: no jq"; exit 77; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
before=$(leftovers)

# check NAME FILE WANT: one ok result whose histogram holds WANT samples
# (WANT "any": at least one)
check() {
	jq -e --arg want "$3" '.results[0] | .status == "ok" and .clients == 64 and
		(.histogram.count == .metrics.lat_samples) and
		([.histogram.buckets[][1]] | add) == .histogram.count and
		(if $want == "any" then .histogram.count > 0 else .histogram.count == ($want | tonumber) end)' \
		"$2" >/dev/null ||
		fail "$1: histogram: $(jq -c '.results[0] | {status, lat_samples: .metrics.lat_samples, count: .histogram.count, summed: ([.histogram.buckets[]?[1]] | add)}' "$2" 2>/dev/null)"
}

for e in thread process; do
	"$IPCLAB" run -t unix-stream -p pingpong --clients 64 -n 64 --warmup 1 -e $e -q -f json \
		-o "$dir/pp-$e.json" 2>"$dir/err" || { fail "pingpong, 64 ${e}s: $(cat "$dir/err")"; continue; }
	check "pingpong, 64 ${e}s" "$dir/pp-$e.json" $((64 * 64))
	# threads: one receiver (the server); processes: 64 (the clients)
	d=c2s
	[ $e = process ] && d=s2c
	"$IPCLAB" run -t unix-stream -p stream -O dir=$d --clients 64 -n 64 --warmup 1 -e $e -q \
		-f json -o "$dir/st-$e.json" 2>"$dir/err" ||
		{ fail "stream $d, 64 ${e}s: $(cat "$dir/err")"; continue; }
	check "stream $d, 64 ${e}s" "$dir/st-$e.json" any
done
echo "pingpong, 64 threads: $(jq -c '.results[0].metrics | {lat_samples, lat_p50_ns}' "$dir/pp-thread.json" 2>/dev/null)"

after=$(leftovers)
[ -z "$(new_leftovers "$before" "$after")" ] || fail "left behind: $(new_leftovers "$before" "$after")"
finish
