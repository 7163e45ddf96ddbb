#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# ipclab's doorbells against rt-tests (Debian rt-tests), side by side in one
# run, interleaved, REPS times each, both endpoints threads on CPU 0:
#   svsematest (SysV semaphore)      vs  ipclab -t shm-sysv-sem
#   pmqtest    (POSIX message queue) vs  ipclab -t posix-mq
#   sigwaittest (signal)             vs  ipclab -t shm-signal
#   ptsematest (pthread mutex)       vs  ipclab -t shm-futex (a mutex is a futex)
# rt-tests report the average one-way wake latency of a paced exchange (the
# waker stamps, unlocks; the woken stamps); ipclab reports the mean round
# trip of a ping-pong, so half of it is compared. Prints medians and ratios.
set -u
cd "$(dirname "$0")/.."
B=${B:-build}
IPCLAB=$B/ipclab
REPS=${REPS:-5}
LOOPS=${LOOPS:-5000}
for t in svsematest pmqtest sigwaittest ptsematest; do
	command -v $t >/dev/null || { echo "rt_tests: needs $t (apt-get install rt-tests)"; exit 1; }
done
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
rt_avg() { taskset -c 0 timeout 60 "$1" -t1 -l "$LOOPS" -i 200 -q 2>/dev/null | sed -n 's/.*Avg *\([0-9]*\).*/\1/p' | head -1; }
ipc_half_rtt_us() {
	"$IPCLAB" run -t "$1" -p pingpong -s 16 -n "$LOOPS" -e thread --pin 0:0 -q -f json |
		python3 -c "import json,sys; print(json.load(sys.stdin)['results'][0]['metrics']['lat_mean_ns']/2000)"
}
pairs="svsematest:shm-sysv-sem pmqtest:posix-mq sigwaittest:shm-signal ptsematest:shm-futex"
declare -A v
for ((i = 0; i < REPS; i++)); do
	for p in $pairs; do
		rt=${p%%:*} tp=${p##*:}
		v[$rt]+="$(rt_avg "$rt") "
		v[$tp]+="$(ipc_half_rtt_us "$tp") "
	done
done
echo "| rt-tests tool, avg one-way (us) | ipclab transport, mean RTT/2 (us) | ratio ipclab / rt-tests |"
echo "|---|---|---|"
for p in $pairs; do
	rt=${p%%:*} tp=${p##*:}
	a=$(echo "${v[$rt]}" | tr ' ' '\n' | grep . | median)
	b=$(echo "${v[$tp]}" | tr ' ' '\n' | grep . | median)
	awk -v rt="$rt" -v tp="$tp" -v a="$a" -v b="$b" 'BEGIN {printf "| %s %.1f | %s %.2f | %.2f |\n", rt, a, tp, b, (a > 0 ? b / a : 0)}'
done
echo "rt-tests print whole microseconds; medians of $REPS, interleaved; threads on CPU 0."
