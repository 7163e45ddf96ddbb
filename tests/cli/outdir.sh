#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Output directories someone else made first (plot -o DIR, run --plot DIR,
# --profile DIR): one another user made (uid 65534, mode 0777, links to
# this user's files planted in it), one writable by group or others, or a
# link of another user's to a directory of ours, is refused: exit 2, one
# line with the fix, nothing written, the link targets untouched. A new one
# is made 0700. In an accepted one, a link planted where a file goes is
# replaced, never written through; gnuplot reads its script from a pipe,
# never from a file in DIR. Needs root (to act as another user) and
# gnuplot; the --profile part skips where --profile cannot run.
. "$(dirname "$0")/../lib/common.sh"
data=$(cd "$(dirname "$0")/../data" && pwd)
small=$data/plot-small.json
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null || ! command -v gnuplot >/dev/null; then
	echo "SKIP: needs root, setpriv and gnuplot (make deps installs gnuplot-nox)"
	exit 77
fi
other() { setpriv --reuid 65534 --regid 65534 --clear-groups "$@"; }
# the other user reaches $work/shared (like /tmp: 1777) and nothing else
chmod 0711 "$TMPDIR" "$work"
mkdir "$work/shared" && chmod 1777 "$work/shared"
t=$work/.t
mkdir "$t"

figs="latency-percentiles-rtt latency-histogram-rtt throughput-vs-size msgrate-vs-size cpu-per-msg"

# victims: files of ours a planted link points to
plant() {	# as(""|other) dir name... : dir/name -> $work/victim-name
	local as=$1 dir=$2 n
	shift 2
	for n in "$@"; do
		echo "precious $n" >"$work/victim-$n"
		$as ln -s "$work/victim-$n" "$dir/$n"
	done
}
victims_intact() {	# what
	local v bad=""
	for v in "$work"/victim-*; do
		echo "precious ${v##*/victim-}" | cmp -s - "$v" || bad="$bad ${v##*/}"
	done
	[ -z "$bad" ] || fail "$1: wrote through a planted link into$bad"
	[ -n "$bad" ] || echo "ok   $1: every link target untouched"
}
all_names() { local f e; for f in $figs; do for e in dat gp png svg; do echo "$f.$e"; done; done; }

# refused: exit 2, one line naming the fix, nothing written in the directory
expect_refused() {	# what dir-to-check args...
	local what=$1 dir=$2 rc
	shift 2
	ls -A "$dir" 2>/dev/null | sort >"$t/before"
	"$IPCLAB" "$@" >"$t/out" 2>"$t/err"
	rc=$?
	ls -A "$dir" 2>/dev/null | sort >"$t/after"
	if [ $rc != 2 ]; then
		fail "$what: exit $rc, expected 2: $(head -c 300 "$t/err")"
	elif [ "$(wc -l <"$t/err")" != 1 ] || ! grep -qE 'chmod|new path|directory itself' "$t/err"; then
		fail "$what: not one line with the fix: $(cat "$t/err")"
	elif ! cmp -s "$t/before" "$t/after"; then
		fail "$what: wrote into it: $(comm -13 "$t/before" "$t/after" | tr '\n' ' ')"
	else
		echo "ok   $what: $(cat "$t/err")"
	fi
}

# ---- plot -o DIR ----------------------------------------------------------------

d=$work/shared/plots
other mkdir -m 0777 "$d"
plant other "$d" $(all_names)
expect_refused "plot -o into another user's 0777 directory" "$d" plot "$small" -o "$d" -q
victims_intact "plot -o into another user's directory"

mkdir -m 0777 "$work/ours-0777" && chmod 0777 "$work/ours-0777"
expect_refused "plot -o into a 0777 directory of ours" "$work/ours-0777" plot "$small" -o "$work/ours-0777" -q
mkdir "$work/ours-0770" && chmod 0770 "$work/ours-0770"
expect_refused "plot -o into a group-writable directory" "$work/ours-0770" plot "$small" -o "$work/ours-0770" -q

mkdir -m 0700 "$work/mine"
other ln -s "$work/mine" "$work/shared/link"
expect_refused "plot -o through another user's link" "$work/mine" plot "$small" -o "$work/shared/link" -q

# a new directory: 0700
"$IPCLAB" plot "$small" -o "$work/new" -q 2>"$t/err" || fail "plot -o a new directory: exit $?: $(cat "$t/err")"
mode=$(stat -c %a "$work/new" 2>/dev/null)
[ "$mode" = 700 ] || fail "plot -o a new directory: mode $mode, expected 700"
[ "$mode" = 700 ] && echo "ok   plot -o a new directory: made 0700"
ln -s "$work/new" "$work/mylink"
"$IPCLAB" plot "$small" -o "$work/mylink/" -q 2>"$t/err" ||
	fail "plot -o through a link of our own: exit $?: $(cat "$t/err")"

