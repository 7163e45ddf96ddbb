#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A PostgreSQL store's password and schema, against a real server this test
# starts (tests/lib/pg.sh; skipped, 77, without the server binaries): a
# password holding '?', '#', '%40' or 300 bytes is nowhere -- not in
# stdout, stderr, the result file, the store's rows, nor in the running
# ipclab's /proc/PID/cmdline -- and one holding a bare '@' or '/' (which
# libpq would read as the host) is refused in one line without a piece of
# it; a schema of another role first in the search_path is not written to;
# a store of an older ipclab (tables in public) is moved into schema
# ipclab; SIGTERM while a statement waits for a lock ends ipclab at once,
# in one line, storing nothing.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/pg.sh"

HOOK=${DB_HOOK:-$(dirname "$IPCLAB")/tests/cli/db_hook.so}
[ -r "$HOOK" ] || { echo "skip: $HOOK not built (make)"; exit 77; }
if "$IPCLAB" db ls --db postgresql://nowhere/x 2>&1 | grep -q "built without PostgreSQL"; then
	echo "skip: this ipclab was built without libpq (apt-get install libpq-dev, then make)"
	exit 77
fi
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0
unset IPCLAB_DB PGPASSWORD PGPASSFILE
d=$TMPDIR/dbpw
mkdir -p "$d"
data=$(dirname "$0")/../data
pg_start
# the server trusts the user: any password is taken, and must stay hidden
with_pw() { echo "${PG_URL/ipclab@/ipclab:$1@}"; }
# where the store's tables are (schema ipclab; public before it had one)
home() { pg_sql "SELECT schemaname FROM pg_tables WHERE tablename = 'ipclab_meta' AND schemaname <> 'evil' LIMIT 1"; }
runs() { pg_sql "SELECT count(*) FROM $(home).ipclab_runs"; }
wait_for() {
	local i
	for ((i = 0; i < 600; i++)); do
		eval "$1" && return 0
		sleep 0.1
	done
	return 1
}
# leaks WORD...: the files of this case holding a word, or the store's rows
leaks() {
	local w s
	for w in "$@"; do
		grep -lF -e "$w" "$d"/out "$d"/err "$d"/r.json "$d"/cmdline 2>/dev/null
		s=$(home)
		[ -n "$s" ] && [ "$(pg_sql "SELECT count(*) FROM $s.ipclab_runs WHERE strpos(cmdline || header, \$q\$$w\$q\$) > 0")" != 0 ] &&
			echo "the store's rows"
	done
	return 0
}

# ---- passwords ipclab takes: nowhere to be seen ----
long=L0ng$(printf 'x%.0s' {1..300})Tail9
hold=$d/hold
mkdir "$hold" && mkfifo "$hold/go"
f0=$fails
for pw in 'Que?ry7' 'Hash#Mark7' 'Pct%40Enc7' "$long"; do
	url=$(with_pw "$pw")
	rm -f "$d"/out "$d"/err "$d"/r.json "$d"/cmdline "$hold/held"
	IPCLAB_DB_HOOK=$hold LD_PRELOAD=$HOOK "$IPCLAB" run -t pipe -n 500 -q --db "$url" -f json \
		-o "$d/r.json" >"$d/out" 2>"$d/err" &
	p=$!
	# inside its transaction, it is running: what other users read of it
	wait_for '[ -e "$hold/held" ]' || fail "password ${pw:0:12}: the run never reached the store"
	tr '\0' ' ' <"/proc/$p/cmdline" >"$d/cmdline"
	timeout 30 bash -c 'echo go >"$1"' _ "$hold/go" || fail "the held run was not there to let go"
	wait $p || fail "password ${pw:0:12}: exit $?: $(cat "$d/err")"
	grep -q -- '--db postgresql://ipclab:\*\*\*@' "$d/cmdline" ||
		fail "password ${pw:0:12}: /proc/PID/cmdline does not show the URL with ***: $(cat "$d/cmdline")"
	grep -q 'ipclab:\*\*\*@' "$d/r.json" || fail "password ${pw:0:12}: the result's cmdline does not show ***"
	where=$(leaks "$pw" "${pw/\%40/@}" Tail9)
	[ -z "$where" ] || fail "password ${pw:0:12} found in: $where"
done
[ "$fails" = "$f0" ] && echo "ok   passwords with ?, #, %40, 300 bytes: in no output, result file, stored row, /proc/PID/cmdline"

# an unreachable server, the messages libpq writes
for pw in 'Que?ry7' "$long"; do
	bad=$(with_pw "$pw")
	"$IPCLAB" db ls --db "${bad/port=$PG_PORT/port=1}" >"$d/out" 2>"$d/err"
	rc=$?
	[ $rc = 1 ] && [ "$(wc -l <"$d/err")" = 1 ] || fail "an unreachable server: exit $rc: $(cat "$d/err")"
	where=$(leaks "$pw" Tail9)
	[ -z "$where" ] || fail "password ${pw:0:12} in the connection error: $(cat "$d/err")"
done

