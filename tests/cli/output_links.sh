#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The one output path, against what another user plants: run as root, a
# symbolic link that uid 65534 put in a sticky world-writable directory,
# pointing at a FIFO of root's with a reader, at a file of root's, or at a
# character device, is never written through (-o refuses it, or replaces
# the link): the FIFO's reader gets nothing, the file keeps its bytes, the
# device stays a device. The directory is the other user's own, where
# fs.protected_symlinks does not apply; the same in a root-owned one,
# whatever the sysctl says. Another user's link to a directory earlier in
# the path is not followed either; root's own is. A FIFO no one reads: exit 2, one line, at
# once. A stop signal while the report is written: nothing put in place,
# no temporary file left, the message names the path. db export --dir
# keeps the output-directory rules of plot -o DIR. Needs root and setpriv.
. "$(dirname "$0")/../lib/common.sh"
data=$(cd "$(dirname "$0")/../data" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null; then
	echo "SKIP: needs root and setpriv (to act as another user)"
	exit 77
fi
other() { setpriv --reuid 65534 --regid 65534 --clear-groups "$@"; }
chmod 0711 "$TMPDIR" "$work"
before=$(leftovers)
report() { "$IPCLAB" run -t null -n 100 -q -f json "$@"; }

# refused (exit 2, one line) or the link replaced by the report; never
# written through
refused_or_replaced() {	# what link rc errfile
	local what=$1 link=$2 rc=$3 err=$4
	if [ "$rc" = 2 ] && [ "$(wc -l <"$err")" = 1 ] && [ -L "$link" ]; then
		echo "ok   $what: refused: $(cat "$err")"
	elif [ "$rc" = 0 ] && [ -f "$link" ] && [ ! -L "$link" ]; then
		echo "ok   $what: the link replaced by the report"
	else
		fail "$what: exit $rc, the path now $(stat -c %F "$link" 2>&1): $(head -c 300 "$err")"
	fi
}

mkfifo -m 0600 "$work/root-fifo"
echo "root's own" >"$work/root-file" && chmod 0600 "$work/root-file"
if mknod -m 0666 "$work/null" c 1 3 2>/dev/null; then dev=$work/null; else dev=/dev/null; fi

# the other user's sticky directory (protected_symlinks never applies: the
# link's owner owns the directory), then root's (it applies when set)
mkdir -m 1777 "$work/theirs" "$work/tmp"
chown 65534:65534 "$work/theirs"
echo "fs.protected_symlinks = $(cat /proc/sys/fs/protected_symlinks 2>/dev/null || echo '?')"
for d in theirs tmp; do
	dir=$work/$d
	other ln -s "$work/root-fifo" "$dir/to-fifo"
	other ln -s "$work/root-file" "$dir/to-file.json"
	other ln -s "$dev" "$dir/to-dev"

	# (a) a FIFO of root's, its reader waiting
	cat "$work/root-fifo" >"$work/got" &
	reader=$!
	report -o "$dir/to-fifo" 2>"$work/err"
	rc=$?
	exec 3<>"$work/root-fifo"	# a writer that comes and goes: the reader sees its end
	exec 3>&-
	wait $reader
	refused_or_replaced "$d: -o a link to root's FIFO" "$dir/to-fifo" $rc "$work/err"
	[ -p "$work/root-fifo" ] || fail "$d: the FIFO is now $(stat -c %F "$work/root-fifo")"
	[ -s "$work/got" ] && fail "$d: the FIFO's reader got $(wc -c <"$work/got") bytes through the link"

	# (b) a file of root's
	report -o "$dir/to-file.json" 2>"$work/err"
	refused_or_replaced "$d: -o a link to root's file" "$dir/to-file.json" $? "$work/err"
	[ "$(cat "$work/root-file")" = "root's own" ] || fail "$d: root's file was written through the link"

	# (c) a character device
	report -o "$dir/to-dev" 2>"$work/err"
	refused_or_replaced "$d: -o a link to $dev" "$dir/to-dev" $? "$work/err"
	[ -c "$dev" ] || fail "$d: $dev is now $(stat -c %F "$dev")"

	# the other commands share the path
	"$IPCLAB" compare "$data/compare-before.json" "$data/compare-after.json" -o "$dir/to-dev" >/dev/null 2>"$work/err"
	refused_or_replaced "$d: compare -o a link to $dev" "$dir/to-dev" $? "$work/err"
	ls "$dir" | grep -q '\.tmp-' && fail "$d: a temporary file was left: $(ls "$dir")"
done

# a link earlier in the path: another user's link to a directory of
# root's, in both sticky directories, is never followed (a file of that
# name there would be replaced, a new one made there); root's own link on
# the way is, and so is one reached through a relative path and ".."
mkdir -m 0700 "$work/root-dir"
echo "root's own" >"$work/root-dir/victim.json"
for d in theirs tmp; do
	other ln -s "$work/root-dir" "$work/$d/on-the-way"
	for f in victim.json new.json; do
		expect_usage_error "$d: -o through another user's link to a directory ($f)" \
			run -t null -n 100 -q -f json -o "$work/$d/on-the-way/$f"
		expect_usage_error "$d: compare -o through another user's link ($f)" \
			compare "$data/compare-before.json" "$data/compare-after.json" -o "$work/$d/on-the-way/$f"
	done
	# the other user's link behind root's own: still refused
	ln -s "$work/$d/on-the-way" "$work/tmp/root-to-theirs-$d"
	expect_usage_error "$d: -o through root's link to another user's link" \
		run -t null -n 100 -q -f json -o "$work/tmp/root-to-theirs-$d/new.json"
done
[ "$(cat "$work/root-dir/victim.json")" = "root's own" ] || fail "root's file was replaced through a link on the way"
[ -e "$work/root-dir/new.json" ] && fail "a file was made through another user's link on the way"
ls "$work/root-dir" | grep -q '\.tmp-' && fail "a temporary file was left through a link on the way: $(ls "$work/root-dir")"
ln -s "$work/root-dir" "$work/tmp/mine"
if report -o "$work/tmp/mine/ok.json" 2>"$work/err" && [ -s "$work/root-dir/ok.json" ] &&
   (cd "$work/tmp" && report -o mine/../tmp/mine/rel.json) 2>>"$work/err" && [ -s "$work/root-dir/rel.json" ]; then
	echo "ok   root's own link on the way is followed (absolute, and relative with .. taken physically, as the kernel does)"
else
	fail "-o through root's own link on the way: $(head -c 300 "$work/err")"
fi
expect_usage_error "-o in a directory that does not exist" run -t null -n 100 -q -o "$work/nowhere/out.json"
expect_usage_error "-o through a file on the way" run -t null -n 100 -q -o "$work/root-dir/ok.json/out.json"

# a FIFO no one reads, named itself: exit 2 at once, one line, not a hang
mkfifo "$work/lonely"
timeout 20 "$IPCLAB" run -t null -n 100 -q -o "$work/lonely" >/dev/null 2>"$work/err"
rc=$?
if [ $rc != 2 ] || [ "$(wc -l <"$work/err")" != 1 ] || ! grep -qF "$work/lonely" "$work/err"; then
	fail "-o a FIFO no one reads: exit $rc (124: it hung), expected 2 and one line: $(head -c 300 "$work/err")"
else
	echo "ok   -o a FIFO no one reads: $(cat "$work/err")"
fi
[ -p "$work/lonely" ] || fail "-o replaced the FIFO no one reads"

# a stop signal while the report goes into a FIFO whose reader stopped
# reading (the report is larger than the pipe: the write blocks)
exec 4<>"$work/lonely"	# a reader that never reads
"$IPCLAB" run -t null -n 20 -p pingpong,stream -s 16,32,64,128,256,512,1024,2048,4096,8192,16384,32768 \
	-q -f json -o "$work/lonely" >/dev/null 2>"$work/err" &
pid=$!
for _ in $(seq 2000); do	# until it blocks in the pipe's write (20 s at most)
	grep -q 'pipe_write$' "/proc/$pid/wchan" 2>/dev/null && break
	kill -0 $pid 2>/dev/null || break
	sleep 0.01
done
kill -TERM $pid 2>/dev/null
for _ in $(seq 2000); do kill -0 $pid 2>/dev/null || break; sleep 0.01; done
kill -KILL $pid 2>/dev/null && fail "SIGTERM during a write into a FIFO: still writing 20 s later"
wait $pid
rc=$?
exec 4<&-
if [ $rc != 143 ] || [ "$(wc -l <"$work/err")" != 1 ] || ! grep -qF "$work/lonely" "$work/err" ||
   grep -q rename "$work/err"; then
	fail "SIGTERM during a write into a FIFO: exit $rc, expected 143 and one line naming it: $(head -c 300 "$work/err")"
else
	echo "ok   SIGTERM during a write into a FIFO: $(cat "$work/err")"
fi

# a stop signal while a regular file is written: strace sends SIGTERM at
# the last look at the path before the write (counted in a first run)
if command -v strace >/dev/null; then
	out=$work/out.json
	# (LeakSanitizer cannot run under ptrace: off for these two runs)
	cmp_run() { ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
		strace -f -qq -o "$work/st" -P "$work" -e trace=%%stat "$@" \
		"$IPCLAB" compare "$data/compare-before.json" "$data/compare-after.json" -o "$out"; }
	echo old >"$out"
	cmp_run >/dev/null 2>"$work/err"
	n=$(grep -c 'out\.json' "$work/st")	# looked at in its directory, $work
	echo old >"$out"
	cmp_run -e inject=%%stat:signal=SIGTERM:when="$n" >/dev/null 2>"$work/err"
	rc=$?
	if [ "$(cat "$out")" != old ] || [ $rc != 143 ] || [ "$(wc -l <"$work/err")" != 1 ] ||
	   ! grep -qF "$out" "$work/err" || grep -q rename "$work/err"; then
		fail "SIGTERM while $out was written: exit $rc, the file $(head -c 40 "$out"): $(head -c 300 "$work/err")"
	else
		echo "ok   SIGTERM while a file was written: left as it was: $(cat "$work/err")"
	fi
	ls "$work" | grep -q '\.tmp-' && fail "SIGTERM left a temporary file: $(ls "$work")"
else
	echo "skip the SIGTERM-during-a-file part: no strace"
fi

# db export --dir: the output-directory rules (plot -o DIR)
db=$work/store.db
if "$IPCLAB" db import --db "$db" -q "$data/compare-before.json" 2>"$work/err"; then
	mkdir -m 0777 "$work/tmp/their-dir"
	chown 65534:65534 "$work/tmp/their-dir"
	other ln -s "$work/safe" "$work/theirs/dir-link"
	mkdir -m 0700 "$work/safe"
	expect_usage_error "db export --dir another user's directory" db export --db "$db" --dir "$work/tmp/their-dir"
	expect_usage_error "db export --dir through another user's link" db export --db "$db" --dir "$work/theirs/dir-link"
	[ -z "$(find "$work/tmp/their-dir" "$work/safe" -mindepth 1)" ] || fail "db export wrote into a refused directory"
	"$IPCLAB" db export --db "$db" --dir "$work/exported" 2>"$work/err" || fail "db export --dir a new directory: $(cat "$work/err")"
	if [ "$(stat -c %a "$work/exported")" != 700 ]; then
		fail "db export --dir made $(stat -c %a "$work/exported"), expected 700"
	elif ! python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$work/exported/run-1.json"; then
		fail "db export --dir: no run-1.json of JSON in it: $(ls "$work/exported")"
	else
		echo "ok   db export --dir: a new directory made 0700, run-1.json in it"
	fi
else
	echo "skip db export part: $(head -c 200 "$work/err")"
fi

after=$(leftovers)
[ -z "$(new_leftovers "$before" "$after")" ] || fail "left behind: $(new_leftovers "$before" "$after")"
finish
