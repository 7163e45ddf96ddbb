#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# ipclab serve's token, on the loopback. Given by --token-file (mode 0600)
# or IPCLAB_TOKEN it is in neither process's /proc/PID/cmdline, nor in a
# result file, the server's log or an error; given by --token it is hidden
# from /proc/PID/cmdline with a warning, and a result's cmdline shows
# "--token ***". A --token-file other users may read, a symbolic link, and
# a token shorter than 16 bytes are refused (exit 2, one line). serve with
# no token makes one, shows it once on stdout, and a client with it runs.
# Wrong tokens are slowed down: the log names the delay after each wrong
# token from an address, and the next hello from there is not answered
# before that delay has passed since the previous one was sent; across
# addresses, wrong tokens are checked at most 10 a second (100 ms apart);
# a client with the right token from another address still runs.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/json.sh"
command -v python3 >/dev/null || { echo "skip: needs python3"; exit 77; }
dir=$(mktemp -d)
srv=
trap '[ -n "$srv" ] && kill $srv 2>/dev/null; rm -rf "$dir"' EXIT
before=$(leftovers)
rp=$(cd "$(dirname "$0")/../lib" && pwd)/rproto.py
port=$(( 20000 + RANDOM % 20000 ))
tok=tk-$RANDOM-$RANDOM-s3cret-value
umask 077
printf '%s\n' "$tok" >"$dir/tok"
unset IPCLAB_TOKEN

# start_serve LOG ARGS...: serve on 127.0.0.1:$port, until its log says it listens
start_serve() {
	local log=$1
	shift
	"$IPCLAB" serve --listen 127.0.0.1:$port "$@" >"$log.out" 2>"$log" &
	srv=$!
	for _ in $(seq 1 200); do
		grep -q 'listening on' "$log" 2>/dev/null && return 0
		kill -0 $srv 2>/dev/null || break
		sleep 0.05
	done
	fail "serve $* did not listen: $(cat "$log")"
	return 1
}
stop_serve() { kill $srv 2>/dev/null; wait $srv 2>/dev/null; srv=; port=$((port + 1)); }
# no_token WHAT FILES...: the token in none of them
no_token() {
	local what=$1 f
	shift
	for f in "$@"; do
		if grep -qaF -- "$tok" "$f"; then fail "$what: the token is in $f"; return; fi
	done
	echo "ok   $what: the token is in none of $#"
}

# --token-file: not on either command line, not in the result, the log or stdout
if start_serve "$dir/s1" --token-file "$dir/tok"; then
	tr '\0' ' ' </proc/$srv/cmdline >"$dir/s1.cmdline"
	"$IPCLAB" run --peer 127.0.0.1:$port --token-file "$dir/tok" -t tcp -n 500 -q -f json \
		-o "$dir/r1.json" 2>"$dir/r1.err" || fail "--token-file: the run failed: $(cat "$dir/r1.err")"
	json_is "$dir/r1.json" results.0.status ok "--token-file: no ok result"
	no_token "--token-file" "$dir/s1.cmdline" "$dir/r1.json" "$dir/r1.err" "$dir/s1"
	stop_serve
	no_token "--token-file, serve's log and stdout" "$dir/s1" "$dir/s1.out"
fi

# IPCLAB_TOKEN: the same, and a wrong token's error names no token
if IPCLAB_TOKEN=$tok start_serve "$dir/s2"; then
	tr '\0' ' ' </proc/$srv/cmdline >"$dir/s2.cmdline"
	IPCLAB_TOKEN=$tok "$IPCLAB" run --peer 127.0.0.1:$port -t tcp -n 500 -q -f json -o "$dir/r2.json" \
		2>"$dir/r2.err" || fail "IPCLAB_TOKEN: the run failed: $(cat "$dir/r2.err")"
	IPCLAB_TOKEN=$tok-wrong "$IPCLAB" run --peer 127.0.0.1:$port -t tcp -n 500 -q 2>"$dir/w2.err"
	rc=$?
	[ $rc = 2 ] && [ "$(wc -l <"$dir/w2.err")" = 1 ] ||
		fail "a wrong IPCLAB_TOKEN: exit $rc, expected 2 with one line: $(cat "$dir/w2.err")"
	stop_serve
	no_token "IPCLAB_TOKEN" "$dir/s2.cmdline" "$dir/r2.json" "$dir/r2.err" "$dir/w2.err" "$dir/s2" "$dir/s2.out"
fi

