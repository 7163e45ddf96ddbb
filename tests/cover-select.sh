#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `make cover-select`: which shell tests the sanitizer stages need, from
# what each test runs. Builds ipclab with --coverage (build-cov/, -O0), runs
# every test of make check as make check under a sanitizer runs it (the
# same counts: IPCLAB_TEST_SCALE=25, fewer kills and stops), each with its
# own GCOV_PREFIX (tests/run-tests.sh's TEST_GCOV), then reads which lines
# of ipclab's own code (src/, lib/) each test ran. The unit programs, the
# fuzz replays, tp_direct and the fault scripts (tests/faults/) are always
# kept; of the other tests it keeps, cheapest per new line first, until
# every line any test ran is run by a kept one. Writes
# build-cov/cover-select.tsv (test, lines it ran, lines only it ran among
# all tests, CPU s, kept or left) and prints the tests left to the plain
# check with why: every line each runs is run by a kept test. A line that
# depends on timing may be run by one test in one run and not in the
# next: the selection is a measurement of one run, said with its date and
# commit. docs/testing.md says how tests/sanitizer-skip is made from it.
set -euo pipefail
cd "$(dirname "$0")/.."
B=${COVER_B:-build-cov}
out=$B/cover
jobs=${TEST_JOBS:-3}

CFLAGS="-O0 -g --coverage" LDFLAGS="--coverage" make B="$B" -j"$(nproc)" --no-print-directory all tests
rm -rf "$out"
mkdir -p "$out"
# fleet_ansible.sh's hosts build a plain ipclab of their own: no line of
# this build runs in it, and it takes minutes; it is not run here, and
# the list leaves it out (COVER_NOT_RUN)
export COVER_NOT_RUN=tests/cli/fleet_ansible.sh
mapfile -t tests < <(make -s --no-print-directory B="$B" --eval 'cover-list: ; @printf "%s\n" $(CHECK_TESTS)' cover-list |
	grep -vxF -e "$COVER_NOT_RUN")
# each test's own tree of the build's directories, writable by anyone: a
# test runs ipclab as another user too, whose counts must land
(cd "$B" && find . -type d -not -path './cover*') >"$out/dirs"
for t in "${tests[@]}"; do
	d="$out/g/${t//\//_}$(cd "$B" && pwd)"
	sed "s|^\.|$d|" "$out/dirs" | xargs mkdir -p
done
chmod -R a+rwx "$out/g"
# as make check under a sanitizer runs them (mk/ipclab.mk's CHECK_ENV),
# every test, those of tests/sanitizer-skip too; the counts' files made
# writable by anyone (umask 0), as their directories are: what a test's
# pass or fail is here is not this script's concern
umask 000
IPCLAB="$(pwd)/$B/ipclab" IPCLAB_TEST_SCALE=25 FAULT_KILLS=8 FAULT_SIGNALS=8 FAULT_STOPS=3 \
	FAULT_PATTERNS=stream FAULT_TRANSPORT_SAMPLE=12 FAULT_NOFILE_LIMITS=16 \
	TEST_GCOV="$(pwd)/$out/g" TEST_JOBS="$jobs" TEST_TIMES="$out/times.tsv" \
	tests/run-tests.sh "${tests[@]}" | tee "$out/run.log" | grep -E '^(FAIL|[0-9]+ passed)' || true
python3 tests/lib/cover_select.py "$B" "$out" "$(git rev-parse --short HEAD)" "${tests[@]}"
