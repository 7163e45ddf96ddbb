#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Run each test program or script under a timeout. Exit codes: 0 pass,
# 1 fail, 77 skip. Prints "N passed, N failed, N skipped" last.
#
# TEST_JOBS=N (default 1) runs up to N tests at once; each result is printed
# when its test ends. Tests are made for that: each shell test runs in its
# own IPC and mount namespaces and temporary directory (tests/lib/common.sh),
# checks behaviour, never speed, and a test that needs the CPUs to itself
# checks whether they were and says so. TEST_TIMEOUT (600 s) bounds each one.
set -u
timeout_s=${TEST_TIMEOUT:-600}
jobs_max=${TEST_JOBS:-1}
case $jobs_max in '' | *[!0-9]* | 0) echo "TEST_JOBS must be a positive number, not '$jobs_max'" >&2; exit 2 ;; esac
pass=0 fail=0 skip=0
failed_names=()
work=$(mktemp -d) || exit 1
declare -A job_name=() job_log=() job_start=()

# Print one finished test's line (and a failure's log), count it.
report() {
	local name=$1 rc=$2 secs=$3 log=$4
	case $rc in
	0) pass=$((pass + 1)); printf 'PASS %-28s %3ss\n' "$name" "$secs" ;;
	77) skip=$((skip + 1)); printf 'SKIP %-28s %s\n' "$name" "$(tail -n 1 "$log")" ;;
	*) fail=$((fail + 1)); failed_names+=("$name")
	   [ "$rc" = 124 ] && echo "  (timed out after ${timeout_s}s)"
	   printf 'FAIL %-28s rc=%s %3ss\n' "$name" "$rc" "$secs"
	   sed 's/^/    | /' "$log" | tail -n 40 ;;
	esac
	rm -f "$log"
}

# Wait for any one running test and report it.
reap() {
	local pid rc
	wait -n -p pid
	rc=$?
	[ -n "${pid:-}" ] || return 0
	report "${job_name[$pid]}" "$rc" $(( $(date +%s) - job_start[$pid] )) "${job_log[$pid]}"
	unset "job_name[$pid]" "job_log[$pid]" "job_start[$pid]"
}

cleanup() {
	local pid
	for pid in "${!job_name[@]}"; do kill -- "$pid" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

n=0
for t in "$@"; do
	[ -e "$t" ] || { echo "MISSING $t"; fail=$((fail + 1)); failed_names+=("$t"); continue; }
	while [ ${#job_name[@]} -ge "$jobs_max" ]; do reap; done
	n=$((n + 1))
	log="$work/$n.log"
	timeout -k 10 "$timeout_s" "$t" >"$log" 2>&1 </dev/null &
	job_name[$!]=$(basename "$t")
	job_log[$!]=$log
	job_start[$!]=$(date +%s)
done
while [ ${#job_name[@]} -gt 0 ]; do reap; done
[ ${#failed_names[@]} -gt 0 ] && echo "failed: ${failed_names[*]}"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
