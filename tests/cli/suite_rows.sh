#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A suite section's rows are its results' fields: seed-004 --quick (the
# cheapest section that runs, 12 cells of a 16 B ping-pong) prints one
# row per transport and kind of endpoint and a column per placement; each
# cell is the msgs/s of the result of that transport, endpoints and pin in
# -f json, as the run table writes msgs/s ("62.1k"), and the barrier
# between processes (skipped) has no row. The dry run lists every cell of
# the plan in the order of the JSON's results, one line each. Nothing is
# left behind.
. "$(dirname "$0")/../lib/common.sh"
command -v python3 >/dev/null || { echo "skip: no python3"; exit 77; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
before=$(leftovers)

"$IPCLAB" suite seeds --quick --section seed-004 -q -f json -o "$dir/s.json" >"$dir/t.txt" 2>"$dir/err" ||
	fail "suite seeds --section seed-004: exit $?: $(head -3 "$dir/err")"
python3 - "$dir/s.json" "$dir/t.txt" >"$dir/py" 2>&1 <<-'PY' &&
	import json, sys
	rs = json.load(open(sys.argv[1]))["results"]
	text = open(sys.argv[2]).read().splitlines()

	def count(v):	# fmt_count: the run table's msgs/s
	    u = 0
	    while abs(v) >= 1000 and u < 4:
	        v /= 1000
	        u += 1
	    f = "%.0f" if abs(v) >= 100 or u == 0 else "%.1f" if abs(v) >= 10 else "%.2f"
	    return (f % v) + ["", "k", "M", "G", "T"][u]

	def cell(tp, ep, pin):
	    got = [r for r in rs if (r["transport"], r["endpoints"], r["pin"]) == (tp, ep, pin)]
	    if len(got) != 1:
	        sys.exit("FAIL: %d results for %s %s %s" % (len(got), tp, ep, pin))
	    r = got[0]
	    return count(r["metrics"]["msgs_per_s"]) if r["status"] == "ok" else r["status"]

	head = [i for i, l in enumerate(text) if l.split() == ["unpinned", "same", "CPU", "two", "CPUs"]]
	if len(head) != 1:
	    sys.exit("FAIL: no column header in: %s" % text)
	rows = {"processes synchronised by a pipe": ("pipe", "process"),
	        "threads synchronised by a pipe": ("pipe", "thread"),
	        "threads synchronised by a pthread_barrier": ("barrier", "thread")}
	lines = text[head[0] + 1:head[0] + 4]
	for line in lines:
	    label = line[:46].strip()
	    if label not in rows:
	        sys.exit("FAIL: row %r is none of %s" % (line, list(rows)))
	    tp, ep = rows.pop(label)
	    want = [cell(tp, ep, pin) for pin in ("none", "same", "split")]
	    if line[46:].split() != want:
	        sys.exit("FAIL: %s: %s, its results say %s" % (label, line[46:].split(), want))
	if rows or len(rs) != 12:
	    sys.exit("FAIL: rows %s missing, %d results" % (list(rows), len(rs)))
	PY
	echo "ok   seed-004: each cell of its table is its result's msgs/s" ||
	fail "seed-004's rows are not its results: $(cat "$dir/py")"

# the dry run: a line per cell, in the results' order
"$IPCLAB" suite seeds --dry-run -q -f json -o "$dir/d.json" >"$dir/d.txt" 2>"$dir/err" ||
	fail "suite seeds --dry-run: exit $?: $(head -3 "$dir/err")"
python3 - "$dir/d.json" "$dir/d.txt" >"$dir/py" 2>&1 <<-'PY' &&
	import json, sys
	rs = json.load(open(sys.argv[1]))["results"]
	lines = [l.split() for l in open(sys.argv[2]) if l.startswith("  ") and " pin " in l]
	if len(lines) != len(rs) or not rs:
	    sys.exit("FAIL: %d lines for %d cells" % (len(lines), len(rs)))
	for w, r in zip(lines, rs):
	    want = [r["transport"], r["pattern"], str(r["size_bytes"]), "B", r["endpoints"],
	            "pin", r["pin"], "sched", r["sched"], "clients", str(r["clients"])]
	    if w[:len(want)] != want:
	        sys.exit("FAIL: line %s is not cell %s" % (w, want))
	PY
	echo "ok   --dry-run: a line per cell, in the results' order" ||
	fail "the dry run's lines are not the plan's cells: $(cat "$dir/py")"

after=$(leftovers)
left=$(new_leftovers "$before" "$after")
[ -z "$left" ] && echo "ok   nothing left behind" || fail "left behind: $left"
finish
