#!/bin/sh
# SPDX-License-Identifier: MIT
# check.sh - verify ring.pml with Spin (spin -a, gcc -DSAFETY, ./pan) in a
# temporary directory: the model must verify with 0 errors, and each mutant
# (no re-check, no epoch bump, TSO store buffer, no publish before sleep)
# must produce an error, or the model proves nothing. Exit 0 pass, 1 fail,
# 77 skip (spin or a C compiler missing).
set -u

dir=$(cd "$(dirname "$0")" && pwd)
cc=${CC:-cc}
command -v spin >/dev/null 2>&1 || { echo "skip: spin is not installed"; exit 77; }
command -v "$cc" >/dev/null 2>&1 || { echo "skip: no C compiler ($cc)"; exit 77; }
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM

# verify NAME [spin -D options...]: print pan's error count, or "broken"
verify() {
	name=$1
	shift
	mkdir "$tmp/$name" && cd "$tmp/$name" || { echo broken; return; }
	if ! spin "$@" -a "$dir/ring.pml" > spin.log 2>&1 ||
	   ! "$cc" -O1 -DSAFETY -o pan pan.c > cc.log 2>&1 ||
	   ! ./pan -m200000 > pan.log 2>&1; then
		echo broken
		return
	fi
	if grep -q "max search depth too small" pan.log; then
		echo broken
		return
	fi
	n=$(sed -n 's/.*errors: \([0-9][0-9]*\).*/\1/p' pan.log | head -n 1)
	echo "${n:-broken}"
}

fail=0
n=$(verify model)
states=$(sed -n 's/^ *\([0-9e+.]*\) states, stored.*/\1/p' "$tmp/model/pan.log" 2>/dev/null)
if [ "$n" = 0 ]; then
	echo "ok   model: 0 errors (${states:-?} states)"
else
	echo "FAIL model: $n errors"
	sed -n '1,20p' "$tmp/model/pan.log" 2>/dev/null
	fail=1
fi
for m in NO_RECHECK NO_EPOCH SB NO_PUBLISH; do
	n=$(verify "$m" "-D$m")
	case $n in
	broken) echo "FAIL mutant $m: the checker did not run"; fail=1 ;;
	0) echo "FAIL mutant $m: not caught (0 errors), the model is too weak"; fail=1 ;;
	*) echo "ok   mutant $m: caught ($n error)" ;;
	esac
done
[ $fail = 0 ] || { echo "model check failed"; exit 1; }
exit 0
