#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# -o onto what is not a regular file writes into it and never replaces it:
# a character device (a /dev/null made in this test's directory), a FIFO
# (its reader gets the whole report), a listening Unix socket, /dev/stdout
# and /dev/fd/N; the same for compare and suite. A regular file is still
# replaced atomically, a link planted at the path is replaced (its target
# untouched), and the temporary name beside it cannot be guessed: another
# user who plants every PID-based name first does not stop the write.
# Everything is made under this test's own directory.
. "$(dirname "$0")/../lib/common.sh"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
before=$(leftovers)

is_report() { # file: a complete JSON report with one null result
	python3 - "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["results"] and d["results"][0]["transport"] == "null", d["results"]
PY
}

# a character device: 1,3 is the kernel's null device, made here
if mknod "$dir/null" c 1 3 2>/dev/null; then
	"$IPCLAB" run -t null -n 200 -q -f json -o "$dir/null" 2>"$dir/err" || fail "-o onto a device failed: $(cat "$dir/err")"
	[ -c "$dir/null" ] || fail "-o replaced a character device: now $(stat -c %F "$dir/null")"
	"$IPCLAB" compare "$(dirname "$0")"/../data/compare-before.json "$(dirname "$0")"/../data/compare-after.json -o "$dir/null" >/dev/null 2>"$dir/err"
	[ -c "$dir/null" ] || fail "compare -o replaced a character device: now $(stat -c %F "$dir/null")"
	ls "$dir"/null.tmp-* >/dev/null 2>&1 && fail "a temporary file was left beside the device"
else
	echo "skip device part: mknod not permitted here"
fi

# a FIFO: the reader gets the whole report
mkfifo "$dir/fifo"
cat "$dir/fifo" >"$dir/from-fifo" &
reader=$!
"$IPCLAB" run -t null -n 200 -q -f json -o "$dir/fifo" 2>"$dir/err" || fail "-o onto a FIFO failed: $(cat "$dir/err")"
wait "$reader"
[ -p "$dir/fifo" ] || fail "-o replaced a FIFO: now $(stat -c %F "$dir/fifo")"
is_report "$dir/from-fifo" || fail "the FIFO's reader did not get the whole report"

# a listening Unix socket: connected to, the listener gets the report
python3 - "$dir/sock" "$dir/from-sock" <<'PY' &
import os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(sys.argv[1]); s.listen(1)
open(sys.argv[1] + ".ready", "w").close()
s.settimeout(60)
c, _ = s.accept()
with open(sys.argv[2], "wb") as f:
    while True:
        b = c.recv(65536)
        if not b:
            break
        f.write(b)
PY
listener=$!
for _ in $(seq 600); do [ -e "$dir/sock.ready" ] && break; sleep 0.1; done
"$IPCLAB" run -t null -n 200 -q -f json -o "$dir/sock" 2>"$dir/err" || fail "-o onto a Unix socket failed: $(cat "$dir/err")"
wait "$listener"
[ -S "$dir/sock" ] || fail "-o replaced a socket: now $(stat -c %F "$dir/sock")"
is_report "$dir/from-sock" || fail "the socket's listener did not get the whole report"

# /dev/stdout and /dev/fd/1 are this process's own output, a pipe or a file
"$IPCLAB" run -t null -n 200 -q -f json -o /dev/stdout 2>"$dir/err" | cat >"$dir/from-pipe"
is_report "$dir/from-pipe" || fail "-o /dev/stdout into a pipe: not the report ($(head -c 200 "$dir/err"))"
"$IPCLAB" run -t null -n 200 -q -f json -o /dev/fd/1 >"$dir/from-fd" 2>"$dir/err"
is_report "$dir/from-fd" || fail "-o /dev/fd/1 into a file: not the report ($(head -c 200 "$dir/err"))"
[ -L /dev/stdout ] || fail "/dev/stdout is no longer a link: $(stat -c %F /dev/stdout)"
"$IPCLAB" run -t null -n 200 -q -f json -o - >"$dir/from-dash" 2>"$dir/err"
is_report "$dir/from-dash" || fail "-o - : not the report on stdout"
[ -e ./- ] && fail "-o - made a file named '-'"

# a regular file is replaced atomically; a link there is replaced, its target kept
echo precious >"$dir/victim"
ln -s "$dir/victim" "$dir/link.json"
"$IPCLAB" run -t null -n 200 -q -f json -o "$dir/link.json" 2>"$dir/err" || fail "-o onto a link failed: $(cat "$dir/err")"
[ "$(cat "$dir/victim")" = precious ] || fail "-o wrote through a link planted at the path"
[ -f "$dir/link.json" ] && [ ! -L "$dir/link.json" ] && is_report "$dir/link.json" || fail "-o did not replace the link with the report"

# the temporary name cannot be guessed: another user plants the next
# 1000 PID-based names in a shared sticky directory first
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	shared="$dir/shared"
	mkdir -m 1777 "$shared"
	chmod 711 "$IPCLAB_TEST_TAG" "$dir"
	last=$(cat /proc/sys/kernel/ns_last_pid)
	setpriv --reuid 65534 --regid 65534 --clear-groups bash -c \
		'for p in $(seq '"$((last + 1)) $((last + 1000))"'); do : >"'"$shared"'/r.json.tmp-$p"; done' 2>"$dir/err" ||
		fail "the other user could not plant names: $(head -2 "$dir/err")"
	"$IPCLAB" run -t null -n 200 -q -f json -o "$shared/r.json" 2>"$dir/err" ||
		fail "a planted temporary name stopped the write: $(cat "$dir/err")"
	is_report "$shared/r.json" || fail "no report at $shared/r.json"
	[ "$(find "$shared" -name 'r.json.tmp-*' -user 65534 | wc -l)" = 1000 ] || fail "the other user's files were touched"
	[ "$(find "$shared" -name 'r.json.tmp-*' ! -user 65534 | wc -l)" = 0 ] || fail "a temporary file was left behind"
	chmod 700 "$IPCLAB_TEST_TAG" "$dir"
fi

# what -o cannot be is refused before any work, in one line
expect_usage_error "-o a directory" run -t null -n 10 -o "$dir"
expect_usage_error "-o in a missing directory" run -t null -n 10 -o "$dir/none/r.json"
expect_usage_error "compare -o a directory" compare "$(dirname "$0")"/../data/compare-before.json "$(dirname "$0")"/../data/compare-after.json -o "$dir"
expect_usage_error "suite -o in a missing directory" suite seeds --dry-run -o "$dir/none/s.json"

after=$(leftovers)
[ -z "$(new_leftovers "$before" "$after")" ] || fail "left behind: $(new_leftovers "$before" "$after")"
finish
