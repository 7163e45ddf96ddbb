#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# SIGKILL one endpoint (server or client) at a random moment: as soon as it
# exists (before the start barrier), mid-run, or near the end of a counted
# run (measurement over, teardown). Every time: exit 1 within 2 s of the
# kill, the report names the side and pid that died and after how many
# messages, no process of the run remains, and nothing is left in /dev/shm,
# /dev/mqueue, SysV IPC or $TMPDIR/ipclab-*. A kill that lands after the
# victim already finished may instead give exit 0 (end phase only).
#
# CI size: FAULT_KILLS (20) kills per pattern, spread over every transport
# that runs with process endpoints. FAULT_SOAK=N: N kills for every
# transport x pattern instead (`make soak`). FAULT_TRANSPORTS, FAULT_PATTERNS
# narrow the set; FAULT_SEED repeats a run's random choices.
. "$(dirname "$0")/lib.bash"

KILLS=${FAULT_KILLS:-20}
SOAK=${FAULT_SOAK:-0}
PATTERNS=${FAULT_PATTERNS:-stream pingpong}
LIMIT_MS=2000		# the report must come this soon after the kill
HANG_MS=6000		# past this the run counts as a hang and is killed
PHASES=(start mid end)
ROLES=(server client)

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
runs=0 hangs=0 slow=0 misreported=0 leftover_runs=0 finished_first=0 max_ms=0
declare -A killed=() calib=() usable=()
declare -A phase_n=()

# usable TP PAT: can it run here? Asked once per pair; a pair that cannot
# run (a kernel without the feature) is skipped with its reason.
pair_usable() {
	local key=$1/$2 err
	if [ -z "${usable[$key]:-}" ]; then
		if err=$("$IPCLAB" run -t "$1" -p "$2" "${fault_opts[@]}" -n 200 -q -f csv 2>&1 >"$dir/usable.csv") &&
			cell_ran <"$dir/usable.csv"; then
			usable[$key]=1
		else
			[ -n "$err" ] || err=$(awk -F, 'NR == 2 { print $9 ": " $10 }' "$dir/usable.csv")
			usable[$key]=0
			echo "skip $key: $(echo "$err" | head -1)"
		fi
	fi
	[ "${usable[$key]}" = 1 ]
}

# calib[TP/PAT] = "COUNT START_MS RUN_MS": a message count that keeps the
# pair busy for about 150 ms here, the fixed cost before messages move, and
# the run's expected length. Two runs (2k, 10k messages) separate the two.
calibrate() {
	local key=$1/$2 t0 t1 t2 per_k start n
	[ -n "${calib[$key]:-}" ] && return
	t0=$(now_ns)
	"$IPCLAB" run -t "$1" -p "$2" "${fault_opts[@]}" -n 2000 -q -f csv >/dev/null 2>&1
	t1=$(now_ns)
	"$IPCLAB" run -t "$1" -p "$2" "${fault_opts[@]}" -n 10000 -q -f csv >/dev/null 2>&1
	t2=$(now_ns)
	# microseconds per thousand messages, and the start-up cost in ms
	per_k=$(( ((t2 - t1) - (t1 - t0)) / 8000 ))
	[ $per_k -lt 1 ] && per_k=1
	start=$(( ((t1 - t0) / 1000 - 2 * per_k) / 1000 ))
	[ $start -lt 1 ] && start=1
	n=$(( 150000 * 1000 / per_k ))
	[ $n -lt 2000 ] && n=2000
	[ $n -gt 5000000 ] && n=5000000
	calib[$key]="$n $start $(( start + n * per_k / 1000000 ))"
}

sleep_ms() { sleep "$(printf '%d.%03d' $(( $1 / 1000 )) $(( $1 % 1000 )))"; }

# Everything left once the run is over; cleaned so the next run starts clean.
check_leftovers() {
	local what=$1 tag=$2 procs left end
	procs=$(tagged_procs "$tag")
	end=$(( $(now_ns) + 2000000000 ))
	while [ -n "$procs" ] && [ "$(now_ns)" -lt "$end" ]; do
		sleep 0.01
		procs=$(tagged_procs "$tag")
	done
	left=$(new_leftovers "$baseline" "$(strict_leftovers)")
	[ -n "$procs" ] && left+=$'\n'"$(echo "$procs" | sed 's/^/proc /')"
	left=$(echo "$left" | grep .)
	[ -z "$left" ] && return 0
	leftover_runs=$((leftover_runs + 1))
	fault "$what: left behind: $(echo "$left" | tr '\n' ';')"
	kill_tagged "$tag"
	clean_slate >/dev/null
}

