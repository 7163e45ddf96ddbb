#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# --trace's labels are what happened, on real cells: a paced ring-ipc
# ping-pong's receivers poll before they sleep, and that time is
# `polling` in the cause split, not user work (user work under 30 % of the
# round trip; the sides' poll_ns counted); a pipe ping-pong on CPUs of its
# own kept awake by --keep-awake has no idle to exit (idle exits under 5 %),
# and the CPU its wakeups waited for is named as ipclab's keep-awake loop.
# Behaviour only, never speed; a run whose labels disagree is tried three
# times (a shared machine). Needs --trace (root, BPF): skipped otherwise.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/trace_skip.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# check FILE KIND: the labels of the result in FILE; prints what is wrong
check() {
	python3 - "$1" "$2" <<-'PY'
	import json, sys
	r = json.load(open(sys.argv[1]))["results"][0]
	kind = sys.argv[2]
	t = r["trace"]
	c = t.get("cause") or {}
	sh = {s["name"]: s["pct"] for s in c.get("shares", [])}
	bad = []
	if kind == "ring":
	    if "polling" not in sh:
	        bad.append("no polling share: %s" % sh)
	    if sh.get("user work", 0) >= 30:
	        bad.append("user work %.1f %% of the round trip" % sh["user work"])
	    if not any(s.get("poll_ns", 0) > 0 for s in t["sides"]):
	        bad.append("no side counted its polling")
	if kind == "awake":
	    if sh.get("wakeup from idle", 0) >= 5:
	        bad.append("idle exits %.1f %% with --keep-awake" % sh["wakeup from idle"])
	print("; ".join(bad))
	PY
}

# try NAME KIND ARGS...: up to three runs until the labels hold
try() {
	local name=$1 kind=$2 why=
	shift 2
	for _ in 1 2 3; do
		"$IPCLAB" run "$@" --trace -f json -o "$work/$name.json" >"$work/$name.err" 2>&1 ||
			fail "$name: exit $? ($(head -c 300 "$work/$name.err"))"
		why=$(check "$work/$name.json" "$kind")
		[ -z "$why" ] && return 0
	done
	fail "$name: $why"
}

try ring-ipc ring -t ring-ipc -p pingpong --rate 20/s -d 3s
try pipe-awake awake -t pipe -p pingpong --pin split --keep-awake -n "$(scaled 20000)"

# the table names ipclab's own loop where it took the CPU (it may not).
# Another test's ipclab beside this one is named "ipclab" rightly: the
# check holds only when none ran.
foreign_ipclab() {
	local p
	for p in $(pgrep -x ipclab 2>/dev/null); do
		tr '\0' '\n' 2>/dev/null <"/proc/$p/environ" | grep -qxF "IPCLAB_TEST_TAG=$IPCLAB_TEST_TAG" || echo "$p"
	done
}
others=$(foreign_ipclab)
"$IPCLAB" run -t pipe -p pingpong --pin split --keep-awake -n "$(scaled 20000)" --trace \
	>"$work/table.txt" 2>&1 || fail "table: exit $?"
others="$others $(foreign_ipclab)"
if [ -n "${others// /}" ]; then
	echo "skip the table's name check: another ipclab ran beside this test (pids $(echo $others))"
elif grep -q "machine:.* to ipclab (pid" "$work/table.txt"; then
	fail "the keep-awake loop is named only as ipclab: $(grep machine: "$work/table.txt")"
fi
finish
