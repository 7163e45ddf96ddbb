#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The PostgreSQL results store, against a real server this test starts
# (tests/lib/pg.sh: initdb in its temporary directory, a Unix socket, a
# random port, stopped at the end; skipped, 77, without the server
# binaries): runs stored and read back identically; a password in the URL
# never reaches a result file, the store, a message; eight writers at once
# into a store none of them has made yet (the schema made once) all land;
# one writer holding its transaction while another comes to the store;
# a writer killed -9 inside its transaction leaves no trace; an older
# schema migrated, a newer one refused; labels filter; history finds a 2x
# step in a series imported into PostgreSQL.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/pg.sh"

command -v python3 >/dev/null || { echo "skip: needs python3"; exit 77; }
HOOK=${DB_HOOK:-$(dirname "$IPCLAB")/tests/cli/db_hook.so}
[ -r "$HOOK" ] || { echo "skip: $HOOK not built (make)"; exit 77; }
if "$IPCLAB" db ls --db postgresql://nowhere/x 2>&1 | grep -q "built without PostgreSQL"; then
	echo "skip: this ipclab was built without libpq (apt-get install libpq-dev, then make)"
	exit 77
fi
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0
unset IPCLAB_DB
d=$TMPDIR/dbpg
mkdir -p "$d"
data=$(dirname "$0")/../data
pg_start
secret=Sekr1tPassw0rd
url=${PG_URL/ipclab@/ipclab:$secret@}

same_json() {
	python3 -c 'import json,sys; a,b=(json.load(open(p)) for p in sys.argv[1:3]); sys.exit(a!=b)' "$1" "$2"
}
# release FIFO: let a held writer go (it may be gone: never blocks for long).
release() {
	timeout 30 bash -c 'echo go >"$1"' _ "$1" || fail "the held writer was not there to let go"
}

wait_for() {
	local i
	for ((i = 0; i < 600; i++)); do
		[ -e "$1" ] && return 0
		sleep 0.1
	done
	return 1
}
runs() { pg_sql 'SELECT count(*) FROM ipclab_runs'; }

# ---- eight writers at once into a store not made yet ----
pids=()
for i in 1 2 3 4 5 6; do
	python3 - "$data/compare-before.json" "$d/w$i.json" "$i" <<'EOF'
import json, sys
doc = json.load(open(sys.argv[1]))
doc["created_utc"] = "2025-04-%02dT00:00:00Z" % int(sys.argv[3])
json.dump(doc, open(sys.argv[2], "w"))
EOF
done
for i in 1 2 3 4 5 6; do
	"$IPCLAB" db import -q --db "$url" --label writer=$i "$d/w$i.json" 2>"$d/err$i" &
	pids+=($!)
done
"$IPCLAB" run -t pipe -n 2000 -q --db "$url" --label writer=7 >/dev/null 2>"$d/err7" &
pids+=($!)
"$IPCLAB" run -t unix-stream -n 2000 -q --db "$url" --label writer=8 -f json -o "$d/r8.json" 2>"$d/err8" &
pids+=($!)
k=0
for p in "${pids[@]}"; do
	k=$((k + 1))
	wait "$p" || fail "writer $k: exit $?: $(cat "$d/err$k")"
done
[ "$(runs)" = 8 ] && [ "$(pg_sql "SELECT count(DISTINCT value) FROM ipclab_labels WHERE key = 'writer'")" = 8 ] &&
	echo "ok   8 writers at once into a new store: all 8 runs stored" || fail "8 writers: $(runs) runs stored"
[ "$(pg_sql "SELECT value FROM ipclab_meta WHERE key = 'schema_version'")" = 2 ] || fail "schema version not 2"

# ---- read back identically; the password nowhere ----
id=$(pg_sql "SELECT run_id FROM ipclab_labels WHERE key = 'writer' AND value = '8'")
"$IPCLAB" db export --db "$url" --run "$id" -o "$d/e8.json" || fail "export: exit $?"
same_json "$d/r8.json" "$d/e8.json" && echo "ok   a run stored in PostgreSQL reads back as its -o file" ||
	fail "the run read back from PostgreSQL differs from its -o file"
for i in 1 2 3; do
	id=$(pg_sql "SELECT run_id FROM ipclab_labels WHERE key = 'writer' AND value = '$i'")
	"$IPCLAB" db export --db "$url" --run "$id" >"$d/e.json" && same_json "$d/w$i.json" "$d/e.json" ||
		fail "imported file $i does not read back as it was"
done
grep -q "$secret" "$d/r8.json" && fail "the password is in the result file"
grep -q 'ipclab:\*\*\*@' "$d/r8.json" || fail "the result file's cmdline does not show the URL with ***"
cat "$d"/err* | grep -q "$secret" && fail "the password is in a message"
[ "$(pg_sql "SELECT count(*) FROM ipclab_runs WHERE cmdline LIKE '%$secret%' OR header LIKE '%$secret%'")" = 0 ] ||
	fail "the password is in the store"
bad=${url/port=$PG_PORT/port=1}
"$IPCLAB" db ls --db "$bad" 2>"$d/err"
rc=$?
[ $rc = 1 ] || fail "an unreachable server: exit $rc, expected 1"
grep -q "$secret" "$d/err" && fail "the password is in the connection error: $(cat "$d/err")"
[ "$(wc -l <"$d/err")" = 1 ] || fail "the connection error is not one line: $(cat "$d/err")"
grep -q 'ipclab:\*\*\*@' "$d/err" && echo "ok   the password: *** in cmdline and messages, never stored" ||
	fail "the connection error does not name the store: $(cat "$d/err")"
