#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# --trace loses no events on the cell that lost the most of them: a
# SCHED_FIFO posix-mq stream with its endpoints free to move. There a
# reader going to sleep is woken from the other CPU between leaving its
# runqueue and its switch-out, both handlers run at once, and the tracer
# took the reader for asleep when it switched back in (hundreds of missed
# wakeups per cell). Every cell's trace must be complete, its lost events
# 0, the recovered wakeups counted among the side's wakeups. Several
# cells: the race needs the two CPUs' timing, one cell may not meet it.
# Skips without kernel BTF, root, two CPUs or SCHED_FIFO.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/trace_skip.sh"
[ "$(nproc)" -ge 2 ] || { echo "skip: needs two CPUs"; exit 77; }
chrt -f 10 true 2>/dev/null || { echo "skip: SCHED_FIFO not allowed here"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for k in 1 2 3; do
	"$IPCLAB" run -t posix-mq -p stream --sched fifo:10 -n 30000 --trace -f json \
		-o "$tmp/r$k.json" 2>"$tmp/err" || fail "traced fifo stream: $(cat "$tmp/err")"
done
python3 - "$tmp"/r*.json <<'PY' || fail "a traced fifo posix-mq stream lost events"
import json, sys
raced = 0
for f in sys.argv[1:]:
    for r in json.load(open(f))["results"]:
        t = r["trace"]
        assert sum(t["lost_by"].values()) == t["lost_events"], t["lost_by"]
        assert t["lost_events"] == 0 and t["complete"] is True, (f, t["lost_by"])
        for s in t["sides"]:
            assert 0 <= s["wakeups_raced"] <= s["wakeups"], s
            raced += s["wakeups_raced"]
print("wakeups recovered from a race:", raced)
PY
finish
