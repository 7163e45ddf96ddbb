#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Knobs that once reached the cell wrong, and a run that once reported a
# false failure: each checked end to end (the record and the behaviour).
. "$(dirname "$0")/../lib/common.sh"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
before=$(leftovers)
py() { python3 -c "$1" "$dir/r.json" || fail "$2"; }

# --think-ns reaches the record ...
"$IPCLAB" run -t pipe -p stream --think-ns 10us -n 1000 -f json --dry-run -o "$dir/r.json" -q ||
	fail "think-ns dry run"
py 'import json,sys; r=json.load(open(sys.argv[1]))["results"]
assert [x["think_ns"] for x in r]==[10000] and all(x["think"]==0 for x in r), r' "think-ns recorded"
"$IPCLAB" run -t null -p stream --think-ns 1us..4us -n 10 -f json --dry-run -o "$dir/r.json" -q ||
	fail "think-ns range dry run"
py 'import json,sys; r=json.load(open(sys.argv[1]))["results"]
assert sorted(x["think_ns"] for x in r)==[1000,2000,4000], r' "think-ns range recorded"
# ... and the behaviour: 50 messages with a busy think of 2 ms each (100 ms
# in all) take longer than the same cell without it. The think is a loop
# calibrated at start-up, which a loaded machine can misjudge several times
# over, so only a tenth of it is required, and a disturbed pair of runs is
# repeated (three pairs at most)
spent=0
for attempt in 1 2 3; do
	"$IPCLAB" run -t pipe -p stream --think-ns 2ms -n 50 -f json -o "$dir/t.json" -q 2>/dev/null &&
	"$IPCLAB" run -t pipe -p stream -n 50 -f json -o "$dir/r.json" -q 2>/dev/null ||
		{ fail "think-ns run"; break; }
	python3 -c 'import json,sys
t=json.load(open(sys.argv[1]))["results"][0]; p=json.load(open(sys.argv[2]))["results"][0]
assert t["think_ns"]==2000000 and p["think_ns"]==0 and t["metrics"]["msgs"]==50, (t, p)
assert t["metrics"]["elapsed_ns"] - p["metrics"]["elapsed_ns"] >= 0.1*50*2e6, (t["metrics"]["elapsed_ns"], p["metrics"]["elapsed_ns"])' \
		"$dir/t.json" "$dir/r.json" && { spent=1; break; }
done
[ $spent = 1 ] || fail "think-ns is spent"

# SIGCHLD inherited as ignored: the run completes and reports success
for e in process thread; do
	out=$(perl -e '$SIG{CHLD}="IGNORE"; exec @ARGV' "$IPCLAB" run -t pipe -n 1000 -e $e -q -f json 2>&1)
	rc=$?
	[ $rc = 0 ] || fail "SIGCHLD ignored ($e): exit $rc: $(echo "$out" | tail -n 2)"
	echo "$out" | grep -q '"status": "ok"' || fail "SIGCHLD ignored ($e): no ok result"
done
perl -e '$SIG{CHLD}="IGNORE"; exec @ARGV' "$IPCLAB" run -t pipe,unix-stream -p pingpong -n 500 -q >/dev/null 2>&1 ||
	fail "SIGCHLD ignored, ping-pong"

# ranges that would overflow, and durations past 2^63 ns: bad input
expect_usage_error "think range past 2^64" run -t pipe --think 4611686018427387904..18446744073709551615 -n 10
expect_usage_error "think too large" run -t pipe --think 2000000000 -n 10
expect_usage_error "think-ns past 2^63 ns" run -t pipe --think-ns 9300000000000000000ns -n 10
expect_usage_error "think-ns too long" run -t pipe --think-ns 2h -n 10
expect_usage_error "duration past 2^63 ns" run -t pipe -d 9300000000s
expect_usage_error "size range with too many values" run -t null -s 16,32,64,128,256,512,1k,2k,4k,8k,16k,32k,64k,128k,256k,512k,1M,2M,4M,8M,16M,32M,64M,128M,256M,512M,1G,16,32,64,128,256,512,1k,2k,4k,8k,16k,32k,64k,128k,256k,512k,1M,2M,4M,8M,16M,32M,64M,128M,256M,512M,1G,16,32,64,128,256,512,1k,2k,4k,8k,16k,32k -n 10
"$IPCLAB" run -t null --think 1..18446744073709551615 -n 10 --dry-run -q -f json -o "$dir/r.json" 2>/dev/null
[ $? = 2 ] || fail "think 1..2^64-1 not refused"

# an option value the transport cannot take is bad input, said once
if "$IPCLAB" list | grep -q '^  ring '; then
	expect_usage_error "ring capacity not a power of two" run -t ring -O capacity=12k -n 100
fi

[ -z "$(new_leftovers "$before" "$(leftovers)")" ] || fail "left behind: $(new_leftovers "$before" "$(leftovers)")"
finish
