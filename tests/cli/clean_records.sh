#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `ipclab clean` treats the run registry's records as hostile input. Planted
# records of dead runs check that:
# - a record of another boot removes nothing but itself (SysV ids restart
#   after a reboot: its semaphore id now names another object);
# - a process is killed only if it is still the run's child: same start
#   time, not older than the run, this user's, in this pid namespace;
# - only names ipclab makes are removed (its private directories, files in
#   them, its output's temporary files, /ipclab-* POSIX names), never
#   through a symbolic link, never another user's, never a directory's
#   other contents; a SysV object only as ipclab makes them (mode 0600);
# - a record over the size bound is not read; names are printed escaped;
# - a record of this boot whose objects really are the run's is still
#   cleaned: its semaphore, files, directory and process go.
. "$(dirname "$0")/../lib/common.sh"
dir=$(realpath "$(mktemp -d)")
pids= sems=
trap 'for p in $pids; do kill -9 $p 2>/dev/null; done; for s in $sems; do ipcrm -s $s 2>/dev/null; done
      [ "$IPCLAB_TEST_NS" = 1 ] && rm -f /dev/shm/victim /dev/shm/ipclab-shm-99999[0-9]-*; rm -rf "$dir"' EXIT
command -v ipcs >/dev/null && command -v setpriv >/dev/null || { echo "skip: needs ipcs and setpriv"; exit 77; }
[ "$(id -u)" = 0 ] || { echo "skip: needs root (another user's process)"; exit 77; }

