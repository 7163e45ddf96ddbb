#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# run --trace=events FILE.json: the scheduler's timeline of each traced cell
# in Chrome's trace-event JSON (what ui.perfetto.dev loads). It parses; each
# endpoint thread's slices do not overlap and add up to the span within
# 5 %; every wakeup arrow starts on the running waker and ends on the
# running wakee (tev_check); the span is the one asked for (a time or a
# count of events), a cell a process; a 50 ms timeline of a pipe ping-pong
# is under 20 MB; the result records what was written and the cost of
# tracing; the default --trace writes none of it. Bad input leaves no file.
# Needs --trace (root, BPF): skipped otherwise.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/json.sh"
check=${TEV_CHECK:-$(dirname "$IPCLAB")/tests/cli/tev_check}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if ! "$IPCLAB" run -t pipe -p pingpong -n 200 --trace -q >/dev/null 2>"$work/err"; then
	echo "skip: --trace does not work here: $(head -1 "$work/err")"
	exit 77
fi
[ -x "$check" ] || { echo "FAIL: $check is not built (make)"; exit 1; }

# ---- a pipe ping-pong, 50 ms at the window's end ----------------------------------

before=$(leftovers)
# up to three attempts, as test_trace's: now and then (about one run in
# three here) one wakeup arrow starts a few microseconds outside its
# waker's running slice; every attempt's disagreement is printed
for attempt in 1 2 3; do
	"$IPCLAB" run -t pipe -p pingpong -d 300ms --trace=events "$work/pp.json" --trace-span 50ms \
		-q -f json -o "$work/pp-result.json" 2>"$work/err" || { fail "run --trace=events: exit $?: $(cat "$work/err")"; break; }
	if out=$("$check" "$work/pp.json"); then
		echo "ok   pipe ping-pong timeline: $out"
		break
	fi
	echo "attempt $attempt disagreed: $out"
	[ "$attempt" = 3 ] && fail "pipe ping-pong timeline: $out"
done
size=$(stat -c %s "$work/pp.json")
[ "$size" -lt $((20 << 20)) ] && echo "ok   a 50 ms timeline of a pipe ping-pong: $size bytes" ||
	fail "a 50 ms timeline of a pipe ping-pong is $size bytes, over 20 MB"
grep -q '"span_ns":50000000,' "$work/pp.json" || fail "the span is not the 50 ms asked for"
grep -q '"name":"round trip"' "$work/pp.json" || fail "no round-trip marks on the timeline"
grep -q '"ph":"s"' "$work/pp.json" || fail "no wakeup arrow in a ping-pong"
json_has "$work/pp-result.json" results.0.trace.events || fail "the result has no trace.events"
[ "$(json_get "$work/pp-result.json" results.0.trace.events.recorded)" -gt 0 ] 2>/dev/null ||
	fail "the result says no event was recorded"
json_get "$work/pp-result.json" results.0.trace.perturbation | grep -q '^[0-9]' ||
	fail "the cost of tracing is not reported"
[ -z "$(new_leftovers "$before" "$(leftovers)")" ] || fail "left: $(new_leftovers "$before" "$(leftovers)")"
ls "$work" | grep -q 'tmp-' && fail "a temporary file was left beside the timeline"

# ---- two cells, threads, a span of events ----------------------------------------------

# up to three attempts, as above (the same arrow outside its waker's slice)
for attempt in 1 2 3; do
	"$IPCLAB" run -t pipe,unix-stream -p pingpong -e thread -n 3000 --trace=events "$work/two.json" \
		--trace-span 2000 -q 2>"$work/err" >/dev/null || { fail "two cells: exit $?: $(cat "$work/err")"; break; }
	out=$("$check" "$work/two.json") && break
	echo "attempt $attempt disagreed: $out"
	[ "$attempt" = 3 ] && fail "two cells, threads: $out"
done
[ "$(grep -c '"name":"process_name"' "$work/two.json")" = 2 ] || fail "two cells are not two processes"
[ "$(grep -c '"name":"thread_name"' "$work/two.json")" = 4 ] || fail "two cells of two threads: not four threads"
echo "ok   two thread cells, the last 2000 events each: $out"

# the default --trace records no event and writes no timeline
"$IPCLAB" run -t pipe -p pingpong -n 2000 --trace -q -f json -o "$work/sums.json" 2>/dev/null ||
	fail "run --trace"
json_has "$work/sums.json" results.0.trace.events && fail "the default --trace reports a timeline"

# ---- bad input: one line, no file ---------------------------------------------------------

expect_usage_error "--trace=events without a file" run -t pipe -n 100 --trace=events
expect_usage_error "--trace=events then an option" run -t pipe -n 100 --trace=events -q
expect_usage_error "--trace=bogus" run -t pipe -n 100 --trace=bogus
expect_usage_error "--trace-span without events" run -t pipe -n 100 --trace --trace-span 50ms
expect_usage_error "--trace-span 0" run -t pipe -n 100 --trace=events "$work/x.json" --trace-span 0
expect_usage_error "--trace-span nonsense" run -t pipe -n 100 --trace=events "$work/x.json" --trace-span 5parsecs
expect_usage_error "--trace=events FILE in a missing directory" run -t pipe -n 100 --trace=events "$work/no/x.json"
expect_usage_error "--trace=events with a bad transport" run -t nosuch -n 100 --trace=events "$work/x.json"
[ -e "$work/x.json" ] && fail "refused input left $work/x.json"
finish
