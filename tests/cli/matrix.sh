#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# --pin matrix: every ordered pair of CPUs is one cell (same CPU included),
# run in an order shuffled every round and recorded; the result file carries
# the topology and the matrix; the table prints the CPU x CPU matrix, the
# figure per topology class and the time per cell; a CPU that is not there
# is bad input; ipclab plot draws the matrix as a heatmap.
. "$(dirname "$0")/../lib/common.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
ncpu=$(getconf _NPROCESSORS_ONLN)
if [ "$ncpu" -le 4 ]; then pin=matrix; n=$ncpu; else pin=matrix:0-1; n=2; fi

# ---- the cells, their order, the result file ---------------------------------------
"$IPCLAB" run -t cacheline -p pingpong --pin "$pin" -n 200 --repeat 2 -q -f json \
	-o "$work/m.json" 2>"$work/err" || fail "run --pin $pin: exit $?: $(cat "$work/err")"
python3 - "$work/m.json" "$n" <<'PY' || fail "--pin $pin: result file checks"
import json, sys
r = json.load(open(sys.argv[1])); n = int(sys.argv[2])
cpus = r["matrix"]["cpus"]
assert len(cpus) == n, cpus
pins = sorted(x["pin"] for x in r["results"])
want = sorted("%d:%d" % (a, b) for a in cpus for b in cpus)
assert pins == want, (pins, want)
assert all(x["status"] == "ok" for x in r["results"]), [x.get("reason") for x in r["results"]]
m = r["matrix"]
assert m["rounds"] == 2 and len(m["order"]) == 2, m["order"]
for rnd in m["order"]:
    assert sorted(rnd) == list(range(n * n)), rnd
assert m["metric"] == "lat_p50_ns" and m["per_cell_s"] > 0 and m["seed"] > 0
assert set(m["pairs"]) == set(want)
assert all(m["pairs"]["%d:%d" % (c, c)] == "same_cpu" for c in cpus)
classes = {"same_cpu", "smt", "same_llc", "other_llc", "other_node"}
assert set(m["pairs"].values()) <= classes
s = m["summary"][0]["by_class"]
assert sum(c["pairs"] for c in s) == n * n, s
for c in s:
    assert c["class"] in classes and c["min"] <= c["median"] <= c["max"], c
t = r["topology"]
for k in ("source", "cpus_online", "packages", "nodes", "llc_level", "llc_groups",
          "smt_groups", "cpus"):
    assert k in t, k
for c in t["cpus"]:
    for k in ("cpu", "core", "package", "node", "llc", "smt_siblings"):
        assert k in c, (k, c)
assert t["cpus_online"] == len(t["cpus"])
PY
echo "ok   --pin $pin: $((n * n)) cells, every pair once, shuffled order of 2 rounds recorded, topology in the file"

# matrix:0 is one cell; the fuzz door (dry run) plans the same
out=$("$IPCLAB" run -t pipe -p pingpong --pin matrix:0 -n 100 -q -f json 2>"$work/err") ||
	fail "--pin matrix:0: exit $?: $(cat "$work/err")"
[ "$(printf '%s\n' "$out" | grep -c '"pin": "0:0"')" = 1 ] ||
	fail "--pin matrix:0: expected one cell pinned 0:0"
echo "ok   --pin matrix:0: one cell, 0:0"

# without -n, -d or --warmup a matrix cell measures for 100 ms after 1000
# warm-up messages (the record says so); -n or --warmup given are kept
out=$("$IPCLAB" run -t pipe -p pingpong --pin matrix:0 -q -f json 2>"$work/err") ||
	fail "--pin matrix:0 without -n: exit $?: $(cat "$work/err")"
printf '%s\n' "$out" | python3 -c '
import json, sys
r = json.load(sys.stdin)["results"][0]
assert r["duration_ns"] == 100000000 and r["warmup"] == 1000, (r["duration_ns"], r["warmup"])
# it ran for its duration, not to a count (how many messages that is
# depends on the machine: 943 at load 14, 4952 quiet)
m = r["metrics"]
assert m["msgs"] > 0 and m["elapsed_ns"] >= 100000000, (m["msgs"], m["elapsed_ns"])' || fail "matrix cell defaults: not 100 ms after 1000 warm-up messages"
out=$("$IPCLAB" run -t pipe -p pingpong --pin matrix:0 -n 300 --warmup 7 -q -f json 2>"$work/err") ||
	fail "--pin matrix:0 -n 300: exit $?: $(cat "$work/err")"
