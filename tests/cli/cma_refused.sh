#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# cma without ptrace permission over the peer: the run fails (exit 1) with
# one line that says what was refused and how to fix it (ptrace_scope,
# root), in process and thread mode alike, and leaves nothing behind. The
# refusal comes from an LD_PRELOAD helper (process_vm_readv/writev give
# EPERM, as the kernel does without permission), since as root, or with
# Yama absent as here, the kernel would allow it.
. "$(dirname "$0")/../lib/common.sh"
shim=${CMA_EPERM:-$(dirname "$IPCLAB")/tests/cli/cma_eperm.so}
[ -f "$shim" ] || { echo "skip: no $shim (make all builds it)"; exit 77; }
"$IPCLAB" list | grep -q "^  cma " || { echo "skip: no cma transport"; exit 77; }
# under ASan the sanitizer's runtime must come first; the shim only wraps
# two calls, so the order check is not needed
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
before=$(leftovers)
for mode in process thread; do
	LD_PRELOAD=$shim "$IPCLAB" run -t cma -p pingpong -n 200 -e $mode -q >"$dir/out" 2>"$dir/err"
	rc=$?
	[ $rc = 1 ] || fail "$mode: exit $rc, expected 1: $(head -3 "$dir/err")"
	lines=$(grep -c . "$dir/err")
	[ "$lines" = 1 ] || fail "$mode: $lines lines of error, expected one: $(cat "$dir/err")"
	grep -q 'refused' "$dir/err" || fail "$mode: the error does not say refused: $(cat "$dir/err")"
	grep -Eq 'ptrace_scope|CAP_SYS_PTRACE' "$dir/err" ||
		fail "$mode: the error names no fix: $(cat "$dir/err")"
done
# and without the helper it runs
"$IPCLAB" run -t cma -p pingpong -n 200 -q >/dev/null 2>"$dir/err" ||
	fail "cma without the helper: $(head -3 "$dir/err")"
new=$(new_leftovers "$before" "$(leftovers)")
[ -z "$new" ] || fail "left behind: $new"
finish