expect_usage_error "a PostgreSQL URL libpq refuses" db ls --db "postgresql://a:$secret@h/db?nosuchoption=1"
"$IPCLAB" db ls --db "postgresql://a:$secret@h/db?nosuchoption=1" 2>&1 | grep -q "$secret" &&
	fail "the password is in the message of a refused URL"

# ---- one writer holding its transaction, another coming to the store ----
hold=$d/hold
mkdir "$hold" && mkfifo "$hold/go"
before=$(runs)
IPCLAB_DB_HOOK=$hold LD_PRELOAD=$HOOK "$IPCLAB" db import -q --db "$url" --label w=a "$data/compare-after.json" &
a=$!
wait_for "$hold/held" || fail "writer a never reached its transaction"
IPCLAB_DB_HOOK_BEGIN=$hold/begin LD_PRELOAD=$HOOK "$IPCLAB" db import -q --db "$url" --label w=b \
	"$data/compare-env-a.json" &
b=$!
wait_for "$hold/begin" || fail "writer b never came to its transaction"
release "$hold/go"
wait $a || fail "writer a: exit $?"
wait $b || fail "writer b: exit $?"
[ "$(runs)" = $((before + 2)) ] || fail "two writers: $(runs) runs, expected $((before + 2))"

# ---- kill -9 inside a transaction ----
before=$(runs)
rm -f "$hold/held"
IPCLAB_DB_HOOK=$hold LD_PRELOAD=$HOOK "$IPCLAB" db import -q --db "$url" --label killed=yes \
	"$data/compare-env-b.json" >/dev/null 2>&1 &
k=$!
wait_for "$hold/held" || fail "the writer to be killed never reached its transaction"
{ kill -9 $k && wait $k; } 2>/dev/null
[ "$(runs)" = "$before" ] || fail "after kill -9: $(runs) runs, expected $before"
[ "$(pg_sql "SELECT count(*) FROM ipclab_labels WHERE key = 'killed'")" = 0 ] || fail "after kill -9: its labels stayed"
[ "$(pg_sql 'SELECT count(*) FROM ipclab_runs u WHERE nresults != (SELECT count(*) FROM ipclab_results r WHERE r.run_id = u.id)')" = 0 ] ||
	fail "after kill -9: a run without all its results"
"$IPCLAB" db import -q --db "$url" "$data/compare-env-b.json" || fail "the store is not usable after kill -9"
echo "ok   one writer holding, another waiting: both stored; kill -9 inside a transaction: no trace"

# ---- labels, history ----
"$IPCLAB" db ls --db "$url" --label writer=3 >"$d/out"
[ "$(grep -c '^ *[0-9]' "$d/out")" = 1 ] || fail "db ls --label writer=3: $(cat "$d/out")"
python3 - "$d" <<'EOF'
import json, random, sys
random.seed(5)
for i in range(24):
    res = [{"transport": "pipe", "pattern": "pingpong", "size_bytes": 64, "endpoints": "process",
            "status": "ok", "options": {"transport": {}, "pattern": {}},
            "metrics": {"lat_kind": "rtt", "lat_p50_ns": 8000 * (2 if i >= 12 else 1) * (1 + random.gauss(0, 0.05))}}]
    json.dump({"schema_version": 1, "created_utc": "2025-05-%02dT00:00:00Z" % (i + 1),
               "env": {"hostname": "pghost", "kernel": "6.1"}, "results": res},
              open("%s/s%02d.json" % (sys.argv[1], i), "w"))
EOF
"$IPCLAB" db import -q --db "$url" --label series=s "$d"/s*.json || fail "import the series: exit $?"
"$IPCLAB" history --db "$url" --label series=s -f json >"$d/h.json" || fail "history: exit $?"
python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))["series"]
assert len(s) == 1 and len(s[0]["points"]) == 24, len(s)
c = s[0]["change_points"]
assert len(c) == 1 and c[0]["index"] == 12 and c[0]["at"] == "2025-05-13T00:00:00Z", c' "$d/h.json" &&
	echo "ok   history over PostgreSQL: the 2x step found at its run" || fail "history over PostgreSQL: $(head -c 400 "$d/h.json")"

# ---- schema: older migrated, newer refused ----
pg_sql "ALTER TABLE ipclab_results DROP COLUMN msgs_per_s, DROP COLUMN lat_p50_ns, DROP COLUMN lat_p99_ns,
	DROP COLUMN cpu_ns_per_msg; DROP INDEX ipclab_results_key;
	UPDATE ipclab_meta SET value = '1' WHERE key = 'schema_version'" >/dev/null
"$IPCLAB" db ls --db "$url" >/dev/null || fail "a schema-1 store: exit $?"
[ "$(pg_sql "SELECT value FROM ipclab_meta WHERE key = 'schema_version'")" = 2 ] || fail "schema 1 not migrated"
[ "$(pg_sql "SELECT count(*) FROM ipclab_results WHERE status = 'ok' AND lat_p50_ns IS NULL AND body LIKE '%lat_p50_ns%'")" = 0 ] ||
	fail "the migration did not fill lat_p50_ns"
pg_sql "UPDATE ipclab_meta SET value = '7' WHERE key = 'schema_version'" >/dev/null
before=$(runs)
expect_usage_error "a PostgreSQL store of a newer schema (run)" run -t pipe -n 100 --db "$url"
expect_usage_error "a PostgreSQL store of a newer schema (history)" history --db "$url"
[ "$(runs)" = "$before" ] && [ "$(pg_sql "SELECT value FROM ipclab_meta WHERE key = 'schema_version'")" = 7 ] ||
	fail "a newer store was changed"
pg_stop
[ -n "$(leftovers)" ] && fail "left behind: $(leftovers)"
finish
