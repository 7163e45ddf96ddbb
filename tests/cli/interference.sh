#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Interference, always measured (no --trace): a busy loop pinned to CPU 1
# for the whole window of a cell pinned to CPUs 0 and 1 shows as other
# tasks' time on CPU 1 (foreign_pct >= 20, noisy), the table marks the row
# and run warns once on stderr; CSV carries the columns. Without the loop
# the same cell reads under 10 %.
#
# The quiet half on a shared machine: other people's work lands on CPUs 0
# and 1 too, so a quiet reading over 10 % may be true. The cell is run up to
# 5 times and passes at the first reading under 10 %. A reading of 10 % or
# more fails only when the machine was otherwise idle in that run, which is
# measured apart from ipclab's arithmetic: all CPUs' task time from the
# aggregate /proc/stat line around the whole run, less the endpoints' own
# getrusage times from the result, under 5 % of one CPU over the run's wall
# time (ipclab's own start and warm-up count as others: that errs towards
# "busy", never towards a false failure). When every try
# found the machine busy the quiet half says so and is not counted.
. "$(dirname "$0")/../lib/common.sh"
command -v jq >/dev/null || { echo "skip: no jq"; exit 77; }
command -v taskset >/dev/null || { echo "skip: no taskset"; exit 77; }
taskset -c 0 true 2>/dev/null && taskset -c 1 true 2>/dev/null ||
	{ echo "skip: CPUs 0 and 1 are not both usable here"; exit 77; }
dir=$(mktemp -d)
hog=
stop_hog() {
	[ -n "$hog" ] || return 0
	kill "$hog" 2>/dev/null
	wait "$hog" 2>/dev/null
	hog=
}
trap 'stop_hog; rm -rf "$dir"' EXIT
before=$(leftovers)
cell=(-t pipe -p pingpong --pin 0:1 -d 1s --warmup 100)

# the busy loop, on CPU 1 and running before the cell starts (bounded wait)
taskset -c 1 sh -c 'while :; do :; done' &
hog=$!
for _ in $(seq 200); do
	read -r st cpu < <(awk '{print $3, $39}' "/proc/$hog/stat" 2>/dev/null)
	[ "${st:-}" = R ] && [ "${cpu:-}" = 1 ] && break
	sleep 0.02
done
[ "${st:-}" = R ] && [ "${cpu:-}" = 1 ] || fail "the busy loop is not running on CPU 1 ($st $cpu)"

# 1. JSON: CPU 1 is another task's for most of the window
"$IPCLAB" run "${cell[@]}" -f json -o "$dir/hog.json" 2>"$dir/hog.err" ||
	fail "run with the busy loop: $(head -3 "$dir/hog.err")"
# (CPU 1 need not be the worst: others' work may take CPU 0 as well)
if jq -e '.results[0].interference | .method == "per_cpu" and
	.foreign_pct >= 20 and .noisy == true and
	(.per_cpu | map(select(.cpu == 1))[0].foreign_pct >= 20)' "$dir/hog.json" >/dev/null; then
	echo "ok   busy loop on CPU 1: $(jq -c '.results[0].interference | {foreign_pct, foreign_cpu, endpoint_wait_pct, noisy}' "$dir/hog.json")"
else
	fail "busy loop on CPU 1 not seen: $(jq -c '.results[0].interference' "$dir/hog.json")"
fi
# run warns once, after the run, naming the worst cell's CPU
if [ "$(grep -c 'warning: .*cells shared their endpoints' "$dir/hog.err")" = 1 ] &&
   grep -q 'warning: 1 of 1 cells .*(worst: pipe/pingpong 64B, cpu[01]:[0-9]*%' "$dir/hog.err"; then
	echo "ok   run warned once: $(grep -o 'worst: [^)]*' "$dir/hog.err")"
else
	fail "run did not warn once: $(cat "$dir/hog.err")"
fi
# -q: the rows still say noise, the warning is not printed
"$IPCLAB" run "${cell[@]}" -q -f json -o "$dir/hogq.json" 2>"$dir/hogq.err" ||
	fail "run -q with the busy loop: $(head -3 "$dir/hogq.err")"
