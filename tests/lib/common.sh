# SPDX-License-Identifier: MIT
# Shared by the shell tests: the binary, leftovers snapshots, assertions.
# Source it first thing (it runs the sourcing script again, once, in a
# private setting); $IPCLAB points at the built binary.
#
# Other runs of ipclab on the same machine must not show up as this test's
# leftovers, so each test gets its own $TMPDIR and, as root, its own IPC and
# mount namespaces with a fresh /dev/shm (tmpfs) and /dev/mqueue: there,
# `leftovers` sees exactly what this test created, whatever else runs.
# Processes are told apart by IPCLAB_TEST_TAG, which every ipclab the test
# starts inherits. IPCLAB_TEST_SHARED=1 keeps the machine-wide view.
set -u
IPCLAB=${IPCLAB:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/build/ipclab}
fails=0

if [ -z "${IPCLAB_TEST_TAG:-}" ]; then
	# outside: make the private directory, run the test inside, clean up
	IPCLAB_TEST_TAG=$(mktemp -d "${TMPDIR:-/tmp}/iltest.XXXXXX") || exit 1
	IPCLAB_TEST_HOST_IPC=$(readlink /proc/self/ns/ipc)
	export IPCLAB_TEST_TAG IPCLAB_TEST_HOST_IPC IPCLAB_TEST_NS=0
	ns=()
	if [ "$(id -u)" = 0 ] && [ "${IPCLAB_TEST_SHARED:-0}" != 1 ] &&
	   unshare --ipc --mount true 2>/dev/null; then
		IPCLAB_TEST_NS=1
		ns=(unshare --ipc --mount --propagation private)
	fi
	# a signal (the test runner's timeout) is handled once the test is over
	for sig in HUP INT TERM; do
		trap 'rm -rf "$IPCLAB_TEST_TAG"; exit $((128 + $(kill -l '$sig')))' $sig
	done
	"${ns[@]}" bash "$0" "$@"
	rc=$?
	rm -rf "$IPCLAB_TEST_TAG"
	exit $rc
fi
export TMPDIR=$IPCLAB_TEST_TAG

if [ "$IPCLAB_TEST_NS" = 1 ] && [ -z "${IPCLAB_TEST_NS_READY:-}" ]; then
	export IPCLAB_TEST_NS_READY=1
	mount -t tmpfs -o mode=1777 ipclab-test /dev/shm
	mkdir -p /dev/mqueue && mount -t mqueue ipclab-test /dev/mqueue
elif [ "$(id -u)" = 0 ] && ! mountpoint -q /dev/mqueue 2>/dev/null; then
	mkdir -p /dev/mqueue && mount -t mqueue none /dev/mqueue 2>/dev/null
fi

# ipclab processes this test started (they carry its tag), one pid a line,
# each after PREFIX when given. No program is started (this and leftovers
# run before and after each step of many tests; with ls, grep, sed, ipcs,
# awk, pgrep, tr, comm and sort a step's check cost 265 ms of CPU, 17 now).
test_procs() {
	local pre=${1:-} d c e
	for d in /proc/[0-9]*; do
		{ read -r c <"$d/comm"; } 2>/dev/null && [ "$c" = ipclab ] || continue
		while IFS= read -r -d '' e; do
			[ "$e" = "IPCLAB_TEST_TAG=$IPCLAB_TEST_TAG" ] && { echo "$pre${d#/proc/}"; break; }
		done 2>/dev/null <"$d/environ"
	done
}

# wait_handler PID SIG: wait (10 s at most) until PID handles SIG. A
# background job of a non-interactive shell starts with SIGINT and SIGQUIT
# ignored, so one sent before ipclab installs its handlers is lost (on a
# loaded machine the dynamic loader alone can take that long).
wait_handler() {
	local pid=$1 bit cgt k v i
	bit=$(( 1 << ($(kill -l "$2") - 1) ))
	for (( i = 0; i < 2000; i++ )); do
		cgt=
		while read -r k v; do
			[ "$k" = SigCgt: ] && { cgt=$v; break; }
		done 2>/dev/null <"/proc/$pid/status"
		[ -n "$cgt" ] || return 1
		(( 0x$cgt & bit )) && return 0
		sleep 0.005
	done
	return 1
}

