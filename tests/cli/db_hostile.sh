#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A SQLite store is input anyone may have made: one whose ipclab_runs is
# a recursive view (it would list forever), one with a trigger that
# rewrites what is stored, a virtual table, a table not as ipclab makes
# it, are refused at once (exit 2, one line) and left byte for byte as
# they were; a store another user owns or may write is refused unless
# --db-shared (and then taken, still without triggers); a command waiting
# on the store's lock ends within a moment of SIGTERM.
. "$(dirname "$0")/../lib/common.sh"

command -v sqlite3 >/dev/null || { echo "skip: needs sqlite3 (apt-get install sqlite3)"; exit 77; }
command -v python3 >/dev/null || { echo "skip: needs python3"; exit 77; }
HOOK=${DB_HOOK:-$(dirname "$IPCLAB")/tests/cli/db_hook.so}
[ -r "$HOOK" ] || { echo "skip: $HOOK not built (make)"; exit 77; }
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0
unset IPCLAB_DB
need_sqlite
d=$TMPDIR/h
mkdir -p "$d"
chmod 700 "$d"
data=$(dirname "$0")/../data

# a store as ipclab makes it, one run of 4 results
good=$d/good.db
"$IPCLAB" db import --db "$good" "$data/compare-before.json" >/dev/null || fail "import: exit $?"

# crafted NAME SQL: a copy of the good store changed by SQL, and a copy of that
crafted() {
	cp "$good" "$d/$1.db" && sqlite3 "$d/$1.db" "$2" && cp "$d/$1.db" "$d/$1.orig" ||
		fail "$1: could not craft it"
}

# refused NAME WHAT PATTERN CMD...: CMD exits 2 at once with one line
# matching PATTERN, and the file is as it was, with nothing made beside it
refused() {
	local name=$1 what=$2 pat=$3 rc
	shift 3
	timeout -k 5 20 "$@" >"$d/out" 2>"$d/err"
	rc=$?
	if [ $rc = 124 ] || [ $rc = 137 ]; then
		fail "$what: still running after 20 s"
	elif [ $rc != 2 ]; then
		fail "$what: exit $rc, expected 2: $(head -3 "$d/err")"
	elif [ "$(wc -l <"$d/err")" != 1 ] || ! grep -qE "$pat" "$d/err"; then
		fail "$what: expected one line matching '$pat': $(head -3 "$d/err")"
	elif ! cmp -s "$d/$name.db" "$d/$name.orig"; then
		fail "$what: the file was changed"
	elif ls "$d/$name.db"-* >/dev/null 2>&1; then
		fail "$what: left $(ls "$d/$name.db"-*)"
	else
		echo "ok   $what: $(cat "$d/err")"
	fi
}

# ---- (a) ipclab_runs a recursive view: it lists forever, and sorts into an
# endless temporary file ----
crafted view "ALTER TABLE ipclab_runs RENAME TO old_runs;
CREATE VIEW ipclab_runs AS WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c)
SELECT n AS id, 'd' || n AS digest, printf('%020d', -n) AS created_utc, 'x' AS stored_utc,
'm' AS machine, 'k' AS kernel, 'v' AS ipclab_version, 'g' AS ipclab_git_rev, 'c' AS cmdline,
1 AS nresults, '{}' AS labels, '{}' AS header FROM c;"
pat="holds view ipclab_runs .*refused"
refused view "a recursive view (db ls)" "$pat" "$IPCLAB" db ls --db "$d/view.db"
refused view "a recursive view (history)" "$pat" "$IPCLAB" history --db "$d/view.db"
refused view "a recursive view (db export)" "$pat" "$IPCLAB" db export --db "$d/view.db" --run 1
refused view "a recursive view (run --db)" "$pat" "$IPCLAB" run -t pipe -n 100 -q --db "$d/view.db"

# ---- (b) a trigger that rewrites what is stored ----
crafted trigger "CREATE TRIGGER t AFTER INSERT ON ipclab_results BEGIN
UPDATE ipclab_results SET lat_p50_ns = 1 WHERE id = new.id; END;"
pat="holds trigger t \(on ipclab_results\).*refused"
refused trigger "a trigger (db import)" "$pat" "$IPCLAB" db import --db "$d/trigger.db" \
	"$data/compare-env-a.json"
refused trigger "a trigger (db ls)" "$pat" "$IPCLAB" db ls --db "$d/trigger.db"

# ---- and the rest of what is not ipclab's own ----
crafted vtab "CREATE VIRTUAL TABLE notes USING fts5(body)"
refused vtab "a virtual table" "holds a virtual table notes" "$IPCLAB" db ls --db "$d/vtab.db"
crafted altered "ALTER TABLE ipclab_results ADD COLUMN extra TEXT DEFAULT 'x'"
refused altered "a table not as ipclab makes it" "its table ipclab_results is not the one ipclab makes" \
	"$IPCLAB" db ls --db "$d/altered.db"
crafted index "CREATE INDEX ipclab_odd ON ipclab_runs (machine)"
refused index "an index ipclab does not make" "holds index ipclab_odd that ipclab does not make" \
	"$IPCLAB" db ls --db "$d/index.db"
# a table of the user's own beside ipclab's is theirs
cp "$good" "$d/mine.db"
sqlite3 "$d/mine.db" "CREATE TABLE my_notes (run INTEGER, note TEXT)"
"$IPCLAB" db ls --db "$d/mine.db" >"$d/out" 2>"$d/err" &&
	echo "ok   a plain table of the user's own beside ipclab's: taken" ||
	fail "a plain table of the user's own: $(cat "$d/err")"

