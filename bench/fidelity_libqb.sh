#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Issue 12: ipclab's libqb-rb and cacheline figures against the simplest
# programs that do the same work (bench/ref_libqb_rb.c: a plain
# qb_rb_chunk_write / qb_rb_chunk_read(..., 1000 ms) loop; bench/ref_cacheline.c:
# a two-line ping-pong). For each cell, PAIRS interleaved pairs (ipclab, then
# the reference, then the next cell; the whole round again PAIRS times),
# both pinned the same way (--pin split: server/reader on CPU 0, client/writer
# on CPU 1). Prints, per cell, both medians and the median of the pair ratios
# ipclab / reference with its min and max (1.00 = agree; for msgs/s above 1
# means ipclab is faster, for round trips above 1 means ipclab is slower).
#   stream 4 KiB and 64 B, msgs/s             -t libqb-rb (-O wait=sem, the default)
#   ping-pong 64 B p50 RTT, wait=sem|poll|nosem
#   ping-pong 32 B p50 and min RTT            -t cacheline vs the two-line ping-pong
# Raw results stay in $OUT (one line per run: cell pair side value).
# Not part of `make check`: numbers, not tests. IPCLAB=... runs another build;
# BEFORE=path/to/older/ipclab adds it to every pair (older, ipclab, reference)
# and prints its ratios beside ipclab's, both from the same minutes.
set -u
cd "$(dirname "$0")/.."
B=${B:-build}
IPCLAB=${IPCLAB:-$B/ipclab}
REF_QB=$B/bench/ref_libqb_rb
REF_CL=$B/bench/ref_cacheline
BEFORE=${BEFORE:-}
PAIRS=${PAIRS:-15}
STREAM4K_N=${STREAM4K_N:-500000}
STREAM64_N=${STREAM64_N:-2000000}
PP_SEM_N=${PP_SEM_N:-20000}
PP_POLL_N=${PP_POLL_N:-1000000}
CL_N=${CL_N:-2000000}
CELLS=${CELLS:-"s4k s64 pp_sem pp_poll pp_nosem cl"}
OUT=${OUT:-$(mktemp -d /tmp/fidelity-libqb.XXXXXX)}
for f in "$IPCLAB" "$REF_QB" "$REF_CL" ${BEFORE:+"$BEFORE"}; do
	[ -x "$f" ] || { echo "fidelity_libqb: $f missing: make B=$B all (libqb-dev for $REF_QB)"; exit 1; }
done
command -v python3 >/dev/null || { echo "fidelity_libqb: needs python3"; exit 1; }
mkdir -p "$OUT"
RAW=$OUT/raw.txt
: >"$RAW"

lab() { # metric... -- args: ipclab run, the metrics of its one cell, space-separated
	local ms=()
	while [ "$1" != -- ]; do ms+=("$1"); shift; done
	shift
	# into a file, read after the run: a reader started beside the run
	# (python3 on a pipe) takes CPU from its ends while they measure
	"$LAB" run "$@" --pin split -q -f json -o "$OUT/cell.json" 2>>"$OUT/stderr.txt" || { echo nan; return; }
	python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
print(" ".join(str(r["metrics"].get(m, "nan")) if r["status"] == "ok" else "nan" for m in sys.argv[2:]))' "$OUT/cell.json" "${ms[@]}" ||
		echo nan
}
ref() { # prog args...: the reference's numbers, space-separated
	"$@" 2>>"$OUT/stderr.txt" | awk '{for (i = 2; i <= NF; i += 2) printf "%s ", $i; print ""}'
}
one() { # cell pair [side]: ipclab (or the older build, side "before"), then the reference
	local a b LAB=$IPCLAB side=${3:-ipclab}
	[ "$side" = before ] && LAB=$BEFORE
	case $1 in
	s4k)	a=$(lab msgs_per_s -- -t libqb-rb -p stream -s 4k -n "$STREAM4K_N")
		b=$(ref "$REF_QB" stream 4096 "$STREAM4K_N" sem split) ;;
	s64)	a=$(lab msgs_per_s -- -t libqb-rb -p stream -s 64 -n "$STREAM64_N")
		b=$(ref "$REF_QB" stream 64 "$STREAM64_N" sem split) ;;
	pp_sem)	a=$(lab lat_p50_ns lat_min_ns -- -t libqb-rb -p pingpong -s 64 -n "$PP_SEM_N")
		b=$(ref "$REF_QB" pingpong 64 "$PP_SEM_N" sem split) ;;
	pp_poll) a=$(lab lat_p50_ns lat_min_ns -- -t libqb-rb -p pingpong -s 64 -n "$PP_POLL_N" -O wait=poll)
		b=$(ref "$REF_QB" pingpong 64 "$PP_POLL_N" poll split) ;;
	pp_nosem) a=$(lab lat_p50_ns lat_min_ns -- -t libqb-rb -p pingpong -s 64 -n "$PP_POLL_N" -O wait=nosem)
		b=$(ref "$REF_QB" pingpong 64 "$PP_POLL_N" nosem split) ;;
	cl)	a=$(lab lat_p50_ns lat_min_ns -- -t cacheline -p pingpong -s 32 -n "$CL_N")
		b=$(ref "$REF_CL" 32 "$CL_N") ;;
	esac
	echo "$1 $2 $side $a" >>"$RAW"
	echo "$1 $2 ref${3:+_$3} $b" >>"$RAW"
}
for ((i = 0; i < PAIRS; i++)); do
	echo "fidelity_libqb: round $((i + 1)) of $PAIRS" >&2
	for c in $CELLS; do
		[ -n "$BEFORE" ] && one "$c" "$i" before
		one "$c" "$i"
	done
