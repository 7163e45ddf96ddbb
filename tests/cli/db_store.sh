#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The SQLite results store (run --db, db import/export/ls): runs stored
# and read back identically (every field of the result file), the same
# file stored once, labels, two writers at once (one holding its
# transaction open while the other comes to the lock: both land), a writer killed -9
# in the middle of its transaction (the store passes integrity_check and
# holds only whole runs), a foreign, a damaged and a linked file refused
# (exit 2, one line) and left as they were, an older schema migrated, a
# newer one refused, a failed run not stored unless --db-failed.
. "$(dirname "$0")/../lib/common.sh"

command -v python3 >/dev/null || { echo "skip: needs python3"; exit 77; }
command -v sqlite3 >/dev/null || { echo "skip: needs sqlite3 (apt-get install sqlite3)"; exit 77; }
HOOK=${DB_HOOK:-$(dirname "$IPCLAB")/tests/cli/db_hook.so}
[ -r "$HOOK" ] || { echo "skip: $HOOK not built (make)"; exit 77; }
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0
unset IPCLAB_DB
need_sqlite
d=$TMPDIR/db
mkdir -p "$d"
db=$d/results.db
data=$(dirname "$0")/../data

# same_json A B: the two files hold the same JSON (numbers as doubles).
same_json() {
	python3 - "$1" "$2" <<'EOF'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
sys.exit(0 if a == b and json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True) else 1)
EOF
}

runs() { sqlite3 "$db" 'SELECT count(*) FROM ipclab_runs'; }

# wait_for PATH: until it exists (60 s at most).
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

# ---- a run stored and read back ----
"$IPCLAB" run -t pipe,unix-stream -p pingpong,stream -n 2000 --repeat 2 -f json -o "$d/r1.json" \
	--db "$db" --label commit=c1,branch=main >/dev/null 2>"$d/err"
rc=$?
[ $rc = 0 ] || fail "run --db: exit $rc: $(head -3 "$d/err")"
grep -q "stored as run 1 in $db (4 results)" "$d/err" || fail "run --db did not say what it stored: $(cat "$d/err")"
"$IPCLAB" db export --db "$db" --run 1 -o "$d/e1.json" || fail "db export: exit $?"
same_json "$d/r1.json" "$d/e1.json" && echo "ok   run --db: the stored run reads back as the -o file" ||
	fail "the stored run differs from the file run -o wrote"
"$IPCLAB" db ls --db "$db" -f json >"$d/ls.json" || fail "db ls: exit $?"
python3 - "$d/ls.json" "$(uname -r)" "$(hostname)" <<'EOF' || fail "db ls: labels wrong: $(cat "$d/ls.json")"
import json, sys
runs = json.load(open(sys.argv[1]))
l = runs[0]["labels"]
assert len(runs) == 1 and runs[0]["results"] == 4, runs
assert l["commit"] == "c1" and l["branch"] == "main", l
assert l["kernel"] == sys.argv[2] and l["machine"] == sys.argv[3], l
EOF

# ---- import: every file read back as it was, the same file once ----
for f in "$data"/compare-before.json "$data"/compare-env-a.json "$data"/plot-small.json "$d/r1.json"; do
	"$IPCLAB" db import --db "$db" "$f" >"$d/out" || fail "import $f: exit $?"
