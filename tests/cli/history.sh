#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# ipclab history over a SQLite store of synthetic imported runs (made here
# with a fixed seed): a 2x step found at the right run, with its ratio and
# p-value; no change point in 40 flat noisy series (false alarms counted);
# a small step within the points' own ci95 not reported, the same step
# without intervals reported; labels and --since filter; --by orders by a
# label; --against tells a changed candidate (exit 3 with --fail-on-change)
# from an unchanged one (exit 0); compare --db --baseline reads the stored
# baseline; a hostile label is escaped in the HTML and SVG; real runs make
# a history too.
. "$(dirname "$0")/../lib/common.sh"

command -v python3 >/dev/null || { echo "skip: needs python3"; exit 77; }
unset IPCLAB_DB
need_sqlite
d=$TMPDIR/h
mkdir -p "$d"
db=$d/h.db

# gen DIR: synthetic result files, one per run (day i of 2025):
#   step  (pipe pingpong 64 B): lat_p50_ns 10 us, x2 from run 18 (index 18) on
#   flat  (40 cells, "flat" 1..40 B): msgs_per_s 1M, 5 % noise, no change
#   ci    (pipe pingpong 128 B): a 1.1x step at run 18, each point with a ci95 of +-20 %
#   noci  (pipe pingpong 256 B): the same step, no interval
python3 - "$d" <<'EOF'
import json, random, sys
random.seed(20250101)
out = sys.argv[1]
def cell(tp, size, metrics, extra=None):
    c = {"transport": tp, "pattern": "pingpong", "size_bytes": size, "endpoints": "process",
         "pin": "none", "sched": "other", "clients": 1, "status": "ok",
         "options": {"transport": {}, "pattern": {}}, "metrics": metrics}
    c.update(extra or {})
    return c
for i in range(30):
    res = [cell("pipe", 64, {"lat_kind": "rtt", "lat_p50_ns": 10000 * (2 if i >= 18 else 1) * (1 + random.gauss(0, 0.05)),
                             "msgs_per_s": 50000.0})]
    for k in range(1, 41):
        res.append(cell("flat", k, {"lat_kind": "one_way", "msgs_per_s": 1e6 * (1 + random.gauss(0, 0.05))}))
    v = 10000 * (1.1 if i >= 18 else 1) * (1 + random.gauss(0, 0.01))
    res.append(cell("pipe", 128, {"lat_kind": "rtt", "lat_p50_ns": v},
                    {"repeat_n": 9, "repeat": {"n": 9, "lat_p50_ns": {"min": v * 0.7, "max": v * 1.3, "ci95": [v * 0.8, v * 1.2]}}}))
    res.append(cell("pipe", 256, {"lat_kind": "rtt", "lat_p50_ns": v}))
    doc = {"schema_version": 1, "ipclab_version": "0.1.0", "ipclab_git_rev": "synthetic",
           "created_utc": "2025-01-%02dT12:00:00Z" % (i + 1), "cmdline": "synthetic",
           "env": {"hostname": "hostA", "kernel": "6.1.%d #1 SMP" % i}, "results": res}
    json.dump(doc, open("%s/run%02d.json" % (out, i), "w"))
EOF
for i in $(seq -w 0 29); do
	"$IPCLAB" db import -q --db "$db" --label "commit=c$i,ver=1.$((10#$i % 12))" "$d/run$i.json" ||
		fail "import run$i: exit $?"
done

"$IPCLAB" history --db "$db" -f json -o "$d/all.json" || fail "history -f json: exit $?"
python3 - "$d/all.json" <<'EOF' || fail "history: wrong series or change points"
import json, sys
h = json.load(open(sys.argv[1]))
by = {(s["config"]["transport"], s["config"]["size_bytes"]): s for s in h["series"]}
assert h["method"]["name"].startswith("E-Divisive"), h["method"]
step = by[("pipe", 64)]
assert step["metric"] == "lat_p50_ns" and len(step["points"]) == 30, step["metric"]
cps = step["change_points"]
assert len(cps) == 1, cps
cp = cps[0]
assert cp["index"] == 18 and cp["at"] == "2025-01-19T12:00:00Z" and cp["labels"]["commit"] == "c18", cp
assert 1.8 < cp["ratio"] < 2.2 and cp["p_value"] <= 0.01 and 9000 < cp["before"] < 11000, cp
p = step["points"][0]
assert set(p) >= {"at", "labels", "value", "ci95"} and p["labels"]["machine"] == "hostA", p
flat = [s for (t, _), s in by.items() if t == "flat"]
alarms = sum(1 for s in flat if s["change_points"])
print("ok   step found at run 19 (x%.2f, p %.3f); flat series with a false alarm: %d of %d" %
      (cp["ratio"], cp["p_value"], alarms, len(flat)))
