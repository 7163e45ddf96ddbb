#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Why ipclab's cacheline round trip reads above a program that times only
# its whole loop. Interleaved (A B C A B C ...), REPS times, both on CPUs 0
# and 1 (--pin split; the reference's server on 0, client on 1):
#   A. ipclab -t cacheline -p pingpong -s 32 --pin split: p50 and mean RTT
#      (each exchange timed: two clock reads), and its exchange period
#      (the window over the exchanges: the timing and the bookkeeping too)
#   B. bench/ref_cacheline 32 N: the same two lines, each exchange timed
#   C. bench/ref_cacheline 32 N batch: no clock in the loop, the mean only
# and prints medians and the median of the interleaved ratios. The clock
# read's cost on this machine (ipclab env: clock, one read) is printed
# beside them. A measurement: run it on a quiet machine.
#   B=build REPS=7 N=1000000 bench/fidelity_cacheline.sh
set -u
cd "$(dirname "$0")/.."
B=${B:-build}
IPCLAB=$B/ipclab
REF=$B/bench/ref_cacheline
REPS=${REPS:-7}
N=${N:-1000000}
[ -x "$IPCLAB" ] && [ -x "$REF" ] || { echo "fidelity_cacheline: run make first"; exit 1; }

tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
declare -A v
for ((i = 0; i < REPS; i++)); do
	# into a file, read after the run: a reader started beside the run
	# (python3 on a pipe) takes CPU from its ends while they measure
	"$IPCLAB" run -t cacheline -p pingpong -s 32 -n "$N" --pin split -q -f json -o "$tmp" || exit 1
	read -r p50 mean per < <(python3 -c 'import json, sys
m = json.load(open(sys.argv[1]))["results"][0]["metrics"]
print(m["lat_p50_ns"], m["lat_mean_ns"], 1e9 / m["msgs_per_s"])' "$tmp")
	v[a_p50]+="$p50 " v[a_mean]+="$mean " v[a_per]+="$per "
	read -r _ p50 _ _ _ mean _ < <("$REF" 32 "$N")
	v[b_p50]+="$p50 " v[b_mean]+="$mean "
	read -r _ mean < <("$REF" 32 "$N" batch)
	v[c_mean]+="$mean "
done
med() { echo "${v[$1]}" | tr ' ' '\n' | grep . | median; }
ratio() { # A B: the median of the interleaved pairs' ratios
	paste -d' ' <(echo "${v[$1]}" | tr ' ' '\n' | grep .) <(echo "${v[$2]}" | tr ' ' '\n' | grep .) |
		awk '{print $1 / $2}' | median
}
clock=$("$IPCLAB" env -f json | python3 -c 'import json, sys; print(json.load(sys.stdin)["clock_cost_ns"])')
printf 'fidelity_cacheline: %d interleaved rounds of %s exchanges, 32 B, CPUs 0 and 1, load %s; one clock read %.1f ns\n' \
	"$REPS" "$N" "$(cut -d' ' -f1 /proc/loadavg)" "$clock"
printf '  ipclab cacheline   p50 %6.1f ns  mean %6.1f ns  exchange period %6.1f ns\n' "$(med a_p50)" "$(med a_mean)" "$(med a_per)"
printf '  ref, timed         p50 %6.1f ns  mean %6.1f ns\n' "$(med b_p50)" "$(med b_mean)"
printf '  ref, batch                        mean %6.1f ns\n' "$(med c_mean)"
printf '  ratios (median of pairs): ipclab/ref timed p50 %.2f, mean %.2f; ipclab mean/ref batch %.2f; ref timed/batch %.2f; ipclab period/ref batch %.2f\n' \
	"$(ratio a_p50 b_p50)" "$(ratio a_mean b_mean)" "$(ratio a_mean c_mean)" "$(ratio b_mean c_mean)" "$(ratio a_per c_mean)"
echo "raw: a_p50 [${v[a_p50]}] a_mean [${v[a_mean]}] a_per [${v[a_per]}] b_p50 [${v[b_p50]}] b_mean [${v[b_mean]}] c_mean [${v[c_mean]}]"
