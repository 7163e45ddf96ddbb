#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# SIGKILL of ipclab itself (the parent, which no handler sees) at a random
# moment of a run, for every transport x pattern, then `ipclab clean`:
# afterwards nothing of the killed run remains (no process, nothing in
# /dev/shm, /dev/mqueue, SysV IPC or $TMPDIR/ipclab-*), and two live runs
# started beside it (fifo and sysv-mq, which leave the most behind when
# killed) keep every object they had and still end cleanly on SIGTERM.
# Each new run also sweeps quietly before it starts; clean is still asked
# every time, so that its own report is checked.
#
# CI size: FAULT_PARENT_KILLS (1) kills per transport x pattern;
# FAULT_TRANSPORTS, FAULT_PATTERNS narrow the set; FAULT_TRANSPORT_SAMPLE=N
# takes N transports at random (the sanitizer stage); FAULT_SEED repeats.
. "$(dirname "$0")/lib.bash"

KILLS=${FAULT_PARENT_KILLS:-1}
PATTERNS=${FAULT_PATTERNS:-stream pingpong}
LIMIT_MS=10000	# for the endpoints to follow their parent (an io_uring's teardown is slow on a loaded machine)
dir=$(mktemp -d)
trap 'rm -rf "$dir"; for p in ${live_pids:-}; do kill -9 $p 2>/dev/null; done' EXIT
kills=0 removed=0 leftover_runs=0 live_touched=0 unusable=0

baseline=$(strict_leftovers)

# Two live runs beside the kills: one cell each, long, with objects on disk,
# paced (100 messages/s) so that they hold their objects and keep using
# them without taking the CPUs from the runs that are killed.
live_pids=
for tp in fifo sysv-mq; do
	IPCLAB_FAULT_RUN="$$-live-$tp" "$IPCLAB" run -t $tp -p stream --rate 100/s -d 1h --max-time 0 -q \
		-f json -o "$dir/live-$tp.json" 2>"$dir/live-$tp.err" &
	live_pids+=" $!"
	wait_children $! 2 5000 >/dev/null || fail "live $tp run did not start: $(cat "$dir/live-$tp.err")"
done
with_live=$(strict_leftovers)
[ -n "$(new_leftovers "$baseline" "$with_live")" ] || fail "the live runs show no objects to protect"

mapfile -t tps < <(if [ -n "${FAULT_TRANSPORTS:-}" ]; then tr ' ,' '\n\n' <<<"$FAULT_TRANSPORTS"; else process_transports; fi |
	sample_transports)
for tp in "${tps[@]}"; do
	for pat in $PATTERNS; do
		if ! "$IPCLAB" run -t "$tp" -p "$pat" "${fault_opts[@]}" -n 200 -q -f csv >/dev/null 2>&1; then
			unusable=$((unusable + 1))
			continue
		fi
		for (( k = 0; k < KILLS; k++ )); do
			tag="$$-parent-$tp-$pat-$k"
			delay=$(rand_between 0 300)
			before=$(strict_leftovers)
			IPCLAB_FAULT_RUN=$tag "$IPCLAB" run -t "$tp" -p "$pat" "${fault_opts[@]}" -n 2M -q -f csv \
				>/dev/null 2>&1 &
			pid=$!
			sleep "$(printf '0.%03d' "$delay")"
			kill -9 $pid 2>/dev/null
			wait $pid 2>/dev/null
			kills=$((kills + 1))
			# its endpoints die with it (parent-death signal)
			end=$(( $(now_ns) + LIMIT_MS * 1000000 ))
			while [ -n "$(tagged_procs "$tag")" ] && [ "$(now_ns)" -lt "$end" ]; do
				sleep 0.01
			done
			[ -z "$(tagged_procs "$tag")" ] ||
				fail "-t $tp -p $pat: endpoints alive $LIMIT_MS ms after their parent's SIGKILL: $(tagged_procs "$tag" | tr '\n' ';')"
			out=$("$IPCLAB" clean 2>&1) || fail "clean after -t $tp -p $pat: exit $?: $out"
			n=$(echo "$out" | sed -n 's/^ipclab clean: removed \([0-9]*\) object.*/\1/p')
			removed=$((removed + ${n:-0}))
			echo "$out" | grep -q '^ipclab clean: removed [0-9]* objects\? of [0-9]* runs\? no longer alive; 2 live runs left alone' ||
				fail "clean did not leave the 2 live runs alone: $out"
			left=$(tagged_procs "$tag" | sed 's/^/proc /')
			left+=$(new_leftovers "$before" "$(strict_leftovers)")
			if [ -n "$left" ]; then
				leftover_runs=$((leftover_runs + 1))
				fail "SIGKILL after $delay ms of -t $tp -p $pat, then clean: left $(echo "$left" | tr '\n' ';')"
				kill_tagged "$tag"
			fi
			lost=$(comm -23 <(echo "$with_live" | sort) <(strict_leftovers | sort) | grep .)
			if [ -n "$lost" ]; then
				live_touched=$((live_touched + 1))
				fail "after -t $tp -p $pat: a live run's object was removed: $(echo "$lost" | tr '\n' ';')"
				with_live=$(strict_leftovers)
			fi
		done
	done
