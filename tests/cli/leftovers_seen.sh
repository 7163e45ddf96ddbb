#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The tests' own leftover checks see what they must: tests/lib/common.sh's
# leftovers and new_leftovers, and tests/faults/lib.bash's strict_leftovers
# and tagged_procs (bash alone, no program started: they run before and
# after each step of many tests). Made between two snapshots: a POSIX
# shared memory object and a queue named ipclab-*, a private directory, a
# System V queue, semaphore set and segment (as ipcs shows them: key in
# hex, id), an ipclab process carrying this test's tag (a copy of sleep
# named ipclab) and one carrying a fault run's tag; each is reported, and
# nothing is once they are gone. An object of another name in /dev/shm
# is the strict view's only.
. "$(dirname "$0")/../faults/lib.bash"
dir=$(mktemp -d)
kids=
trap 'for p in $kids; do kill -9 "$p" 2>/dev/null; done; rm -rf "$dir"' EXIT

has() { printf '%s\n' "$1" | grep -qx -- "$2" || fail "$3: no line '$2' in: $(printf '%s' "$1" | tr '\n' ';')"; }

before=$(leftovers)
strict_before=$(strict_leftovers)
: >/dev/shm/ipclab-seen-shm
: >/dev/shm/other-seen-shm
made_mq=0
if [ -d /dev/mqueue ] && : >/dev/mqueue/ipclab-seen-mq 2>/dev/null; then made_mq=1; fi
mkdir "$TMPDIR/ipclab-seen-dir"
q=$(ipcmk -Q 2>/dev/null | grep -o '[0-9]*$')
s=$(ipcmk -S 1 2>/dev/null | grep -o '[0-9]*$')
m=$(ipcmk -M 4096 2>/dev/null | grep -o '[0-9]*$')
cp "$(command -v sleep)" "$dir/ipclab"
"$dir/ipclab" 300 &
kids+=" $!"
tagged=$!
IPCLAB_FAULT_RUN=seen-run "$dir/ipclab" 300 &
kids+=" $!"
run=$!
# both have exec'd (comm ipclab) before they are looked for
for p in $tagged $run; do
	for (( i = 0; i < 2000; i++ )); do
		[ "$(cat "/proc/$p/comm" 2>/dev/null)" = ipclab ] && break
		sleep 0.005
	done
done

after=$(leftovers)
new=$(new_leftovers "$before" "$after") || fail "new_leftovers: nothing new after making objects"
has "$new" "shm ipclab-seen-shm" leftovers
[ "$made_mq" = 0 ] || has "$new" "mq ipclab-seen-mq" leftovers
has "$new" "dir $TMPDIR/ipclab-seen-dir" leftovers
# ipcs's view of the System V objects, each line of it a leftover line
ipcs_lines=$(ipcs -q -s -m | awk '$1 ~ /^0x/ {print "sysv " $1 " " $2}')
[ "$(printf '%s\n' "$ipcs_lines" | grep -c .)" -ge 3 ] || fail "ipcs shows fewer than the 3 objects made: $ipcs_lines"
while read -r l; do has "$new" "$l" "leftovers (as ipcs)"; done <<<"$ipcs_lines"
[ -n "$q$s$m" ] || fail "ipcmk made no System V object"
has "$new" "proc $tagged" leftovers
printf '%s\n' "$new" | grep -q 'other-seen-shm' && fail "leftovers: another name in /dev/shm counted"
[ "$(tagged_procs seen-run)" = "$run" ] || fail "tagged_procs: '$(tagged_procs seen-run)', expected $run"
[ -z "$(tagged_procs no-such-run)" ] || fail "tagged_procs: a tag nobody carries found $(tagged_procs no-such-run)"
strict=$(new_leftovers "$strict_before" "$(strict_leftovers)")
has "$strict" "shm ipclab-seen-shm" strict_leftovers
has "$strict" "dir $TMPDIR/ipclab-seen-dir" strict_leftovers
if [ "$IPCLAB_TEST_NS" = 1 ]; then
	has "$strict" "shm other-seen-shm" "strict_leftovers (private namespaces: every name)"
	while read -r l; do has "$strict" "$l" "strict_leftovers (as ipcs)"; done <<<"$ipcs_lines"
fi

for p in $kids; do kill -9 "$p"; wait "$p" 2>/dev/null; done
kids=
proc_alive "$run" && fail "proc_alive: a reaped process is alive"
rm -f /dev/shm/ipclab-seen-shm /dev/shm/other-seen-shm /dev/mqueue/ipclab-seen-mq
rmdir "$TMPDIR/ipclab-seen-dir"
[ -z "$q" ] || ipcrm -q "$q"
[ -z "$s" ] || ipcrm -s "$s"
[ -z "$m" ] || ipcrm -m "$m"
left=$(new_leftovers "$before" "$(leftovers)") && fail "new_leftovers: left after removing all: $left"
[ -z "$(tagged_procs seen-run)" ] || fail "tagged_procs: a killed run still found"
echo "ok: the leftover checks see each kind of object and process, and nothing once gone"
finish
