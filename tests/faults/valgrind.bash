#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `make valgrind`: memcheck on one short run (VALGRIND_N messages, 200) of
# every transport and pattern, following every forked endpoint
# (--trace-children=yes also follows popen'd helpers). Passes with zero
# errors, definite leaks counted as errors, in every process. Not part of
# `make check` (minutes); CI runs it as its own stage.
. "$(dirname "$0")/lib.bash"

N=${VALGRIND_N:-200}
PATTERNS=${VALGRIND_PATTERNS:-pingpong stream}
command -v valgrind >/dev/null || { echo "valgrind not installed: apt-get install valgrind"; exit 77; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
runs=0 procs=0 errors=0 failed_runs=0
baseline=$(strict_leftovers)
start=$(now_ns)

mapfile -t all < <("$IPCLAB" list | awk '/^transports:/ {t = 1; next} /^patterns:/ {t = 0}
	t && /^  [^ -]/ {print $1 " " ($2 ~ /thread-only/ ? "thread" : "process")}')
# valgrind runs one thread at a time and does not let go of its lock in a
# thread blocked in io_uring_enter: io_uring between threads hangs there (a
# valgrind limit, not ipclab's). io-uring is checked in process mode above;
# io-uring-msg works between threads only, so it is not run here.
VALGRIND_SKIP=${VALGRIND_SKIP-io-uring-msg}
for line in "${all[@]}"; do
	read -r tp ep <<<"$line"
	if [[ " $VALGRIND_SKIP " == *" $tp "* ]]; then
		echo "$tp: not run under valgrind (io_uring between threads: valgrind's thread lock; see the comment above)"
		continue
	fi
	for pat in $PATTERNS; do
		rm -f "$dir"/vg.*
		runs=$((runs + 1))
		# a generous stall timeout: everything runs ~30 times slower
		timeout -k 10 300 valgrind --error-exitcode=99 --trace-children=yes \
			--leak-check=full --errors-for-leak-kinds=definite \
			--log-file="$dir/vg.%p" \
			"$IPCLAB" run -t "$tp" -p "$pat" -e "$ep" -n "$N" --timeout 60s -q -f csv \
			>/dev/null 2>"$dir/err"
		rc=$?
		n=0 e=0
		for log in "$dir"/vg.*; do
			[ -e "$log" ] || continue
			n=$((n + 1))
			k=$(sed -n 's/.*ERROR SUMMARY: \([0-9]*\) errors.*/\1/p' "$log" | tail -1)
			if [ -z "$k" ]; then
				fail "$tp $pat: $(basename "$log") has no error summary (killed?)"
			elif [ "$k" -gt 0 ]; then
				e=$((e + k))
				fail "$tp $pat: $k memcheck errors in $(basename "$log"):"
				grep -A12 -m3 '^==[0-9]*== [A-Z][a-z]' "$log" | head -40
			fi
		done
		procs=$((procs + n)) errors=$((errors + e))
		if [ $rc != 0 ]; then
			failed_runs=$((failed_runs + 1))
			fault "$tp $pat under valgrind: exit $rc: $(head -c 300 "$dir/err")"
		fi
		echo "$tp $pat ($ep): exit $rc, $n processes, $e errors"
		left=$(new_leftovers "$baseline" "$(strict_leftovers)")
		[ -z "$left" ] || { fail "$tp $pat under valgrind: left behind: $left"; baseline=$(strict_leftovers); }
	done
done
echo "totals: valgrind memcheck: $runs runs ($N messages each), $procs processes, $errors errors, $failed_runs runs failed; $(( ($(now_ns) - start) / 1000000000 )) s"
finish
