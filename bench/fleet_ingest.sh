#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The store's ingest for a simulated fleet: HOSTS runs (one a host, each a
# real result file of this machine relabelled machine=host-N, one
# fleet_run for all) stored into one PostgreSQL server by WRITERS
# concurrent `ipclab db import` processes, as a fleet's hosts store at the
# end of one play. Prints the wall time, runs per second, the lock waits
# the server logged (log_lock_waits, deadlock_timeout 10 ms), the rows and
# the store's size per run, and what 1000 hosts would hold. Not a test: it
# prints figures. B=build bench/fleet_ingest.sh (HOSTS=100 WRITERS=10).
set -u
B=${B:-build}
IPCLAB=${IPCLAB:-$B/ipclab}
HOSTS=${HOSTS:-100}
WRITERS=${WRITERS:-10}
ARGS=${ARGS:--t pipe,unix-stream -p pingpong,stream -s 64,4k -n 2000}
TMPDIR=$(mktemp -d "${TMPDIR:-/tmp}/ipclab-fleetbench.XXXXXX")
export TMPDIR
PG_EXTRA="-c log_lock_waits=on -c deadlock_timeout=10ms"
. "$(dirname "$0")/../tests/lib/pg.sh"

# shellcheck disable=SC2086
"$IPCLAB" run $ARGS -q -f json -o "$TMPDIR/one.json" >/dev/null || { echo "FAIL: the run to copy"; exit 1; }
cells=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["results"]))' "$TMPDIR/one.json")
pg_start
fleet=bench-$(date -u +%Y%m%dT%H%M%SZ)
# each writer stores its share of the hosts, one import a host (a host's
# run is one transaction), all writers at once
t0=$(date +%s.%N)
writers=()
for w in $(seq 0 $((WRITERS - 1))); do
	(
		for h in $(seq "$w" "$WRITERS" $((HOSTS - 1))); do
			# a host's own result file: its created time differs, so each
			# is stored as a run of its own
			sed "s/\"created_utc\": *\"[^\"]*\"/\"created_utc\": \"2026-01-01T00:00:00.$(printf %06d "$h")Z\"/" \
				"$TMPDIR/one.json" >"$TMPDIR/h$h.json"
			"$IPCLAB" db import -q --db "$PG_URL" --label "machine=host-$h,fleet_run=$fleet" "$TMPDIR/h$h.json" ||
				echo "FAIL: host $h"
		done
	) &
	writers+=($!)
done
wait "${writers[@]}"	# not the server's watcher, a background job too
t1=$(date +%s.%N)
runs=$(pg_sql "SELECT count(*) FROM ipclab.ipclab_runs" 2>/dev/null || pg_sql "SELECT count(*) FROM ipclab_runs")
waits=$(grep -c 'still waiting for' "$PG_DIR/log" 2>/dev/null)
size=$(pg_sql "SELECT pg_database_size(current_database())")
rows=$(pg_sql "SELECT sum(n_live_tup) FROM pg_stat_user_tables")
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) CPUs; $cells cells a run"
awk -v h="$HOSTS" -v w="$WRITERS" -v t0="$t0" -v t1="$t1" -v runs="$runs" -v waits="$waits" \
	-v size="$size" -v rows="$rows" 'BEGIN {
	t = t1 - t0
	printf "  %d hosts by %d writers: %.1f s wall, %.1f runs/s; %d runs stored; %d lock waits over 10 ms\n", h, w, t, h / t, runs, waits
	printf "  the store: %d rows, %.1f MiB (%.0f KiB a run, the empty database included)\n", rows, size / 1048576, size / 1024 / runs
	printf "  1000 hosts at that rate: %.0f s of storing, ~%.0f MiB\n", 1000 / (h / t), size / runs * 1000 / 1048576
}'
pg_stop
rm -rf "$TMPDIR"
