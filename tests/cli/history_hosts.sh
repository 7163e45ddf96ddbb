#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# ipclab history across machines, over a SQLite store of synthetic runs
# imported with machine and fleet_run labels: --by machine gives, per cell,
# a row per machine (median of its runs, their range or the one run's
# ci95, the ratio to the first machine by name) in the table, JSON, SVG and
# HTML; -f csv is a row per run and cell with a time column, a column per
# metric and attribute columns, RFC 4180 quoted, a text beginning with
# = + - @ prefixed with ', that Python's csv module reads back.
. "$(dirname "$0")/../lib/common.sh"

command -v python3 >/dev/null || { echo "skip: needs python3"; exit 77; }
unset IPCLAB_DB
need_sqlite
d=$TMPDIR/hh
mkdir -p "$d"
db=$d/h.db

# hostA: three runs (10, 12, 11 us); hostB: one run of 22 us with a
# ci95 [20, 24] us; a run of another fleet on hostB (not selected).
python3 - "$d" <<'EOF'
import json, sys
out = sys.argv[1]
def doc(day, p50, ci=None, kern="6.1.0"):
    c = {"transport": "pipe", "pattern": "pingpong", "size_bytes": 64, "endpoints": "process",
         "pin": "none", "sched": "other", "clients": 1, "status": "ok",
         "options": {"transport": {}, "pattern": {}},
         "metrics": {"lat_kind": "rtt", "lat_p50_ns": p50, "msgs_per_s": 1e9 / p50}}
    if ci:
        c["repeat_n"] = 5
        c["repeat"] = {"n": 5, "lat_p50_ns": {"ci95": ci}}
    return {"schema_version": 1, "ipclab_version": "0.1.0", "ipclab_git_rev": "synthetic",
            "created_utc": "2026-12-0%dT12:00:00Z" % day, "cmdline": "synthetic",
            "env": {"hostname": "x", "kernel": kern}, "results": [c]}
for name, d in {"a1": doc(1, 10000), "a2": doc(2, 12000), "a3": doc(3, 11000),
                "b1": doc(1, 22000, [20000, 24000], "6.8.0"), "b9": doc(4, 99000)}.items():
    json.dump(d, open("%s/%s.json" % (out, name), "w"))
EOF
for f in a1 a2 a3; do
	"$IPCLAB" db import -q --db "$db" --label machine=hostA,fleet_run=F1 "$d/$f.json" || fail "import $f: exit $?"
done
"$IPCLAB" db import -q --db "$db" --label machine=hostB,fleet_run=F1,note==HYPERLINK\(1\) "$d/b1.json" ||
	fail "import b1: exit $?"
"$IPCLAB" db import -q --db "$db" --label machine=hostB,fleet_run=F2 "$d/b9.json" || fail "import b9: exit $?"

# ---- --by machine: a row per machine ----
"$IPCLAB" history --db "$db" --label fleet_run=F1 --by machine -m p50 >"$d/t.txt" 2>&1 ||
	fail "history --by machine: exit $?: $(tail -2 "$d/t.txt")"
grep -Eq '^  hostA +6\.1\.0 +3 +11\.0us +\[10\.0us, 12\.0us\] +1\.000' "$d/t.txt" ||
	fail "hostA's row (3 runs, median 11 us, range, ratio 1): $(cat "$d/t.txt")"
grep -Eq '^  hostB +6\.8\.0 +1 +22\.0us +\[20\.0us, 24\.0us\] +2\.000' "$d/t.txt" ||
	fail "hostB's row (1 run, 22 us, its ci95, ratio 2): $(cat "$d/t.txt")"
grep -q '99\.0us' "$d/t.txt" && fail "fleet_run F2's run was drawn"
ok_if "history --by machine: a row per machine, median, interval, ratio to the first"

"$IPCLAB" history --db "$db" --label fleet_run=F1 --by machine -m p50 -f json -o "$d/h.json" ||
	fail "history --by machine -f json: exit $?"
python3 - "$d/h.json" <<'EOF' || fail "history --by machine -f json: wrong machines"
import json, sys
h = json.load(open(sys.argv[1]))
assert h["by"] == "machine", h.get("by")
[s] = h["series"]
pts = s["points"]
assert [p["machine"] for p in pts] == ["hostA", "hostB"], pts
assert [p["runs"] for p in pts] == [3, 1] and [p["value"] for p in pts] == [11000, 22000], pts
assert pts[1]["ratio"] == 2 and pts[0]["interval"] == [10000, 12000], pts
assert pts[0]["interval_of"] == "range of the runs" and pts[1]["interval_of"] == "the run's ci95", pts
EOF
"$IPCLAB" history --db "$db" --label fleet_run=F1 --by machine -m p50 -f html -o "$d/h.html" ||
	fail "history --by machine -f html: exit $?"
python3 - "$d/h.html" <<'EOF' || fail "history --by machine -f html: not one tick per machine"
import sys
from html.parser import HTMLParser
class P(HTMLParser):
    ticks = []
    cur = None
    def handle_starttag(self, tag, attrs):
        self.cur = dict(attrs).get("class") if tag == "text" else None
    def handle_data(self, data):
        if self.cur == "tick":
            self.ticks.append(data)
p = P()
p.feed(open(sys.argv[1]).read())
assert "hostA" in p.ticks and "hostB" in p.ticks, p.ticks
EOF
ok_if "history --by machine -f json and html: the machines as points, ratios, intervals"

# ---- -f csv: a row per run and cell ----
"$IPCLAB" history --db "$db" -f csv -o "$d/h.csv" || fail "history -f csv: exit $?"
python3 - "$d/h.csv" <<'EOF' || fail "history -f csv: wrong layout"
import csv, sys
raw = open(sys.argv[1], newline="").read()
assert raw.endswith("\r\n"), "rows end in CRLF (RFC 4180)"
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
assert len(rows) == 5, rows
assert [r["time"] for r in rows] == sorted(r["time"] for r in rows), "time order"
assert all(r["time"].endswith("Z") and "T" in r["time"] for r in rows), rows
hdr = list(rows[0].keys())
assert hdr[0] == "time" and "lat_p50_ns" in hdr and "msgs_per_s" in hdr, hdr
for k in ("run", "machine", "kernel", "transport", "pattern", "size_bytes", "label.fleet_run", "label.note"):
    assert k in hdr, (k, hdr)
b1 = [r for r in rows if r["machine"] == "hostB" and r["label.fleet_run"] == "F1"][0]
assert float(b1["lat_p50_ns"]) == 22000 and b1["kernel"] == "6.8.0", b1
assert b1["label.note"] == "'=HYPERLINK(1)", b1["label.note"]
assert b1["size_bytes"] == "64" and b1["transport"] == "pipe", b1
EOF
"$IPCLAB" history --db "$db" -m p50 -f csv | head -1 | grep -q '^time,lat_p50_ns,run,machine,kernel,' ||
	fail "history -m p50 -f csv: not the one metric's column: $("$IPCLAB" history --db "$db" -m p50 -f csv | head -1)"
ok_if "history -f csv: time, metrics, attributes; RFC 4180; a formula prefixed"
expect_usage_error "history --against -f csv" history --db "$db" --label fleet_run=F1 --against F2 -f csv

finish