assert len(flat) == 40 and alarms <= 2, alarms
assert not by[("pipe", 128)]["change_points"], "a 1.1x step inside +-20 % intervals was reported"
assert by[("pipe", 128)]["points"][0]["ci95"] is not None
assert [c["index"] for c in by[("pipe", 256)]["change_points"]] == [18], by[("pipe", 256)]["change_points"]
print("ok   a 1.1x step: not a change within each point's ci95, a change without intervals")
EOF

# ---- filters ----
"$IPCLAB" history --db "$db" -t pipe -s 64 --label commit=c03 -f json -o "$d/one.json" || fail "history --label: exit $?"
python3 -c 'import json,sys; h=json.load(open(sys.argv[1])); s=h["series"]; assert len(s)==1 and len(s[0]["points"])==1 and s[0]["points"][0]["labels"]["commit"]=="c03", s' \
	"$d/one.json" || fail "history --label commit=c03 -t pipe -s 64: not one point"
"$IPCLAB" history --db "$db" -t 'fl*' -s 1,2 --since 2025-01-21 -f json -o "$d/since.json" || fail "history --since: exit $?"
python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))["series"]; assert len(s)==2 and all(len(x["points"])==10 for x in s), [len(x["points"]) for x in s]' \
	"$d/since.json" || fail "history -t 'fl*' -s 1,2 --since: wrong points"
"$IPCLAB" history --db "$db" -t pipe -s 64 --by ver -f json -o "$d/by.json" || fail "history --by: exit $?"
python3 -c '
import json, sys
p = json.load(open(sys.argv[1]))["series"][0]["points"]
v = [x["labels"]["ver"] for x in p]
key = [tuple(int(n) for n in s.split(".")) for s in v]
assert key == sorted(key), v' "$d/by.json" || fail "history --by ver: not in version order"
expect_usage_error "history: a store with no match" history --db "$db" -t nosuch
expect_usage_error "history: a bad --since" history --db "$db" --since yesterday
expect_usage_error "history: --against without --label" history --db "$db" --against main
expect_usage_error "history: an unknown format" history --db "$db" -f pdf

# ---- --against, bisect-style ----
"$IPCLAB" history --db "$db" -t pipe -s 64 --label commit=c25 --against c05 --fail-on-change >"$d/out"
rc=$?
[ $rc = 3 ] || fail "--against a 2x change, --fail-on-change: exit $rc, expected 3: $(cat "$d/out")"
grep -q CHANGED "$d/out" || fail "--against: the change is not shown"
# --threshold: a 2x change under a 150 % threshold is no change (exit 0)
"$IPCLAB" history --db "$db" -t pipe -s 64 --label commit=c25 --against c05 --threshold 150 \
	--fail-on-change >"$d/out" || fail "--threshold 150: a 2x change still failed: exit $?: $(cat "$d/out")"
grep -q CHANGED "$d/out" && fail "--threshold 150: a 2x change still shown as CHANGED"
# --alpha and --min-segment reach the method; a segment longer than the
# 30 runs cannot hold two segments of 16 (no change point can be placed)
"$IPCLAB" history --db "$db" -t pipe -s 64 --alpha 0.05 --min-segment 5 -f json -o "$d/knobs.json" ||
	fail "history --alpha --min-segment: exit $?"
"$IPCLAB" history --db "$db" -t pipe -s 64 --min-segment 16 -f json -o "$d/seg13.json" ||
	fail "history --min-segment 16: exit $?"
python3 - "$d/knobs.json" "$d/seg13.json" "$d/all.json" <<'EOF2' || fail "--alpha / --min-segment: not in the method or the change points"
import json, sys
k, s, a = (json.load(open(f)) for f in sys.argv[1:4])
def cps(h):
    return [x for x in h["series"] if x["config"]["transport"] == "pipe" and x["config"]["size_bytes"] == 64][0]["change_points"]
assert k["method"]["alpha"] == 0.05 and k["method"]["min_segment"] == 5, k["method"]
# a looser alpha finds the step and at least what the default finds
assert any(c["index"] == 18 and c["ratio"] > 1.8 for c in cps(k)), cps(k)
assert len(cps(k)) >= len(cps(a)) == 1, (len(cps(k)), len(cps(a)))
assert s["method"]["min_segment"] == 16 and not cps(s), cps(s)
EOF2
expect_usage_error "history --alpha 0.9" history --db "$db" --alpha 0.9
expect_usage_error "history --min-segment 1" history --db "$db" --min-segment 1
# new runs (copies made later): main 6 at 10 us, bad 4 at 20 us, good 3 at 10 us
python3 - "$d" <<'EOF'
import json, sys
src = ["run03", "run04", "run05", "run06", "run07", "run08", "run20", "run21", "run22", "run23",
       "run09", "run10", "run11"]
