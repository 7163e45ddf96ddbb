#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The watchdog: an endpoint stopped with SIGSTOP mid-run ends the run with a
# report naming it (exit 1) within 3 s, with --timeout 2s and with no
# timeout at all, and the stopped process is not left behind; a brief stop
# (200 ms) is tolerated; a stall (no message for longer than --timeout, made
# here by a 1/s send rate) ends the run with a "stalled" report, and a cell
# that crawls past --max-time with a --max-time report (each within 3 s
# past what a one-message run takes here), for process and
# thread endpoints. FAULT_STOPS (8) stopped runs over random transports.
. "$(dirname "$0")/lib.bash"

STOPS=${FAULT_STOPS:-8}
LIMIT_MS=3000
HANG_MS=8000
ROLES=(server client)

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
runs=0 reported=0 hangs=0 max_ms=0
baseline=$(strict_leftovers)
mapfile -t tps < <(process_transports)

after_run() {
	local what=$1 tag=$2 left
	left=$(tagged_procs "$tag" | sed 's/^/proc /')
	left+=$(new_leftovers "$baseline" "$(strict_leftovers)")
	if [ -n "$left" ]; then
		fault "$what: left behind: $(echo "$left" | tr '\n' ';')"
		kill_tagged "$tag"
		baseline=$(strict_leftovers)
	fi
}

