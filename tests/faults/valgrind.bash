#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `make valgrind`: memcheck on one short run (VALGRIND_N messages, 200) of
# every transport, its cells every pattern of VALGRIND_PATTERNS (one run:
# valgrind's start, most of a run's cost, is paid once; unix-stream's two
# cells 5.9 CPU s in two runs, 3.3 in one), in every ipclab process: each forked
# endpoint, and (--trace-children=yes) any program ipclab execs, itself
# included, except the programs named in VALGRIND_HELPERS (not ipclab:
# the sh and gzip that read /proc/config.gz, dbus-daemon, gnuplot), which
# run natively. Passes with zero errors, definite leaks counted as errors,
# in every ipclab process. Not part of `make check` (minutes); CI runs it
# as its own stage, VALGRIND_JOBS (2) runs at once.
. "$(dirname "$0")/lib.bash"

N=${VALGRIND_N:-200}
PATTERNS=${VALGRIND_PATTERNS:-pingpong stream}
command -v valgrind >/dev/null || { echo "valgrind not installed: apt-get install valgrind"; exit 77; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
runs=0 procs=0 helpers=0 errors=0 failed_runs=0
baseline=$(strict_leftovers)
start=$(now_ns)

mapfile -t all < <("$IPCLAB" list | awk '/^transports:/ {t = 1; next} /^patterns:/ {t = 0}
	t && /^  [^ -]/ {print $1 " " ($2 ~ /thread-only/ ? "thread" : "process")}')
# valgrind runs one thread at a time and does not let go of its lock in a
# thread blocked in io_uring_enter: io_uring between threads hangs there (a
# valgrind limit, not ipclab's). io-uring is checked in process mode above;
# io-uring-msg works between threads only, so it is not run here.
VALGRIND_SKIP=${VALGRIND_SKIP-io-uring-msg}
# The programs other than ipclab that a run starts, not checked under
# valgrind (--trace-children-skip: each a pattern of the path exec'd; the
# first three are popen's sh and the gzip it runs for /proc/config.gz,
# started by every run where /boot/config-RELEASE is missing). Checking
# them cost about 1.2 CPU s of a run's 4.5 (a second start of valgrind for
# the sh, a third for the gzip; 78 runs: 347 -> 256 CPU s). Never a
# pattern that names ipclab: every ipclab process, forked or exec'd, stays
# checked.
VALGRIND_HELPERS=${VALGRIND_HELPERS-*/sh,*/dash,*/bash,*/gzip,*/dbus-daemon,*/gnuplot}
# VALGRIND_JOBS runs at once (2): a ping-pong under valgrind keeps one CPU
# busy. Each run writes its logs into a directory of its own; the runs of
# one group are checked for leftovers together, after all of them ended
# (groups, not a pool that starts a run as soon as one ends: the leftovers
# check needs a moment with no run in flight, and two at once already kept
# both of CI's CPUs busy, 352 CPU s in 171 s).
JOBS=${VALGRIND_JOBS:-2}
case $JOBS in '' | *[!0-9]* | 0) echo "VALGRIND_JOBS must be a positive number, not '$JOBS'" >&2; exit 2 ;; esac

# One run under valgrind, into $dir/run-K (its logs, stderr and exit status).
vg_run() { # K tp pat ep
	local d=$dir/run-$1
	mkdir -p "$d"
	# a generous stall timeout: everything runs ~30 times slower
	timeout -k 10 300 valgrind --error-exitcode=99 --trace-children=yes \
		${VALGRIND_HELPERS:+--trace-children-skip="$VALGRIND_HELPERS"} \
		--leak-check=full --errors-for-leak-kinds=definite \
		--log-file="$d/vg.%p" \
		"$IPCLAB" run -t "$2" -p "$3" -e "$4" -n "$N" --timeout 60s -q -f csv \
		>/dev/null 2>"$d/err"
	echo $? >"$d/rc"
}

# Valgrind's first lines of a log (its name, copyright, version, the
# command, the parent's pid, a blank): all that a process that went on to
# exec a helper wrote, since the helper runs natively.
vg_preamble_only() { # LOG
	awk '!/^==[0-9]+== (Memcheck, a memory error detector|Copyright |Using Valgrind-|Command: |Parent PID: |$)/ {x = 1}
		END {exit x || NR != 6}' "$1"
}

# The verdict on run K: every process's error summary, then its exit status.
# A log without a summary is a process killed, unless the run exited 0 and
# the log is valgrind's preamble and nothing else, of a process whose
# parent's log is there and complete: a fork that exec'd one of
# VALGRIND_HELPERS (popen's child); it is counted as a helper, not a
# process. Every other process must end with its summary, as before.
vg_check() { # K tp pat ep
	local d=$dir/run-$1 tp=$2 pat=$3 ep=$4 rc n=0 h=0 e=0 k log parent
	rc=$(cat "$d/rc" 2>/dev/null || echo "?")
	for log in "$d"/vg.*; do
		[ -e "$log" ] || continue
		k=$(sed -n 's/.*ERROR SUMMARY: \([0-9]*\) errors.*/\1/p' "$log" | tail -1)
		parent=$(sed -n 's/^==[0-9]*== Parent PID: \([0-9]*\)$/\1/p' "$log")
		if [ -z "$k" ] && [ "$rc" = 0 ] && [ -n "$VALGRIND_HELPERS" ] && vg_preamble_only "$log" &&
			grep -q 'ERROR SUMMARY: ' "$d/vg.$parent" 2>/dev/null; then
			h=$((h + 1))
			continue
		fi
		n=$((n + 1))
		if [ -z "$k" ]; then
			fail "$tp $pat: $(basename "$log") has no error summary (killed?)"
		elif [ "$k" -gt 0 ]; then
			e=$((e + k))
			fail "$tp $pat: $k memcheck errors in $(basename "$log"):"
			grep -A12 -m3 '^==[0-9]*== [A-Z][a-z]' "$log" | head -40
		fi
	done
	procs=$((procs + n)) helpers=$((helpers + h)) errors=$((errors + e))
	if [ "$rc" != 0 ]; then
		failed_runs=$((failed_runs + 1))
		fault "$tp $pat under valgrind: exit $rc: $(head -c 300 "$d/err")"
	fi
	echo "$tp $pat ($ep): exit $rc, $n processes, $h helpers, $e errors"
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

pats=$(echo $PATTERNS | tr ' ' ,)
for line in "${all[@]}"; do
	read -r tp ep <<<"$line"
	if [[ " $VALGRIND_SKIP " == *" $tp "* ]]; then
		echo "$tp: not run under valgrind (io_uring between threads: valgrind's thread lock; see the comment above)"
		continue
	fi
	runs=$((runs + 1))
	group+=("$runs $tp $pats $ep")
	[ ${#group[@]} -lt "$JOBS" ] || vg_group
done
vg_group
echo "totals: valgrind memcheck: $runs runs ($pats, $N messages each), $procs processes, $errors errors, $failed_runs runs failed; $helpers helpers run natively (${VALGRIND_HELPERS:-none}); $(( ($(now_ns) - start) / 1000000000 )) s"
finish
