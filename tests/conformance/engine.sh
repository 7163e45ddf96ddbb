#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Every registered transport through the whole engine (runner, patterns,
# checks): ping-pong and stream in both directions, process and thread
# endpoints, with --verify; a failed cell fails the test. Then no leftovers.
. "$(dirname "$0")/../lib/common.sh"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
before=$(leftovers)
for dirn in c2s s2c; do
	"$IPCLAB" run -t all,null -p stream,pingpong -s 16,4k -n 2000 -e "${ENDPOINTS:-process,thread}" --verify \
		-O dir=$dirn -q -f csv -o "$dir/r.csv" 2>"$dir/err"
	rc=$?
	[ $rc = 0 ] || fail "dir=$dirn: exit $rc: $(head -5 "$dir/err")"
	python3 - "$dir/r.csv" <<'PY' || fail "dir=$dirn: results"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert rows, "no rows"
bad = [r for r in rows if r["status"] == "failed"]
for r in bad:
    print("failed:", r["transport"], r["pattern"], r["size_bytes"], r["endpoints"], r.get("reason", ""))
ok = [r for r in rows if r["status"] == "ok"]
for r in ok:
    assert float(r["msgs"]) >= 2000 or r["transport"] == "udp", (r["transport"], r["msgs"])
print(len(ok), "ok,", len(rows) - len(ok) - len(bad), "skipped,", len(bad), "failed")
sys.exit(1 if bad else 0)
PY
done
after=$(leftovers)
new=$(new_leftovers "$before" "$after")
[ -z "$new" ] || fail "left behind: $new"
finish
