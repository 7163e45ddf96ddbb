#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# --trace on a cell of few exchanges (a ring-ipc ping-pong paced at 50/s
# for a second, about 50): every share of its cause split has a 95 %
# interval that holds it; a leading cause is named only where its interval
# lies above every other share's, and then with its knob; otherwise the
# sentence says there is no single leading cause and gives no knob. The
# same cell run twice never names two different leading causes. The table
# prints the intervals. Needs --trace (root, BPF): skipped otherwise.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/trace_skip.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# A timeline (--trace=events) makes a traced cell run one untraced/traced
# pair instead of three: the same sums, a third of the time.
for i in 1 2; do
	"$IPCLAB" run -t ring-ipc -p pingpong --rate 50/s -d 1s --trace=events "$work/tl$i.json" \
		--trace-span 1ms -f json -o "$work/run$i.json" 2>"$work/err" ||
		{ echo "FAIL: run $i did not run: $(head -1 "$work/err")"; exit 1; }
done

python3 "$(dirname "$0")/../lib/leading_rule.py" exchanges 10 200 "$work/run1.json" "$work/run2.json" || exit 1

# the table: each share of the cause line with its interval
"$IPCLAB" run -t ring-ipc -p pingpong --rate 50/s -d 1s --trace=events "$work/tl3.json" \
	--trace-span 1ms >"$work/table.txt" 2>/dev/null
grep -Eq '^    cause \(round trip\): [A-Za-z ()]+ [0-9]+% \([0-9]+-[0-9]+%\)' "$work/table.txt" ||
	fail "no intervals on the table's cause line: $(grep 'cause (' "$work/table.txt")"
[ "$fails" = 0 ] && echo "ok   trace_leading" || exit 1
