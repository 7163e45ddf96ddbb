#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Run each test program or script under a timeout. Exit codes: 0 pass,
# 1 fail, 77 skip. Prints "N passed, N failed, N flaky, N skipped" last.
#
# TEST_JOBS=N (default 1) runs up to N tests at once; each result is printed
# when its test ends. Tests are made for that: each shell test runs in its
# own IPC and mount namespaces and temporary directory (tests/lib/common.sh),
# checks behaviour, never speed, and a test that needs the CPUs to itself
# checks whether they were and says so. TEST_TIMEOUT (600 s) bounds each one; a script may raise its own
# bound with a line "# test-timeout: N" among its first 20.
#
# TEST_TIMES=FILE writes what each test cost, one line a test as it ends:
# test (its path as given), result (pass, fail, skip, timeout), wall
# seconds, and CPU seconds (user + system of the test and everything it
# waited for). `sort -t$'\t' -k3,3nr FILE | head` lists the slowest;
# docs/testing.md says more.
#
# TEST_RETRY=1 runs a test that failed once more (not one that timed out:
# that would cost its bound twice). Its first failure is printed as any
# failure is, marked as the first attempt; if the second attempt passes the
# test is FLAKY: counted apart, named on a "flaky:" line, and it does not
# fail the run; failing twice fails. TEST_TIMES then has a line for each
# attempt, the second's result "flaky" when it passed. Off by default:
# docs/testing.md says why CI sets it and `make check` does not.
#
# TEST_SKIP=FILE names tests not to run, one a line: the test's path as
# given, a tab, and the reason (`#` starts a comment). Each is reported as
# SKIP with that reason. The sanitizer builds use tests/sanitizer-skip.
#
# TEST_GCOV=DIR (a --coverage build, tests/cover-select.sh) gives each test
# its own GCOV_PREFIX, DIR/<the test's path with / as _>, so that what each
# test ran can be told apart.
#
# TEST_WAITING="PATH ..." names tests that mostly wait (on ssh, daemons,
# timeouts) rather than compute: each runs beside the TEST_JOBS others
# instead of holding one of their places, so the CPUs stay busy while it
# waits. It still starts where it stands in the list (put it first).
set -u
timeout_s=${TEST_TIMEOUT:-600}
jobs_max=${TEST_JOBS:-1}
case $jobs_max in '' | *[!0-9]* | 0) echo "TEST_JOBS must be a positive number, not '$jobs_max'" >&2; exit 2 ;; esac
retry=${TEST_RETRY:-0}
case $retry in 0 | 1) ;; *) echo "TEST_RETRY must be 0 or 1, not '$retry'" >&2; exit 2 ;; esac
pass=0 fail=0 flaky=0 skip=0
failed_names=() flaky_names=()
work=$(mktemp -d) || exit 1
# The tests run Debian's python3 (make deps installs it, with ansible-core)
# where a python3 found earlier in PATH is another: a version manager's
# shim (pyenv's is a shell script) cost 0.35 s of CPU a call here, and a
# test's JSON checks (tests/lib/json.sh) are a call each:
# plot_compare_env.sh took 26 CPU s through the shim, 11 without it.
if [ -x /usr/bin/python3 ] && [ "$(command -v python3)" != /usr/bin/python3 ]; then
	mkdir "$work/bin" && ln -s /usr/bin/python3 "$work/bin/python3" && PATH=$work/bin:$PATH
fi
declare -A job_name=() job_path=() job_log=() job_start=() job_attempt=()
times_file=${TEST_TIMES:-}
if [ -n "$times_file" ]; then
	mkdir -p "$(dirname "$times_file")" 2>/dev/null &&
		printf 'test\tresult\twall_s\tcpu_s\n' 2>/dev/null >"$times_file" ||
		{ echo "TEST_TIMES: cannot write '$times_file'; name a writable file" >&2; exit 2; }
fi

declare -A waiting=() job_waits=()
for w in ${TEST_WAITING:-}; do waiting[$w]=1; done
waiting_now=0

declare -A skip_why=()
if [ -n "${TEST_SKIP:-}" ]; then
	[ -r "$TEST_SKIP" ] || { echo "TEST_SKIP: cannot read '$TEST_SKIP'; name a list of tests to skip" >&2; exit 2; }
	while IFS=$'\t' read -r skip_path skip_reason; do
		case $skip_path in '' | '#'*) continue ;; esac
		skip_why[$skip_path]=${skip_reason:-listed in $TEST_SKIP}
	done <"$TEST_SKIP"
fi

