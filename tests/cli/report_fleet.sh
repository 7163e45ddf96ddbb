#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# ipclab report --db --label fleet_run=ID: one page of a fleet's stored
# runs (a SQLite store of synthetic runs of three machines, one named
# with markup): the runs drawn (ids, machines, kernels, revisions), a
# host x cell table with every machine and its ratio to the first, a
# figure per metric; the page parses as HTML with its elements closed in
# order, the hostile machine name only escaped; the machine whose canary
# is 4x the fleet's lower median marked out of line, the others not (of
# two hosts too); another
# fleet's run not drawn; bad combinations refused with exit 2.
. "$(dirname "$0")/../lib/common.sh"

command -v python3 >/dev/null || { echo "skip: needs python3"; exit 77; }
unset IPCLAB_DB
need_sqlite
d=$TMPDIR/rf
mkdir -p "$d"
db=$d/f.db

python3 - "$d" <<'EOF'
import json, sys
out = sys.argv[1]
def doc(p50, cl, kern, rev):
    cells = []
    for size in (64, 4096):
        cells.append({"transport": "pipe", "pattern": "pingpong", "size_bytes": size, "endpoints": "process",
                      "pin": "none", "sched": "other", "clients": 1, "status": "ok",
                      "options": {"transport": {}, "pattern": {}},
                      "metrics": {"lat_kind": "rtt", "lat_p50_ns": p50 * (1 + size / 4096),
                                  "lat_p99_ns": p50 * 3, "msgs_per_s": 1e9 / p50}})
    st = {"cacheline_rtt_ns": cl, "pipe_rtt_ns": 5000.0, "cpus": [0, 1]}
    return {"schema_version": 1, "ipclab_version": "0.1.0", "ipclab_git_rev": rev,
            "created_utc": "2026-12-01T12:00:00Z", "cmdline": "synthetic",
            "env": {"hostname": "x", "kernel": kern, "ipclab_git_rev": rev,
                    "canary": {"start": st, "end": st}}, "results": cells}
json.dump(doc(10000, 100.0, "6.1.0-a", "rev1111"), open(out + "/a.json", "w"))
json.dump(doc(20000, 110.0, "6.8.0-b", "rev2222"), open(out + "/b.json", "w"))
json.dump(doc(15000, 400.0, "6.1.0-c", "rev3333"), open(out + "/c.json", "w"))
json.dump(doc(99000, 100.0, "6.1.0-z", "rev9999"), open(out + "/z.json", "w"))
# a fleet of two: the host 4x slower than the other is the one out of line
json.dump(doc(10001, 100.0, "6.1.0-p", "rev4444"), open(out + "/p.json", "w"))
json.dump(doc(10002, 400.0, "6.1.0-q", "rev5555"), open(out + "/q.json", "w"))
EOF
"$IPCLAB" db import -q --db "$db" --label machine=hostA,fleet_run=F1 "$d/a.json" || fail "import a: exit $?"
"$IPCLAB" db import -q --db "$db" --label 'machine=<b>x</b>&"y',fleet_run=F1 "$d/b.json" || fail "import b: exit $?"
"$IPCLAB" db import -q --db "$db" --label machine=hostC,fleet_run=F1 "$d/c.json" || fail "import c: exit $?"
"$IPCLAB" db import -q --db "$db" --label machine=hostZ,fleet_run=F2 "$d/z.json" || fail "import z: exit $?"

"$IPCLAB" db import -q --db "$db" --label machine=hostP,fleet_run=F3 "$d/p.json" || fail "import p: exit $?"
"$IPCLAB" db import -q --db "$db" --label machine=hostQ,fleet_run=F3 "$d/q.json" || fail "import q: exit $?"

"$IPCLAB" report --db "$db" --label fleet_run=F1 -o "$d/fleet.html" 2>"$d/err" ||
	fail "report --db: exit $?: $(cat "$d/err")"
python3 - "$d/fleet.html" <<'EOF' || fail "report --db: the page is wrong"
import sys
from html.parser import HTMLParser
VOID = {"meta", "br", "rect", "line", "circle", "path", "polyline", "polygon", "link", "img", "hr", "input"}
class P(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack, self.text, self.cell, self.rows, self.tags = [], [], None, [], set()
    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        if tag in ("td", "th"):
            self.cell = []
        if tag == "tr":
            self.rows.append([])
        if tag not in VOID:
            self.stack.append(tag)
    def handle_startendtag(self, tag, attrs):
        self.tags.add(tag)
    def handle_endtag(self, tag):
        if tag in VOID:
            return
        assert self.stack and self.stack[-1] == tag, ("unbalanced", tag, self.stack[-5:])
        self.stack.pop()
        if tag in ("td", "th") and self.rows:
            self.rows[-1].append("".join(self.cell))
            self.cell = None
    def handle_data(self, data):
        self.text.append(data)
        if self.cell is not None:
            self.cell.append(data)
src = open(sys.argv[1]).read()
p = P()
p.feed(src)
p.close()
assert not p.stack, ("unclosed", p.stack)
assert "b" not in p.tags, "the machine's markup became an element"
hostile = '<b>x</b>&"y'
assert "&lt;b&gt;x&lt;/b&gt;&amp;&quot;y" in src, "the machine name is not escaped"
head = [r for r in p.rows if r and r[0] == "cell"]
assert head, p.rows
cols = head[0][2:]
assert cols[0] == hostile and cols[1] == "hostA" and cols[2].startswith("hostC"), cols
assert "out of line: not read as a result" in cols[2] and all("out of line" not in c for c in cols[:2]), cols
cells = [r for r in p.rows if r and r[0].startswith("pipe pingpong")]
assert len(cells) == 2, cells
assert "(x1.000)" in cells[0][2] and "(x0.500)" in cells[0][3] and "(x0.750)" in cells[0][4], cells[0]
runs = [r for r in p.rows if r and r[0].isdigit()]
assert len(runs) == 3, runs
txt = "".join(p.text)
for s in ("rev1111", "rev2222", "rev3333", "6.8.0-b", "6.1.0-c"):
    assert s in txt, s
assert "hostZ" not in txt and "rev9999" not in txt, "another fleet's run was drawn"
assert [r[-1] for r in runs].count("out of line: not read as a result") == 1, runs
figs = src.count("<figure")
assert figs >= 3, figs
EOF
ok_if "report --db --label fleet_run: runs, host x cell table, figures, escaping, out of line"

"$IPCLAB" report --db "$db" --label fleet_run=F3 -o "$d/two.html" || fail "report --db of two hosts: exit $?"
python3 - "$d/two.html" <<'EOF' || fail "report --db of two hosts: not hostQ alone out of line"
import re, sys
src = open(sys.argv[1]).read()
rows = re.findall(r"<tr><td>\d+</td>.*?</tr>", src)
assert len(rows) == 2, rows
assert "out of line" not in [r for r in rows if "hostP" in r][0], rows
assert "out of line" in [r for r in rows if "hostQ" in r][0], rows
EOF
ok_if "report --db of two hosts: the slower canary's host out of line, the other not"

expect_usage_error "report --db with a result file" report --db "$db" "$d/a.json"
expect_usage_error "report --label without --db" report --label fleet_run=F1 "$d/a.json"
expect_usage_error "report --db of no such fleet" report --db "$db" --label fleet_run=NONE -o "$d/none.html"
[ -e "$d/none.html" ] && fail "report --db of no such fleet left a page"

finish
