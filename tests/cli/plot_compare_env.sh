#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# ipclab env, compare and plot from the outside: env has every key and agrees
# with the kernel and the result files; compare on the stored results in
# tests/data gives the expected ratios and exit codes (0, 3 with
# --fail-above) and a well-formed markdown table; plot writes PNG and SVG of
# the size asked for, with data and scripts that redraw them; bad input is
# one line and exit 2.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/json.sh"
data=$(cd "$(dirname "$0")/../data" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# ---- env --------------------------------------------------------------------

env_keys="hostname virtualization kernel preempt preempt_dynamic preempt_source hz nohz
cpu_model cpus_online cpus_configured smt_siblings smt_active threads_per_core governor
cpu_mhz cpu_min_mhz cpu_max_mhz loadavg_1min clocksource clock_cost_ns clock_resolution_ns
sched_rt_runtime_us sched_rt_period_us rlimit_rtprio pipe_max_size_bytes mqueue_msg_max
mqueue_msgsize_max_bytes mqueue_queues_max msgmax_bytes msgmnb_bytes unix_max_dgram_qlen
rlimit_msgqueue_bytes rlimit_nofile glibc_version compiler ipclab_version ipclab_git_rev
caches warnings"

"$IPCLAB" env -f json >"$work/env.json" 2>"$work/err" || fail "env -f json: exit $?: $(cat "$work/err")"
# the value of a top-level key of env -f json, as written
env_val() { sed -n "s/^  \"$1\": \(.*\),\{0,1\}$/\1/p" "$work/env.json" | sed 's/,$//'; }
for k in $env_keys; do
	json_has "$work/env.json" "$k" || fail "env -f json: no key $k"
done
[ "$(env_val pipe_max_size_bytes)" = "$(cat /proc/sys/fs/pipe-max-size)" ] ||
	fail "env: pipe_max_size_bytes $(env_val pipe_max_size_bytes), kernel says $(cat /proc/sys/fs/pipe-max-size)"
[ "$(env_val mqueue_msg_max)" = "$(cat /proc/sys/fs/mqueue/msg_max 2>/dev/null || echo null)" ] ||
	fail "env: mqueue_msg_max $(env_val mqueue_msg_max)"
nofile=$(ulimit -Sn)
[ "$nofile" = unlimited ] && nofile='"unlimited"'
[ "$(env_val rlimit_nofile)" = "$nofile" ] || fail "env: rlimit_nofile $(env_val rlimit_nofile), ulimit -n says $nofile"
[ "$(env_val cpus_online)" = "$(getconf _NPROCESSORS_ONLN)" ] || fail "env: cpus_online $(env_val cpus_online)"
version=$("$IPCLAB" --version | awk '{print $2}')
[ "$(env_val ipclab_version)" = "\"$version\"" ] || fail "env: ipclab_version $(env_val ipclab_version), --version says $version"
if [ "$(env_val virtualization)" != '"none"' ]; then
	"$IPCLAB" env | grep -q '^  ! virtual machine' || fail "env: a VM and no warning about it"
fi
"$IPCLAB" env | grep -q '^ipc limits$' || fail "env: text has no 'ipc limits' section"

# a result file's "env" carries the same keys as env -f json
"$IPCLAB" run -t pipe -p pingpong -n 200 -q -f json -o "$work/run.json" >/dev/null 2>&1 ||
	fail "run -f json failed"
grep -o '^  "[a-z0-9_]*"' "$work/env.json" | sort >"$work/keys.env"
sed -n '/^  "env": {/,/^  },/p' "$work/run.json" | grep -o '^    "[a-z0-9_]*"' | sed 's/^  //' |
	sort >"$work/keys.run"
cmp -s "$work/keys.env" "$work/keys.run" ||
	fail "result file env keys differ from env -f json: $(diff "$work/keys.env" "$work/keys.run" | tr '\n' ' ')"
for k in $(tr -d ' "' <"$work/keys.env"); do
	grep -qF "\`$k\`" "$(dirname "$0")/../../docs/output.md" || fail "env key $k is not in docs/output.md"
done
echo "ok   env: $(wc -l <"$work/keys.env") keys, the same in result files, documented"

expect_usage_error "env -f yaml" env -f yaml
expect_usage_error "env with an argument" env extra

# ---- compare ------------------------------------------------------------------

before=$data/compare-before.json after=$data/compare-after.json
"$IPCLAB" compare "$before" "$after" >"$work/cmp.txt"
rc=$?
[ $rc = 0 ] || fail "compare: exit $rc, expected 0 without --fail-above"
grep -q 'no spread data (use --repeat)' "$work/cmp.txt" || fail "compare: no 'no spread data' note"
grep -q '^  posix-mq pingpong' "$work/cmp.txt" || fail "compare: the cell only in before is not listed"
grep -q 'sched=fifo:50' "$work/cmp.txt" || fail "compare: the cell only in after is not listed"
"$IPCLAB" compare --fail-above 10 "$before" "$after" >/dev/null
rc=$?
[ $rc = 3 ] || fail "compare --fail-above 10: exit $rc, expected 3 (pipe msgs/s 20 % worse)"
"$IPCLAB" compare --fail-above 25 "$before" "$after" >/dev/null
rc=$?
[ $rc = 0 ] || fail "compare --fail-above 25: exit $rc, expected 0 (worst beyond spread is 20 %)"
"$IPCLAB" compare --fail-above 5 -m cpu_ns_per_msg "$before" "$after" >/dev/null
rc=$?
[ $rc = 0 ] || fail "compare -m cpu_ns_per_msg --fail-above 5: exit $rc, expected 0 (CPU/msg did not get worse)"

# JSON: the ratios, one per metric
"$IPCLAB" compare -f json -m msgs_per_s,lat_p50_ns "$before" "$after" >"$work/cmp.json" ||
	fail "compare -f json: exit $?"
ratios=$(grep -o '"ratio": [0-9][0-9.]*' "$work/cmp.json" | awk '{print $2}' | tr '\n' ' ')
[ "$ratios" = "0.8 1.2 1.2 0.8 " ] || fail "compare -f json: ratios '$ratios', expected '0.8 1.2 1.2 0.8 '"

# markdown: one table, every row with the header's 7 columns, a --- row second
"$IPCLAB" compare -f markdown --fail-above 10 "$before" "$after" >"$work/cmp.md"
awk '
	/^\|/ { if (done) bad = "a table row after the table"; n++
		line = $0; gsub(/\\\|/, "", line); c = gsub(/\|/, "", line)
		if (n == 1) cols = c; else if (c != cols) bad = "row " n " has " c - 1 " columns, header " cols - 1
		if (n == 2 && $0 !~ /^\| --- \|/) bad = "second row is not the separator"
		next }
	n { done = 1 }
	END { if (n < 3) bad = "no table"; if (bad) { print bad; exit 1 } }
' "$work/cmp.md" || fail "compare -f markdown: $(awk '1' "$work/cmp.md" | head -3 | tr '\n' ' ')"
grep -q 'REGRESSION' "$work/cmp.md" || fail "compare -f markdown --fail-above 10: no REGRESSION row"

"$IPCLAB" compare -o "$work/cmp.out" "$before" "$after" >"$work/stdout" || fail "compare -o: exit $?"
[ -s "$work/cmp.out" ] && [ ! -s "$work/stdout" ] || fail "compare -o: not written to the file only"
echo "ok   compare: exit codes, ratios, markdown table"

expect_usage_error "compare with one file" compare "$before"
expect_usage_error "compare, missing file" compare "$before" "$work/nonexistent.json"
expect_usage_error "compare, not a result file" compare "$before" "$work/env.json"
expect_usage_error "compare --fail-above abc" compare --fail-above abc "$before" "$after"
expect_usage_error "compare -m unknown metric" compare -m lat_p42_ns "$before" "$after"
expect_usage_error "compare -f yaml" compare -f yaml "$before" "$after"

# ---- man page and completion ---------------------------------------------------------

man=$(dirname "$0")/../../docs/ipclab.1
sed 's/\\-/-/g' "$man" >"$work/man.txt"	# roff writes a hyphen as \-
for sub in "" plot compare env "suite seeds"; do
	for opt in $("$IPCLAB" $sub --help 2>&1 | grep -o -- '--[a-z][a-z-]*' | sort -u); do
		grep -qE -- "$opt([^a-z-]|$)" "$work/man.txt" ||
			fail "docs/ipclab.1 does not document ipclab ${sub:-run} $opt"
	done
done
if command -v groff >/dev/null; then
	warn=$(groff -man -Tutf8 -ww -z "$man" 2>&1)
	[ -z "$warn" ] || fail "docs/ipclab.1: groff warns: $warn"
fi

# completion: subcommands, and transports and patterns from this binary's list
complete_words() {	# words... -> what completes the last one
	bash -c '. "$0"; compopt() { :; }; COMP_WORDS=("$@"); COMP_CWORD=$(( $# - 1 )); _ipclab
		 printf "%s\n" "${COMPREPLY[@]}"' "$(dirname "$0")/../../docs/ipclab.bash-completion" "$@"
}
[ "$(complete_words "$IPCLAB" co)" = compare ] || fail "completion: 'co' does not complete to compare"
transports=$("$IPCLAB" list | awk '/^[a-z]+:$/ { s = $0; next } s == "transports:" && /^  [^ -]/ { print $1 }')
got=$(complete_words "$IPCLAB" run -t "" | grep -v '^all$')
[ -n "$transports" ] && [ "$got" = "$transports" ] ||
	fail "completion: -t offers '$(echo $got)', ipclab list has '$(echo $transports)'"
[ "$(complete_words "$IPCLAB" -p pi)" = pingpong ] || fail "completion: -p pi does not complete to pingpong"
[ "$(complete_words "$IPCLAB" run -t pipe,posix-m)" = pipe,posix-mq ] ||
	fail "completion: the second item of -t pipe,posix-m"
[ "$(complete_words "$IPCLAB" compare -f m)" = markdown ] || fail "completion: compare -f m"
echo "ok   man page documents every option of --help; completion"

# ---- plot ------------------------------------------------------------------------

small=$data/plot-small.json

# no gnuplot: one line naming the package, exit 2, nothing written
out=$(PATH=/nonexistent "$IPCLAB" plot "$small" -o "$work/nogp" 2>&1 >/dev/null)
rc=$?
if [ $rc != 2 ] || [ "$(printf '%s\n' "$out" | wc -l)" != 1 ] || [[ $out != *gnuplot-nox* ]]; then
	fail "plot without gnuplot: exit $rc, '$out' (expected exit 2, one line naming gnuplot-nox)"
elif [ -e "$work/nogp" ]; then
	fail "plot without gnuplot created $work/nogp"
else
	echo "ok   plot without gnuplot: $out"
fi
expect_usage_error "plot without -o" plot "$small"
expect_usage_error "plot --size 10x10" plot "$small" -o "$work/p" --size 10x10
expect_usage_error "plot --pivot with two words" plot "$small" -o "$work/p" --pivot size,pin
expect_usage_error "plot, missing file" plot "$work/nonexistent.json" -o "$work/p"

if ! command -v gnuplot >/dev/null; then
	echo "SKIP plot figures: gnuplot is not installed (make deps installs gnuplot-nox)"
	finish
fi

# width and height of a PNG, from its IHDR chunk
png_size() {
	local b
	b=($(od -An -tu1 -N24 "$1"))
	[ "${b[1]} ${b[2]} ${b[3]} ${b[12]} ${b[13]} ${b[14]} ${b[15]}" = "80 78 71 73 72 68 82" ] || {
		echo "not-a-png"; return; }
	echo "$(( (b[16] << 24) | (b[17] << 16) | (b[18] << 8) | b[19] ))x$(( (b[20] << 24) | (b[21] << 16) | (b[22] << 8) | b[23] ))"
}

check_figure() {	# dir name WxH
	local f=$1/$2 w=${3%x*} h=${3#*x}
	for ext in png svg dat gp; do
		[ -s "$f.$ext" ] || { fail "plot: $2.$ext missing or empty"; return; }
	done
	[ "$(png_size "$f.png")" = "$3" ] || fail "plot: $2.png is $(png_size "$f.png"), asked for $3"
	grep -q "width=\"$w\" height=\"$h\"" "$f.svg" || fail "plot: $2.svg is not ${w}x${h}: $(grep -m1 -o 'width="[0-9]*" height="[0-9]*"' "$f.svg")"
}

p=$work/plots
"$IPCLAB" plot "$small" -o "$p" --size 640x480 --pivot size,pin,cpu_pct_total >"$work/plot.out" 2>"$work/err"
rc=$?
[ $rc = 0 ] || fail "plot: exit $rc: $(cat "$work/err")"
for fig in latency-percentiles-rtt latency-histogram-rtt throughput-vs-size msgrate-vs-size cpu-per-msg \
	   heatmap-size_bytes-pin-cpu_pct_total-1 heatmap-size_bytes-pin-cpu_pct_total-2; do
	check_figure "$p" "$fig" 640x480
	grep -q "$fig.png" "$work/plot.out" || fail "plot: $fig not listed on stdout"
done
[ ! -e "$p/latency-percentiles-one_way.png" ] || fail "plot: a one-way figure from a file with round trips only"

# the p50 row of the percentile data is the run's own lat_p50_ns, in us
want=$(grep -o '"lat_p50_ns": [0-9]*' "$small" | awk '{printf "%.4f ", $2 / 1000}')
got=$(awk -F'\t' '$1 == "50.0000" { for (i = 3; i <= NF; i++) printf "%s ", $i }' "$p/latency-percentiles-rtt.dat")
[ -n "$want" ] && [ "$got" = "$want" ] || fail "plot: p50 row '$got', the file says '$want'"
# the heatmap holds the file's cpu_pct_total values (pipe: same/split x 64/1k)
cells=$(awk -F'\t' 'NR > 2 { for (i = 2; i <= NF; i++) n++ } END { print n }' "$p/heatmap-size_bytes-pin-cpu_pct_total-1.dat")
[ "$cells" = 4 ] || fail "plot: heatmap 1 has $cells values, expected 2 sizes x 2 pins"

# the script beside the figure redraws it on its own
rm -f "$p/cpu-per-msg.png" "$p/cpu-per-msg.svg"
(cd "$p" && gnuplot cpu-per-msg.gp) 2>"$work/err" || fail "gnuplot cpu-per-msg.gp: $(cat "$work/err")"
check_figure "$p" cpu-per-msg 640x480

# defaults: 1000x600, -q lists nothing; the run's own --pivot is not in this file
"$IPCLAB" plot -q "$small" -o "$work/default" >"$work/stdout" 2>"$work/err" || fail "plot -q: exit $?: $(cat "$work/err")"
[ ! -s "$work/stdout" ] || fail "plot -q wrote to stdout"
check_figure "$work/default" latency-percentiles-rtt 1000x600
expect_usage_error "plot --pivot with an unknown parameter" plot "$small" -o "$work/p2" --pivot size,nosuch,cpu_pct_total
echo "ok   plot: figures of the asked size, data and scripts beside them"
finish