printf '%s\n' "$out" | python3 -c '
import json, sys
r = json.load(sys.stdin)["results"][0]
assert r["duration_ns"] == 0 and r["count"] == 300 and r["warmup"] == 7, r
assert r["metrics"]["msgs"] == 300, r["metrics"]["msgs"]' || fail "matrix with -n 300 --warmup 7: not kept"
echo "ok   matrix cell defaults: 100 ms after 1000 warm-up messages; -n and --warmup kept"

# ---- the table -------------------------------------------------------------------------
"$IPCLAB" run -t cacheline -p pingpong --pin "$pin" -n 200 -q >"$work/t" 2>"$work/err" ||
	fail "table: exit $?: $(cat "$work/err")"
grep -q '^topology: [0-9]* CPUs online' "$work/t" || fail "table: no topology line: $(head -3 "$work/t")"
grep -q 'lat_p50_ns, rows: server CPU, columns: client CPU' "$work/t" || fail "table: no matrix header"
[ "$(grep -c '^[0-9]  *n-\{0,1\}[0-9]* p' "$work/t")" = "$n" ] || fail "table: expected $n matrix rows: $(cat "$work/t")"
grep -q '^= same CPU  *[0-9]' "$work/t" || fail "table: no same-CPU summary line: $(cat "$work/t")"
grep -q '^class  *pairs  *median  *min  *max  *spread' "$work/t" || fail "table: no summary header"
grep -q "^$((n * n)) cells x 1 round in .* s per cell" "$work/t" || fail "table: no time per cell: $(tail -2 "$work/t")"
echo "ok   table: matrix, per-class summary, $(tail -1 "$work/t")"
"$IPCLAB" run -t pipe -p pingpong --pin matrix:0 -n 100 -q --matrix-metric msgs_per_s |
	grep -q 'msgs_per_s, rows: server CPU' || fail "--matrix-metric msgs_per_s: not the table's figure"
echo "ok   --matrix-metric msgs_per_s"

# ---- bad input ---------------------------------------------------------------------------
expect_usage_error "--pin matrix:$ncpu (no such CPU)" run -t pipe --pin "matrix:$ncpu" -n 10 -q
expect_usage_error "--pin matrix:0-999" run -t pipe --pin matrix:0-999 -n 10 -q
expect_usage_error "--pin matrix:x" run -t pipe --pin matrix:x -n 10 -q
expect_usage_error "--pin matrix:" run -t pipe --pin matrix: -n 10 -q
expect_usage_error "--matrix-metric transport" run -t pipe --pin matrix:0 --matrix-metric transport -q
expect_usage_error "--matrix-metric nope" run -t pipe --pin matrix:0 --matrix-metric nope -q

# ---- the heatmap ---------------------------------------------------------------------------
if ! command -v gnuplot >/dev/null; then
	echo "SKIP matrix heatmap: gnuplot is not installed (make deps installs gnuplot-nox)"
	finish
fi
"$IPCLAB" plot "$work/m.json" -o "$work/fig" -q 2>"$work/err" || fail "plot: exit $?: $(cat "$work/err")"
for ext in dat gp png svg; do
	f=$(ls "$work/fig"/matrix-*."$ext" 2>/dev/null | head -1)
	[ -s "$f" ] || fail "plot: no matrix-*.$ext in $(ls "$work/fig" | tr '\n' ' ')"
done
f=$(ls "$work/fig"/matrix-*.dat | head -1)
[ "$(grep -vc '^#' "$f")" = $((n + 1)) ] || fail "plot: $f has not $n rows and a header: $(cat "$f")"
(cd "$work/fig" && gnuplot "$(basename "${f%.dat}").gp") 2>"$work/err" || fail "plot: the script does not redraw: $(cat "$work/err")"
echo "ok   plot: $(basename "${f%.dat}") .dat .gp .png .svg"
finish