done

python3 - "$RAW" "$PAIRS" "$IPCLAB" "$BEFORE" <<'PY'
import math, statistics, sys

raw, pairs, lab, before = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
v = {}
for line in open(raw):
    f = line.split()
    if len(f) < 4:
        continue
    try:
        v[(f[0], int(f[1]), f[2])] = [float(x) for x in f[3:]]
    except ValueError:
        pass

rows = [  # cell, column, label, unit, scale, goal (low, high) on the median of pair ratios
    ("s4k", 0, "libqb-rb stream 4 KiB, msgs/s", "M", 1e-6, (0.9, 1.1)),
    ("s64", 0, "libqb-rb stream 64 B, msgs/s", "M", 1e-6, (0.9, 1.1)),
    ("pp_sem", 0, "libqb-rb ping-pong 64 B wait=sem, p50 RTT", "us", 1e-3, (0.9, 1.1)),
    ("pp_sem", 1, "  the same, min RTT", "us", 1e-3, None),
    ("pp_poll", 0, "libqb-rb ping-pong 64 B wait=poll (sem_trywait), p50 RTT", "ns", 1, (0.9, 1.1)),
    ("pp_poll", 1, "  the same, min RTT", "ns", 1, None),
    ("pp_nosem", 0, "libqb-rb ping-pong 64 B wait=nosem, p50 RTT", "ns", 1, (0.9, 1.1)),
    ("pp_nosem", 1, "  the same, min RTT", "ns", 1, None),
    ("cl", 0, "cacheline ping-pong 32 B vs two-line ping-pong, p50 RTT", "ns", 1, (0, 1.1)),
    ("cl", 1, "  the same, min RTT", "ns", 1, (0, 1.1)),
]
def table(side, refside, name):
    print(f"\n{name}\n")
    print("| cell (--pin split) | ipclab median | reference median | median of pair ratios (ipclab/ref) | min | max | pairs | goal | verdict |")
    print("|---|---|---|---|---|---|---|---|---|")
    for cell, col, label, unit, k, goal in rows:
        a, b, r = [], [], []
        for i in range(pairs):
            x, y = v.get((cell, i, side)), v.get((cell, i, refside))
            if not x or not y or len(x) <= col or len(y) <= col:
                continue
            if math.isnan(x[col]) or math.isnan(y[col]) or y[col] <= 0:
                continue
            a.append(x[col]); b.append(y[col]); r.append(x[col] / y[col])
        if not r:
            continue
        med = statistics.median(r)
        g, verdict = "", "info"
        if goal:
            lo, hi = goal
            g = f"{lo:.2f}..{hi:.2f}" if lo else f"<= {hi:.2f}"
            verdict = "met" if lo <= med <= hi else "NOT met"
        fmt = (lambda z: f"{z * k:.3g} {unit}")
        print(f"| {label} | {fmt(statistics.median(a))} | {fmt(statistics.median(b))} | {med:.2f} | "
              f"{min(r):.2f} | {max(r):.2f} | {len(r)} | {g} | {verdict} |")

if before:
    table("before", "ref_before", f"before: {before} (pairs: it, then the reference)")
table("ipclab", "ref", f"ipclab: {lab}")
print(f"\nraw results: {raw}")
PY
