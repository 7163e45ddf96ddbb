#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# --trace names the machine's share (docs/trace.md): a CPU hog pinned to
# the client's CPU, a child of this test with a hostile name (quotes, a
# tag, a control byte, a backslash), is named with its pid in the client's
# preempted_by, its name made printable and escaped in the JSON, the text
# table and the HTML page; the time charged to others is part of the time
# the side was runnable. Skips without kernel BTF, root or two CPUs.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/trace_skip.sh"
[ "$(nproc)" -ge 2 ] || { echo "skip: needs two CPUs"; exit 77; }
tmp=$(mktemp -d)
hog=
trap '[ -n "$hog" ] && kill "$hog" 2>/dev/null; rm -rf "$tmp"' EXIT

# the hog renames itself (its comm: hog"<b>&, byte 1, backslash), then spins
taskset -c 1 bash -c 'printf "hog\"<b>&\001\\\\" > /proc/self/comm; while :; do :; done' &
hog=$!
for _ in $(seq 100); do
	[ "$(cat /proc/$hog/comm 2>/dev/null)" != bash ] && [ -n "$(cat /proc/$hog/comm 2>/dev/null)" ] && break
	sleep 0.05
done
case $(cat /proc/$hog/comm 2>/dev/null) in hog*) ;; *) echo "FAIL: the hog did not start"; exit 1 ;; esac

"$IPCLAB" run -t pipe -p pingpong -n 500 --pin 0:1 --trace -f json -o "$tmp/r.json" \
	--html "$tmp/r.html" 2>"$tmp/err" || fail "traced run with a hog: $(cat "$tmp/err")"
python3 - "$tmp/r.json" "$hog" <<'PY' || fail "preempted_by does not name the hog"
import json, sys
t = json.load(open(sys.argv[1]))["results"][0]["trace"]
hog = int(sys.argv[2])
client = t["sides"][1]
takers = client["preempted_by"]
named = [x for x in takers if x["pid"] == hog]
assert named, "hog %d not in %s" % (hog, takers)
h = named[0]
assert h["comm"] == 'hog"<b>&?\\', repr(h["comm"])
assert h["ns"] > 0 and h["count"] > 0 and h["tid"] == hog, h
assert len(takers) <= 5 and takers == sorted(takers, key=lambda x: -x["ns"]), takers
for s in t["sides"]:
    assert s["preempted_by_ns"] >= sum(x["ns"] for x in s["preempted_by"]), s
    assert s["preempted_by_woken_ns"] <= s["preempted_by_ns"], s
    # charged only while the side was runnable (a 2 % margin: two clocks' reads)
    assert s["preempted_by_ns"] <= 1.02 * (s["runnable_ns"] + s["preempted_ns"]) + 1e5, s
    for x in s["preempted_by"]:
        assert len(x["comm"]) <= 15 and all(0x20 <= ord(c) < 0x7f for c in x["comm"]), x
PY
grep -q '&lt;b&gt;' "$tmp/r.html" && ! grep -q 'hog"<b>' "$tmp/r.html" ||
	fail "the hog's name is not escaped in the HTML page"

"$IPCLAB" run -t pipe -p pingpong -n 500 --pin 0:1 --trace >"$tmp/table.txt" 2>"$tmp/err" ||
	fail "traced table run: $(cat "$tmp/err")"
grep -q '^    machine: .*client 0 lost [0-9.]*% of its window to ' "$tmp/table.txt" ||
	fail "no machine line for the client: $(cat "$tmp/table.txt")"
if grep -q 'hog"<b>' "$tmp/table.txt"; then
	grep -q "hog\"<b>&?\\\\ (pid $hog" "$tmp/table.txt" || fail "the table names the hog unclean: $(grep machine "$tmp/table.txt")"
fi
LC_ALL=C grep -q $'\x01' "$tmp/table.txt" && fail "a control byte reached the table"
finish