# a bare '@' or '/': libpq would take a piece of it for the host
f0=$fails
for pw in 'AtLeft@AtRight' 'SlashLeft/SlashRight'; do
	rm -f "$d"/r.json "$d"/cmdline
	before=$(runs)
	"$IPCLAB" run -t pipe -n 500 -q --db "$(with_pw "$pw")" >"$d/out" 2>"$d/err"
	rc=$?
	[ $rc = 2 ] && [ "$(wc -l <"$d/err")" = 1 ] && grep -q '%40' "$d/err" ||
		fail "password with @ or /: exit $rc, expected 2 and one line naming %40: $(cat "$d/err")"
	where=$(leaks AtLeft AtRight SlashLeft SlashRight)
	[ -z "$where" ] || fail "a piece of password ${pw:0:12} in: $where: $(cat "$d/err")"
	[ "$(runs)" = "$before" ] || fail "password with @ or /: a run was stored"
done
[ "$fails" = "$f0" ] && echo "ok   a password holding a bare @ or /: refused in one line naming %40 and %2F, no piece of it shown"

# ---- another role's schema first in the search_path ----
url=$(with_pw 'Que?ry7')
s=$(home)
pg_sql "CREATE ROLE evil; CREATE SCHEMA evil AUTHORIZATION evil;
	CREATE TABLE evil.ipclab_runs (LIKE $s.ipclab_runs INCLUDING DEFAULTS);
	ALTER TABLE evil.ipclab_runs OWNER TO evil;
	ALTER ROLE ipclab SET search_path = evil, public" >/dev/null || fail "could not make schema evil"
before=$(runs)
"$IPCLAB" run -t pipe -n 500 -q --db "$url" >/dev/null 2>"$d/err" || fail "with schema evil first: exit $?: $(cat "$d/err")"
[ "$(pg_sql 'SELECT count(*) FROM evil.ipclab_runs')" = 0 ] && [ "$(runs)" = $((before + 1)) ] &&
	echo "ok   another role's schema first in the search_path: not written to, the run in the store" ||
	fail "schema evil: $(pg_sql 'SELECT count(*) FROM evil.ipclab_runs') rows in evil.ipclab_runs, $(runs) in the store (was $before)"
pg_sql "SET client_min_messages = warning; ALTER ROLE ipclab RESET search_path; DROP SCHEMA evil CASCADE; DROP ROLE evil" >/dev/null

# ---- a store of an older ipclab: its tables in public, moved ----
[ "$(home)" = ipclab ] || fail "the store is not in schema ipclab but in '$(home)'"
before=$(runs)
pg_sql "ALTER TABLE ipclab.ipclab_meta SET SCHEMA public; ALTER TABLE ipclab.ipclab_runs SET SCHEMA public;
	ALTER TABLE ipclab.ipclab_labels SET SCHEMA public; ALTER TABLE ipclab.ipclab_results SET SCHEMA public" >/dev/null
"$IPCLAB" db ls --db "$url" >"$d/out" 2>"$d/err" || fail "an older store: exit $?: $(cat "$d/err")"
[ "$(home)" = ipclab ] && [ "$(runs)" = "$before" ] &&
	[ "$(pg_sql "SELECT count(*) FROM pg_tables WHERE schemaname = 'public' AND tablename LIKE 'ipclab%'")" = 0 ] &&
	[ "$(grep -c '^ *[0-9]' "$d/out")" = "$before" ] &&
	echo "ok   an older store's tables (public) moved into schema ipclab, its $before runs kept" ||
	fail "an older store: tables in '$(home)', $(runs) runs (was $before)"

# ---- SIGTERM while a statement waits for a lock ----
locked() {
	[ "$(pg_sql "SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a USING (pid)
		WHERE a.application_name = 'locker' AND l.granted AND l.mode = 'AccessExclusiveLock'
		AND l.relation = '$(home).ipclab_runs'::regclass")" = 1 ]
}
ipclab_waits() {
	[ "$(pg_sql "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'ipclab'
		AND wait_event_type = 'Lock'")" = 1 ]
}
before=$(runs)
PGAPPNAME=locker pg_sql "BEGIN; LOCK TABLE $(home).ipclab_runs IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(300)" >/dev/null 2>&1 &
locker=$!
wait_for locked || fail "the locking session never held its lock"
"$IPCLAB" db import -q --db "$url" "$data/compare-after.json" >"$d/out" 2>"$d/err" &
p=$!
wait_for ipclab_waits || fail "ipclab never waited for the lock: $(cat "$d/err")"
kill -TERM $p
# its statement would wait a minute (statement_timeout): 5 s tells apart
for ((i = 0; i < 50; i++)); do kill -0 $p 2>/dev/null || break; sleep 0.1; done
kill -0 $p 2>/dev/null && gone=no || gone=yes
kill -9 $p 2>/dev/null
wait $p
rc=$?
pg_sql "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'locker'" >/dev/null
wait $locker 2>/dev/null
[ $gone = yes ] || fail "SIGTERM while waiting for a lock: ipclab still running 5 s later"
[ $rc != 0 ] && [ "$(wc -l <"$d/err")" = 1 ] && grep -q 'interrupted by signal 15' "$d/err" &&
	[ "$(runs)" = "$before" ] &&
	echo "ok   SIGTERM while a statement waits for a lock: ipclab ends, one line: $(cat "$d/err")" ||
	fail "SIGTERM while waiting: exit $rc, $(runs) runs (was $before): $(cat "$d/err")"
pg_stop
[ -n "$(leftovers)" ] && fail "left behind: $(leftovers)"
finish
