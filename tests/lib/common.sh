# SPDX-License-Identifier: MIT
# Shared by the shell tests: the binary, leftovers snapshots, assertions.
# Source it; $IPCLAB points at the built binary.
set -u
IPCLAB=${IPCLAB:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/build/ipclab}
export TMPDIR=${TMPDIR:-/tmp}
fails=0

if [ "$(id -u)" = 0 ] && ! mountpoint -q /dev/mqueue 2>/dev/null; then
	mkdir -p /dev/mqueue && mount -t mqueue none /dev/mqueue 2>/dev/null
fi

# Everything ipclab could leave behind, one line each.
leftovers() {
	ls -1 /dev/shm 2>/dev/null | grep -i 'ipclab\|ipcring' | sed 's|^|shm |'
	ls -1 /dev/mqueue 2>/dev/null | grep -i 'ipclab' | sed 's|^|mq |'
	ls -1d "$TMPDIR"/ipclab-* 2>/dev/null | sed 's|^|dir |'
	ipcs -q -s -m 2>/dev/null | awk '$1 ~ /^0x/ {print "sysv " $1 " " $2}'
	pgrep -x ipclab 2>/dev/null | sed 's|^|proc |'
}

# Lines in $2 that are not in $1 (what a step left behind).
new_leftovers() {
	comm -13 <(echo "$1" | sort) <(echo "$2" | sort) | grep .
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
