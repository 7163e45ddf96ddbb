#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What ipclab report's tables show of a cell, read from its file: the
# badges beside its transport come from where run writes the flags
# (docs/output.md): metrics.noisy, metrics.bimodal and metrics.converged
# (--repeat auto); a flag elsewhere in the result, or one that is false
# (true for converged), shows none. Cells without a size_bytes (a file
# not written by run) are one group, one table. Files made from
# tests/data, no run.
. "$(dirname "$0")/../lib/common.sh"
data=$(cd "$(dirname "$0")/../data" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# cell 0: all three flags set in metrics; cell 1: the same flags at the
# top level, metrics' saying nothing to show
python3 - "$data/compare-before.json" "$work/flags.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
a, b = d["results"][0], d["results"][1]
a["metrics"].update(noisy=True, bimodal=True, converged=False)
b["metrics"].update(noisy=False, bimodal=False, converged=True)
b.update(noisy=True, bimodal=True, converged=False)
d["results"] = [a, b]
json.dump(d, open(sys.argv[2], "w"))
PY
"$IPCLAB" report "$work/flags.json" -o "$work/p.html" 2>"$work/err" || fail "report: exit $?: $(cat "$work/err")"
# a ranked table's row is a line: the transport's cell, then its badges
grep '<td>pipe ' "$work/p.html" >"$work/flagged" || fail "no row of the pipe cell"
grep '<td>unix-stream' "$work/p.html" >"$work/plain" || fail "no row of the unix-stream cell"
for b in noisy bimodal 'not converged'; do
	grep -q "\">$b</span>" "$work/flagged" || fail "badge '$b' missing: its metrics say so"
done
grep -q 'class="badge' "$work/plain" && fail "a badge on the cell whose metrics say none: $(grep -o 'badge[^<]*' "$work/plain")"
ok_if "report badges: noisy, bimodal and not converged from metrics only"

python3 - "$data/compare-before.json" "$work/nosize.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for r in d["results"]:
    r.pop("size_bytes", None)
json.dump(d, open(sys.argv[2], "w"))
PY
"$IPCLAB" report "$work/nosize.json" -o "$work/nosize.html" 2>"$work/err" ||
	fail "report of cells without size_bytes: exit $?: $(cat "$work/err")"
n=$(grep -c '<tr class="ok">' "$work/nosize.html" 2>/dev/null)
[ "$n" = 4 ] || fail "cells without size_bytes: $n ranked rows, expected the file's 4"
ok_if "report of cells without size_bytes: their table"
finish
