#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Every SVG ipclab writes is well-formed XML, whatever the result files and
# the store hold: history's figure (-f svg, --figure, and inside its -f html
# page) with --by labels of 23 ASCII bytes and a multibyte character (a cut
# at 24 bytes would split it) and labels of markup; the report page's inline
# figures (charts, traces, matrices, cycles, suites) from the test files
# with markup, quotes, control bytes, U+FFFF and bidirectional controls in
# every string; plot's SVG figures from such a file. Each is read by an
# XML parser (python3's xml.etree), and no hostile text appears unescaped.
. "$(dirname "$0")/../lib/common.sh"
data=$(cd "$(dirname "$0")/../data" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
command -v python3 >/dev/null || { echo "skip: needs python3"; exit 77; }
cd "$work" || exit 1

# svgs FILE...: every <svg>...</svg> in each file parses; prints how many
cat >svgs.py <<'PY'
import re, sys
import xml.etree.ElementTree as ET
n = 0
for path in sys.argv[1:]:
    text = open(path, "rb").read().decode("utf-8")  # invalid UTF-8 fails too
    if path.endswith(".svg"):
        ET.fromstring(text.encode("utf-8"))
        n += 1
        continue
    for m in re.finditer(r"<svg\b.*?</svg>", text, re.S):
        try:
            ET.fromstring(m.group(0).encode("utf-8"))
        except ET.ParseError as e:
            line = m.group(0).splitlines()[e.position[0] - 1]
            sys.exit("%s: svg %d: %s: %r" % (path, n, e, line[max(0, e.position[1] - 60):e.position[1] + 60]))
        n += 1
    if "<script>alert" in text or "<b>bold" in text:
        sys.exit("%s: hostile markup unescaped" % path)
print(n)
PY
svgs() {
	local n
	if n=$(python3 svgs.py "${@:2}" 2>&1) && [ "$n" -gt 0 ]; then
		echo "ok   $1: $n SVG parse"
	else
		fail "$1: $n"
	fi
}

# ---- history: labels cut at 24 bytes ----
if ! has_sqlite; then
	echo "skip: history part (built without libsqlite3)"
else
	# 23 bytes and a 2-, 3- or 4-byte character: cut before it; 22 and é: whole
	a22=aaaaaaaaaaaaaaaaaaaaaa a23=aaaaaaaaaaaaaaaaaaaaaaa
	i=0
	for v in "${a23}é" "${a23}€x" "${a23}𝄞" "${a22}é" '<script>alert(1)</script>&amp;"'\''<b>bold'; do
		i=$((i + 1))
		python3 - "$data/compare-env-a.json" "r$i.json" "$i" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["created_utc"] = "2025-01-%02dT00:00:00Z" % int(sys.argv[3])
d["results"][0]["transport"] = "tcp<b>bold</b>&\u202e\uffff"
json.dump(d, open(sys.argv[2], "w"))
PY
		"$IPCLAB" db import -q --db h.db --label "v=$v" "r$i.json" 2>err ||
			fail "db import --label v=$v: exit $?: $(cat err)"
	done
	"$IPCLAB" history --db h.db --by v -f svg -o h.svg 2>err || fail "history -f svg: exit $?: $(cat err)"
	"$IPCLAB" history --db h.db --by v -f html -o h.html --figure f.svg 2>err ||
		fail "history -f html: exit $?: $(cat err)"
	[ "$(grep -c ">${a23}<" h.svg)" = 3 ] && grep -q ">${a22}é<" h.svg &&
		! grep ">a\{22\}" h.svg | grep -q $'\xef\xbf\xbd' ||
		fail "history: the labels are not cut at a character: $(grep -o ">a\{22\}[^<]*<" h.svg | cat -v)"
	svgs "history's figure, page and --figure (labels cut at 24 bytes)" h.svg h.html f.svg
fi

# ---- report: every test file, every string hostile ----
python3 - "$data" <<'PY' || fail "cannot write the hostile result files"
import gzip, json, os, sys
data = sys.argv[1]
H = "<script>alert(1)</script><b>bold</b>&amp;\"'\x1b[31m\x07\r\ufffe\uffff\u009b\u202e]]>"
keep = {"status", "lat_kind", "endpoints", "pin", "sched", "period", "schema_version",
        "ipclab_version", "side", "role", "kind", "unit", "mode", "metric", "of", "cause",
        "knob", "verdict", "class"}
def hostile(v, key=None):
    if isinstance(v, str):
        return v if key in keep else v + H
    if isinstance(v, list):
        return [hostile(x, key) for x in v]
    if isinstance(v, dict):
        return {k: hostile(x, k) for k, x in v.items()}
    return v
for name in sorted(os.listdir(data)):
    path = os.path.join(data, name)
    if not name.endswith((".json", ".json.gz")) or name.startswith("compare-"):
        continue
    d = json.load(gzip.open(path) if name.endswith(".gz") else open(path))
    d = hostile(d)
    json.dump(d, open("h-" + name.replace(".gz", ""), "w"))
PY
pages=()
for f in h-*.json; do
	if "$IPCLAB" report -q "$f" -o "${f%.json}.html" 2>err; then
		pages+=("${f%.json}.html")
	else
		echo "note: report $f: $(head -c 200 err)"
	fi
done
[ "${#pages[@]}" -ge 3 ] || fail "report: only ${#pages[@]} hostile files made a page"
svgs "report pages' inline SVG (${#pages[@]} hostile files)" "${pages[@]}"

# ---- plot: its SVG figures ----
if command -v gnuplot >/dev/null && [ -e h-plot-small.json ]; then
	for f in h-plot-small.json h-report-cycle.json h-report-matrix.json; do
		"$IPCLAB" plot -q "$f" -o plots 2>err || fail "plot $f: exit $?: $(cat err)"
	done
	if ls plots/*.svg >/dev/null 2>&1; then
		svgs "plot's SVG figures ($(ls plots/*.svg | wc -l))" plots/*.svg
	else
		fail "plot wrote no SVG: $(ls plots)"
	fi
else
	echo "skip: plot part (needs gnuplot)"
fi
finish
