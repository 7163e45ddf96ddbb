#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# run --reference (issue 12): every result carries a reference record (all
# fields for a transport with a reference loop, null and a reason for the
# rest), the pairs are interleaved A B per repetition with the order kept,
# a reference whose peer dies fails the run like any cell, and nothing is
# left behind. No ratio is asserted.
. "$(dirname "$0")/../lib/common.sh"
command -v jq >/dev/null || { echo "skip: no jq"; exit 0; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
before=$(leftovers)

tps=pipe,fifo,unix-stream,unix-dgram,unix-seqpacket,tcp,posix-mq
"$IPCLAB" run -t $tps,null -p pingpong,stream -n 2000 -e process,thread --repeat 2 \
	--reference -q -f json -o "$dir/r.json" 2>"$dir/err"
rc=$?
[ $rc = 0 ] || fail "run --reference: exit $rc: $(head -3 "$dir/err")"
[ -s "$dir/r.json" ] || { fail "no result file"; finish; }
n=$(jq '.results | length' "$dir/r.json")
[ "$n" = 32 ] || fail "expected 32 results, got $n"
bad=$(jq -r '.results[] | select(.transport != "null") | select(.reference == null or
	.reference.status != "ok" or (.reference | has("msgs_per_s", "lat_mean_ns", "lat_p50_ns",
	"pairs", "ratio", "overhead_pct", "order") | not) or .reference.msgs_per_s <= 0 or
	.reference.pairs != 2 or .reference.ratio == null) |
	"\(.transport)/\(.pattern)/\(.endpoints)"' "$dir/r.json")
[ -z "$bad" ] && echo "ok   a full reference record for $tps, process and thread" ||
	fail "incomplete reference records: $bad"
bad=$(jq -r '.results[] | select(.pattern == "pingpong" and .transport != "null") |
	select(.reference.lat_mean_ns == null or .reference.lat_p50_ns == null) | .transport' "$dir/r.json")
[ -z "$bad" ] || fail "ping-pong references without latency: $bad"
bad=$(jq -r '.results[] | select(.transport == "null") |
	select(.reference != null or (.reference_reason | length) == 0) | .endpoints' "$dir/r.json")
[ -z "$bad" ] && echo "ok   null: reference null, $(jq -r '[.results[] | select(.transport == "null")][0].reference_reason' "$dir/r.json")" ||
	fail "null: expected reference null with a reason"
# interleaved: each pair is (ipclab step, reference step right after); the
# second pair comes after every cell's first (a round of 32 cells)
bad=$(jq -r '.results[] | select(.reference != null) | .reference.order as $o |
	select(($o | length) != 2 or $o[0][1] != $o[0][0] + 1 or $o[1][1] != $o[1][0] + 1 or
	       $o[1][0] < 64) | "\(.transport)/\(.pattern)/\(.endpoints) \($o)"' "$dir/r.json")
steps=$(jq -r '[.results[] | .reference.order // [] | .[] | .[]] | sort | unique | length' "$dir/r.json")
[ -z "$bad" ] && echo "ok   pairs interleaved A B per repetition ($steps reference-side steps recorded)" ||
	fail "pairs not interleaved: $bad"

# the shared-memory and library references, the datagram ones: a full
# record for each (a cell skipped here, e.g. libqb-rb without libqb, has
# none: the cell did not run)
tps2=udp,sysv-mq,shm-futex,cacheline,libqb-rb,ring,ring-spin,ring-eventfd
"$IPCLAB" run -t $tps2 -p pingpong,stream -n 2000 -e process,thread --repeat 2 \
	--reference -q -f json -o "$dir/r2.json" 2>"$dir/err"
rc=$?
[ $rc = 0 ] || fail "run --reference ($tps2): exit $rc: $(head -3 "$dir/err")"
bad=$(jq -r '.results[] | select(.status == "ok") | select(.reference == null or
	.reference.status != "ok" or (.reference | has("msgs_per_s", "lat_mean_ns", "lat_p50_ns",
	"pairs", "ratio", "overhead_pct", "order") | not) or .reference.msgs_per_s <= 0 or
	.reference.pairs != 2 or .reference.ratio == null or
	(.pattern == "pingpong" and (.reference.lat_mean_ns == null or .reference.lat_p50_ns == null))) |
	"\(.transport)/\(.pattern)/\(.endpoints)"' "$dir/r2.json")
ran=$(jq -r '[.results[] | select(.status == "ok") | .transport] | unique | join(",")' "$dir/r2.json")
[ -z "$bad" ] && [ -n "$ran" ] && echo "ok   a full reference record for $ran, process and thread" ||
	fail "incomplete reference records: $bad (ran: $ran)"
bad=$(jq -r '.results[] | select(.status == "skipped") | select(.reference != null or
	(.reference_reason | length) == 0) | .transport' "$dir/r2.json")
[ -z "$bad" ] || fail "skipped cells with a reference or without a reason: $bad"

# knobs a reference mirrors: -d (the cell's own count), think time, the
# stream's direction, a transport's -O with a plain equivalent
"$IPCLAB" run -t pipe,shm-futex,ring -p stream -d 100ms -q --reference -f json -o "$dir/d.json" 2>"$dir/err" &&
	"$IPCLAB" run -t pipe -p pingpong --think 5 -n 1000 -q --reference -f json -o "$dir/k1.json" 2>>"$dir/err" &&
	"$IPCLAB" run -t unix-stream -p stream -O dir=s2c -n 5000 -q --reference -f json -o "$dir/k2.json" 2>>"$dir/err" &&
	"$IPCLAB" run -t ring -O batch=4 -p stream -n 5000 -q --reference -f json -o "$dir/k3.json" 2>>"$dir/err" &&
	"$IPCLAB" run -t tcp -O nodelay=0 -p stream -n 5000 -q --reference -f json -o "$dir/k4.json" 2>>"$dir/err" &&
	"$IPCLAB" run -t posix-mq -O maxmsg=4 -p stream -n 5000 -q --reference -f json -o "$dir/k5.json" 2>>"$dir/err" ||
	fail "mirrored knobs: $(head -3 "$dir/err")"
bad=$(jq -s -r '[.[].results[]] | .[] | select(.reference.status != "ok" or .reference.ratio == null) |
	"\(.transport)/\(.pattern): \(.reference_reason // .reference.reason)"' \
	"$dir"/d.json "$dir"/k[1-5].json)
n=$(jq -s '[.[].results[]] | length' "$dir"/d.json "$dir"/k[1-5].json)
[ -z "$bad" ] && [ "$n" = 8 ] && echo "ok   -d, --think, -O dir=s2c, -O batch/nodelay/maxmsg: a reference each ($n)" ||
	fail "mirrored knobs without a reference ($n results): $bad"
# and those it cannot: a reason that names the knob
for knob in "--clients 2:--clients 2" "--rate 2000:--rate 2000"; do
	arg=${knob%%:*} want=${knob#*:}
	"$IPCLAB" run -t pipe -p pingpong -n 200 $arg -q --reference -f json -o "$dir/n.json" 2>"$dir/err" ||
		fail "$arg: $(head -3 "$dir/err")"
	why=$(jq -r '.results[0] | select(.reference == null) | .reference_reason' "$dir/n.json")
	case $why in
	*"$want"*) echo "ok   $arg: reference null, $why" ;;
	*) fail "$arg: expected reference null with a reason naming $want, got '$why'" ;;
	esac
done

# the table: one reference line under each row
"$IPCLAB" run -t pipe,null -p pingpong -n 2000 --reference -q >"$dir/t.txt" 2>&1 ||
	fail "table run: $(cat "$dir/t.txt")"
grep -q '^  reference: .*ratio .*overhead_pct' "$dir/t.txt" && grep -q '^  reference: none (' "$dir/t.txt" &&
	echo "ok   table: $(grep -m1 '^  reference: .*ratio' "$dir/t.txt" | sed 's/^ *//')" ||
	fail "table lacks the reference lines: $(cat "$dir/t.txt")"

# a reference whose client dies is a failed run, with who died: a
# descriptor one, a shared-memory one and a library one (-d: the reference
# then runs as long as the cell did, whatever the speed)
# (a spinning cell on a loaded machine may move few messages in its 2 s,
# and its reference then ends within moments: a run whose reference was
# over before it was seen is run again, at most three times)
for tp in pipe shm-futex ring; do
	ep=process
	victim=
	for try in 1 2 3; do
		"$IPCLAB" run -t $tp -p pingpong -d 2s -e $ep --reference -q -f json \
			-o "$dir/k.json" 2>"$dir/kerr" &
		pid=$!
		while kill -0 $pid 2>/dev/null; do
			victim=$(pgrep -P $pid -x ref-client) && break
			sleep 0.01
		done
		[ -n "$victim" ] && break
		wait $pid
		echo "note $tp: try $try: the reference ended before it was seen; again"
	done
	[ -n "$victim" ] || { fail "$tp: no reference client seen in 3 runs"; continue; }
	kill -9 "$victim"
	wait $pid
	rc=$?
	[ $rc = 1 ] || fail "reference client killed: exit $rc, expected 1"
	st=$(jq -r '.results[0].reference.status' "$dir/k.json")
	why=$(jq -r '.results[0].reference.reason' "$dir/k.json")
	[ "$st" = failed ] && echo "$why" | grep -q "reference client (pid $victim) died: killed by signal 9" &&
		grep -q "killed by signal 9" "$dir/kerr" &&
		echo "ok   $tp: reference client killed: $why" ||
		fail "$tp: killed reference: status $st, reason $why, stderr $(cat "$dir/kerr")"
done

sleep 0.2
pgrep -x ref-server >/dev/null && pgrep -x ref-server | while read -r p; do
	grep -qs "IPCLAB_TEST_TAG=$IPCLAB_TEST_TAG" <(tr '\0' '\n' </proc/$p/environ) && fail "ref-server $p left running"
done
after=$(leftovers)
left=$(new_leftovers "$before" "$after")
[ -z "$left" ] && echo "ok   nothing left behind" || fail "left behind: $left"
finish