for i, f in enumerate(src):
    doc = json.load(open("%s/%s.json" % (sys.argv[1], f)))
    doc["created_utc"] = "2025-02-%02dT12:00:00Z" % (i + 1)
    json.dump(doc, open("%s/b%02d.json" % (sys.argv[1], i), "w"))
EOF
"$IPCLAB" db import -q --db "$db" --label branch=main "$d"/b0[0-5].json || fail "import main: exit $?"
"$IPCLAB" db import -q --db "$db" --label branch=bad "$d"/b0[6-9].json || fail "import bad: exit $?"
"$IPCLAB" db import -q --db "$db" --label branch=good "$d"/b1[0-2].json || fail "import good: exit $?"
"$IPCLAB" history --db "$db" -t pipe -s 64 --label branch=bad --against main --fail-on-change -f json >"$d/bad.json"
rc=$?
[ $rc = 3 ] || fail "--against main, a 2x slower branch: exit $rc, expected 3"
python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))["series"][0]; assert s["changed"] and s["p_value"] <= 0.01 and s["baseline"]["n"] == 6 and s["candidate"]["n"] == 4, s' \
	"$d/bad.json" || fail "--against: the JSON does not show the change: $(head -c 600 "$d/bad.json")"
"$IPCLAB" history --db "$db" -t pipe -s 64 --label branch=good --against branch=main --fail-on-change >"$d/out"
rc=$?
[ $rc = 0 ] || fail "--against main, an unchanged branch: exit $rc, expected 0: $(cat "$d/out")"
echo "ok   --against main: a 2x slower branch is a change (exit 3), an unchanged one is not (exit 0)"

# ---- compare against the stored baseline ----
"$IPCLAB" compare --db "$db" --baseline commit=c03 --fail-above 50 "$d/run25.json" >"$d/cmp" 2>&1
rc=$?
[ $rc = 3 ] || fail "compare --db --baseline commit=c03 (2x slower): exit $rc, expected 3: $(head -5 "$d/cmp")"
grep -q "baseline commit=c03" "$d/cmp" || fail "compare --baseline: the before side is not named"
"$IPCLAB" compare --db "$db" --baseline commit=c03 --fail-above 50 "$d/run04.json" >"$d/cmp" 2>&1 ||
	fail "compare --db --baseline commit=c03 against an unchanged run: exit $?"
expect_usage_error "compare --baseline without a match" compare --db "$db" --baseline commit=nosuch "$d/run04.json"
# --db without --baseline names the store compare reads this machine's
# calibrated drift from (env --calibrate): two files are compared as ever
"$IPCLAB" compare --db "$db" "$d/run04.json" "$d/run05.json" >"$d/cmp" 2>&1 ||
	fail "compare --db with two files (the store of the calibrated drift): exit $?: $(head -3 "$d/cmp")"

# ---- the figure and the page: stored text escaped ----
python3 - "$d" <<'EOF'
import json, sys
doc = json.load(open(sys.argv[1] + "/run00.json"))
doc["created_utc"] = "2025-03-01T12:00:00Z<script>"
doc["results"][0]["transport"] = "pipe<b>"
json.dump(doc, open(sys.argv[1] + "/evil.json", "w"))
EOF
"$IPCLAB" db import -q --db "$db" --label 'note=<script>alert(1)</script>' "$d/evil.json" || fail "import evil: exit $?"
"$IPCLAB" history --db "$db" -t 'pipe*' -f html -o "$d/h.html" --figure "$d/h.svg" || fail "history -f html: exit $?"
grep -q '<svg' "$d/h.html" || fail "the HTML page has no figure"
grep -q '<script' "$d/h.html" "$d/h.svg" && fail "a stored label reached the page unescaped"
grep -q '<b>' "$d/h.html" "$d/h.svg" && fail "a stored transport name reached the page unescaped"
grep -q 'pipe&lt;b&gt;' "$d/h.svg" && echo "ok   HTML page and SVG figure, stored text escaped" ||
	fail "the hostile cell is missing from the figure"
python3 -c 'import xml.dom.minidom,sys; xml.dom.minidom.parse(sys.argv[1])' "$d/h.svg" || fail "the SVG is not well-formed XML"

# ---- real runs ----
for k in 1 2; do
	"$IPCLAB" run -t pipe -n 2000 -q --db "$d/real.db" --label build=b$k >/dev/null 2>&1 || fail "real run $k: exit $?"
done
"$IPCLAB" history --db "$d/real.db" -m p99 >"$d/out" || fail "history of real runs: exit $?"
grep -q "pipe pingpong 64B process: 99th percentile latency (lat_p99_ns), 2 runs" "$d/out" || fail "history of real runs: $(head -3 "$d/out")"
[ -n "$(leftovers)" ] && fail "left behind: $(leftovers)"
finish
