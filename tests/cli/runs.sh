#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# run --runs N: the plan run N times as separate runs. The record holds
# each cell's fold over the runs ("repeat" over "runs") and every run's
# figures (results[].runs), and the runs' starts and canaries (runs[]);
# the runs of two cells interleave (run 1 of both, then run 2); compare of
# two --runs files tests over the runs and says so; bad N and what --runs
# cannot take exit 2 with one line, leaving nothing.
. "$(dirname "$0")/../lib/common.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
n=$(scaled 2000)

# ---- bad input ----
for bad in 0 1 101 x 3x -2; do
	expect_usage_error "--runs $bad" run -t null -p pingpong -n 100 --runs "$bad" -o "$work/bad.json"
done
expect_usage_error "--runs with --repeat" run -t null -p pingpong -n 100 --runs 2 --repeat 3 -o "$work/bad.json"
expect_usage_error "--runs with --peer" run -t tcp -p pingpong -n 100 --runs 2 --peer 127.0.0.1:1 -o "$work/bad.json"
expect_usage_error "--runs with -p cycle" run -t pipe -p cycle --period 1ms -n 100 --runs 2 -o "$work/bad.json"
[ -e "$work/bad.json" ] && fail "a refused --runs left $work/bad.json"

# ---- the record ----
"$IPCLAB" run -q -t null,pipe -p pingpong -s 64 -n "$n" --runs 3 -f json -o "$work/a.json" 2>"$work/err" ||
	fail "run --runs 3: exit $?: $(cat "$work/err")"
python3 - "$work/a.json" <<'PY' || fail "run --runs 3: the record is wrong"
import json, sys
d = json.load(open(sys.argv[1]))
bad = []
runs = d.get("runs")
if not isinstance(runs, list) or len(runs) != 3:
    bad.append("runs: %r" % (runs,))
else:
    if [r["run"] for r in runs] != [1, 2, 3]:
        bad.append("run numbers %r" % [r["run"] for r in runs])
    for r in runs:
        c = r.get("canary", {})
        if not ("start" in c and "end" in c):
            bad.append("run %d: no canary at its start and end: %r" % (r["run"], c))
        if not r.get("started_utc") or not r.get("elapsed_ns", 0) > 0:
            bad.append("run %d: no start: %r" % (r["run"], r))
if len(d["results"]) != 2:
    bad.append("%d cells, expected 2" % len(d["results"]))
for c in d["results"]:
    cr = c.get("runs", [])
    if len(cr) != 3 or any(x.get("status") != "ok" or "lat_p50_ns" not in x.get("metrics", {}) for x in cr):
        bad.append("%s: runs %r" % (c["transport"], cr)[:300])
        continue
    rep = c.get("repeat", {})
    if rep.get("over") != "runs" or rep.get("n") != 3:
        bad.append("%s: repeat %r" % (c["transport"], {k: rep.get(k) for k in ("n", "over")}))
    vals = sorted(x["metrics"]["lat_p50_ns"] for x in cr)
    if c["metrics"]["lat_p50_ns"] != vals[1]:
        bad.append("%s: p50 %r is not the runs' median %r" % (c["transport"], c["metrics"]["lat_p50_ns"], vals))
    if rep.get("lat_p50_ns", {}).get("values") and sorted(rep["lat_p50_ns"]["values"]) != vals:
        bad.append("%s: repeat values %r, runs %r" % (c["transport"], rep["lat_p50_ns"]["values"], vals))
for b in bad:
    print("  " + b)
sys.exit(1 if bad else 0)
PY
ok_if "run --runs 3: 3 runs recorded, each with its start and its canary at start and end; each cell's 3 runs and their median"

# interleaved: each run's start canary comes before its cells, its end after;
# the runs' wall clock in order and one run's cells inside it
python3 - "$work/a.json" <<'PY' || fail "run --runs 3: runs not separate"
import json, sys
d = json.load(open(sys.argv[1]))
r = d["runs"]
off = [x["start_offset_ns"] for x in r]
if off[0] != 0:
    print("  run 1 starts at %r" % off[0]); sys.exit(1)
for a, b in zip(r, r[1:]):   # each starts after the one before has ended
    if not b["start_offset_ns"] >= a["start_offset_ns"] + a["elapsed_ns"] > a["start_offset_ns"]:
        print("  run %d (start %d) overlaps run %d (start %d, %d ns)" % (b["run"], b["start_offset_ns"],
              a["run"], a["start_offset_ns"], a["elapsed_ns"])); sys.exit(1)
PY
ok_if "run --runs 3: distinct starts, each run after the one before ended"
"$IPCLAB" run -t null,pipe -p pingpong -s 64 -n "$n" --runs 2 -f json -o "$work/p.json" 2>"$work/prog" ||
	fail "run --runs 2: exit $?"
grep -c '^ipclab: run [12] of 2$' "$work/prog" | grep -qx 2 || fail "run --runs 2: no 'run K of 2' lines: $(head -5 "$work/prog")"
ok_if "run --runs 2: says each run as it starts"

# ---- compare ----
"$IPCLAB" run -q -t null -p pingpong -s 64 -n "$n" --runs 4 -f json -o "$work/b1.json" 2>"$work/err" || fail "run b1: exit $?"
"$IPCLAB" run -q -t null -p pingpong -s 64 -n "$n" --runs 4 -f json -o "$work/b2.json" 2>"$work/err" || fail "run b2: exit $?"
IPCLAB_DB="$work/none.db" "$IPCLAB" compare -m p50 "$work/b1.json" "$work/b2.json" >"$work/cmp.txt" 2>"$work/err"
rc=$?
[ $rc = 0 ] || fail "compare of two --runs files: exit $rc: $(cat "$work/err")"
grep -q '^basis: runs (4 before, 4 after)' "$work/cmp.txt" ||
	fail "compare of two --runs files: basis not runs: $(grep -i basis "$work/cmp.txt")"
grep -q 'p50 .*\[runs\]' "$work/cmp.txt" || fail "compare: the p50 verdict is not over runs: $(grep p50 "$work/cmp.txt")"
IPCLAB_DB="$work/none.db" "$IPCLAB" compare -f json -m p50 "$work/b1.json" "$work/b2.json" >"$work/cmp.json" 2>/dev/null
python3 - "$work/cmp.json" <<'PY' || fail "compare -f json of two --runs files: not over 4 and 4 runs"
import json, sys
d = json.load(open(sys.argv[1]))
b = d["basis"]
sys.exit(0 if b.get("runs_before") == 4 and b.get("runs_after") == 4 else 1)
PY
ok_if "compare of two --runs 4 files: over 4 runs a side"

finish
