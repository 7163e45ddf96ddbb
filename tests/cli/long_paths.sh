#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Paths are never cut short: with a TMPDIR of 210 characters every run
# removes its directory, FIFOs and sockets; an -o path longer than the old
# 255-character cleanup name writes its report and leaves no temporary file;
# a TMPDIR too long for a private directory is refused, and nothing is left.
. "$(dirname "$0")/../lib/common.sh"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
before=$(leftovers)

long=$dir
while [ ${#long} -lt 210 ]; do long=$long/dddddddddddddddddddd; done
long=${long:0:210}
mkdir -p "$long"
for tp in fifo unix-stream-path libqb-rb sysv-mq; do
	"$IPCLAB" list | grep -q "^  $tp " || continue
	TMPDIR=$long "$IPCLAB" run -t $tp -n 1000 -q >/dev/null 2>"$dir/err" ||
		{ grep -q 'too long\|longer than' "$dir/err" || fail "$tp with a 210-character TMPDIR: $(cat "$dir/err")"; }
	left=$(ls -A "$long")
	[ -z "$left" ] || fail "$tp with a 210-character TMPDIR left: $left"
	rm -rf "${long:?}"/* "$long"/.ipclab-runs-* 2>/dev/null
done

# -o: a 300-character path beside a file named by its first 255 characters
out=$long/$(printf 'r%.0s' $(seq 1 80)).json
cut=${out:0:255}
echo keep >"$cut"
"$IPCLAB" run -t pipe -n 200 -q -f json -o "$out" 2>"$dir/err" || fail "-o long path: $(cat "$dir/err")"
python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$out" || fail "-o long path: not JSON"
[ "$(cat "$cut")" = keep ] || fail "-o long path: the file named by its first 255 characters changed"
ls "$long" | grep -q 'tmp-' && fail "-o long path: a temporary file remains: $(ls "$long")"

# a TMPDIR with no room for the private directory's name: refused, nothing left
huge=/$(printf 'x%.0s' $(seq 1 4090))
TMPDIR=$huge "$IPCLAB" run -t fifo -n 100 -q >/dev/null 2>"$dir/err"
rc=$?
[ $rc != 0 ] && [ "$(wc -l <"$dir/err")" -le 2 ] || fail "TMPDIR of 4091 characters: exit $rc: $(head -c 300 "$dir/err")"

[ -z "$(new_leftovers "$before" "$(leftovers)")" ] || fail "left behind: $(new_leftovers "$before" "$(leftovers)")"
finish