reg=$TMPDIR/.ipclab-runs-$(id -u)
mkdir -m 0700 "$reg"
boot=$(cat /proc/sys/kernel/random/boot_id)
ipcns=$(stat -L -c %i /proc/self/ns/ipc) mntns=$(stat -L -c %i /proc/self/ns/mnt)
pidns=$(stat -L -c %i /proc/self/ns/pid)
wall=$(( $(date +%s) - 3600 ))
hex() { printf '%s' "$1" | od -An -tx1 -v | tr -d ' \n'; }
# field 22 of /proc/PID/stat: the start time in clock ticks since boot
start_of() { local s; s=$(cat "/proc/$1/stat") || return 1; s=${s##*) }; set -- $s; echo "${20}"; }
sem_exists() { ipcs -s | awk -v id="$1" '$2 == id { found = 1 } END { exit !found }'; }	# ipcs -i exits 0 either way
alive() { local s; s=$(cat "/proc/$1/stat" 2>/dev/null) || return 1; s=${s##*) }; [ "${s%% *}" != Z ]; }
# a semaphore set as ipclab makes one (IPC_PRIVATE, IPC_CREAT), of mode $1
mksem() {
	python3 -c 'import ctypes, sys; print(ctypes.CDLL(None).semget(0, 1, 0o1000 | int(sys.argv[1], 8)))' "$1"
}
# "+ h kind -1 hexname" or "+ h kind id"
add() { printf '+ %s %s %s %s\n' "$1" "$2" "${4:--1}" "$( [ -n "$3" ] && hex "$3")"; }
head_line() { printf 'R 1 %s %s %s %s %s %s %s%s\n' "$1" "$2" "$3" "$ipcns" "$mntns" "$(id -u)" "$wall" "${4:+ $4}"; }

# another boot: nothing removed
sem_foreign=$(mksem 0600); sems+=" $sem_foreign"
touch "$dir/out.json.tmp-999990-00112233aabbccdd"
{ head_line 999990 1 00000000-0000-4000-8000-000000000000 "$pidns"
  add 0 5 "" "$sem_foreign"; add 1 0 "$dir/out.json.tmp-999990-00112233aabbccdd"; } >"$reg/run-999990-1"

# this boot: what is ipclab's goes, the rest stays
sem_mine=$(mksem 0600) sem_0644=$(mksem 0644); sems+=" $sem_mine $sem_0644"
touch "$dir/out.json.tmp-999991-00112233aabbccdd" "$dir/out.json.tmp-12345-00112233aabbccdd" "$dir/victim"
mkdir -m 0700 "$dir/ipclab-Abc123" "$dir/home" "$dir/real" "$dir/real/ipclab-Xyz789"
mkfifo "$dir/ipclab-Abc123/ipclab-fifo-999991-0123456789abcdef-0-c2s"
touch "$dir/home/keep" "$dir/real/ipclab-Xyz789/f"
ln -s real "$dir/link"
esc=$dir/$'x\033]0;owned\007'
touch "$esc"
sleep 300 & p_mine=$!
sleep 300 & p_wrong=$!
setpriv --reuid 65534 --regid 65534 --clear-groups sleep 300 & p_nobody=$!
pids+=" $p_mine $p_wrong $p_nobody"
# the other user's sleep has changed its user once it runs sleep
end=$(( $(date +%s) + 10 ))
until [ "$(cat /proc/$p_nobody/comm 2>/dev/null)" = sleep ] || [ "$(date +%s)" -gt "$end" ]; do sleep 0.01; done
if [ "$IPCLAB_TEST_NS" = 1 ]; then
	touch /dev/shm/victim /dev/shm/ipclab-shm-999991-0123456789abcdef /dev/shm/ipclab-shm-999991-fedcba9876543210
	chown 65534 /dev/shm/ipclab-shm-999991-0123456789abcdef
fi
{ head_line 999991 1 "$boot" "$pidns"
  add 0 5 "" "$sem_mine"; add 1 0 "$dir/out.json.tmp-999991-00112233aabbccdd"; add 2 0 "$dir/out.json.tmp-12345-00112233aabbccdd"
  add 3 1 "$dir/ipclab-Abc123"; add 4 0 "$dir/ipclab-Abc123/ipclab-fifo-999991-0123456789abcdef-0-c2s"
  add 5 0 "$dir/victim"; add 6 1 "$dir/home"; add 7 0 "$dir/link/ipclab-Xyz789/f"; add 8 0 "$esc"
  add 9 5 "" "$sem_0644"
  add 10 7 ""; echo "= 10 $p_mine $(start_of $p_mine)"
  add 11 7 ""; echo "= 11 $p_wrong $(( $(start_of $p_wrong) + 1 ))"
  add 12 7 ""; echo "= 12 $p_nobody $(start_of $p_nobody)"
  if [ "$IPCLAB_TEST_NS" = 1 ]; then
	add 13 3 /victim; add 14 3 /ipclab-shm-999991-0123456789abcdef
	add 15 3 /ipclab-shm-999991-fedcba9876543210
  fi; } >"$reg/run-999991-1"

# a process older than the run, and one of a run in another pid namespace
sleep 300 & p_old=$!
sleep 300 & p_ns=$!
pids+=" $p_old $p_ns"
{ head_line 999992 $(( $(start_of $p_old) + 1 )) "$boot" "$pidns"
  add 0 7 ""; echo "= 0 $p_old $(start_of $p_old)"; } >"$reg/run-999992-1"
{ head_line 999993 1 "$boot" 1
  add 0 7 ""; echo "= 0 $p_ns $(start_of $p_ns)"; } >"$reg/run-999993-1"

# over the size bound: what it lists past the bound is not read
touch "$dir/out.json.tmp-999994-00112233aabbccdd"
head_line 999994 1 "$boot" "$pidns" >"$reg/run-999994-1"
truncate -s 65M "$reg/run-999994-1"
printf '\n%s\n' "$(add 0 0 "$dir/out.json.tmp-999994-00112233aabbccdd")" >>"$reg/run-999994-1"

out=$("$IPCLAB" clean 2>&1) || fail "clean: exit $?: $out"
echo "$out" | sed 's/^/    /' | cat -v

sem_exists "$sem_foreign" || fail "a record of another boot removed semaphore set $sem_foreign"
[ -e "$dir/out.json.tmp-999990-00112233aabbccdd" ] || fail "a record of another boot removed a file"
echo "$out" | grep -q "^skipped sysv-sem $sem_foreign (run pid 999990): recorded in another boot" ||
	fail "the record of another boot's semaphore was not reported as skipped"

sem_exists "$sem_mine" && fail "this boot's record: its semaphore set $sem_mine remains"
[ -e "$dir/out.json.tmp-999991-00112233aabbccdd" ] && fail "this boot's record: its output's temporary file remains"
[ -e "$dir/ipclab-Abc123" ] && fail "this boot's record: its private directory remains: $(ls -A "$dir/ipclab-Abc123")"
[ -e "$dir/out.json.tmp-12345-00112233aabbccdd" ] || fail "removed another process's temporary file (.tmp-12345-...)"
[ -e "$dir/victim" ] || fail "removed a file whose name ipclab never makes"
[ -e "$dir/home/keep" ] || fail "emptied a directory whose name ipclab never makes"
[ -e "$dir/real/ipclab-Xyz789/f" ] || fail "removed a file through a symbolic link"
[ -e "$esc" ] || fail "removed a file whose name holds control characters"
case $out in *$'\033'*) fail "clean printed a name's escape character raw" ;; esac
sem_exists "$sem_0644" || fail "removed semaphore set $sem_0644 of mode 0644 (ipclab makes 0600)"
if [ "$IPCLAB_TEST_NS" = 1 ]; then
	[ -e /dev/shm/victim ] || fail "removed POSIX shared memory /victim (not a name ipclab makes)"
	[ -e /dev/shm/ipclab-shm-999991-0123456789abcdef ] || fail "removed another user's POSIX shared memory"
	[ -e /dev/shm/ipclab-shm-999991-fedcba9876543210 ] && fail "this boot's record: its POSIX shared memory remains"
fi

end=$(( $(date +%s) + 10 ))
while alive $p_mine && [ "$(date +%s)" -le "$end" ]; do sleep 0.01; done
alive $p_mine && fail "this boot's record: its child $p_mine (same start time) was not killed"
alive $p_wrong || fail "killed $p_wrong, whose start time is not the recorded one"
alive $p_nobody || fail "killed another user's process $p_nobody"
alive $p_old || fail "killed $p_old, older than the run that recorded it"
alive $p_ns || fail "killed $p_ns, recorded in another pid namespace"

[ -e "$dir/out.json.tmp-999994-00112233aabbccdd" ] || fail "a record over the size bound was read past the bound"
echo "$out" | grep -q "run-999994-1.*larger than" || fail "the record over the size bound was not reported"
[ ! -e "$reg" ] || fail "records remain: $(ls -A "$reg")"
finish
