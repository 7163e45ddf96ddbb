#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/run-tests.sh with TEST_RETRY=1, on tiny tests made here: a test
# that fails once (its state file says which attempt it is) and then
# passes is FLAKY: its first failure printed (the FAIL block .ci/run
# keeps), counted apart in the last line and named on a "flaky:" line, and
# the run passes; a test that fails twice fails the run; TEST_TIMES has a
# line for each attempt. Without TEST_RETRY nothing is run again, a test
# that timed out is not run again, and a bad TEST_RETRY is one line, exit 2.
# A test named in TEST_WAITING runs beside the TEST_JOBS others.
. "$(dirname "$0")/../lib/common.sh"
runner=$(cd "$(dirname "$0")/.." && pwd)/run-tests.sh
# this test runs under the runner it tests: what the outer one was given
# (CI's TEST_RETRY=1, make check's TEST_TIMES, whose file the inner one
# would start anew) must not reach the inner runs
unset TEST_RETRY TEST_TIMES TEST_SKIP TEST_JOBS TEST_TIMEOUT TEST_WAITING TEST_GCOV GCOV_PREFIX
T=$TMPDIR/fake
mkdir -p "$T"

# fake NAME BODY: an executable test script
fake() {
	printf '#!/bin/sh\n%s\n' "$2" >"$T/$1"
	chmod +x "$T/$1"
}
fake ok.sh 'exit 0'
# counts its attempts in a file beside it; fails the first
fake once.sh 'n=$(cat "$0.n" 2>/dev/null || echo 0); n=$((n + 1)); echo $n >"$0.n"
[ $n -ge 2 ] && { echo "ok: attempt $n"; exit 0; }
echo "FAIL: attempt $n (the first)"; exit 1'
fake always.sh 'n=$(cat "$0.n" 2>/dev/null || echo 0); echo $((n + 1)) >"$0.n"
echo "FAIL: always"; exit 1'
fake slow.sh 'n=$(cat "$0.n" 2>/dev/null || echo 0); echo $((n + 1)) >"$0.n"; exec sleep 30'
reset() { rm -f "$T"/*.n; }

# ---- TEST_RETRY=1 ------------------------------------------------------------
reset
TEST_RETRY=1 TEST_JOBS=2 TEST_TIMES=$T/times.tsv "$runner" "$T/ok.sh" "$T/once.sh" "$T/always.sh" \
	>"$T/out" 2>&1
rc=$?
[ "$rc" = 1 ] || fail "retry: a test failing twice: exit $rc, not 1"
last=$(tail -n 1 "$T/out")
[ "$last" = "1 passed, 1 failed, 1 flaky, 0 skipped" ] ||
	fail "retry: last line '$last', not '1 passed, 1 failed, 1 flaky, 0 skipped'"
grep -qx 'flaky: once.sh' "$T/out" || fail "retry: no 'flaky: once.sh' line: $(cat "$T/out")"
grep -qx 'failed: always.sh' "$T/out" || fail "retry: no 'failed: always.sh' line"
grep -q '^FLAKY once.sh ' "$T/out" || fail "retry: once.sh not printed as FLAKY"
# the first failure as any failure: a FAIL line and its checks (.ci/run
# keeps these lines of a stage's log)
grep -q '^FAIL once.sh .*first attempt' "$T/out" || fail "retry: once.sh's first failure not printed"
grep -qx '    ! FAIL: attempt 1 (the first)' "$T/out" || fail "retry: once.sh's failed check not printed"
[ "$(grep -c '^FAIL always.sh ' "$T/out")" = 2 ] || fail "retry: always.sh not printed failing twice"
[ "$(cat "$T/once.sh.n")" = 2 ] && [ "$(cat "$T/always.sh.n")" = 2 ] ||
	fail "retry: attempts once.sh $(cat "$T/once.sh.n"), always.sh $(cat "$T/always.sh.n"); not 2 and 2"
[ "$(cut -f1,2 "$T/times.tsv" | grep -c "once.sh")" = 2 ] || fail "retry: TEST_TIMES has not both attempts of once.sh"
grep -q "once.sh	fail	" "$T/times.tsv" && grep -q "once.sh	flaky	" "$T/times.tsv" ||
	fail "retry: TEST_TIMES once.sh rows: $(grep once.sh "$T/times.tsv")"
[ "$(grep -c "always.sh	fail	" "$T/times.tsv")" = 2 ] || fail "retry: TEST_TIMES always.sh rows: $(grep always.sh "$T/times.tsv")"

# a flaky test alone does not fail the run
reset
TEST_RETRY=1 "$runner" "$T/ok.sh" "$T/once.sh" >"$T/out2" 2>&1 ||
	fail "retry: a flaky test failed the run: $(tail -n 3 "$T/out2")"
[ "$(tail -n 1 "$T/out2")" = "1 passed, 0 failed, 1 flaky, 0 skipped" ] ||
	fail "retry: flaky alone: '$(tail -n 1 "$T/out2")'"

# ---- without TEST_RETRY: a failure is a failure, run once ---------------------
reset
TEST_RETRY=0 "$runner" "$T/ok.sh" "$T/once.sh" >"$T/out3" 2>&1 && fail "no retry: a failing test passed the run"
[ "$(cat "$T/once.sh.n")" = 1 ] || fail "no retry: once.sh ran $(cat "$T/once.sh.n") times"
[ "$(tail -n 1 "$T/out3")" = "1 passed, 1 failed, 0 flaky, 0 skipped" ] || fail "no retry: '$(tail -n 1 "$T/out3")'"

# ---- a timeout is not run again ------------------------------------------------
reset
TEST_RETRY=1 TEST_TIMEOUT=1 "$runner" "$T/slow.sh" >"$T/out4" 2>&1 && fail "timeout: passed"
[ "$(cat "$T/slow.sh.n")" = 1 ] || fail "timeout: slow.sh ran $(cat "$T/slow.sh.n") times"
grep -q 'timed out' "$T/out4" || fail "timeout: not said: $(cat "$T/out4")"

# ---- TEST_WAITING: a test that mostly waits takes no place of TEST_JOBS ------
# waits.sh waits for a file that only other.sh makes; with one place they
# would run one after the other and waits.sh would give up after 10 s
fake waits.sh ': >"$0.started"; for i in $(seq 100); do [ -e "$0.other" ] && exit 0; sleep 0.1; done
echo "FAIL: other.sh did not run beside me"; exit 1'
fake other.sh 'for i in $(seq 100); do [ -e "${0%/*}/waits.sh.started" ] && break; sleep 0.1; done
: >"${0%/*}/waits.sh.other"'
rm -f "$T"/waits.sh.*
TEST_JOBS=1 TEST_WAITING="$T/waits.sh" "$runner" "$T/waits.sh" "$T/other.sh" "$T/ok.sh" >"$T/out6" 2>&1 ||
	fail "TEST_WAITING: waits.sh did not run beside the others: $(grep -A3 '^FAIL' "$T/out6")"
[ "$(tail -n 1 "$T/out6")" = "3 passed, 0 failed, 0 flaky, 0 skipped" ] || fail "TEST_WAITING: '$(tail -n 1 "$T/out6")'"

# ---- TEST_GCOV: each test its own GCOV_PREFIX ---------------------------------
fake gcov.sh 'echo "$GCOV_PREFIX|$GCOV_PREFIX_STRIP" >"$0.prefix"'
GCOV_PREFIX=/elsewhere TEST_GCOV=$T/g "$runner" "$T/gcov.sh" >"$T/out7" 2>&1 || fail "TEST_GCOV: the test failed"
[ "$(cat "$T/gcov.sh.prefix" 2>/dev/null)" = "$T/g/${T//\//_}_gcov.sh|0" ] ||
	fail "TEST_GCOV: GCOV_PREFIX '$(cat "$T/gcov.sh.prefix" 2>/dev/null)', not $T/g/<the test's path>"
unset GCOV_PREFIX
"$runner" "$T/gcov.sh" >"$T/out8" 2>&1
[ "$(cat "$T/gcov.sh.prefix")" = "|" ] || fail "without TEST_GCOV a test got GCOV_PREFIX '$(cat "$T/gcov.sh.prefix")'"

# ---- bad input ---------------------------------------------------------------
TEST_RETRY=yes "$runner" "$T/ok.sh" >"$T/out5" 2>&1
rc=$?
[ "$rc" = 2 ] && [ "$(wc -l <"$T/out5")" = 1 ] && grep -q "TEST_RETRY must be 0 or 1" "$T/out5" ||
	fail "TEST_RETRY=yes: exit $rc, '$(cat "$T/out5")'"

[ "$fails" = 0 ] && echo "ok: flaky once counted apart, twice failed, no retry without TEST_RETRY or after a timeout"
exit "$fails"
