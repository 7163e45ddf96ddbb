#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# --trace on a stream cell (pipe, half a second): its cause split has no
# exchanges to draw from, so each share's 95 % interval comes from the
# window's slices (ci_slices); every share has one that holds it; a
# leading cause is named only where its interval lies above every other
# share's, and then with its knob; otherwise the sentence says there is no
# single leading cause over the slices and gives no knob. The same cell
# run twice never names two different leading causes. The table and the
# page print the intervals. Needs --trace (root, BPF): skipped otherwise.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/trace_skip.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# A timeline (--trace=events) makes a traced cell run one untraced/traced
# pair instead of three: the same sums, a third of the time. The cell runs
# in the real-time class where it may, so that the machine's other tasks
# (other tests, a build) do not make its two runs two different cells: a
# stream under a changing load is preempted in one run and waits for a CPU
# in the next, and each run's intervals speak of its own window only.
sched=
"$IPCLAB" run -t null -n 10 --sched fifo:10 -o /dev/null 2>/dev/null && sched="--sched fifo:10"
for i in 1 2; do
	# shellcheck disable=SC2086
	"$IPCLAB" run -t pipe -p stream $sched -d 0.5s --trace=events "$work/tl$i.json" --trace-span 1ms \
		-f json -o "$work/run$i.json" 2>"$work/err" ||
		{ echo "FAIL: run $i did not run: $(head -1 "$work/err")"; exit 1; }
done

python3 "$(dirname "$0")/../lib/leading_rule.py" slices 30 64 "$work/run1.json" "$work/run2.json" || exit 1

# the table: each share of the cause line with its interval; the page too
"$IPCLAB" run -t pipe -p stream -d 0.3s --trace=events "$work/tl3.json" --trace-span 1ms \
	--html "$work/run3.html" >"$work/table.txt" 2>/dev/null
grep -Eq '^    cause \((sender|receiver)\): [A-Za-z ()]+ [0-9]+% \([0-9]+-[0-9]+%\)' "$work/table.txt" ||
	fail "no intervals on the table's cause line: $(grep 'cause (' "$work/table.txt")"
grep -Eq 'class="cause"><b>cause:</b> [A-Za-z ()]+ [0-9.]+ % \([0-9]+&ndash;[0-9]+ %\)' "$work/run3.html" ||
	fail "no intervals on the page's cause line: $(grep -o 'class="cause">.\{0,120\}' "$work/run3.html")"
[ "$fails" = 0 ] && echo "ok   trace_leading_slices" || exit 1