# --token on the command line: hidden there, with one warning; "***" in the result
if start_serve "$dir/s3" --token "$tok"; then
	tr '\0' ' ' </proc/$srv/cmdline >"$dir/s3.cmdline"
	grep -q 'warning: --token on the command line' "$dir/s3" ||
		fail "serve --token: no warning: $(cat "$dir/s3")"
	"$IPCLAB" run --peer 127.0.0.1:$port --token "$tok" -t tcp -n 500 -q -f json -o "$dir/r3.json" \
		2>"$dir/r3.err" || fail "run --token: the run failed: $(cat "$dir/r3.err")"
	[ "$(grep -c 'warning: --token on the command line' "$dir/r3.err")" = 1 ] ||
		fail "run --token: expected one warning: $(cat "$dir/r3.err")"
	grep -q '"cmdline": "[^"]*--token \*\*\* ' "$dir/r3.json" &&
		echo "ok   run --token: the result's cmdline says --token ***" ||
		fail "run --token: the result's cmdline: $(grep -o '"cmdline": "[^"]*"' "$dir/r3.json")"
	stop_serve
	no_token "--token on argv" "$dir/s3.cmdline" "$dir/r3.json"
fi

# refused: a file others may read, a link, short tokens (exit 2, one line)
cp "$dir/tok" "$dir/tok644" && chmod 644 "$dir/tok644"
ln -s "$dir/tok" "$dir/toklink"
printf 'short-token\n' >"$dir/short"
# refused WHAT WORDS ARGS...: exit 2, one line on stderr naming WORDS,
# nothing on stdout (a serve that starts instead is stopped by the timeout)
refused() {
	local what=$1 words=$2 rc
	shift 2
	timeout 10 "$IPCLAB" "$@" >"$dir/ref.out" 2>"$dir/ref.err"
	rc=$?
	if [ $rc != 2 ] || [ "$(wc -l <"$dir/ref.err")" != 1 ] || [ -s "$dir/ref.out" ] ||
	   ! grep -qF -- "$words" "$dir/ref.err"; then
		fail "$what: exit $rc, expected 2 with one line naming '$words': $(head -c 300 "$dir/ref.err")"
	else
		echo "ok   $what: $(cat "$dir/ref.err")"
	fi
}
refused "serve --token-file of mode 0644" "mode 0644" serve --listen 127.0.0.1:$port --token-file "$dir/tok644" --once
refused "run --token-file of mode 0644" "mode 0644" run --peer 127.0.0.1:$port --token-file "$dir/tok644" -t tcp -n 10 -q
refused "serve --token-file, a symbolic link" "symbolic link" serve --listen 127.0.0.1:$port --token-file "$dir/toklink" --once
refused "serve --token-file, a short token" "at least 16" serve --listen 127.0.0.1:$port --token-file "$dir/short" --once
IPCLAB_TOKEN=short-token refused "serve, a short IPCLAB_TOKEN" "at least 16" serve --listen 127.0.0.1:$port --once
IPCLAB_TOKEN=short-token refused "run --peer, a short IPCLAB_TOKEN" "at least 16" run --peer 127.0.0.1:$port -t tcp -n 10 -q

# no token: one is made, shown once on stdout, and works
if start_serve "$dir/s4"; then
	gen=$(sed -n 's/.*this server.s token (shown only here, never logged): \([0-9a-f]*\)$/\1/p' "$dir/s4.out")
	if [ ${#gen} -ge 32 ]; then
		printf '%s\n' "$gen" >"$dir/gen"
		"$IPCLAB" run --peer 127.0.0.1:$port --token-file "$dir/gen" -t tcp -n 500 -q 2>"$dir/r4.err" >/dev/null &&
			echo "ok   serve without a token: made one of ${#gen} hex digits; a client with it runs" ||
			fail "serve without a token: a client with the token it showed: $(cat "$dir/r4.err")"
		grep -qF "$gen" "$dir/s4" && fail "serve without a token: its token is in the log"
		[ "$(grep -cF "$gen" "$dir/s4.out")" = 1 ] || fail "serve without a token: shown more than once: $(cat "$dir/s4.out")"
	else
		fail "serve without a token: no token shown: $(cat "$dir/s4.out" "$dir/s4")"
	fi
	stop_serve
fi

# wrong tokens slowed down: from 127.0.0.2, four guesses one after the other
if IPCLAB_TOKEN=$tok start_serve "$dir/s5"; then
	python3 "$rp" guess $port "wrong-$tok" 4 127.0.0.2 >"$dir/g5" 2>&1
	# then the first wrong token of each of four other addresses
	for a in 4 5 6 7; do python3 "$rp" guess $port "wrong-$tok" 1 127.0.0.$a; done >"$dir/g6" 2>&1
	IPCLAB_TOKEN=$tok "$IPCLAB" run --peer 127.0.0.1:$port -t tcp -n 500 -q 2>"$dir/r5.err" >/dev/null ||
		fail "the right token from 127.0.0.1, after wrong ones from others: $(cat "$dir/r5.err")"
	stop_serve
	python3 - "$dir/g5" "$dir/s5" "$dir/g6" <<'PY' || fail "wrong tokens: not slowed down as the log says (above)"
import re, sys
g = [l.split(None, 3) for l in open(sys.argv[1]) if l.strip()]
log = open(sys.argv[2]).read()
assert len(g) == 4 and all(a[2] == "refused" for a in g), g
d = {int(k): int(ms) for a, k, ms in re.findall(
    r"127\.0\.0\.(2):\d+: refused: wrong token \((\d+) in a row from this address\); its next hello is checked no sooner than (\d+) ms", log)}
assert sorted(d) == [1, 2, 3, 4], "log lines for the 4 wrong tokens from 127.0.0.2: %r\n%s" % (d, log)
assert d[1] > 0 and d[1] < d[2] < d[3] < d[4], d
for k in (1, 2, 3):	# answer k+1 comes no sooner than delay k after hello k was sent
    gap = float(g[k][1]) - float(g[k - 1][0])
    assert gap >= d[k] / 1000.0, "guess %d answered %.3f s after guess %d was sent; the log said %d ms" % (k + 1, gap, k, d[k])
print("ok   wrong tokens from one address: delays %s ms, each waited out before the next answer" % [d[k] for k in (1, 2, 3, 4)])
h = [l.split(None, 3) for l in open(sys.argv[3]) if l.strip()]
assert len(h) == 4, h
for k in (1, 2, 3):
    gap = float(h[k][1]) - float(h[k - 1][0])
    assert gap >= 0.1, "first wrong tokens of two addresses answered %.3f s apart (at least 0.1 s)" % gap
print("ok   wrong tokens from four more addresses: answered at least 100 ms apart")
PY
	no_token "wrong tokens, serve's log" "$dir/s5"
fi

left=$(new_leftovers "$before" "$(leftovers)")
[ -z "$left" ] || fail "left behind: $left"
finish
