# SPDX-License-Identifier: MIT
# Shared by the fault-injection tests: a strict leftovers check, runs that
# carry their own tag, waits with deadlines (never sleep-and-hope), and the
# transports that can run here. Source it first thing from a tests/faults
# script: it sources tests/lib/common.sh, which runs the script in private
# namespaces (as root) so that other ipclab runs on the machine are not seen.
. "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"

# Reproducible randomness: FAULT_SEED=N repeats a sequence of choices.
FAULT_SEED=${FAULT_SEED:-$(( $(date +%s%N) % 32768 ))}
RANDOM=$FAULT_SEED
echo "seed $FAULT_SEED (FAULT_SEED=$FAULT_SEED repeats these choices)"

# fault MSG: a failure, unless tests/faults/known_bugs lists it (XFAIL).
xfails=0
fault() {
	local re why known=${FAULT_KNOWN:-$(dirname "${BASH_SOURCE[0]}")/known_bugs}
	if [ "${FAULT_STRICT:-0}" != 1 ] && [ -r "$known" ]; then
		while IFS=$'\t' read -r re why; do
			case $re in '#'* | '') continue ;; esac
			if echo "$1" | grep -Eq -- "$re"; then
				xfails=$((xfails + 1))
				echo "XFAIL: $1"
				echo "       (known: $why)"
				return 0
			fi
		done <"$known"
	fi
	fail "$1"
}

# FAULT_OPTS="-O key=value ...": options for every run of the kill tests
# (FAULT_TRANSPORTS=dbus FAULT_OPTS="-O via=bus": through the bus daemon).
read -r -a fault_opts <<<"${FAULT_OPTS:-}"

