#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# -p cycle: every xrun gets one cause (metrics.xrun_causes adds up to
# xruns) and each stage the xruns it made (docs/output.md). A stage whose
# work is longer than the period (-O think_stage) makes them by its work,
# in a chain and a fan, in threads and processes; a timer forced late
# (-O timer_slack) makes timer_late ones; untraced, preempted is null and
# the table says it is not known; under --trace, a CPU hog pinned beside
# the stage makes preempted ones, blamed on that stage. No speed asserted.
. "$(dirname "$0")/../lib/common.sh"
command -v jq >/dev/null || { echo "skip: no jq"; exit 77; }
dir=$(mktemp -d)
hog=
trap '[ -n "$hog" ] && kill "$hog" 2>/dev/null; rm -rf "$dir"' EXIT
before=$(leftovers)

. "$(dirname "$0")/../lib/cycle_run.sh"

# each xrun once: the causes (preempted null untraced) add up to xruns,
# and each stage's xruns are its wait, work and preemption
adds_up='.results[0].metrics as $m | ($m.xrun_causes | [.[] | values] | add) == $m.xruns and
	$m.xrun_causes.late_start == $m.late_starts and
	all($m.stages[]; .xruns_caused == ([.xrun_causes[] | values] | add)) and
	([$m.stages[].xruns_caused] | add) <= $m.xruns'

# 1. stage 2 of 3 works 12 ms a 2 ms period (a margin for a think loop
# calibrated on a slow moment): its work makes every xrun of
# a cycle that ran (the others pass the buffer on at once); a chain in
# threads and processes (the driver reads what the stages published), a fan
for shape in chain fan; do
	for ends in thread process; do
		[ $shape/$ends = fan/process ] && continue
		run_json "busy-$shape-$ends" -t pipe -e $ends --clients 3 --period 2ms --think-ns 12ms \
			-O think_stage=2 -O shape=$shape -n 150 --warmup 1 || continue
		f=$dir/busy-$shape-$ends.json
		jq -e "$adds_up" "$f" >/dev/null || fail "$shape/$ends: the causes do not add up to xruns: $(jq -c '.results[0].metrics | {xruns, late_starts, xrun_causes, s: [.stages[] | {xruns_caused, xrun_causes}]}' "$f")"
		jq -e '.results[0].metrics as $m | $m.xruns == $m.cycles and $m.xrun_causes.stage_busy >= 1 and
			$m.xrun_causes.preempted == null and $m.xrun_causes.timer_late == 0 and
			$m.stages[1].xrun_causes.stage_busy == $m.xrun_causes.stage_busy and
			$m.stages[0].xrun_causes.stage_busy == 0 and $m.stages[2].xrun_causes.stage_busy == 0 and
			$m.stages[1].xrun_causes.preempted == null' "$f" >/dev/null &&
			echo "ok   $shape/$ends, stage 2 works 12ms of a 2ms period: $(jq -c '.results[0].metrics.xrun_causes | with_entries(select(.value != 0))' "$f")" ||
			fail "$shape/$ends: stage 2's work is not the cause: $(jq -c '.results[0].metrics | {xruns, xrun_causes, s: [.stages[] | .xrun_causes]}' "$f")"
	done
done

# the table: the causes under the cycle line, preempted said unknown, the
# stage that made them
"$IPCLAB" run -p cycle -t pipe -e thread --clients 3 --period 2ms --think-ns 12ms -O think_stage=2 \
	-n 150 --warmup 1 >"$dir/table.txt" 2>"$dir/table.err" || fail "table run: $(head -3 "$dir/table.err")"
grep -q '^    xrun causes: .*stage_busy [0-9]' "$dir/table.txt" &&
	grep -q 'preempted by other tasks: not known without --trace' "$dir/table.txt" &&
	grep -q '^    stage 2 (client 1): .*made [0-9]* xruns (its wait [0-9]*, its work [1-9]' "$dir/table.txt" &&
	echo "ok   table: $(grep 'xrun causes' "$dir/table.txt" | sed 's/^ *//')" ||
	fail "table lacks the xrun causes: $(grep -A4 'cycle chain' "$dir/table.txt")"

# 2. the driver's timer forced late (a 4 ms slack on a 1 ms period, no
# work): timer_late, and no stage's work to blame. A busy machine's tick
# ends the slack early and may delay the driver's wake from the stage as
# long: a cycle that shows it is enough, in one of three runs
timer=
for i in 1 2 3; do
	run_json "timer$i" -t pipe -e thread --clients 1 --period 1ms -O timer_slack=4ms -n 30 \
		--warmup 1 || break
	jq -e "$adds_up"' and .results[0].metrics.xrun_causes.stage_busy == 0' "$dir/timer$i.json" \
		>/dev/null || { fail "timer forced late: $(jq -c '.results[0].metrics | {xruns, xrun_causes}' "$dir/timer$i.json")"; break; }
	jq -e '.results[0].metrics.xrun_causes.timer_late >= 1' "$dir/timer$i.json" >/dev/null &&
		{ timer=$i; break; }
done
[ -n "$timer" ] && echo "ok   timer slack 4ms on a 1ms period (run $timer): $(jq -c '.results[0].metrics.xrun_causes | with_entries(select(.value != 0))' "$dir/timer$timer.json")" ||
	fail "timer forced late: no timer_late xrun: $(jq -c '.results[0].metrics | {xruns, timer_late_p50_ns, xrun_causes}' "$dir"/timer*.json)"

expect_usage_error "think_stage past the last stage" run -p cycle -t pipe --clients 3 --period 1ms -O think_stage=4

# 3. --trace, a hog pinned to the stage's CPU: the stage needs 1.5 ms of
# a 2 ms period and shares its CPU; the time the hog took is seen, and
# makes preempted xruns blamed on the stage (where --trace can run here)
if [ "$(nproc)" -ge 2 ]; then
	taskset -c 1 bash -c 'while :; do :; done' &
	hog=$!
	"$IPCLAB" run -p cycle -q -f json -o "$dir/traced.json" -t pipe --clients 1 --pin 0:1 \
		--period 2ms --think-ns 1500us -n 60 --warmup 2 --trace 2>"$dir/traced.err"
	rc=$?
	kill "$hog" 2>/dev/null
	wait "$hog" 2>/dev/null
	hog=
	if [ $rc != 0 ] && grep -q -- '--trace needs' "$dir/traced.err"; then
		echo "skip --trace part: $(head -1 "$dir/traced.err")"
	elif [ $rc != 0 ]; then
		fail "--trace with a hog: exit $rc: $(head -3 "$dir/traced.err")"
	else
		jq -e "$adds_up"' and .results[0].metrics.xrun_causes.preempted >= 1 and
			.results[0].metrics.stages[0].xrun_causes.preempted >= 1' "$dir/traced.json" >/dev/null &&
			echo "ok   --trace, a hog beside the stage: $(jq -c '.results[0].metrics.xrun_causes | with_entries(select(.value != 0))' "$dir/traced.json")" ||
			fail "--trace with a hog: no preempted xruns: $(jq -c '.results[0].metrics | {xruns, xrun_causes, s: [.stages[] | .xrun_causes]}' "$dir/traced.json")"
	fi
else
	echo "skip --trace part: one CPU"
fi

after=$(leftovers)
left=$(new_leftovers "$before" "$after")
[ -z "$left" ] || fail "left behind: $left"
finish
