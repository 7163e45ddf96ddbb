#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `ipclab suite seeds --trace` (issue 13), behaviour only: --dry-run
# --trace lists the plan (seed-002 adds its unpinned cells, for migrations
# against pinned); the cheapest section, seed-004 --quick, prints its
# reading from the trace (with the tracing cost and events lost) and every
# result that ran carries `trace`; as uid 65534, --trace is bad input: one
# line, exit 2. Skips as trace.sh does: without kernel BTF, root or libbpf.
set -u
. "$(dirname "$0")/../lib/trace_skip.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

out=$("$IPCLAB" suite seeds --dry-run --trace --section seed-002 -q 2>&1) ||
	{ echo "FAIL: suite --dry-run --trace exited $?: $out"; fail=1; }
[[ $out == *"pin none"*"pin same"* || $out == *"pin same"*"pin none"* ]] ||
	{ echo "FAIL: traced seed-002 plan has no unpinned cells: $out"; fail=1; }

out=$("$IPCLAB" suite seeds --quick --section seed-004 --trace -q -f json -o "$tmp/s.json" 2>&1) ||
	{ echo "FAIL: suite seeds --quick --section seed-004 --trace exited $?: $out"; fail=1; }
line=$(printf '%s\n' "$out" | grep '^Trace, unpinned pipe, processes vs threads: an exchange took ')
[ -n "$line" ] || { echo "FAIL: no trace reading in: $out"; fail=1; }
[[ $line == *"per exchange"*"traced/untraced "*"x over "*" cells, "*" events lost." ]] ||
	{ echo "FAIL: trace reading lacks its figures: $line"; fail=1; }
[ -s "$tmp/s.json" ] && python3 - "$tmp/s.json" <<-'PY' || fail=1
	import json, sys
	rs = json.load(open(sys.argv[1]))["results"]
	ran = [r for r in rs if r["status"] == "ok"]
	bad = [r["transport"] for r in ran if not r.get("trace") or "per_msg" not in r["trace"]]
	if not ran or bad or any(r["section"] != "seed-004" for r in rs):
	    print("FAIL: %d results ran, without trace: %s" % (len(ran), bad))
	    sys.exit(1)
	PY

if command -v setpriv >/dev/null; then
	out=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$IPCLAB" suite seeds --quick --trace 2>&1)
	rc=$?
	[ $rc = 2 ] || { echo "FAIL: unprivileged suite --trace exited $rc, want 2"; fail=1; }
	[ "$(printf '%s\n' "$out" | wc -l)" = 1 ] && [[ $out == *CAP_BPF* ]] ||
		{ echo "FAIL: unprivileged suite --trace said: $out"; fail=1; }
fi
exit $fail
