#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# SIGINT, SIGTERM, SIGHUP, SIGQUIT or SIGPIPE to the parent at a random
# moment of a three-cell run written as JSON with -o: the run ends within
# 2 s with exit 128+N (or 0 when it had already finished), and the file is either absent or complete,
# valid JSON holding only complete cells (all of them after exit 0), with no
# temporary file beside it. No process and nothing named is left.
# FAULT_SIGNALS (20) runs; FAULT_SEED repeats the random choices.
. "$(dirname "$0")/lib.bash"

RUNS=${FAULT_SIGNALS:-20}
LIMIT_MS=2000
HANG_MS=6000
CELLS=3

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
runs=0 interrupted=0 completed=0 hangs=0 slow=0 absent=0 partial=0 bad_json=0 max_ms=0

mapfile -t tps < <(process_transports)
[ ${#tps[@]} -ge $CELLS ] || { echo "fewer than $CELLS transports"; exit 1; }
declare -A usable=()

# CELLS distinct transports that run here with pattern $1, comma-separated.
pick_transports() {
	local pat=$1 picked=() tp tries=0
	while [ ${#picked[@]} -lt $CELLS ] && [ $tries -lt 200 ]; do
		tries=$((tries + 1))
		tp=${tps[$(( RANDOM % ${#tps[@]} ))]}
		[[ " ${picked[*]} " == *" $tp "* ]] && continue
		if [ -z "${usable[$tp/$pat]:-}" ]; then
			runnable "$tp" "$pat" && usable[$tp/$pat]=1 || usable[$tp/$pat]=0
		fi
		[ "${usable[$tp/$pat]}" = 1 ] && picked+=("$tp")
	done
	(IFS=,; echo "${picked[*]}")
}

# json_cells FILE: "N STATUSES" - the number of results and their statuses
# ("- -" when there is no JSON tool to ask).
json_cells() {
	if command -v jq >/dev/null; then
		jq -r '"\(.results | length) \([.results[].status] | unique | join(","))"' "$1"
	elif command -v python3 >/dev/null; then
		python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))["results"]
print(len(r), ",".join(sorted({x["status"] for x in r})))' "$1"
	else
		echo "- -"
	fi
}

check_output() {
	local what=$1 rc=$2 out=$dir/r.json n st extra
	extra=$(ls -A "$dir" | grep -v '^r\.json$' | grep -v '^err$')
	[ -z "$extra" ] || fault "$what: stray files beside the output: $extra"
	if [ ! -e "$out" ]; then
		absent=$((absent + 1))
		[ "$rc" = 0 ] && fault "$what: exit 0 but no output file"
		return
	fi
	if ! json_valid "$out"; then
		bad_json=$((bad_json + 1))
		fault "$what: $out is not complete JSON ($(wc -c <"$out") bytes)"
		return
	fi
	read -r n st < <(json_cells "$out")
	if [ "$n" = - ]; then
		return
	elif [ "$rc" = 0 ]; then
		[ "$n" = $CELLS ] && [ "$st" = ok ] || fault "$what: exit 0 with $n cells ($st), expected $CELLS ok"
	else
		partial=$((partial + 1))
		[ "$n" -lt $CELLS ] || fault "$what: interrupted, yet all $n cells reported"
		[ "$n" = 0 ] || [ "$st" = ok ] || fault "$what: interrupted run reports cells with status $st"
	fi
}

one_run() {
	local sig=$1 pat=$2 ep=$3 list tag="$$-sig-$((runs + 1))" pid delay ts rc ms left what
	list=$(pick_transports "$pat")
	delay=$(rand_between 0 900)
	what="SIG$sig after $delay ms to -t $list -p $pat -e $ep"
	rm -f "$dir"/r.json*
	runs=$((runs + 1))
	IPCLAB_FAULT_RUN=$tag "$IPCLAB" run -t "$list" -p "$pat" -e "$ep" -n 50k -q -f json \
		-o "$dir/r.json" 2>"$dir/err" >/dev/null &
	pid=$!
	wait_handler $pid "$sig" || fault "$what: ipclab never handled SIG$sig"
	sleep "$(printf '%d.%03d' $(( delay / 1000 )) $(( delay % 1000 )))"
	kill -"$sig" $pid 2>/dev/null
	ts=$(now_ns)
	if ! wait_exit $pid $HANG_MS; then
		hangs=$((hangs + 1))
		fault "$what: no exit ${HANG_MS} ms after the signal (hang)"
		describe_tagged "$tag"
		kill_tagged "$tag"
		wait $pid 2>/dev/null
		# the SIGKILLed parent could not clean up: that is the hang's
		[ "$IPCLAB_TEST_NS" = 1 ] && rm -rf /dev/shm/* /dev/mqueue/* "$TMPDIR"/ipclab-* && ipcrm --all
		baseline=$(strict_leftovers)
		return
	fi
	wait $pid
	rc=$?
	ms=$(( ($(now_ns) - ts) / 1000000 ))
	[ $ms -gt $max_ms ] && max_ms=$ms
	case $rc in
	0) completed=$((completed + 1)) ;;
	$((128 + $(kill -l "$sig"))))
		interrupted=$((interrupted + 1))
		if [ $ms -gt $LIMIT_MS ]; then
			slow=$((slow + 1))
			fault "$what: exit $ms ms after the signal (limit $LIMIT_MS)"
		fi ;;
	*) fault "$what: exit $rc, expected 0 or $((128 + $(kill -l "$sig"))): $(head -c 300 "$dir/err")" ;;
	esac
	check_output "$what" $rc
	left=$(tagged_procs "$tag" | sed 's/^/proc /')
	left+=$(new_leftovers "$baseline" "$(strict_leftovers)")
	if [ -n "$left" ]; then
		fault "$what: left behind: $(echo "$left" | tr '\n' ';')"
		kill_tagged "$tag"
		baseline=$(strict_leftovers)
	fi
}

baseline=$(strict_leftovers)
start=$(now_ns)
for (( k = 0; k < RUNS; k++ )); do
	sigs=(INT TERM HUP QUIT PIPE)
	pats=(stream pingpong)
	eps=(process process thread)
	one_run "${sigs[$((k % 5))]}" "${pats[$(( (k / 5) % 2 ))]}" "${eps[$((RANDOM % 3))]}"
done
echo "totals: runs $runs: interrupted $interrupted (exit 128+N), finished first $completed; output absent $absent, partial (complete cells only) $partial, not valid JSON $bad_json; hangs $hangs; slow $slow; slowest exit ${max_ms} ms after the signal; known bugs (XFAIL) $xfails; $(( ($(now_ns) - start) / 1000000000 )) s"
finish
