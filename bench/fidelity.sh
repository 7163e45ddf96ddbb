#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Does ipclab measure what simpler tools measure? Runs, interleaved
# (A B A B ...), REPS times each, both pinned:
#   1. ipclab pipe ping-pong 16 B, --pin same      vs  taskset -c 0 perf bench sched pipe
#   2. the same with threads (--endpoints thread)  vs  taskset -c 0 perf bench sched pipe -T
#   3. ipclab pipe stream 4 KiB, --pin split       vs  bench/pipe_loop (bare write/read loop)
# and prints medians and the ratio ipclab / reference (1.00 = agree).
# perf's usecs/op is a mean round trip, so ipclab's mean RTT is compared.
set -u
cd "$(dirname "$0")/.."
B=${B:-build}
IPCLAB=$B/ipclab
REPS=${REPS:-5}
LOOPS=${LOOPS:-100000}
STREAM_N=${STREAM_N:-300000}
command -v perf >/dev/null || { echo "fidelity: needs perf (apt-get install linux-perf)"; exit 1; }
[ -x "$IPCLAB" ] && [ -x $B/bench/pipe_loop ] || { echo "fidelity: run make first"; exit 1; }

tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
ipclab_metric() { # metric args...
	local m=$1; shift
	# into a file, read after the run: a reader started beside the run
	# (python3 on a pipe) takes CPU from its ends while they measure
	"$IPCLAB" run "$@" -q -f json -o "$tmp" && python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['results'][0]['metrics']['$m'])" "$tmp"
}
perf_us() { taskset -c 0 perf bench sched pipe -l "$LOOPS" "$@" 2>/dev/null | awk '/usecs\/op/ {print $1}'; }

declare -A v
for ((i = 0; i < REPS; i++)); do
	v[ipc_p]+="$(ipclab_metric lat_mean_ns -t pipe -p pingpong -s 16 -n $LOOPS --pin same) "
	v[perf_p]+="$(perf_us) "
	v[ipc_t]+="$(ipclab_metric lat_mean_ns -t pipe -p pingpong -s 16 -n $LOOPS --pin same -e thread) "
	v[perf_t]+="$(perf_us -T) "
	v[ipc_s]+="$(ipclab_metric msgs_per_s -t pipe -p stream -s 4k -n $STREAM_N --pin 1:0) "
	v[bare_s]+="$($B/bench/pipe_loop 4096 $STREAM_N 0 1) "
done
med() { echo "${v[$1]}" | tr ' ' '\n' | grep . | median; }
a=$(med ipc_p); b=$(med perf_p); c=$(med ipc_t); d=$(med perf_t); e=$(med ipc_s); f=$(med bare_s)
# the median of the ratios of each interleaved pair: robust when the machine
# changes mode between pairs (a cross-CPU pipe stream is bimodal here)
pair_ratio() { # A B scale
	paste -d' ' <(echo "${v[$1]}" | tr ' ' '\n' | grep .) <(echo "${v[$2]}" | tr ' ' '\n' | grep .) |
		awk -v k="$3" '{print $1 * k / $2}' | median
}
printf '| comparison (%d interleaved pairs) | ipclab (median) | reference (median) | ratio of medians | median of pair ratios |\n|---|---|---|---|---|\n' "$REPS"
awk -v a="$a" -v b="$b" -v r="$(pair_ratio ipc_p perf_p 0.001)" 'BEGIN {printf "| pipe ping-pong 16 B, processes, one CPU: mean RTT | %.2f us | %.2f us (perf bench sched pipe) | %.2f | %.2f |\n", a/1000, b, a/1000/b, r}'
awk -v a="$c" -v b="$d" -v r="$(pair_ratio ipc_t perf_t 0.001)" 'BEGIN {printf "| pipe ping-pong 16 B, threads, one CPU: mean RTT | %.2f us | %.2f us (perf bench sched pipe -T) | %.2f | %.2f |\n", a/1000, b, a/1000/b, r}'
awk -v a="$e" -v b="$f" -v r="$(pair_ratio ipc_s bare_s 1)" 'BEGIN {printf "| pipe stream 4 KiB, two CPUs: msgs/s | %.0f k | %.0f k (bench/pipe_loop) | %.2f | %.2f |\n", a/1000, b/1000, a/b, r}'
echo "raw: ipclab pp [${v[ipc_p]}] perf [${v[perf_p]}] ipclab pp -T [${v[ipc_t]}] perf -T [${v[perf_t]}] ipclab stream [${v[ipc_s]}] bare [${v[bare_s]}]"