# Everything ipclab could leave behind, one line each: its shared memory
# and queues by name, its private directories, every System V object (as
# ipcs shows them: key in hex, id) and this test's processes.
leftovers() {
	local f n
	for f in /dev/shm/*; do
		n=${f##*/}
		case ${n,,} in *ipclab* | *ipcring*) echo "shm $n" ;; esac
	done
	for f in /dev/mqueue/*; do
		n=${f##*/}
		case ${n,,} in *ipclab*) echo "mq $n" ;; esac
	done
	for f in "$TMPDIR"/ipclab-*; do
		[ -e "$f" ] || [ -L "$f" ] && echo "dir $f"
	done
	sysv_objects
	test_procs "proc "
}

# Every System V queue, semaphore set and segment, as ipcs shows them
# (key in hex, id), one "sysv KEY ID" line each, from /proc/sysvipc.
sysv_objects() {
	local k key id
	for k in msg sem shm; do
		while read -r key id _; do
			case $key in '' | *[!0-9-]*) continue ;; esac
			printf 'sysv 0x%08x %s\n' $((key & 0xffffffff)) "$id"
		done 2>/dev/null </proc/sysvipc/$k
	done
}

# Lines in $2 that are not in $1 (what a step left behind); false if none.
new_leftovers() {
	local -A was=()
	local l none=1
	while IFS= read -r l; do [ -z "$l" ] || was[$l]=1; done <<<"$1"
	while IFS= read -r l; do
		[ -z "$l" ] || [ -n "${was[$l]+x}" ] || { echo "$l"; none=0; }
	done <<<"$2"
	return $none
}

# scaled N: N (messages, rounds; 2000, 20k or 1M as -n takes them) at the
# size the test runs at: IPCLAB_TEST_SCALE percent of N (100 unless set;
# the sanitizer builds' make check sets 25), at least 1. A test that uses
# it asserts on the scaled figure, never on N.
scaled() {
	local n=$1 pct=${IPCLAB_TEST_SCALE:-100} mult=1
	case $pct in '' | *[!0-9]* | 0) echo "IPCLAB_TEST_SCALE must be a percentage above 0, not '$pct'" >&2; exit 2 ;; esac
	case $n in *k) mult=1000; n=${n%k} ;; *M) mult=1000000; n=${n%M} ;; esac
	n=$(( n * mult * pct / 100 ))
	[ "$n" -ge 1 ] || n=1
	echo "$n"
}

fail() {
	echo "FAIL: $*"
	fails=$((fails + 1))
}

# expect_usage_error "description" args...: exit 2, exactly one stderr line,
# nothing on stdout, no leftovers.
expect_usage_error() {
	local what=$1 out err rc before after
	shift
	before=$(leftovers)
	out=$(mktemp) err=$(mktemp)
	"$IPCLAB" "$@" >"$out" 2>"$err"
	rc=$?
	after=$(leftovers)
	if [ $rc != 2 ]; then
		fail "$what: exit $rc, expected 2 (ipclab $*)"
	elif [ "$(wc -l <"$err")" != 1 ]; then
		fail "$what: stderr has $(wc -l <"$err") lines, expected 1: $(head -c 300 "$err")"
	elif [ -s "$out" ]; then
		fail "$what: wrote to stdout"
	elif [ -n "$(new_leftovers "$before" "$after")" ]; then
		fail "$what: left behind: $(new_leftovers "$before" "$after")"
	else
		echo "ok   $what: $(cat "$err")"
	fi
	rm -f "$out" "$err"
}

finish() {
	if [ "$fails" -gt 0 ]; then
		echo "$fails check(s) failed"
		exit 1
	fi
	exit 0
}

# has_sqlite: true when this ipclab was built with its SQLite store.
has_sqlite() {
	! "$IPCLAB" db ls --db "$TMPDIR/probe-sqlite.db" 2>&1 | grep -q "built without SQLite"
}
# need_sqlite: skip the test (77, with the install line) without it.
need_sqlite() {
	has_sqlite && return 0
	echo "skip: this ipclab was built without libsqlite3 (apt-get install libsqlite3-dev, then make)"
	exit 77
}

# ok_if TEXT: a section's ok line, only when none of its checks failed
# since the last ok_if.
ok_seen=0
ok_if() {
	[ "${fails:-0}" = "$ok_seen" ] && echo "ok   $*"
	ok_seen=${fails:-0}
}

# serve_listening LOG PID: wait (10 s at most) until the ipclab serve PID
# says in LOG that it listens; false if it did not (or it ended first).
serve_listening() {
	local i
	for i in $(seq 1 200); do
		grep -q 'listening on' "$1" 2>/dev/null && return 0
		kill -0 "$2" 2>/dev/null || break
		sleep 0.05
	done
	grep -q 'listening on' "$1" 2>/dev/null
}
