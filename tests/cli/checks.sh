#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The receivers' checks fire: the null transport's -O fault loses, doubles
# or shortens one message of each sender (or flips its last byte), and the
# cell fails (exit 1) with the receiver's own report of what is wrong (not
# the sender's broken pipe that follows), in the stream pattern's common
# case and its general loop (several clients, --think-ns), both directions,
# process and thread endpoints, and in ping-pong. A flipped byte is seen
# with --verify only. A cell without a fault moves every message. The same
# through null-zc, in place and in runs (the stream's batched loops, a
# run's message spoilt at its commit, -O slots making runs of 1 to 64),
# counted and for a duration (-d).
. "$(dirname "$0")/../lib/common.sh"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
before=$(leftovers)

declare -A want=(
	[drop]='sequence 3001 received, expected 3000 (message lost)'
	[dup]='sequence 3000 received, expected 3001 (duplicate or reorder)'
	[short]='message 3000: length 63 (header says 64), expected 64'
	[corrupt]='message 3000: payload corrupt at byte 63'
)

# spoilt WHAT FAULT EXTRA...: the cell fails, naming the fault
spoilt() {
	local what=$1 f=$2 rc
	shift 2
	"$IPCLAB" run -t "$tp" -n 5000 -O fault="$f" -O fault-at=3000 -q -f json -o "$dir/r.json" \
		"$@" 2>"$dir/err"
	rc=$?
	[ $rc = 1 ] || { fail "$tp $what: exit $rc, expected 1: $(head -3 "$dir/err")"; return; }
	grep -qF "${want[$f]}" "$dir/err" ||
		fail "$tp $what: the report does not say '${want[$f]}': $(head -3 "$dir/err")"
}

for tp in null null-zc; do
for e in process thread; do
	for d in c2s s2c; do
		for f in drop dup short; do
			spoilt "stream $e $d $f" "$f" -p stream -e "$e" -O dir="$d"
		done
		spoilt "stream $e $d corrupt --verify" corrupt -p stream -e "$e" -O dir="$d" --verify
	done
	# the general loop: a think between messages, and two clients
	spoilt "stream $e think drop" drop -p stream -e "$e" --think-ns 1ns
	spoilt "stream $e 2 clients dup" dup -p stream -e "$e" --clients 2
	spoilt "pingpong $e dup" dup -p pingpong -e "$e"
	spoilt "pingpong $e short" short -p pingpong -e "$e"
	# no --verify: the payload is not checked, the header is intact
	"$IPCLAB" run -t "$tp" -p stream -n 5000 -e "$e" -O fault=corrupt -O fault-at=3000 -q \
		-f json -o "$dir/r.json" 2>"$dir/err" || fail "$tp stream $e corrupt without --verify failed"
	"$IPCLAB" run -t "$tp" -p stream -n 5000 -e "$e" -O fault=none -q -f json -o "$dir/r.json" \
		2>"$dir/err" || fail "$tp stream $e fault=none: $(head -3 "$dir/err")"
	python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["results"][0]
assert r["status"] == "ok" and r["metrics"]["msgs"] == 5000, r["metrics"]' "$dir/r.json" ||
		fail "$tp stream $e fault=none: not every message moved"
done
done
# runs of one slot to 64: the fault at a run's first, inner and last place
for slots in 1 3 64; do
	for f in drop short; do
		tp=null-zc spoilt "slots=$slots stream $f" "$f" -p stream -O slots=$slots
	done
done
tp=null-zc spoilt "slots=2 stream dup" dup -p stream -O slots=2
# -d: a batching transport's stream runs its batched loops for a duration
tp=null-zc spoilt "stream -d drop" drop -p stream -d 300ms
"$IPCLAB" run -t null-zc -p stream -d 200ms -q -f json -o "$dir/r.json" 2>"$dir/err" ||
	fail "null-zc stream -d 200ms: $(head -3 "$dir/err")"
python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["results"][0]; m=r["metrics"]
assert r["status"] == "ok" and m["msgs"] > 0, m
assert 0.2e9 <= m["elapsed_ns"] < 2e9, m["elapsed_ns"]' "$dir/r.json" ||
	fail "null-zc stream -d 200ms: no messages, or a window that is not the duration"

[ -z "$(new_leftovers "$before" "$(leftovers)")" ] || fail "left behind: $(new_leftovers "$before" "$(leftovers)")"
finish