# run_wait WHAT TAG PID T0: wait for the run with a deadline; sets rc, ms.
# After a hang (1) the run is SIGKILLed and what it left is removed.
run_wait() {
	local what=$1 tag=$2 pid=$3 t0=$4
	if ! wait_exit "$pid" $HANG_MS; then
		hangs=$((hangs + 1))
		fault "$what: no exit ${HANG_MS} ms after the stimulus (hang)"
		describe_tagged "$tag"
		kill_tagged "$tag"
		wait "$pid" 2>/dev/null
		[ "$IPCLAB_TEST_NS" = 1 ] && rm -rf /dev/shm/* /dev/mqueue/* "$TMPDIR"/ipclab-* && ipcrm --all
		baseline=$(strict_leftovers)
		return 1
	fi
	wait "$pid"
	rc=$?
	ms=$(( ($(now_ns) - t0) / 1000000 ))
	[ $ms -gt $max_ms ] && max_ms=$ms
	return 0
}

# stop_one TP PAT ROLE_INDEX TIMEOUT
stop_one() {
	local tp=$1 pat=$2 ri=$3 to=$4 tag="$$-stop-$((runs + 1))" pid kids victim t0 what
	what="$tp $pat SIGSTOP ${ROLES[$ri]} --timeout $to"
	runs=$((runs + 1))
	IPCLAB_FAULT_RUN=$tag "$IPCLAB" run -t "$tp" -p "$pat" -d 60s --timeout "$to" -q -f csv \
		>/dev/null 2>"$dir/err" &
	pid=$!
	# up to 30 s for the endpoints to appear: a start under CI's load took
	# over 5 s (the run then went on for its 60 s and was read as broken)
	if ! kids=$(wait_children $pid 2 30000); then
		wait $pid
		fault "$what: the endpoints did not start (exit $?): $(head -c 300 "$dir/err")"
		return
	fi
	victim=$(echo "$kids" | sed -n "$((ri + 1))p")
	sleep "0.$(rand_between 100 400)"
	kill -STOP "$victim"
	t0=$(now_ns)
	run_wait "$what" "$tag" $pid "$t0" || return
	if [ "$rc" != 1 ]; then
		fault "$what: exit $rc, expected 1: $(head -c 300 "$dir/err")"
	elif ! grep -Eq "(server|client) [0-9]+ \(pid $victim\) is stopped .*after [0-9]+ messages" "$dir/err"; then
		fault "$what: the report does not name the stopped side (pid $victim): $(head -c 300 "$dir/err")"
	elif [ $ms -gt $LIMIT_MS ]; then
		fault "$what: reported $ms ms after SIGSTOP (limit $LIMIT_MS)"
	else
		reported=$((reported + 1))
		echo "ok   $what: $ms ms: $(head -1 "$dir/err" | cut -c1-160)"
	fi
	kill -CONT "$victim" 2>/dev/null
	after_run "$what" "$tag"
}

for (( k = 0; k < STOPS; k++ )); do
	tp=${tps[$(( RANDOM % ${#tps[@]} ))]}
	pats=(stream pingpong)
	runnable "$tp" "${pats[$((k % 2))]}" || { k=$((k - 1)); continue; }
	stop_one "$tp" "${pats[$((k % 2))]}" $(( (k / 2) % 2 )) $( [ $((k % 4)) = 3 ] && echo 0 || echo 2s)
done

# A stop shorter than the detection threshold (1 s) is no failure.
tag="$$-brief"
IPCLAB_FAULT_RUN=$tag "$IPCLAB" run -t pipe -p pingpong -d 1500ms --timeout 2s -q -f csv \
	>/dev/null 2>"$dir/err" &
pid=$!
if kids=$(wait_children $pid 2 30000); then
	sleep 0.2
	victim=$(echo "$kids" | tail -1)
	kill -STOP "$victim"
	sleep 0.2
	kill -CONT "$victim"
	run_wait "brief SIGSTOP" "$tag" $pid "$(now_ns)" || rc=hang
	[ "$rc" = 0 ] || fault "a 200 ms SIGSTOP failed the run (exit $rc): $(head -c 300 "$dir/err")"
	[ "$rc" = 0 ] && echo "ok   a 200 ms SIGSTOP of the client is tolerated"
else
	wait $pid
	fault "brief SIGSTOP: the endpoints did not start"
fi
after_run "brief SIGSTOP" "$tag"

# What a run of one message takes here from start to exit (start-up, the
# machine's checks, teardown; seconds under a sanitizer on a loaded
# machine): the stall and the crawl below are timed from the command's
# start, so their limit is LIMIT_MS past that, not past the command's start.
startup_ms() {
	local t0 ms
	t0=$(now_ns)
	"$IPCLAB" run -t pipe -p pingpong -n 1 -e "$1" -q -f csv >/dev/null 2>&1
	ms=$(( ($(now_ns) - t0) / 1000000 ))
	echo "$ms"
}

# A stall: one message a second, --timeout 500ms.
for ep in process thread; do
	tag="$$-stall-$ep"
	base=$(startup_ms $ep)
	t0=$(now_ns)
	IPCLAB_FAULT_RUN=$tag "$IPCLAB" run -t pipe -p pingpong --rate 1/s -n 10 --timeout 500ms \
		-e $ep -q -f csv >/dev/null 2>"$dir/err" &
	run_wait "stall $ep" "$tag" $! "$t0" || continue
	if [ "$rc" != 1 ] || ! grep -q 'stalled: no message moved for' "$dir/err"; then
		fault "stall ($ep endpoints): exit $rc, expected 1 with a stall report: $(head -c 300 "$dir/err")"
	elif [ $ms -gt $((LIMIT_MS + base)) ]; then
		fault "stall ($ep endpoints): reported after $ms ms (limit $LIMIT_MS + a one-message run's $base)"
	else
		echo "ok   stall ($ep endpoints) reported after $ms ms (a one-message run: $base ms): $(head -1 "$dir/err" | cut -c1-100)"
	fi
	after_run "stall $ep" "$tag"
done

# A crawl: a message every 200 ms moves too often for --timeout (10 s) but
# the whole cell would take 4 s; --max-time 1s ends it with a report.
for ep in process thread; do
	tag="$$-overrun-$ep"
	base=$(startup_ms $ep)
	t0=$(now_ns)
	IPCLAB_FAULT_RUN=$tag "$IPCLAB" run -t pipe -p pingpong --rate 5/s -n 20 --max-time 1s \
		-e $ep -q -f csv >/dev/null 2>"$dir/err" &
	run_wait "overrun $ep" "$tag" $! "$t0" || continue
	if [ "$rc" != 1 ] || ! grep -q 'longer than --max-time 1.0 s' "$dir/err"; then
		fault "overrun ($ep endpoints): exit $rc, expected 1 with a --max-time report: $(head -c 300 "$dir/err")"
	elif [ $ms -lt 1000 ] || [ $ms -gt $((LIMIT_MS + base)) ]; then
		fault "overrun ($ep endpoints): reported after $ms ms (expected 1000 to $LIMIT_MS + a one-message run's $base)"
	else
		echo "ok   overrun ($ep endpoints) reported after $ms ms (a one-message run: $base ms): $(head -1 "$dir/err" | cut -c1-100)"
	fi
	after_run "overrun $ep" "$tag"
done

echo "totals: stopped runs $runs, reported by name $reported; hangs $hangs; slowest report ${max_ms} ms; known bugs (XFAIL) $xfails"
finish