done

for p in $live_pids; do
	proc_alive $p || fail "live run $p died during the kills"
	kill -TERM $p
done
for p in $live_pids; do
	wait $p
	rc=$?
	[ $rc = 143 ] || fail "live run $p: exit $rc on SIGTERM, expected 143"
done
live_pids=
left=$(new_leftovers "$baseline" "$(strict_leftovers)")
[ -z "$left" ] || fail "after the live runs ended: left $(echo "$left" | tr '\n' ';')"
[ ! -e "$TMPDIR/.ipclab-runs-$(id -u)" ] || fail "the run registry remains: $(ls -A "$TMPDIR/.ipclab-runs-$(id -u)")"

# clean is quiet about nothing, refuses arguments, and never follows a
# registry directory that is not ours
out=$("$IPCLAB" clean) && echo "$out" | grep -q '^ipclab clean: removed 0 objects of 0 runs' ||
	fail "clean on an empty registry: $out"
expect_usage_error "clean with an argument" clean everything
mkdir -m 0777 "$dir/open" && out=$(IPCLAB_STATE_DIR=$dir/open "$IPCLAB" clean 2>&1)
[ $? = 1 ] && echo "$out" | grep -q 'mode 0700' || fail "clean used a registry others can write: $out"

# a dead run's record of a SysV queue that is now another user's is left
# alone (and said so); a record of a process that is not the one the run
# started (same pid, other start time) kills nothing
if command -v setpriv >/dev/null && command -v ipcmk >/dev/null; then
	qid=$(setpriv --reuid=65534 --regid=65534 --clear-groups ipcmk -Q 2>/dev/null | grep -o '[0-9]*$')
	if [ -n "$qid" ]; then
		reg=$TMPDIR/.ipclab-runs-$(id -u)
		mkdir -m 0700 "$reg"
		sleep 300 & sleeper=$!
		printf 'R 1 999999 1 %s %s %s %s %s\n+ 0 4 %s \n+ 1 7 -1 \n= 1 %s 1\n' \
			"$(cat /proc/sys/kernel/random/boot_id)" "$(stat -L -c %i /proc/self/ns/ipc)" \
			"$(stat -L -c %i /proc/self/ns/mnt)" "$(id -u)" "$(( $(date +%s) - 3600 ))" \
			"$qid" "$sleeper" >"$reg/run-999999-1"
		out=$("$IPCLAB" clean 2>&1)
		echo "$out" | grep -q "^skipped sysv-msg $qid (run pid 999999): now another's" ||
			fail "another user's queue not reported as skipped: $out"
		# (ipcs -i exits 0 whether or not the id exists)
		ipcs -q | awk -v id="$qid" '$2 == id { f = 1 } END { exit !f }' || fail "clean removed another user's queue $qid"
		proc_alive $sleeper || fail "clean killed a process that only had a dead child's pid"
		kill $sleeper; wait $sleeper 2>/dev/null
		ipcrm -q "$qid"
		[ ! -e "$reg" ] || fail "the forged run's file was not removed: $(ls -A "$reg")"
	fi
fi

echo "totals: kills $kills (transport x pattern pairs not runnable here: $unusable); objects removed by clean $removed; runs with leftovers $leftover_runs; live runs' objects touched $live_touched"
finish
