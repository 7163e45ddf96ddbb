#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# compare's false alarms on this machine: PAIRS (default 12) A/A pairs of
# separate runs of each of two cells (a null ping-pong unpinned, a pipe
# ping-pong --pin split; each run --repeat 5), every pair compared as a new
# user would (compare a.json b.json -m p50); then PAIRS real slowdowns (a
# pipe ping-pong --pin same, then --pin split: about 1.7x, compare --ignore
# pin). Prints how many of each said better or worse, and the basis. Run
# ipclab env --calibrate first to see the calibrated drift at work; the
# store is $IPCLAB_DB or the default. A measurement: run it on a quiet
# machine (it refuses a load average of 3 or more unless FORCE=1).
# RUNS=5: each side is one `run --runs 5` instead (5 separate runs, no
# --repeat), so compare tests over the runs; pairs the canaries call
# "another state" or "changed state" (not comparable) are counted apart.
#   IPCLAB=build/ipclab PAIRS=12 bench/compare_aa.sh
#   IPCLAB=build/ipclab PAIRS=6 RUNS=5 bench/compare_aa.sh
set -u
IPCLAB=${IPCLAB:-build/ipclab}
PAIRS=${PAIRS:-12}
N=${N:-20k}
RUNS=${RUNS:-}
each=(--repeat 5)
[ -n "$RUNS" ] && each=(--runs "$RUNS")
load=$(cut -d' ' -f1 /proc/loadavg)
if [ "${FORCE:-0}" != 1 ] && awk -v l="$load" 'BEGIN { exit !(l >= 3) }'; then
	echo "compare_aa: load average $load: not quiet enough to measure (FORCE=1 to run anyway)" >&2
	exit 2
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

run() {	# FILE ARGS...
	local f=$1
	shift
	"$IPCLAB" run -q -p pingpong -s 64 -n "$N" "${each[@]}" -f json -o "$f" "$@" >/dev/null ||
		{ echo "compare_aa: ipclab run $* failed" >&2; exit 1; }
}

# pairs NAME COMPARE-ARGS -- A-ARGS -- B-ARGS: count the pairs said better or worse
pairs() {
	local name=$1 cargs=() aargs=() bargs=() changed=0 other=0 basis="" ratios=""
	shift
	while [ "$1" != -- ]; do cargs+=("$1"); shift; done
	shift
	while [ "$1" != -- ]; do aargs+=("$1"); shift; done
	shift
	bargs=("$@")
	for i in $(seq "$PAIRS"); do
		run "$work/a.json" "${aargs[@]}"
		run "$work/b.json" "${bargs[@]}"
		"$IPCLAB" compare -m p50 "${cargs[@]}" "$work/a.json" "$work/b.json" >"$work/cmp.txt"
		grep -Eq '^  p50 .*(better|worse|REGRESSION)' "$work/cmp.txt" && changed=$((changed + 1))
		grep -Eq '^  p50 .*(another state|changed state)' "$work/cmp.txt" && other=$((other + 1))
		ratios+=" $(awk '/^  p50 / { print $4; exit }' "$work/cmp.txt")"
		[ -n "${KEEP:-}" ] && cp "$work/cmp.txt" "$KEEP/$(echo "$name" | tr -c 'a-zA-Z0-9\n' _)-$i.txt"
		basis=$(sed -n 's/^basis: \([^;(]*\).*/\1/p' "$work/cmp.txt" | head -1 | sed 's/ *$//')
	done
	printf '%-40s %2d of %d said better or worse, %d not comparable (canary) (basis: %s)\n' "$name" "$changed" \
		"$PAIRS" "$other" "$basis"
	echo "  p50 ratios after/before:$ratios"
}

echo "compare_aa: $PAIRS pairs each, -n $N ${each[*]}, load $load"
pairs "A/A null pingpong unpinned" -- -t null -- -t null
pairs "A/A pipe pingpong --pin split" -- -t pipe --pin split -- -t pipe --pin split
pairs "pipe pingpong --pin same -> split" --ignore pin -- -t pipe --pin same -- -t pipe --pin split
