#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `ipclab suite seeds --trace`: a seed's reading says why from the trace's
# cause split. The cheapest traced section, seed-001 --quick (a pipe grid
# of 60 ms cells, one repetition), ends with a "Why (trace):" line naming
# the worst cell (its size and think) and its largest shares with their
# %; each share named is in that cell's cause split in the JSON, at that
# % (rounded), and so is each share the line says differs most from the
# best cell's. With --explain, that worst cell alone is run again with its
# cause tested: the line says what --explain found for it, the cause its
# JSON's trace.explain names. Skips as trace.sh does: without kernel BTF,
# root or libbpf.
set -u
. "$(dirname "$0")/../lib/trace_skip.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

out=$("$IPCLAB" suite seeds --quick --section seed-001 --explain --repeat 1 -q -f json -o "$tmp/s.json" 2>&1) ||
	{ echo "FAIL: suite seeds --quick --section seed-001 --explain --repeat 1 exited $?: $out"; exit 1; }
line=$(printf '%s\n' "$out" | grep '^Why (trace): ')
[ -n "$line" ] || { echo "FAIL: no 'Why (trace):' reading in: $out"; exit 1; }
printf '%s\n' "$line" >"$tmp/why"
python3 - "$tmp/s.json" "$tmp/why" <<-'PY' || exit 1
	import json, re, sys
	rs = [r for r in json.load(open(sys.argv[1]))["results"] if r["status"] == "ok"]
	if not rs or any(r.get("repeat_n", 1) != 1 or "repeat" in r for r in rs):
	    sys.exit("FAIL: --repeat 1 did not reach every cell: %r" % [r.get("repeat_n") for r in rs])
	why = open(sys.argv[2]).read().strip()
	m = re.search(r"in the worst cell \((\d+) B, think (\d+)\) the (\w+) took [^:]+: (.*?)(;|\.$)", why)
	if not m:
	    sys.exit("FAIL: the reading names no worst cell and its shares: " + why)
	size, think, whose, named = int(m[1]), int(m[2]), m[3], m[4]
	cell = [r for r in rs if r["size_bytes"] == size and r["think"] == think]
	if len(cell) != 1 or "cause" not in cell[0].get("trace", {}):
	    sys.exit("FAIL: no traced result with a cause split at %d B think %d" % (size, think))
	cause = cell[0]["trace"]["cause"]
	pct = {s["name"]: s["pct"] for s in cause["shares"]}
	if cause["whose"] != whose:
	    sys.exit("FAIL: the reading's side %s is not the split's %s" % (whose, cause["whose"]))
	shares = re.findall(r"([A-Za-z][A-Za-z ]+?) (\d+) %", named)
	if not shares:
	    sys.exit("FAIL: no share named in: " + named)
	for name, p in shares:
	    if name not in pct or abs(pct[name] - int(p)) > 1:
	        sys.exit("FAIL: '%s %s %%' is not in the cell's cause split %s" % (name, p, pct))
	for said, p in re.findall(r"(?:most are|and) ([A-Za-z][A-Za-z ,-]+?) \((\d+) % vs \d+ %\)", why):
	    # the share's name, then whose doing it was ("preempted by its peer")
	    name = max((k for k in pct if said == k or said.startswith((k + " ", k + ","))), key=len,
	               default=said)
	    if abs(pct.get(name, 0) - int(p)) > 1:
	        sys.exit("FAIL: differing share '%s %s %%' is not the cell's %s" % (name, p, pct))
	ex = [r for r in rs if r.get("trace", {}).get("explain")]
	if len(ex) != 1 or ex[0] is not cell[0]:
	    sys.exit("FAIL: %d results explained, want the worst cell's alone" % len(ex))
	e = re.search(r"--explain on the worst cell \(%d B, think %d\) "
	              r"(?:tested (.+?) \(\d+ %%\) with|did not test (.+?):|found (no cause) to test)"
	              % (size, think), why)
	found = e and (e[1] or e[2] or "none")
	if found != ex[0]["trace"]["explain"]["cause"]:
	    sys.exit("FAIL: the reading does not say what --explain found (%s): %s"
	             % (ex[0]["trace"]["explain"], why))
	PY

# unprivileged, --explain is bad input as --trace is: one line, exit 2
if command -v setpriv >/dev/null; then
	out=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$IPCLAB" suite seeds --quick --explain 2>&1)
	rc=$?
	[ $rc = 2 ] || { echo "FAIL: unprivileged suite --explain exited $rc, want 2"; exit 1; }
	[ "$(printf '%s\n' "$out" | wc -l)" = 1 ] && [[ $out == *"--explain traces the cell: "*CAP_BPF* ]] ||
		{ echo "FAIL: unprivileged suite --explain said: $out"; exit 1; }
fi
exit 0