done
grep -q "already stored as run 1" "$d/out" || fail "the file run --db stored was stored again: $(cat "$d/out")"
[ "$(runs)" = 4 ] || fail "after importing 3 new files and 1 stored: $(runs) runs, expected 4"
for id in 2 3 4; do
	f=$(sed -n "${id}p" <<<"x
$data/compare-before.json
$data/compare-env-a.json
$data/plot-small.json" | tail -1)
	"$IPCLAB" db export --db "$db" --run $id >"$d/e.json" || fail "export run $id: exit $?"
	same_json "$f" "$d/e.json" || fail "run $id does not read back as $f"
done
echo "ok   import/export: 3 files read back field for field; a file stored twice is one run"
# export --dir: every run that matches, one file each, each its run's file
mkdir "$d/exp"
"$IPCLAB" db export --db "$db" --dir "$d/exp" >/dev/null || fail "db export --dir: exit $?"
[ "$(ls "$d/exp" | wc -l)" = 4 ] || fail "db export --dir: $(ls "$d/exp" | wc -l) files for 4 runs: $(ls "$d/exp")"
n=0
for f in "$d/exp"/*; do
	for g in "$d/r1.json" "$data/compare-before.json" "$data/compare-env-a.json" "$data/plot-small.json"; do
		same_json "$g" "$f" 2>/dev/null && { n=$((n + 1)); break; }
	done
done
[ "$n" = 4 ] || fail "db export --dir: $n of 4 files read back as a stored run"
expect_usage_error "db export -o and --dir" db export --db "$db" --dir "$d/exp" -o "$d/x.json"
expect_usage_error "import of a file that is not a result file" db import --db "$db" "$0"
[ "$(runs)" = 4 ] || fail "a refused import stored something"

# ---- labels filter ----
"$IPCLAB" db ls --db "$db" --label commit=c1 >"$d/out"
[ "$(grep -c '^ *[0-9]' "$d/out")" = 1 ] || fail "db ls --label commit=c1: $(cat "$d/out")"
expect_usage_error "a label without a value" db ls --db "$db" --label commit
expect_usage_error "a label with a control byte" run -t pipe -n 100 --db "$db" --label "a=$(printf 'x\ty')"

# ---- two writers at once ----
hold=$d/hold
mkdir "$hold" && mkfifo "$hold/go"
IPCLAB_DB_HOOK=$hold LD_PRELOAD=$HOOK "$IPCLAB" run -t pipe -n 2000 -q --db "$db" --label w=a >/dev/null 2>"$d/err.a" &
a=$!
wait_for "$hold/held" || fail "writer a never reached its transaction"
IPCLAB_DB_HOOK_BEGIN=$hold/begin LD_PRELOAD=$HOOK "$IPCLAB" run -t pipe -n 2000 -q --db "$db" \
	--label w=b >/dev/null 2>"$d/err.b" &
b=$!
wait_for "$hold/begin" || fail "writer b never came to its transaction"
release "$hold/go"
wait $a || fail "writer a: exit $?: $(cat "$d/err.a")"
wait $b || fail "writer b: exit $?: $(cat "$d/err.b")"
[ "$(sqlite3 "$db" "SELECT count(*) FROM ipclab_labels WHERE key = 'w'")" = 2 ] &&
	echo "ok   two writers at once (one holding its transaction): both runs stored" ||
	fail "two writers at once: $(sqlite3 "$db" "SELECT value FROM ipclab_labels WHERE key = 'w'")"

# ---- kill -9 in the middle of a run's transaction ----
before=$(runs)
rm -f "$hold/held"
IPCLAB_DB_HOOK=$hold LD_PRELOAD=$HOOK "$IPCLAB" db import --db "$db" --label killed=yes \
	"$data/compare-after.json" >/dev/null 2>&1 &
k=$!
wait_for "$hold/held" || fail "the writer to be killed never reached its transaction"
{ kill -9 $k && wait $k; } 2>/dev/null
[ "$(sqlite3 "$db" 'PRAGMA integrity_check')" = ok ] || fail "after kill -9: integrity_check fails"
[ "$(runs)" = "$before" ] || fail "after kill -9: $(runs) runs, expected $before (a partial run?)"
whole=$(sqlite3 "$db" 'SELECT count(*) FROM ipclab_runs u WHERE nresults != (SELECT count(*) FROM ipclab_results r WHERE r.run_id = u.id)')
[ "$whole" = 0 ] || fail "after kill -9: $whole runs without all their results"
"$IPCLAB" db import --db "$db" "$data/compare-after.json" >/dev/null || fail "the store is not usable after kill -9"
[ "$(runs)" = $((before + 1)) ] && echo "ok   kill -9 mid-transaction: store intact, no partial run, usable" ||
	fail "after kill -9 and a new import: $(runs) runs"

# ---- refused: foreign, damaged, linked, newer; never modified ----
refused() {	# refused WHAT FILE: run --db and db ls refuse it, exit 2, it is unchanged
	local sum
	sum=$(sha256sum <"$2")
	expect_usage_error "$1 (run --db)" run -t pipe -n 100 --db "$2"
	expect_usage_error "$1 (db ls)" db ls --db "$2"
	expect_usage_error "$1 (history)" history --db "$2"
	[ "$(sha256sum <"$2")" = "$sum" ] || fail "$1: the file was modified"
	[ -e "$2-wal" ] && fail "$1: a -wal file was made beside it"
}
printf 'these are not the results you are looking for\n%.0s' {1..200} >"$d/text.db"
refused "a text file" "$d/text.db"
sqlite3 "$d/other.db" 'CREATE TABLE t (x); INSERT INTO t VALUES (1)'
refused "another program's SQLite database" "$d/other.db"
cp "$db" "$d/damaged.db"
sqlite3 "$d/damaged.db" 'PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode = DELETE' >/dev/null
python3 - "$d/damaged.db" <<'EOF'
import sys
f = open(sys.argv[1], "r+b")
f.seek(4096 + 8)	# page 2: the first table's b-tree header
f.write(b"\xff" * 200)
EOF
refused "a damaged store" "$d/damaged.db"
"$IPCLAB" db ls --db "$d/damaged.db" 2>&1 | grep -q "is a damaged SQLite database" ||
	fail "a damaged store: the message does not say so"
ln -s "$db" "$d/link.db"
expect_usage_error "a symbolic link" db ls --db "$d/link.db"
cp "$db" "$d/newer.db"
sqlite3 "$d/newer.db" "UPDATE ipclab_meta SET value = '99' WHERE key = 'schema_version'; PRAGMA wal_checkpoint(TRUNCATE)" >/dev/null
refused "a store of a newer schema" "$d/newer.db"
"$IPCLAB" db ls --db "$d/newer.db" 2>&1 | grep -q "schema 99, newer than this ipclab" ||
	fail "a newer schema: the message does not say so"
expect_usage_error "a store that does not exist (history)" history --db "$d/none.db"
[ -e "$d/none.db" ] && fail "history made the store it was only to read"

# ---- an older schema (1: before the metric columns) is migrated ----
cp "$db" "$d/v1.db"
sqlite3 "$d/v1.db" "DROP INDEX ipclab_results_key; ALTER TABLE ipclab_results DROP COLUMN msgs_per_s;
	ALTER TABLE ipclab_results DROP COLUMN lat_p50_ns; ALTER TABLE ipclab_results DROP COLUMN lat_p99_ns;
	ALTER TABLE ipclab_results DROP COLUMN cpu_ns_per_msg;
	UPDATE ipclab_meta SET value = '1' WHERE key = 'schema_version'"
"$IPCLAB" db ls --db "$d/v1.db" >/dev/null || fail "a schema-1 store: db ls exit $?"
[ "$(sqlite3 "$d/v1.db" "SELECT value FROM ipclab_meta WHERE key = 'schema_version'")" = 2 ] ||
	fail "a schema-1 store was not migrated to 2"
[ "$(sqlite3 "$d/v1.db" "SELECT count(*) FROM ipclab_results WHERE status = 'ok' AND msgs_per_s IS NULL")" = 0 ] ||
	fail "the migration did not fill msgs_per_s from the stored results"
"$IPCLAB" db export --db "$d/v1.db" --run 1 >"$d/e.json" && same_json "$d/r1.json" "$d/e.json" &&
	echo "ok   a schema-1 store migrated to 2, its runs intact" || fail "a migrated store lost run 1"

# ---- a failed run is not stored, unless --db-failed ----
before=$(runs)
"$IPCLAB" run -t null -n 5000 -O fault=dup -O fault-at=3000 -q --db "$db" >/dev/null 2>&1
rc=$?
[ $rc = 1 ] || fail "the failing run: exit $rc, expected 1"
[ "$(runs)" = "$before" ] || fail "a failed run was stored"
"$IPCLAB" run -t null -n 5000 -O fault=dup -O fault-at=3000 -q --db "$db" --db-failed >/dev/null 2>&1
[ "$(runs)" = $((before + 1)) ] && echo "ok   a failed run stored only with --db-failed" ||
	fail "--db-failed: the failed run was not stored"
[ "$(sqlite3 "$db" "SELECT status FROM ipclab_results ORDER BY id DESC LIMIT 1")" = failed ] ||
	fail "--db-failed: the stored result is not the failed one"

# ---- IPCLAB_DB, --db URL forms ----
IPCLAB_DB=sqlite:$d/env.db "$IPCLAB" run -t pipe -n 500 -q >/dev/null 2>&1
[ "$(sqlite3 "$d/env.db" 'SELECT count(*) FROM ipclab_runs')" = 1 ] || fail "IPCLAB_DB did not store the run"
HOME=$d/home "$IPCLAB" run -t pipe -n 500 -q --db >/dev/null 2>&1
[ -s "$d/home/.local/share/ipclab/results.db" ] || fail "--db alone did not store into ~/.local/share/ipclab/results.db"
expect_usage_error "an unknown kind of store" run -t pipe -n 100 --db mysql://host/db
expect_usage_error "--label without --db" run -t pipe -n 100 --label a=b
[ -n "$(leftovers)" ] && fail "left behind: $(leftovers)"
finish