if [ ! -s "$dir/hogq.err" ] && jq -e '.results[0].interference.noisy == true' "$dir/hogq.json" >/dev/null; then
	echo "ok   -q: no warning, the record says noisy"
else
	fail "-q: stderr '$(cat "$dir/hogq.err")', noisy $(jq -c '.results[0].interference.noisy' "$dir/hogq.json")"
fi

# 2. the table marks the row, the legend says why; CSV has the columns
"$IPCLAB" run "${cell[@]}" >"$dir/hog.txt" 2>/dev/null || fail "table run failed"
# (one word, beside CPU%: the busy/CPU column stays last)
head -1 "$dir/hog.txt" | grep -Eq 'CPU% +noise +cs/s +busy/CPU$' &&
	grep -Eq '^pipe .* cpu[01]:[0-9]+% +[0-9.]+k? +[0-9]+/[0-9]+$' "$dir/hog.txt" &&
	grep -q '^noise = other tasks took' "$dir/hog.txt" &&
	echo "ok   table: $(grep -Eo 'cpu[01]:[0-9]+%' "$dir/hog.txt")" ||
	fail "table does not mark the row: $(cat "$dir/hog.txt")"
"$IPCLAB" run "${cell[@]}" -f csv -o "$dir/hog.csv" 2>/dev/null || fail "csv run failed"
# interference_noisy is the last column (no quoted commas after it)
csv_noisy=$(awk -F, 'NR == 1 && $NF == "interference_noisy" { c = 1 } NR == 2 && c { print $NF }' \
		"$dir/hog.csv")
[ "$csv_noisy" = true ] && echo "ok   csv: interference_noisy true" ||
	fail "csv: interference_noisy is '$csv_noisy'"

stop_hog

# 3. quiet: the same cell without the loop
task_ticks() { awk '$1 == "cpu" { print $2 + $3 + $4 }' /proc/stat; }
hz=$(getconf CLK_TCK)
quiet=
for try in 1 2 3 4 5; do
	t0=$(task_ticks) w0=$(date +%s%N)
	"$IPCLAB" run "${cell[@]}" -f json -o "$dir/quiet.json" 2>"$dir/quiet.err" ||
		{ fail "quiet run: $(head -3 "$dir/quiet.err")"; break; }
	t1=$(task_ticks) w1=$(date +%s%N)
	# others: every CPU's task time around the whole run but the endpoints'
	# over their window, as % of one CPU over the run's wall time
	read -r fp others < <(jq -r --argjson d $((t1 - t0)) --argjson hz "$hz" \
		--argjson wall $((w1 - w0)) '.results[0] | [.interference.foreign_pct,
		 (($d * 1e9 / $hz - ([.sides[] | .user_ns + .sys_ns] | add)) / $wall * 100)] | @tsv' \
		"$dir/quiet.json" 2>/dev/null)
	if ! [[ "${fp:-}" =~ ^[0-9.e+-]+$ && "${others:-}" =~ ^[0-9.e+-]+$ ]]; then
		fail "quiet (try $try): no foreign_pct: $(jq -c '.results[0].interference' "$dir/quiet.json")"
		quiet=bad
		break
	fi
	if awk -v f="$fp" 'BEGIN { exit !(f < 10) }'; then
		quiet=ok
		echo "ok   quiet (try $try): foreign_pct $fp"
		break
	fi
	if awk -v o="$others" 'BEGIN { exit !(o < 5) }'; then
		quiet=bad
		fail "quiet (try $try): foreign_pct $fp on an otherwise idle machine (others ${others}% of a CPU)"
		break
	fi
	echo "     quiet try $try: foreign_pct $fp, but other work took ${others}% of a CPU: again"
done
[ -n "$quiet" ] || echo "note: the machine was busy in every quiet try; the quiet reading was not checked"

after=$(leftovers)
new=$(new_leftovers "$before" "$after")
[ -z "$new" ] || fail "left behind: $new"
finish
