#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Every registered transport through the whole engine (runner, patterns,
# checks): ping-pong and stream in both directions, process and thread
# endpoints, with --verify; a failed cell fails the test. Then no leftovers.
. "$(dirname "$0")/../lib/common.sh"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
before=$(leftovers)
# 2000 messages a cell; a quarter under the sanitizers (IPCLAB_TEST_SCALE)
export ENGINE_N=$(scaled 2000)
for dirn in c2s s2c; do
	"$IPCLAB" run -t all,null -p stream,pingpong -s 16,4k -n "$ENGINE_N" -e "${ENDPOINTS:-process,thread}" --verify \
		-O dir=$dirn -q -f csv -o "$dir/r.csv" 2>"$dir/err"
	rc=$?
	[ $rc = 0 ] || fail "dir=$dirn: exit $rc: $(head -5 "$dir/err")"
	python3 - "$dir/r.csv" <<'PY' || fail "dir=$dirn: results"
import csv, os, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert rows, "no rows"
bad = [r for r in rows if r["status"] == "failed"]
for r in bad:
    print("failed:", r["transport"], r["pattern"], r["size_bytes"], r["endpoints"], r.get("reason", ""))
ok = [r for r in rows if r["status"] == "ok"]
for r in ok:
    assert float(r["msgs"]) >= int(os.environ["ENGINE_N"]) or r["transport"] == "udp", (r["transport"], r["msgs"])
print(len(ok), "ok,", len(rows) - len(ok) - len(bad), "skipped,", len(bad), "failed")
sys.exit(1 if bad else 0)
PY
done
# the cycle pattern: a channel per hop (a 2-stage chain is 3 channels of
# the transport), or a fan of them; a lossy transport is skipped. Each kind
# of endpoint in a run of its own: once a thread cell has started nng in
# this process, a forked nng cell is skipped (nng is not fork-safe), and
# with two nng transports one's thread cell comes before the other's
# process cell.
for shape in chain fan; do
    for ep in $(printf '%s\n' "${ENDPOINTS:-process,thread}" | tr ',' ' '); do
	"$IPCLAB" run -t all,null -p cycle --clients 2 --period 1ms -n 30 --warmup 5 -s 64 \
		-e "$ep" --verify -O shape=$shape -q -f csv -o "$dir/c.csv" 2>"$dir/err"
	rc=$?
	[ $rc = 0 ] || fail "cycle shape=$shape -e $ep: exit $rc: $(head -5 "$dir/err")"
	python3 - "$dir/c.csv" <<'PY' || fail "cycle shape=$shape -e $ep: results"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert rows, "no rows"
bad = [r for r in rows if r["status"] == "failed" or (r["status"] == "ok" and r["cycles"] != "30")]
for r in bad:
    print("bad:", r["transport"], r["endpoints"], r["status"], r.get("cycles"), r.get("reason", ""))
skipped = [r for r in rows if r["status"] == "skipped" and r["transport"] not in ("udp", "vsock")
           and "threads only" not in r["reason"]]
for r in skipped:
    print("skipped:", r["transport"], r["endpoints"], r["reason"])
print(sum(r["status"] == "ok" for r in rows), "cycle cells ok")
sys.exit(1 if bad or skipped else 0)
PY
    done
done
after=$(leftovers)
new=$(new_leftovers "$before" "$after")
[ -z "$new" ] || fail "left behind: $new"
finish
