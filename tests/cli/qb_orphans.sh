#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# libqb-ipc's cleanup takes away what libqb leaves behind: an empty
# connection directory (qb-<pid>-<pid>-<fd>-XXXXXX, made for a connection
# that then failed) whose two processes are gone; one whose process lives,
# or that holds files, stays.
. "$(dirname "$0")/../lib/common.sh"
"$IPCLAB" list | grep -q '^  libqb-ipc ' || { echo "skip: built without libqb-dev"; exit 77; }
[ -w /dev/shm ] || { echo "skip: /dev/shm not writable"; exit 77; }
true & dead=$!
wait $dead
orphan=/dev/shm/qb-$dead-$dead-9-ipcltA
alive=/dev/shm/qb-$$-$dead-9-ipcltB
full=/dev/shm/qb-$dead-$dead-9-ipcltC
mkdir -m 0770 "$orphan" "$alive" "$full"
touch "$full/someone-else-header"
trap 'rm -rf "$orphan" "$alive" "$full"' EXIT
"$IPCLAB" run -t libqb-ipc -p pingpong -n 200 -q -f json -o "$IPCLAB_TEST_TAG/run.json" 2>"$IPCLAB_TEST_TAG/err" ||
	fail "libqb-ipc run: $(cat "$IPCLAB_TEST_TAG/err")"
[ ! -e "$orphan" ] && echo "ok   an empty qb-* directory of two dead processes removed" ||
	fail "the orphaned $orphan is still there"
[ -d "$alive" ] && echo "ok   one naming a live process kept" || fail "$alive (a live pid) was removed"
[ -d "$full" ] && [ -e "$full/someone-else-header" ] && echo "ok   one holding files kept" ||
	fail "$full (not empty) was touched"
finish
