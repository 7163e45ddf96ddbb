#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# ipclab report's trace table for a side that was never woken (a stream's
# sender that never blocked, a client of a suite's quick cell): run writes
# its wakeup_lat_ns as null (docs/output.md), and the page shows its woken
# p50 and p99 as "-", not as a number that is not one. The file is made
# from tests/data by jq, so no tracer is needed.
. "$(dirname "$0")/../lib/common.sh"
command -v jq >/dev/null || { echo "skip: no jq"; exit 77; }
data=$(cd "$(dirname "$0")/../data" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

jq '.results[0].trace.sides[1] += { wakeups: 0, wakeup_lat_ns: null }' \
	"$data/report-traced.json" >"$work/never.json" || { echo "FAIL: jq"; exit 1; }
"$IPCLAB" report "$work/never.json" -o "$work/never.html" 2>"$work/err" ||
	fail "report: $(cat "$work/err")"

# the side's row of the wakeup table: name, wakeups, woken p50, woken p99
row=$(grep -m1 '^<tr><td>client 0</td><td class="num">0</td>' "$work/never.html")
if [ -z "$row" ]; then
	fail "no table row for the never-woken client"
elif grep -q 'nan' <<<"$row"; then
	fail "never-woken side's wakeup latency shown as a number: $row"
elif ! grep -q '<td class="num">0</td><td class="num">-</td><td class="num">-</td>' <<<"$row"; then
	fail "never-woken side's woken p50 and p99 are not '-': $row"
else
	echo "ok   never-woken side: woken p50 and p99 shown as '-'"
fi
# a side that was woken keeps its figures
grep -q '^<tr><td>server</td><td class="num">[1-9][0-9]*</td><td class="num">[0-9.]*[nmu]*s</td>' \
	"$work/never.html" && echo "ok   woken side: its wakeup latency shown" ||
	fail "the woken server's wakeup latency is gone"
finish