# accepted (ours, 0700), with a link planted at every file's name
rm -f "$work"/victim-*
mkdir -m 0700 "$work/acc"
plant "" "$work/acc" $(all_names)
"$IPCLAB" plot "$small" -o "$work/acc" -q 2>"$t/err" || fail "plot into a directory with links: exit $?: $(cat "$t/err")"
victims_intact "plot -o DIR with links planted in it"
for n in $(all_names); do
	[ -f "$work/acc/$n" ] && [ ! -L "$work/acc/$n" ] || fail "plot: $n is not a file of its own"
done
[ -z "$(ls -A "$work/acc" | grep '^\.')" ] || fail "plot: left behind $(ls -A "$work/acc" | grep '^\.')"

# gnuplot's script comes on its standard input, a pipe: a NAME.gp swapped
# after ipclab wrote it would never be read
real=$(command -v gnuplot)
mkdir "$work/bin"
cat >"$work/bin/gnuplot" <<EOF
#!/bin/sh
{ printf 'arg %s\n' "\$@"; [ -p /dev/stdin ] && echo stdin-pipe; } >>"$t/gnuplot.log"
exec "$real" "\$@"
EOF
chmod +x "$work/bin/gnuplot"
PATH=$work/bin:$PATH "$IPCLAB" plot "$small" -o "$work/piped" -q 2>"$t/err" ||
	fail "plot with a logging gnuplot: exit $?: $(cat "$t/err")"
runs=$(grep -c '^arg' "$t/gnuplot.log") pipes=$(grep -c '^stdin-pipe$' "$t/gnuplot.log")
if grep -q '^arg .*\.gp$' "$t/gnuplot.log" || [ "$runs" = 0 ] || [ "$pipes" != "$runs" ]; then
	fail "gnuplot read a script file: $(sort -u "$t/gnuplot.log" | tr '\n' ' ')"
else
	echo "ok   gnuplot: $runs scripts, each on a pipe ($(grep -m1 '^arg' "$t/gnuplot.log"))"
fi

# ---- run --plot DIR ---------------------------------------------------------------

rm -f "$work"/victim-*
d=$work/shared/runplots
other mkdir -m 0777 "$d"
plant other "$d" results.json
expect_refused "run --plot into another user's directory" "$d" run -t pipe -p pingpong -n 200 -q --plot "$d"
victims_intact "run --plot into another user's directory"
mkdir -m 0700 "$work/runacc"
plant "" "$work/runacc" results.json throughput-vs-size.gp
"$IPCLAB" run -t pipe -p pingpong -n 200 -q --plot "$work/runacc" >/dev/null 2>"$t/err" ||
	fail "run --plot into a directory with links: exit $?: $(cat "$t/err")"
victims_intact "run --plot DIR with links planted in it"
[ -f "$work/runacc/results.json" ] && [ ! -L "$work/runacc/results.json" ] ||
	fail "run --plot: results.json is not a file of its own"

# ---- --profile DIR ----------------------------------------------------------------

err=$("$IPCLAB" run -t null -n 10 --profile -q -f json -o "$t/probe.json" 2>&1)
case $err in
*libdw*|*"not available"*|*CAP_PERFMON*|*perf_event*) echo "SKIP --profile DIR: $err"; finish ;;
esac
rm -f "$work"/victim-*
d=$work/shared/prof
other mkdir -m 0777 "$d"
cell=pipe-pingpong-64-process-same-other
plant other "$d" "$cell-server.folded" "$cell-client0.folded"
expect_refused "--profile into another user's directory" "$d" \
	run -t pipe -p pingpong -n 2k --pin same --profile "$d" -q -f json -o "$t/p.json"
victims_intact "--profile into another user's directory"
mkdir -m 0700 "$work/profacc"
plant "" "$work/profacc" "$cell-server.folded" "$cell-client0.folded"
"$IPCLAB" run -t pipe -p pingpong -n 2k --pin same --profile "$work/profacc" -q -f json -o "$t/p.json" 2>"$t/err" ||
	fail "--profile into a directory with links: exit $?: $(cat "$t/err")"
victims_intact "--profile DIR with links planted in it"
[ -f "$work/profacc/$cell-server.folded" ] && [ ! -L "$work/profacc/$cell-server.folded" ] ||
	fail "--profile: $cell-server.folded is not a file of its own"
"$IPCLAB" run -t null -n 10 --profile "$work/profnew" -q -f json -o "$t/p.json" 2>"$t/err" ||
	fail "--profile a new directory: exit $?: $(cat "$t/err")"
mode=$(stat -c %a "$work/profnew" 2>/dev/null)
[ "$mode" = 700 ] || fail "--profile a new directory: mode $mode, expected 700"
[ "$mode" = 700 ] && echo "ok   --profile a new directory: made 0700"
finish
