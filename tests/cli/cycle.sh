#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# -p cycle: the schedule is absolute (cycles x period = the window), a stage
# that thinks longer than the period turns every cycle into an xrun, the
# knobs reach the record (period, FRAMES@RATE, shape, deadline), the JSON
# figures are consistent, a killed stage is reported like any dead peer,
# bad periods are one-line errors, and nothing is left behind. No speed is
# asserted.
. "$(dirname "$0")/../lib/common.sh"
command -v jq >/dev/null || { echo "skip: no jq"; exit 77; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
before=$(leftovers)

. "$(dirname "$0")/../lib/cycle_run.sh"

# 1. the null transport, threads: -d 1s is 500 periods of 2 ms (the count
# comes from the schedule), and they took at least 500 x 2 ms: the driver
# really sleeps to its absolute schedule (a loaded machine may stretch the
# window, never shorten it); every cycle is counted once
if run_json sched -t null -e thread --clients 2 --period 2ms -d 1s; then
	jq -e '.results[0] | .status == "ok" and .metrics.cycles == 500 and
		.metrics.elapsed_ns >= 0.98 * .metrics.cycles * .period_ns and
		.metrics.late_starts <= .metrics.xruns and .metrics.xruns <= .metrics.cycles' \
		"$dir/sched.json" >/dev/null &&
		echo "ok   500 cycles of 2ms in a $(jq '.results[0].metrics.elapsed_ns / 1e6' "$dir/sched.json") ms window" ||
		fail "cycles x period is not the window: $(jq -c '.results[0].metrics | {cycles, elapsed_ns}' "$dir/sched.json")"
fi

# 2. JSON present and consistent, for processes and threads, chain and fan
for shape in chain fan; do
	run_json "$shape" -t pipe,unix-stream -e process,thread --clients 3 --period 64@48000 \
		-n 300 -O shape=$shape || continue
	bad=$(jq -r '.results[] | select(.status != "ok" or .period != "64@48000" or
		.period_ns != 1333333 or .options.pattern.shape != "'$shape'" or
		((["cycles", "xruns", "late_starts", "xruns_per_million", "cycle_p50_ns", "cycle_p99_ns",
		   "cycle_max_ns", "timer_late_p99_ns", "deadline_ns", "stages"] - (.metrics | keys)) |
		 length) != 0 or
		.metrics.cycles != 300 or .metrics.xruns > .metrics.cycles or
		.metrics.late_starts > .metrics.xruns or .metrics.deadline_ns != 1333333 or
		.metrics.cycle_p50_ns > .metrics.cycle_p99_ns or .metrics.cycle_p99_ns > .metrics.cycle_max_ns or
		.metrics.lat_kind != "cycle" or (.metrics.stages | length) != 3 or
		any(.metrics.stages[]; .wait_p50_ns > .wait_p99_ns or .busy_p50_ns > .busy_p99_ns) or
		(.cycle_series.max_ns | length) == 0 or
		([.cycle_series.xruns[]] | add) != .metrics.xruns) |
		"\(.transport)/\(.endpoints): \(.status) \(.reason // "")"' "$dir/$shape.json")
	[ -z "$bad" ] && echo "ok   $shape: 4 results, fields present and consistent" ||
		fail "$shape: inconsistent records: $bad"
done

# the figures: completion over the run and the stages' wait and busy
if command -v gnuplot >/dev/null && [ -s "$dir/chain.json" ]; then
	"$IPCLAB" plot "$dir/chain.json" -o "$dir/plot" >"$dir/plot.out" 2>&1 ||
		fail "plot: $(head -3 "$dir/plot.out")"
	for f in cycle-completion cycle-stages; do
		[ -s "$dir/plot/$f.png" ] && [ -s "$dir/plot/$f.svg" ] && [ -s "$dir/plot/$f.dat" ] ||
			fail "plot: no $f figure"
	done
	# a line per stage of each of the 4 results, and the series of each
	[ "$(grep -c '/stage[0-9]' "$dir/plot/cycle-stages.dat")" = 12 ] ||
		fail "plot: cycle-stages.dat has $(grep -c '/stage' "$dir/plot/cycle-stages.dat") stage rows, expected 12"
	[ "$(grep -c '^time_s' "$dir/plot/cycle-completion.dat")" = 4 ] ||
		fail "plot: cycle-completion.dat does not hold the 4 series"
	echo "ok   plot: cycle-completion and cycle-stages"
fi

# 3. a stage busier than the period: every cycle is an xrun
if run_json late -t pipe -e thread --clients 1 --period 1ms --think-ns 3ms -n 20; then
	jq -e '.results[0] | .metrics.cycles == 20 and .metrics.xruns == 20 and
		.metrics.late_starts > 0 and .metrics.bytes == (20 - .metrics.late_starts) * 64 * 2' \
		"$dir/late.json" >/dev/null &&
		echo "ok   think 3ms > period 1ms: $(jq -c '.results[0].metrics | {cycles, xruns, late_starts}' "$dir/late.json")" ||
		fail "think > period: expected 20 xruns of 20: $(jq -c '.results[0].metrics | {cycles, xruns, late_starts}' "$dir/late.json")"
	# plot marks each point of late starts only (nothing ran) on the deadline
	if command -v gnuplot >/dev/null; then
		"$IPCLAB" plot "$dir/late.json" -o "$dir/lateplot" -q >"$dir/lateplot.out" 2>&1 ||
			fail "plot of a cycle of late starts: $(head -3 "$dir/lateplot.out")"
		want=$(jq '[.results[0].cycle_series | range(.max_ns | length) as $i |
			select(.max_ns[$i] == null and .xruns[$i] > 0)] | length' "$dir/late.json")
		got=$(awk -F'\t' '$2 == "NaN" && $3 == "1.000000"' "$dir/lateplot/cycle-completion.dat" 2>/dev/null | wc -l)
		[ "$want" -gt 0 ] && [ "$got" = "$want" ] &&
			echo "ok   plot: $got points of late starts marked on the 1 ms deadline" ||
			fail "plot: $got of $want points of late starts marked on the deadline"
	fi
fi

# the same in a fan of 2: late starts move nothing; a cycle that ran moved
# the buffer out to each stage and back (4 messages)
if run_json latefan -t pipe -e thread --clients 2 --period 1ms --think-ns 3ms -n 20 -O shape=fan; then
	jq -e '.results[0] | .metrics.cycles == 20 and .metrics.xruns == 20 and
		.metrics.bytes == (20 - .metrics.late_starts) * 64 * 4' "$dir/latefan.json" >/dev/null &&
		echo "ok   fan, think > period: every cycle an xrun, bytes of the cycles that ran" ||
		fail "fan, think > period: $(jq -c '.results[0].metrics | {cycles, xruns, late_starts, bytes}' "$dir/latefan.json")"
fi

# a period as long as the default no-progress --timeout is not a stall
if run_json longperiod -t pipe -e thread --period 3s --timeout 2s -n 2 --warmup 1; then
	jq -e '.results[0].metrics.cycles == 2' "$dir/longperiod.json" >/dev/null &&
		echo "ok   --period 3s with --timeout 2s: the watchdog waits for the schedule" ||
		fail "--period 3s: $(jq -c '.results[0].metrics.cycles' "$dir/longperiod.json")"
fi

# 4. -O deadline= reaches the record and the xruns: a deadline of 1 ns
if run_json dl -t pipe -e thread --period 1ms -O deadline=1ns -n 50; then
	jq -e '.results[0] | .options.pattern.deadline == "1ns" and .metrics.deadline_ns == 1 and
		.metrics.xruns == 50' "$dir/dl.json" >/dev/null &&
		echo "ok   -O deadline=1ns: every cycle late" ||
		fail "-O deadline=1ns: $(jq -c '.results[0] | {o: .options.pattern, x: .metrics.xruns}' "$dir/dl.json")"
fi

# 5. a stage killed mid-run is reported by name, exit 1
"$IPCLAB" run -p cycle -t pipe --clients 3 --period 1ms -d 60s -q >"$dir/kill.out" 2>"$dir/kill.err" &
pid=$!
kids=
for _ in $(seq 1 200); do	# the sides in the order they started: driver, stage 1, 2, 3
	kids=$(ps -o pid= --ppid $pid --sort=start_time | tr -d ' ')
	[ "$(echo "$kids" | grep -c .)" -ge 4 ] && break
	sleep 0.05
done
victim=$(echo "$kids" | sed -n 3p)
if [ -n "$victim" ]; then
	kill -9 "$victim"
	wait $pid
	rc=$?
	[ $rc = 1 ] || fail "stage killed: exit $rc, expected 1"
	grep -q "client 1 (pid $victim) died: killed by signal 9" "$dir/kill.err" &&
		echo "ok   stage killed: $(head -1 "$dir/kill.err")" ||
		fail "stage killed: report lacks who died: $(cat "$dir/kill.err")"
else
	kill -9 $pid
	fail "stage kill: no stage processes found"
fi

# --trace: each stage's woken-to-running from the scheduler's events (where
# --trace can run here: BTF, root, libbpf)
if [ -r /sys/kernel/btf/vmlinux ] && [ "$(id -u)" = 0 ] &&
   "$IPCLAB" run -t null -n 10 --trace -f json -o "$dir/trace-probe.json" >/dev/null 2>&1; then
	if run_json traced -t pipe --clients 2 --period 1ms -n 200 --trace; then
		jq -e '.results[0].metrics.stages | length == 2 and
			all(.[]; .woken_p50_ns != null and .woken_p50_ns <= .woken_p99_ns)' \
			"$dir/traced.json" >/dev/null &&
			echo "ok   --trace: woken-to-running per stage" ||
			fail "--trace: stages lack woken_*: $(jq -c '.results[0].metrics.stages' "$dir/traced.json")"
	fi
	jq -e '.results[0].metrics.stages[0].woken_p50_ns == null' "$dir/chain.json" >/dev/null ||
		fail "untraced cycle: woken_p50_ns should be null"
else
	echo "skip --trace part: --trace cannot run here"
fi

# the progress line on a terminal: cycles and xruns so far, once a second
if command -v script >/dev/null; then
	script -qc "'$IPCLAB' run -p cycle -t pipe -e thread --period 1ms -d 2500ms -f json -o '$dir/live.json'" \
		/dev/null >"$dir/live.tty" 2>&1 </dev/null
	live=$(tr '\r' '\n' <"$dir/live.tty" | grep -c 'pipe cycle: [0-9]* cycles, [0-9]* xruns')
	[ "$live" -ge 2 ] && echo "ok   progress line: $live updates with cycles and xruns" ||
		fail "progress line: $live updates with cycles and xruns, expected 2 or more: $(tr '\r' '\n' <"$dir/live.tty" | tail -3)"
fi

# 6. bad input: one line, exit 2, nothing left
expect_usage_error "period below the 20 us floor" run -p cycle -t pipe --period 1us
expect_usage_error "period too short for the stages" run -p cycle -t pipe --clients 16 --period 50us
expect_usage_error "FRAMES@RATE with a zero rate" run -p cycle -t pipe --period 64@0
expect_usage_error "period not a time" run -p cycle -t pipe --period soon
expect_usage_error "cycle without a period" run -p cycle -t pipe
expect_usage_error "period on another pattern" run -p pingpong -t pipe --period 1ms
expect_usage_error "cycle paced by --rate" run -p cycle -t pipe --period 1ms --rate 10/s
expect_usage_error "a lossy transport named" run -p cycle -t udp --period 1ms

after=$(leftovers)
left=$(new_leftovers "$before" "$after")
[ -z "$left" ] || fail "left behind: $left"
finish
