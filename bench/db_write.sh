#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Write throughput of the results store: results per second stored by
# `ipclab db import`, into SQLite (a file, WAL, synchronous=FULL) and into
# PostgreSQL (a private server as tests/lib/pg.sh starts it, fsync on),
# for one large run (RESULTS results, one transaction) and for many small
# runs (RUNS runs of 10 results, a transaction each). Not a test: it
# prints figures. `make bench-db`, or B=build bench/db_write.sh.
set -u
B=${B:-build}
IPCLAB=${IPCLAB:-$B/ipclab}
RESULTS=${RESULTS:-2000}
RUNS=${RUNS:-50}
TMPDIR=$(mktemp -d "${TMPDIR:-/tmp}/ipclab-dbbench.XXXXXX")
export TMPDIR
fail() { echo "FAIL: $*"; }
PG_EXTRA=""
. "$(dirname "$0")/../tests/lib/pg.sh"

# one run of RESULTS results (each a real result of this machine, varied),
# and RUNS runs of 10
"$IPCLAB" run -t pipe -p pingpong,stream -n 2000 -q -f json -o "$TMPDIR/one.json" >/dev/null || exit 1
python3 - "$TMPDIR" "$RESULTS" "$RUNS" <<'PY'
import copy, json, sys
d, n, runs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
src = json.load(open(d + "/one.json"))
def doc(k, tag):
    o = copy.deepcopy(src)
    o["created_utc"] = tag
    o["results"] = []
    for i in range(k):
        r = copy.deepcopy(src["results"][i % len(src["results"])])
        r["size_bytes"] = 64 + i
        o["results"].append(r)
    return o
json.dump(doc(n, "big"), open(d + "/big.json", "w"))
for j in range(runs):
    json.dump(doc(10, "small-%d" % j), open("%s/small%03d.json" % (d, j), "w"))
PY

# timed N WHAT ARGS...: results per second of one import, by the clock
# and by ipclab's own CPU time (user + sys; a server's is not counted)
timed() {
	local n=$1 what=$2 t
	shift 2
	TIMEFORMAT='%R %U %S'
	t=$({ time "$IPCLAB" db import -q "$@" >/dev/null; } 2>&1) || { echo "FAIL: $what: $t"; return 1; }
	awk -v n="$n" -v w="$what" -v t="$t" 'BEGIN { split(t, x, " ");
		printf "  %-34s %7.0f results/s (wall %.2fs), %7.0f results/s of CPU\n",
			w, n / x[1], x[1], n / (x[2] + x[3]) }'
}

rate() {
	echo "$2:"
	timed "$RESULTS" "one run of $RESULTS results" --db "$1" "$TMPDIR/big.json"
	timed $((RUNS * 10)) "$RUNS runs of 10 results" --db "$1" "$TMPDIR"/small*.json
}

echo "load average: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) CPUs"
rate "$TMPDIR/bench.db" SQLite
pg_start
rate "$PG_URL" "PostgreSQL (fsync on)"
pg_stop
rm -rf "$TMPDIR"