# Microseconds since the epoch (bash's own clock: no process started).
now_us() { local t=${EPOCHREALTIME/./}; echo $((10#$t)); }

# Seconds with one decimal from microseconds.
secs1() { printf '%d.%d' $(($1 / 1000000)) $(($1 % 1000000 / 100000)); }

# The CPU seconds `times` wrote for a test's children ("1m2.345s 0m0.5s").
cpu_secs() {
	[ -s "$1" ] || { echo -; return; }
	awk 'NR == 2 { s = 0; for (i = 1; i <= 2; i++) { split($i, a, /[ms]/); s += a[1] * 60 + a[2] }
		printf "%.1f", s }' "$1"
}

# Print one finished test's line (and a failure's log), count it, and
# write its cost to TEST_TIMES. A first failure under TEST_RETRY=1 is
# printed and the test started again, counted when that attempt ends.
report() {
	local name=$1 rc=$2 us=$3 log=$4 path=$5 attempt=$6 secs result again=0
	secs=$((us / 1000000))
	case $rc in 0 | 77 | 124 | 137) ;; *) [ "$retry" = 1 ] && [ "$attempt" = 1 ] && again=1 ;; esac
	if [ -n "$times_file" ]; then
		case $rc in 0) result=pass ;; 77) result=skip ;; 124 | 137) result=timeout ;; *) result=fail ;; esac
		[ "$rc" = 0 ] && [ "$attempt" = 2 ] && result=flaky
		printf '%s\t%s\t%s\t%s\n' "$path" "$result" "$(secs1 "$us")" "$(cpu_secs "$log.cpu")" >>"$times_file"
	fi
	case $rc in
	0) if [ "$attempt" = 2 ]; then
		flaky=$((flaky + 1)); flaky_names+=("$name")
		printf 'FLAKY %-27s %3ss (failed once, passed when run again)\n' "$name" "$secs"
	   else
		pass=$((pass + 1)); printf 'PASS %-28s %3ss\n' "$name" "$secs"
	   fi ;;
	77) skip=$((skip + 1)); printf 'SKIP %-28s %s\n' "$name" "$(tail -n 1 "$log")" ;;
	*) [ "$again" = 1 ] || { fail=$((fail + 1)); failed_names+=("$name"); }
	   [ "$rc" = 124 ] && echo "  (timed out: past its bound, TEST_TIMEOUT or its own test-timeout)"
	   printf 'FAIL %-28s rc=%s %3ss%s\n' "$name" "$rc" "$secs" \
		"$([ "$again" = 1 ] && echo ' (first attempt; TEST_RETRY runs it again)')"
	   # the failed checks first (a long log's tail may not hold them)
	   grep -m 10 '^FAIL' "$log" | sed 's/^/    ! /'
	   sed 's/^/    | /' "$log" | tail -n 40 ;;
	esac
	rm -f "$log" "$log.cpu"
	[ "$again" = 0 ] || start "$path" 2
}

# Wait for any one running test and report it.
reap() {
	local pid rc
	wait -n -p pid
	rc=$?
	[ -n "${pid:-}" ] || return 0
	local name=${job_name[$pid]} path=${job_path[$pid]} log=${job_log[$pid]} \
		start_us=${job_start[$pid]} attempt=${job_attempt[$pid]}
	[ -z "${job_waits[$pid]:-}" ] || waiting_now=$((waiting_now - 1))
	unset "job_name[$pid]" "job_path[$pid]" "job_log[$pid]" "job_start[$pid]" "job_attempt[$pid]" "job_waits[$pid]"
	report "$name" "$rc" $(( $(now_us) - start_us )) "$log" "$path" "$attempt"
}

# start PATH ATTEMPT: run one test in the background under its bound.
n=0
start() {
	local t=$1 limit own log
	n=$((n + 1))
	log="$work/$n.log"
	# a script may ask for a longer bound in its first lines: "# test-timeout: N"
	limit=$timeout_s
	own=$(head -n 20 "$t" 2>/dev/null | sed -n 's/^# test-timeout: \([0-9][0-9]*\)$/\1/p' | head -n 1)
	[ -n "$own" ] && [ "$own" -gt "$limit" ] && limit=$own
	# the subshell's `times` is the CPU of the test and all it waited for
	( [ -z "${TEST_GCOV:-}" ] || export GCOV_PREFIX="$TEST_GCOV/${t//\//_}" GCOV_PREFIX_STRIP=0
	  timeout -k 10 "$limit" "$t" >"$log" 2>&1 </dev/null; rc=$?; times >"$log.cpu"; exit $rc ) &
	job_name[$!]=$(basename "$t")
	job_path[$!]=$t
	job_log[$!]=$log
	job_start[$!]=$(now_us)
	job_attempt[$!]=$2
	if [ -n "${waiting[$t]:-}" ]; then job_waits[$!]=1; waiting_now=$((waiting_now + 1)); fi
}

cleanup() {
	local pid
	# each job is a subshell around timeout: stop the timeout (which stops
	# its test), then the subshell
	for pid in "${!job_name[@]}"; do
		pkill -TERM -P "$pid" 2>/dev/null
		kill -- "$pid" 2>/dev/null
	done
	wait 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

for t in "$@"; do
	if [ ! -e "$t" ]; then
		echo "MISSING $t"; fail=$((fail + 1)); failed_names+=("$t")
		[ -z "$times_file" ] || printf '%s\tmissing\t0.0\t0.0\n' "$t" >>"$times_file"
		continue
	fi
	if [ -n "${skip_why[$t]:-}" ]; then
		skip=$((skip + 1))
		printf 'SKIP %-28s %s\n' "$(basename "$t")" "${skip_why[$t]}"
		[ -z "$times_file" ] || printf '%s\tskip\t0.0\t0.0\n' "$t" >>"$times_file"
		continue
	fi
	# a test that mostly waits takes no place of the TEST_JOBS
	[ -n "${waiting[$t]:-}" ] ||
		while [ $(( ${#job_name[@]} - waiting_now )) -ge "$jobs_max" ]; do reap; done
	start "$t" 1
done
while [ ${#job_name[@]} -gt 0 ]; do reap; done
[ ${#flaky_names[@]} -gt 0 ] && echo "flaky: ${flaky_names[*]}"
[ ${#failed_names[@]} -gt 0 ] && echo "failed: ${failed_names[*]}"
echo "$pass passed, $fail failed, $flaky flaky, $skip skipped"
[ "$fail" -eq 0 ]
