#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Run each test program or script under a timeout. Exit codes: 0 pass,
# 1 fail, 77 skip. Prints "N passed, N failed, N skipped" last.
set -u
timeout_s=${TEST_TIMEOUT:-600}
pass=0 fail=0 skip=0
failed_names=()
for t in "$@"; do
	[ -e "$t" ] || { echo "MISSING $t"; fail=$((fail + 1)); failed_names+=("$t"); continue; }
	name=$(basename "$t")
	log=$(mktemp)
	start=$(date +%s)
	timeout -k 10 "$timeout_s" "$t" >"$log" 2>&1
	rc=$?
	secs=$(( $(date +%s) - start ))
	case $rc in
	0) pass=$((pass + 1)); printf 'PASS %-28s %3ss\n' "$name" "$secs" ;;
	77) skip=$((skip + 1)); printf 'SKIP %-28s %s\n' "$name" "$(tail -n 1 "$log")" ;;
	*) fail=$((fail + 1)); failed_names+=("$name")
	   [ $rc = 124 ] && echo "  (timed out after ${timeout_s}s)"
	   printf 'FAIL %-28s rc=%s %3ss\n' "$name" "$rc" "$secs"
	   sed 's/^/    | /' "$log" | tail -n 40 ;;
	esac
	rm -f "$log"
done
[ ${#failed_names[@]} -gt 0 ] && echo "failed: ${failed_names[*]}"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
