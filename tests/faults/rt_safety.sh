#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Realtime safety: a transport that spins while it waits, under a realtime
# policy with both endpoints on one CPU, would hold that CPU for ever (the
# spinner never yields to its peer): refused as bad input (exit 2, one line,
# nothing created), for processes and threads, --pin same or S:S. The same
# on two CPUs, under batch or idle, and a sleeping transport on one CPU, are
# accepted. A realtime run
# warns when RT throttling is off (sched_rt_runtime_us = -1): shown here
# through a bind mount over the sysctl file in this test's private mount
# namespace, so the machine's setting is never touched.
. "$(dirname "$0")/lib.bash"

mapfile -t spinners < <(transports_with spins)
[ ${#spinners[@]} -gt 0 ] || { echo "no spinning transport registered"; exit 77; }
echo "spinning transports: ${spinners[*]}"
refusals=0
ncpu=$(nproc)

for tp in "${spinners[@]}"; do
	for sched in fifo:10 rr:10; do
		for ep in process thread; do
			expect_usage_error "$tp --sched $sched --pin same -e $ep" \
				run -t "$tp" --sched "$sched" --pin same -e "$ep" -n 100
			refusals=$((refusals + 1))
		done
	done
	expect_usage_error "$tp --sched fifo:10 --pin 0:0" run -t "$tp" --sched fifo:10 --pin 0:0 -n 100
	refusals=$((refusals + 1))
	# in a list, the one unsafe cell refuses the whole plan before anything runs
	expect_usage_error "$tp in a plan with --pin split,same" \
		run -t "pipe,$tp" --sched fifo:10 --pin split,same -n 100
	# batch and idle are not realtime: the peer gets its share of the CPU
	for sched in batch idle; do
		"$IPCLAB" run -t "$tp" --sched $sched --pin same -n 100 --dry-run -q -f csv >/dev/null ||
			fail "$tp --sched $sched --pin same refused (not a realtime policy)"
	done
	if [ "$ncpu" -ge 2 ]; then
		"$IPCLAB" run -t "$tp" --sched fifo:10 --pin split -n 100 --dry-run -q -f csv >/dev/null ||
			fail "$tp --sched fifo:10 --pin split refused (two CPUs: each spinner has its own)"
	fi
done
"$IPCLAB" run -t pipe --sched fifo:10 --pin same -n 100 --dry-run -q -f csv >/dev/null ||
	fail "pipe --sched fifo:10 --pin same refused (it sleeps while it waits)"

# The throttling warning, both ways, without touching the machine's sysctl.
rt=/proc/sys/kernel/sched_rt_runtime_us
if [ "$IPCLAB_TEST_NS" = 1 ] && [ -r $rt ]; then
	for v in -1 950000; do
		echo "$v" >"$TMPDIR/rt_runtime"
		mount --bind "$TMPDIR/rt_runtime" $rt || { fail "cannot bind-mount over $rt"; break; }
		err=$("$IPCLAB" run -t pipe --sched fifo:10 -n 100 --dry-run -f csv 2>&1 >/dev/null)
		other=$("$IPCLAB" run -t pipe --sched other -n 100 --dry-run -f csv 2>&1 >/dev/null)
		umount $rt
		if [ "$v" = -1 ]; then
			echo "$err" | grep -q 'RT throttling is off' ||
				fail "sched_rt_runtime_us = -1: no throttling warning: $err"
			echo "$other" | grep -q 'RT throttling' &&
				fail "throttling warning without a realtime policy: $other"
		else
			echo "$err" | grep -q 'RT throttling' && fail "throttling warning with sched_rt_runtime_us = $v: $err"
		fi
	done
	echo "ok   RT throttling warning shown for -1, not for 950000"
else
	echo "skip RT throttling warning: needs a private mount namespace (root) to stand in for $rt"
fi
echo "totals: ${#spinners[@]} spinning transports, $refusals unsafe combinations refused; known bugs (XFAIL) $xfails"
finish