# Start the next run clean: remove what a SIGKILLed parent (after a hang)
# or a leak left, saying what it was.
clean_slate() {
	local left
	left=$(new_leftovers "$baseline" "$(strict_leftovers)")
	[ -n "$left" ] && echo "  (removed after the hang: $(echo "$left" | tr '\n' ';'))"
	if [ "$IPCLAB_TEST_NS" = 1 ]; then
		rm -rf /dev/shm/* /dev/mqueue/* "$TMPDIR"/ipclab-*
		ipcrm --all 2>/dev/null
	else
		baseline=$(strict_leftovers)
	fi
}

# one_kill TP PAT PHASE ROLE_INDEX
one_kill() {
	local tp=$1 pat=$2 phase=$3 ri=$4 tag="$$-$((runs + 1))" args pid kids victim
	local t0 tk ms rc what c st w delay alive=1
	local role=${ROLES[$ri]}
	what="$tp $pat kill $role at $phase"
	if [ "$phase" = end ]; then
		calibrate "$tp" "$pat"
		read -r c st w <<<"${calib[$tp/$pat]}"
		args=(-n "$c")
		# the second half of the messages, the end and the teardown
		delay=$(rand_between $(( (st + w) / 2 )) $(( w + 20 )))
	else
		args=(-d 30s)
		delay=$( [ "$phase" = mid ] && rand_between 20 300 || echo 0)
	fi
	runs=$((runs + 1))
	phase_n[$phase]=$(( ${phase_n[$phase]:-0} + 1 ))
	t0=$(now_ns)
	IPCLAB_FAULT_RUN=$tag "$IPCLAB" run -t "$tp" -p "$pat" "${fault_opts[@]}" "${args[@]}" -q -f csv \
		>"$dir/out" 2>"$dir/err" &
	pid=$!
	# the server is forked first, then the client
	if ! kids=$(wait_children $pid $((ri + 1)) 5000); then
		wait $pid
		rc=$?
		if [ "$phase" = end ] && [ $rc = 0 ]; then
			finished_first=$((finished_first + 1))	# done before we looked
		else
			fault "$what: no $role process appeared (exit $rc): $(head -c 300 "$dir/err")"
		fi
		check_leftovers "$what" "$tag"
		return
	fi
	victim=$(echo "$kids" | sed -n "$((ri + 1))p")
	if [ "$phase" = end ]; then
		ms=$(( delay - ($(now_ns) - t0) / 1000000 ))
		[ $ms -gt 0 ] && sleep_ms $ms
	elif [ "$delay" -gt 0 ]; then
		sleep_ms "$delay"
	fi
	proc_alive "$victim" || alive=0
	kill -9 "$victim" 2>/dev/null
	tk=$(now_ns)
	if ! wait_exit $pid $HANG_MS; then
		hangs=$((hangs + 1))
		fault "$what: no exit ${HANG_MS} ms after the kill (hang); stderr: $(head -c 300 "$dir/err")"
		describe_tagged "$tag"
		[ -n "${FAULT_GDB:-}" ] && gdb -p $pid -batch -ex 'thread apply all bt' 2>/dev/null | grep '^#'
		kill_tagged "$tag"
		wait $pid 2>/dev/null
		# what the SIGKILLed parent could not remove is the hang's, not a leak
		clean_slate
		return
	fi
	wait $pid
	rc=$?
	ms=$(( ($(now_ns) - tk) / 1000000 ))
	[ $ms -gt $max_ms ] && max_ms=$ms
	if [ $rc = 0 ] && [ "$phase" = end ]; then
		finished_first=$((finished_first + 1))
		[ $alive = 1 ] && echo "note $what: the victim finished as it was killed (exit 0)"
	elif [ $rc != 1 ]; then
		fault "$what: exit $rc, expected 1: $(head -c 300 "$dir/err")"
	elif ! grep -Eq "(server|client) [0-9]+ \(pid $victim\) died: killed by signal 9 .*after [0-9]+ messages" "$dir/err"; then
		misreported=$((misreported + 1))
		fault "$what (pid $victim): report does not name the dead side and its message count: $(head -c 300 "$dir/err")"
	else
		w=$(grep -Eo "(server|client) [0-9]+ \(pid $victim\)" "$dir/err" | head -1 | cut -d' ' -f1)
		killed[$w]=$(( ${killed[$w]:-0} + 1 ))
		if [ $ms -gt $LIMIT_MS ]; then
			slow=$((slow + 1))
			fault "$what: reported $ms ms after the kill (limit $LIMIT_MS)"
		fi
	fi
	check_leftovers "$what" "$tag"
}

# kill number K of a balanced schedule: role alternates, phase every two
schedule() { echo "${PHASES[$(( ($1 / 2) % 3 ))]} $(( $1 % 2 ))"; }

mapfile -t tps < <(if [ -n "${FAULT_TRANSPORTS:-}" ]; then tr ', ' '\n\n' <<<"$FAULT_TRANSPORTS" | grep .;
		   else process_transports; fi)
[ ${#tps[@]} -gt 0 ] || { echo "no transports"; exit 1; }
baseline=$(strict_leftovers)
start=$(now_ns)
offset=$(( RANDOM % ${#tps[@]} ))
for pat in $PATTERNS; do
	if [ "$SOAK" -gt 0 ]; then
		for tp in "${tps[@]}"; do
			pair_usable "$tp" "$pat" || continue
			for (( k = 0; k < SOAK; k++ )); do
				one_kill "$tp" "$pat" $(schedule $k)
			done
			echo "$tp $pat: $SOAK kills, $runs runs so far, $fails failed"
		done
	else
		for (( k = 0, i = offset; k < KILLS && i < offset + 4 * KILLS; i++ )); do
			tp=${tps[$(( i % ${#tps[@]} ))]}
			pair_usable "$tp" "$pat" || continue
			one_kill "$tp" "$pat" $(schedule $k)
			k=$((k + 1))
		done
		offset=$(( i % ${#tps[@]} ))
	fi
done
secs=$(( ($(now_ns) - start) / 1000000000 ))
echo "totals: runs $runs (phases: start ${phase_n[start]:-0}, mid ${phase_n[mid]:-0}, end ${phase_n[end]:-0}), killed and reported: server ${killed[server]:-0}, client ${killed[client]:-0}; finished before the kill $finished_first; hangs $hangs; slow reports $slow; misreported $misreported; runs with leftovers $leftover_runs; slowest report ${max_ms} ms; known bugs (XFAIL) $xfails; ${#tps[@]} transports; ${secs} s"
finish
