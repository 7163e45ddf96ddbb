#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `make valgrind`: memcheck on one short run (VALGRIND_N messages, 200) of
# every transport and pattern, following every forked endpoint
# (--trace-children=yes also follows popen'd helpers). Passes with zero
# errors, definite leaks counted as errors, in every process. Not part of
# `make check` (minutes); CI runs it as its own stage, VALGRIND_JOBS (2)
# runs at once.
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
# VALGRIND_JOBS runs at once (2): a ping-pong under valgrind keeps one CPU
# busy. Each run writes its logs into a directory of its own; the runs of
# one group are checked for leftovers together, after all of them ended.
JOBS=${VALGRIND_JOBS:-2}
case $JOBS in '' | *[!0-9]* | 0) echo "VALGRIND_JOBS must be a positive number, not '$JOBS'" >&2; exit 2 ;; esac

# One run under valgrind, into $dir/run-K (its logs, stderr and exit status).
vg_run() { # K tp pat ep
	local d=$dir/run-$1
	mkdir -p "$d"
	# a generous stall timeout: everything runs ~30 times slower
	timeout -k 10 300 valgrind --error-exitcode=99 --trace-children=yes \
		--leak-check=full --errors-for-leak-kinds=definite \
		--log-file="$d/vg.%p" \
		"$IPCLAB" run -t "$2" -p "$3" -e "$4" -n "$N" --timeout 60s -q -f csv \
		>/dev/null 2>"$d/err"
	echo $? >"$d/rc"
}

# The verdict on run K: every process's error summary, then its exit status.
vg_check() { # K tp pat ep
	local d=$dir/run-$1 tp=$2 pat=$3 ep=$4 rc n=0 e=0 k log
	rc=$(cat "$d/rc" 2>/dev/null || echo "?")
	for log in "$d"/vg.*; do
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
	if [ "$rc" != 0 ]; then
		failed_runs=$((failed_runs + 1))
		fault "$tp $pat under valgrind: exit $rc: $(head -c 300 "$d/err")"
	fi
	echo "$tp $pat ($ep): exit $rc, $n processes, $e errors"
	rm -rf "$d"
}

# Run the group held in group[] (K tp pat ep each), check each, then the
# leftovers of all of them.
group=()
vg_group() {
	local g left
	[ ${#group[@]} -gt 0 ] || return 0
	for g in "${group[@]}"; do
		# shellcheck disable=SC2086
		vg_run $g &
	done
	wait
	for g in "${group[@]}"; do
		# shellcheck disable=SC2086
		vg_check $g
	done
	left=$(new_leftovers "$baseline" "$(strict_leftovers)")
	[ -z "$left" ] || { fail "under valgrind, runs $(printf '%s; ' "${group[@]}")left behind: $left"
		baseline=$(strict_leftovers); }
	group=()
}

for line in "${all[@]}"; do
	read -r tp ep <<<"$line"
	if [[ " $VALGRIND_SKIP " == *" $tp "* ]]; then
		echo "$tp: not run under valgrind (io_uring between threads: valgrind's thread lock; see the comment above)"
		continue
	fi
	for pat in $PATTERNS; do
		runs=$((runs + 1))
		group+=("$runs $tp $pat $ep")
		[ ${#group[@]} -lt "$JOBS" ] || vg_group
	done
done
vg_group
echo "totals: valgrind memcheck: $runs runs ($N messages each), $procs processes, $errors errors, $failed_runs runs failed; $(( ($(now_ns) - start) / 1000000000 )) s"
finish
