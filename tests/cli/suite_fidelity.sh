#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# suite fidelity (issue 12): the table's cells run with their references,
# rows ranked by |1 - ratio| with pairs, min-max and spread; a transport
# without a reference listed with its reason; -f json holds every round's
# records; bad input is a one-line error and exit 2; nothing is left
# behind. Structure only: no ratio is asserted.
. "$(dirname "$0")/../lib/common.sh"
command -v jq >/dev/null || { echo "skip: no jq"; exit 0; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
before=$(leftovers)

"$IPCLAB" suite fidelity --quick --repeat 2 -t pipe,null -q >"$dir/t.txt" 2>"$dir/err"
rc=$?
[ $rc = 0 ] || fail "suite fidelity: exit $rc: $(head -3 "$dir/err")"
grep -q '^== fidelity: .*(2 rounds)' "$dir/t.txt" || fail "no fidelity heading: $(head -3 "$dir/t.txt")"
grep -q '^rank  transport ' "$dir/t.txt" || fail "no column header"
# pipe: stream 64 B and 4 KiB, ping-pong 64 B; split and same; process and thread
rows=$(awk '$1 ~ /^[0-9]+$/ && $2 == "pipe"' "$dir/t.txt")
n=$(printf '%s\n' "$rows" | grep -c .)
[ "$n" = 12 ] && echo "ok   12 ranked pipe rows" || fail "expected 12 ranked rows, got $n: $(cat "$dir/t.txt")"
for want in "stream 64B" "stream 4096B" "pingpong 64B"; do
	for ep in process thread; do
		for pin in split same; do
			set -- $want
			printf '%s\n' "$rows" | awk -v p="$1" -v s="$2" -v e=$ep -v q=$pin \
				'$3 == p && $4 == s && $5 == e && $6 == q { f = 1 } END { exit !f }' ||
				fail "no row for $want $ep $pin"
		done
	done
done
# ranks 1..n, |1 - ratio| not increasing, each with 2 pairs and min <= ratio <= max
printf '%s\n' "$rows" | awk '{
	ratio = $(NF - 3); pairs = $(NF - 2); split($(NF - 1), mm, "-"); spread = $NF
	d = ratio > 1 ? ratio - 1 : 1 - ratio
	if ($1 != NR) { print "rank " $1 " at row " NR; bad = 1 }
	if (NR > 1 && d > last + 1e-9) { print "not ranked at " $1; bad = 1 }
	if (pairs != 2) { print "pairs " pairs " at " $1; bad = 1 }
	if (mm[1] > ratio + 0.005 || mm[2] < ratio - 0.005) { print "ratio outside min-max at " $1; bad = 1 }
	if (spread !~ /%$/) { print "no spread at " $1; bad = 1 }
	last = d } END { exit bad }' >"$dir/bad" &&
	echo "ok   ranked by |1 - ratio|, 2 pairs each, min <= ratio <= max, spread" ||
	fail "rows: $(cat "$dir/bad")"
nr=$(grep -c '^   -  null .* no ratio: .*reference' "$dir/t.txt")
[ "$nr" = 12 ] && echo "ok   null: 12 rows without a ratio, the reason given" ||
	fail "expected 12 null rows with a reason, got $nr"

# -f json: every round's records, each pipe cell with its reference
"$IPCLAB" suite fidelity --quick -t pipe -q -f json -o "$dir/f.json" >/dev/null 2>"$dir/err" ||
	fail "suite fidelity -f json: $(head -3 "$dir/err")"
n=$(jq '[.results[] | select(.reference.status == "ok" and .reference.ratio != null and
	.section == "fidelity")] | length' "$dir/f.json" 2>/dev/null)
[ "$n" = 12 ] && echo "ok   -f json: 12 records with a reference" || fail "json: expected 12 records, got $n"

# bad input
for args in "--repeat 0" "-t nosuch" "--bogus"; do
	"$IPCLAB" suite fidelity $args >"$dir/o" 2>"$dir/e"
	rc=$?
	[ $rc = 2 ] && [ "$(wc -l <"$dir/e")" = 1 ] && echo "ok   $args: exit 2, $(cat "$dir/e")" ||
		fail "$args: exit $rc, stderr $(cat "$dir/e")"
done

after=$(leftovers)
left=$(new_leftovers "$before" "$after")
[ -z "$left" ] && echo "ok   nothing left behind" || fail "left behind: $left"
finish