# Nanoseconds, monotonic enough for 2-second bounds (bash's own clock: the
# helpers below start no program, they run in every step's wait loops).
now_ns() { local t=${EPOCHREALTIME/./}; echo $(( 10#$t * 1000 )); }

# rand_between LO HI: a uniform integer in [LO, HI].
rand_between() { echo $(( $1 + (RANDOM * 32768 + RANDOM) % ($2 - $1 + 1) )); }

# The state letter (R, S, T, Z...) of /proc/PID/stat into proc_st, without a
# subshell; false, proc_st empty, when the pid is gone.
stat_state() {
	local s
	proc_st=
	{ read -r s <"/proc/$1/stat"; } 2>/dev/null || return 1
	s=${s##*) }
	proc_st=${s%% *}
}

# Process state letter, or nothing when the pid is gone.
proc_state() {
	stat_state "$1"
	echo "$proc_st"
}

# Alive and not a zombie.
proc_alive() {
	stat_state "$1" && [ -n "$proc_st" ] && [ "$proc_st" != Z ] && [ "$proc_st" != X ]
}

# Processes whose environment holds IPCLAB_FAULT_RUN=$1: every process of
# the ipclab run started with that tag, however deep, reparented or not.
tagged_procs() {
	local f p
	while read -r f; do
		p=${f#/proc/}
		p=${p%/environ}
		proc_alive "$p" && echo "$p"
	done < <(grep -lsxzF "IPCLAB_FAULT_RUN=$1" /proc/[0-9]*/environ 2>/dev/null)
}

# Everything a run could leave behind. In the private namespaces every entry
# of /dev/shm, /dev/mqueue and ipcs is this test's; outside them only the
# ipclab-named ones are (common.sh's view).
strict_leftovers() {
	local f n
	if [ "$IPCLAB_TEST_NS" = 1 ]; then
		for f in /dev/shm/* /dev/shm/.[!.]* /dev/mqueue/* /dev/mqueue/.[!.]*; do
			[ -e "$f" ] || [ -L "$f" ] || continue
			n=${f##*/}
			case $f in /dev/shm/*) echo "shm $n" ;; *) echo "mq $n" ;; esac
		done
		sysv_objects
	else
		for f in /dev/shm/* /dev/mqueue/*; do
			n=${f##*/}
			case $f:${n,,} in /dev/shm/*:*ipclab* | /dev/shm/*:*ipcring* | /dev/shm/*:*qb-*) echo "shm $n" ;;
			/dev/mqueue/*:*ipclab*) echo "mq $n" ;;
			esac
		done
	fi
	for f in "$TMPDIR"/ipclab-*; do
		[ -e "$f" ] || [ -L "$f" ] && echo "dir $f"
	done
}

# wait_exit PID LIMIT_MS: poll until the process has exited (a zombie counts:
# it is our child and is reaped by `wait` afterwards). 0 if it exited in time.
wait_exit() {
	local pid=$1 end=$(( $(now_ns) + $2 * 1000000 ))
	while proc_alive "$pid"; do
		[ "$(now_ns)" -lt "$end" ] || return 1
		sleep 0.005
	done
	return 0
}

# wait_children PID N LIMIT_MS: print the pids of PID's ipclab children (the
# endpoints) once there are at least N of them, in the order they were
# forked; or fail. Children are looked at only once the run's private
# directory exists: before it, a child may be popen's (the environment
# probe), still called ipclab in the instant before it execs.
wait_children() {
	local pid=$1 n=$2 end=$(( $(now_ns) + $3 * 1000000 )) kids
	for (( ; ; )); do
		kids=
		compgen -G "$TMPDIR/ipclab-*" >/dev/null &&
			kids=$(ps -o pid=,comm= --ppid "$pid" --sort=start_time 2>/dev/null |
				awk '$2 == "ipclab" {print $1}')
		if [ "$(echo "$kids" | grep -c .)" -ge "$n" ]; then
			echo "$kids"
			return 0
		fi
		proc_alive "$pid" || return 1
		[ "$(now_ns)" -lt "$end" ] || return 1
		sleep 0.002
	done
}

# describe_tagged TAG: what each process of a run is doing (after a hang).
describe_tagged() {
	local p t
	for p in $(tagged_procs "$1"); do
		echo "  pid $p ppid $(awk '{print $4}' "/proc/$p/stat" 2>/dev/null) state $(proc_state "$p") wchan $(cat "/proc/$p/wchan" 2>/dev/null) stack: $(head -3 "/proc/$p/stack" 2>/dev/null | awk '{print $2}' | tr '\n' ' ')"
		# every thread of it (thread endpoints, a library's own threads)
		for t in /proc/"$p"/task/*; do
			[ "${t##*/}" = "$p" ] && continue
			echo "    thread ${t##*/} $(cat "$t/comm" 2>/dev/null) wchan $(cat "$t/wchan" 2>/dev/null) stack: $(head -3 "$t/stack" 2>/dev/null | awk '{print $2}' | tr '\n' ' ')"
		done
		# and the user-space stacks, where gdb is installed
		command -v gdb >/dev/null &&
			timeout 20 gdb -p "$p" -batch -ex 'thread apply all bt 8' 2>/dev/null | grep -E '^(Thread|#)' | head -60 | sed 's/^/    /'
	done
}

# kill_tagged TAG: SIGKILL whatever is left of a run (after a hang).
kill_tagged() {
	local p
	for p in $(tagged_procs "$1"); do
		kill -9 "$p" 2>/dev/null
	done
}

# Transports `ipclab list` shows that run with process endpoints, one a line;
# FAULT_TRANSPORTS="a b" (or a,b) keeps only those.
process_transports() {
	"$IPCLAB" list | awk -v only="${FAULT_TRANSPORTS:-}" '
		BEGIN { n = split(only, w, /[ ,]+/); for (i = 1; i <= n; i++) if (w[i] != "") keep[w[i]] = 1 }
		/^transports:/ {t = 1; next} /^patterns:/ {t = 0}
		t && /^  [^ -]/ && $2 !~ /thread-only/ && (only == "" || $1 in keep) {print $1}'
}

# sample_transports: the transports on stdin, one a line; with
# FAULT_TRANSPORT_SAMPLE=N (the sanitizer stage's smaller count), N of them
# chosen at random (FAULT_SEED repeats the choice), in their order.
sample_transports() {
	local n=${FAULT_TRANSPORT_SAMPLE:-0}
	if [ "$n" = 0 ]; then cat; return; fi
	awk -v n="$n" -v seed="$FAULT_SEED" 'BEGIN { srand(seed) } { tp[NR] = $0 }
		END { for (i = 1; i <= NR; i++) key[i] = rand()
			for (k = 0; k < n && k < NR; k++) { b = 0
				for (i = 1; i <= NR; i++) if (!(i in pick) && (b == 0 || key[i] < key[b])) b = i
				pick[b] = 1 }
			for (i = 1; i <= NR; i++) if (i in pick) print tp[i] }'
}

case ${FAULT_TRANSPORT_SAMPLE:-0} in *[!0-9]*)
	echo "FAULT_TRANSPORT_SAMPLE must be a number of transports, not '$FAULT_TRANSPORT_SAMPLE'" >&2; exit 2 ;;
esac

# Transports whose caps include $1 (e.g. spins).
transports_with() {
	"$IPCLAB" list | awk -v cap="$1" '/^transports:/ {t = 1; next} /^patterns:/ {t = 0}
		t && /^  [^ -]/ && ("," $2 ",") ~ ("," cap ",") {print $1}'
}

# runnable TP PATTERN: can this transport run here at all (a short run)?
# A cell skipped here (its probe: a kernel without the feature) is not.
runnable() {
	"$IPCLAB" run -t "$1" -p "$2" -n 200 -q -f csv 2>/dev/null | cell_ran
}

# The CSV of one run on stdin: did its cell run (status ok), not skip?
cell_ran() {
	awk -F, 'NR == 2 { ok = $9 == "ok" } END { exit !ok }'
}

# A valid JSON document (the file is complete)?
json_valid() {
	if command -v jq >/dev/null; then
		jq -e . "$1" >/dev/null 2>&1
	elif command -v python3 >/dev/null; then
		python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$1" 2>/dev/null
	else
		echo "note: neither jq nor python3: JSON checked by its last byte only" >&2
		[ "$(tail -c 2 "$1" | tr -d '\n')" = "}" ]
	fi
}
