#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `ipclab clean` treats the run registry's records as hostile input. Planted
# records of dead runs check that:
# - a record of another boot removes nothing but itself (SysV ids restart
#   after a reboot: its semaphore id now names another object);
# - a record of this boot whose objects really are the run's is still
#   cleaned: its semaphore and files go.
. "$(dirname "$0")/../lib/common.sh"
dir=$(realpath "$(mktemp -d)")
sems=
trap 'for s in $sems; do ipcrm -s $s 2>/dev/null; done; rm -rf "$dir"' EXIT
command -v ipcs >/dev/null || { echo "skip: needs ipcs"; exit 77; }

reg=$TMPDIR/.ipclab-runs-$(id -u)
mkdir -m 0700 "$reg"
boot=$(cat /proc/sys/kernel/random/boot_id)
ipcns=$(stat -L -c %i /proc/self/ns/ipc) mntns=$(stat -L -c %i /proc/self/ns/mnt)
wall=$(( $(date +%s) - 3600 ))
hex() { printf '%s' "$1" | od -An -tx1 -v | tr -d ' \n'; }
# a semaphore set as ipclab makes one (IPC_PRIVATE, IPC_CREAT), of mode $1
mksem() {
	python3 -c 'import ctypes, sys; print(ctypes.CDLL(None).semget(0, 1, 0o1000 | int(sys.argv[1], 8)))' "$1"
}
sem_exists() { ipcs -s | awk -v id="$1" '$2 == id { found = 1 } END { exit !found }'; }	# ipcs -i exits 0 either way
# "+ h kind -1 hexname" or "+ h kind id"
add() { printf '+ %s %s %s %s\n' "$1" "$2" "${4:--1}" "$( [ -n "$3" ] && hex "$3")"; }
head_line() { printf 'R 1 %s %s %s %s %s %s %s\n' "$1" "$2" "$3" "$ipcns" "$mntns" "$(id -u)" "$wall"; }

# another boot: nothing removed
sem_foreign=$(mksem 0600); sems+=" $sem_foreign"
touch "$dir/out.json.tmp-999990"
{ head_line 999990 1 00000000-0000-4000-8000-000000000000
  add 0 5 "" "$sem_foreign"; add 1 0 "$dir/out.json.tmp-999990"; } >"$reg/run-999990-1"

# this boot: what is the run's goes
sem_mine=$(mksem 0600); sems+=" $sem_mine"
touch "$dir/out.json.tmp-999991"
{ head_line 999991 1 "$boot"
  add 0 5 "" "$sem_mine"; add 1 0 "$dir/out.json.tmp-999991"; } >"$reg/run-999991-1"

out=$("$IPCLAB" clean 2>&1) || fail "clean: exit $?: $out"
echo "$out" | sed 's/^/    /' | cat -v

sem_exists "$sem_foreign" || fail "a record of another boot removed semaphore set $sem_foreign"
[ -e "$dir/out.json.tmp-999990" ] || fail "a record of another boot removed a file"
echo "$out" | grep -q "^skipped sysv-sem $sem_foreign (run pid 999990): recorded in another boot" ||
	fail "the record of another boot's semaphore was not reported as skipped"

sem_exists "$sem_mine" && fail "this boot's record: its semaphore set $sem_mine remains"
[ -e "$dir/out.json.tmp-999991" ] && fail "this boot's record: its output's temporary file remains"
[ ! -e "$reg" ] || fail "records remain: $(ls -A "$reg")"
finish
