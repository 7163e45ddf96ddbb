# SPDX-License-Identifier: MIT
# A private PostgreSQL server for a test (source after common.sh): Debian's
# binaries (/usr/lib/postgresql/*/bin), initdb into the test's temporary
# directory, a Unix socket there and a random port, no TCP; trust for the
# user ipclab. As root the server runs as uid 65534 (postgres refuses
# root). Stopped when the test ends, or -- should the test be killed --
# by a watcher once the test's shell is gone. pg_start sets PG_URL; without
# the server binaries the test is skipped (77) with the install line. The
# server runs with fsync=off (a test needs no durability) unless PG_EXTRA
# says otherwise (bench/db_write.sh: PG_EXTRA="").

pg_start() {
	local bin port tries
	bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
	if [ -z "$bin" ] || [ ! -x "$bin/initdb" ] || [ ! -x "$bin/pg_ctl" ]; then
		echo "skip: no PostgreSQL server binaries; install them with: apt-get install postgresql"
		exit 77
	fi
	PG_BIN=$bin
	PG_DIR=$(mktemp -d "$TMPDIR/pg.XXXXXX")
	PG_AS=()
	if [ "$(id -u)" = 0 ]; then
		chmod 711 "$TMPDIR"
		chown 65534:65534 "$PG_DIR"
		PG_AS=(setpriv --reuid 65534 --regid 65534 --clear-groups)
	fi
	if ! "${PG_AS[@]}" env -i PATH="$PATH" LC_ALL=C "$PG_BIN/initdb" -D "$PG_DIR/data" -A trust \
		-U ipclab >"$PG_DIR/initdb.log" 2>&1; then
		echo "FAIL: initdb: $(tail -3 "$PG_DIR/initdb.log")"
		exit 1
	fi
	trap pg_stop EXIT
	for tries in 1 2 3 4 5; do
		port=$((20000 + RANDOM % 40000))
		if "${PG_AS[@]}" env -i PATH="$PATH" LC_ALL=C "$PG_BIN/pg_ctl" -D "$PG_DIR/data" \
			-l "$PG_DIR/log" -w -t 120 \
			-o "-k $PG_DIR -p $port -c listen_addresses='' ${PG_EXTRA--c fsync=off}" start >/dev/null 2>&1; then
			PG_PORT=$port
			PG_URL="postgresql://ipclab@/postgres?host=$PG_DIR&port=$port"
			pg_watch &
			return 0
		fi
	done
	echo "FAIL: the PostgreSQL server did not start: $(tail -3 "$PG_DIR/log" 2>/dev/null)"
	exit 1
}

# The test's shell gone (killed), the server is stopped all the same.
pg_watch() {
	local me=$$
	exec >/dev/null 2>&1
	while kill -0 "$me" 2>/dev/null && [ -d "$PG_DIR/data" ]; do sleep 1; done
	"${PG_AS[@]}" "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -m immediate stop
}

pg_stop() {
	[ -n "${PG_DIR:-}" ] && [ -f "$PG_DIR/data/postmaster.pid" ] &&
		"${PG_AS[@]}" "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -m fast -w stop >/dev/null 2>&1
	rm -rf "$PG_DIR"
}

# psql as the server's user, on its socket: pg_sql 'SQL' prints the rows.
pg_sql() {
	"${PG_AS[@]}" "$PG_BIN/psql" -X -q -A -t -h "$PG_DIR" -p "$PG_PORT" -U ipclab -d postgres -c "$1"
}