# ---- (c) a store another user owns, or may write ----
if [ "$(id -u)" = 0 ]; then
	cp "$good" "$d/theirs.db" && cp "$good" "$d/theirs.orig" && chown 65534:65534 "$d/theirs.db"
	refused theirs "a store another user owns" "owned by uid 65534, not you.*--db-shared" \
		"$IPCLAB" db ls --db "$d/theirs.db"
	"$IPCLAB" db ls --db "$d/theirs.db" --db-shared -f json >"$d/out" 2>"$d/err" &&
		python3 -c 'import json, sys; assert len(json.load(open(sys.argv[1]))) == 1' "$d/out" &&
		echo "ok   a store another user owns, with --db-shared: its run listed" ||
		fail "db ls --db-shared of another user's store: $(cat "$d/err")"
	"$IPCLAB" db import --db "$d/theirs.db" --db-shared "$data/compare-env-a.json" >/dev/null 2>"$d/err" &&
		[ "$(sqlite3 "$d/theirs.db" 'SELECT count(*) FROM ipclab_runs')" = 2 ] &&
		echo "ok   a store another user owns, with --db-shared: a run stored in it" ||
		fail "db import --db-shared: $(cat "$d/err")"
	crafted sharedtrig "CREATE TRIGGER t AFTER INSERT ON ipclab_results BEGIN
UPDATE ipclab_results SET lat_p50_ns = 1 WHERE id = new.id; END;"
	chown 65534:65534 "$d/sharedtrig.db"
	refused sharedtrig "a shared store with a trigger, with --db-shared" "holds trigger t" \
		"$IPCLAB" db import --db "$d/sharedtrig.db" --db-shared "$data/compare-env-a.json"
fi
cp "$good" "$d/groupw.db" && cp "$good" "$d/groupw.orig" && chmod g+w "$d/groupw.db"
refused groupw "a group-writable store" "writable by other users \(mode 0664\).*--db-shared" \
	"$IPCLAB" history --db "$d/groupw.db"
"$IPCLAB" history --db "$d/groupw.db" --db-shared -f json >"$d/out" 2>"$d/err" &&
	echo "ok   a group-writable store, with --db-shared: history read it" ||
	fail "history --db-shared of a group-writable store: $(cat "$d/err")"
mkdir -p "$d/open" && chmod 777 "$d/open" && cp "$good" "$d/open/s.db"
"$IPCLAB" db ls --db "$d/open/s.db" >/dev/null 2>"$d/err"
rc=$?
[ $rc = 2 ] && grep -q "its directory .* is writable by other users" "$d/err" &&
	echo "ok   a store in a directory others may write: $(cat "$d/err")" ||
	fail "a store in a world-writable directory: exit $rc: $(cat "$d/err")"
cp "$good" "$d/planted.db"
ln -s "$d/good.db" "$d/planted.db-wal"
"$IPCLAB" db ls --db "$d/planted.db" >/dev/null 2>"$d/err"
rc=$?
[ $rc = 2 ] && grep -q "planted.db-wal is a symbolic link" "$d/err" &&
	echo "ok   a -wal planted as a symbolic link: $(cat "$d/err")" ||
	fail "a -wal planted as a link: exit $rc: $(cat "$d/err")"

# ---- (d) SIGTERM while waiting for the store's lock ----
# python3 holds the write lock until told; ipclab db import comes to it
# (the hook marks its BEGIN) and is sent SIGTERM there
busy=$d/busy.db
cp "$good" "$busy"
mkfifo "$d/hold"
python3 -c '
import sqlite3, sys
c = sqlite3.connect(sys.argv[1], isolation_level=None)
c.execute("BEGIN IMMEDIATE")
open(sys.argv[2], "w").close()
open(sys.argv[3]).readline()
c.execute("ROLLBACK")' "$busy" "$d/locked" "$d/hold" </dev/null &
holder=$!
wait_for() {
	local i
	for ((i = 0; i < 200; i++)); do
		[ -e "$1" ] && return 0
		sleep 0.05
	done
	return 1
}
wait_for "$d/locked" || fail "the lock holder did not take the lock"
IPCLAB_DB_HOOK_BEGIN=$d/begin LD_PRELOAD=$HOOK "$IPCLAB" db import --db "$busy" \
	"$data/compare-env-a.json" >/dev/null 2>"$d/err" &
pid=$!
if wait_for "$d/begin"; then
	kill -TERM "$pid"
	# ends within a moment: 5 s is ample (it waited the minute's timeout)
	for ((i = 0; i < 50; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$pid" 2>/dev/null; then
		fail "SIGTERM while waiting for the lock: still waiting 5 s later"
	else
		wait "$pid"
		rc=$?
		[ $rc != 0 ] && grep -q "interrupted" "$d/err" && [ "$(wc -l <"$d/err")" = 1 ] &&
			echo "ok   SIGTERM while waiting for the lock: ended, exit $rc: $(cat "$d/err")" ||
			fail "SIGTERM while waiting for the lock: exit $rc: $(cat "$d/err")"
	fi
else
	fail "db import did not come to its BEGIN: $(cat "$d/err")"
fi
timeout 30 bash -c 'echo go >"$1"' _ "$d/hold" || fail "the lock holder was not there to let go"
wait "$holder"
wait "$pid" 2>/dev/null
[ "$(sqlite3 "$busy" 'SELECT count(*) FROM ipclab_runs')" = 1 ] ||
	fail "the interrupted import stored a run"

[ $fails = 0 ] || { echo "$fails check(s) failed"; exit 1; }
