#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The experiment knobs through the CLI, on the null transport: ranges and
# lists make the cartesian product, the pivot lays a metric out rows x
# columns, several clients each move their count, repetitions report
# spread, paced runs keep their schedule, --max-time is derived per cell,
# and the suite plans every seed.
. "$(dirname "$0")/../lib/common.sh"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
before=$(leftovers)
py() { python3 -c "$1" "$dir/r.json" || fail "$2"; }

# 1k..8k doubles: 4 sizes x 2 thinks x 2 pins = 16 cells, planned not run
"$IPCLAB" run -t null -p stream -s 1k..8k --think 1,4 --pin same,split --dry-run -f json -o "$dir/r.json" -q ||
	fail "dry run failed"
py 'import json,sys; r=json.load(open(sys.argv[1]))["results"]
assert len(r)==16, len(r)
assert sorted({x["size_bytes"] for x in r})==[1024,2048,4096,8192]
assert {x["think"] for x in r}=={1,4} and all(x["reason"]=="dry run" for x in r)' "range x list product"

# --max-time derived per cell: a paced cell's limit covers its schedule
# (1000 messages at 10/s: over 100 s), grows as the rate falls, and -d uses
# the window; given, it is taken as is, and 0 means no limit
"$IPCLAB" run -t null -n 1000 --rate 10/s,5/s --dry-run -f json -o "$dir/r.json" -q || fail "max-time dry run"
py 'import json,sys; r=json.load(open(sys.argv[1]))["results"]
b,a=[x["max_time_ns"] for x in sorted(r,key=lambda x:x["rate_per_s"])]
assert 4*100e9+60e9 <= a < b, (a,b)' "max-time derived from count and rate"
"$IPCLAB" run -t null -d 30s --max-time 0 --dry-run -f json -o "$dir/r.json" -q || fail "max-time 0 dry run"
py 'import json,sys; r=json.load(open(sys.argv[1]))["results"][0]; assert r["max_time_ns"]==0, r["max_time_ns"]' "max-time 0 kept"
"$IPCLAB" run -t null -d 30s --dry-run -f json -o "$dir/r.json" -q || fail "max-time -d dry run"
py 'import json,sys; r=json.load(open(sys.argv[1]))["results"][0]; assert r["max_time_ns"]>=60e9+4*30e9, r["max_time_ns"]' "max-time from -d"

# pivot: rows = sizes, columns = thinks, one value each
"$IPCLAB" run -t null -p stream -s 1k..4k --think 1,4 -n 300 -q --pivot size,think,msgs >"$dir/pivot" ||
	fail "pivot run failed"
[ "$(grep -c ':' "$dir/pivot")" = 3 ] || fail "pivot: expected 3 rows: $(cat "$dir/pivot")"
grep ':' "$dir/pivot" | awk '{ if (NF != 3 || $2 != 300 || $3 != 300) exit 1 }' || fail "pivot: expected 300 in every cell: $(cat "$dir/pivot")"
"$IPCLAB" run -t null -p stream -s 1k..4k --think 1,4 -n 300 -q --pivot size,think,msgs -f json -o "$dir/r.json" || fail "pivot json"
py 'import json,sys; p=json.load(open(sys.argv[1]))
assert p["rows"]=="size_bytes" and p["cols"]=="think" and len(p["values"])==3 and all(v==[300,300] for v in p["values"]), p' "pivot json shape"

# several clients: each moves its own count, in both patterns and both directions
for pat in pingpong "stream -O dir=c2s" "stream -O dir=s2c"; do
	"$IPCLAB" run -t null -p $pat --clients 4 -n 500 --verify -f json -o "$dir/r.json" -q || fail "clients 4 ($pat) failed"
	py 'import json,sys; r=json.load(open(sys.argv[1]))["results"][0]
assert r["status"]=="ok" and r["clients"]==4 and len(r["sides"])==5, r["status"]
assert r["metrics"]["msgs"]==2000, r["metrics"]["msgs"]' "clients 4 ($pat): counts"
done

# repetitions: medians with min/max/spread per metric
"$IPCLAB" run -t null -p pingpong -n 300 --repeat 3 -f json -o "$dir/r.json" -q || fail "repeat run failed"
py 'import json,sys; r=json.load(open(sys.argv[1]))["results"]
assert len(r)==1 and r[0]["repeat"]["n"]==3
s=r[0]["repeat"]["lat_p50_ns"]; m=r[0]["metrics"]["lat_p50_ns"]
assert s["min"] <= m <= s["max"] and s["spread_pct"] >= 0' "repeat stats"

# paced: 20 messages at 100/s take at least 190 ms of window, every message timed
"$IPCLAB" run -t null -p stream --rate 100/s -n 20 -f json -o "$dir/r.json" -q || fail "paced run failed"
py 'import json,sys; r=json.load(open(sys.argv[1]))["results"][0]
assert r["rate_per_s"]==100 and r["metrics"]["lat_samples"]==20 and r["metrics"]["sample_every"]==1, r["metrics"]
assert r["metrics"]["elapsed_ns"] >= 190e6, r["metrics"]["elapsed_ns"]' "paced schedule"

# duration mode ends by itself
"$IPCLAB" run -t null -p pingpong,stream -d 200ms -q -f csv >"$dir/d.csv" || fail "duration run failed"
[ "$(grep -c ',ok,' "$dir/d.csv")" = 2 ] || fail "duration: expected 2 ok rows"

# the suite plans every section
"$IPCLAB" suite seeds --quick --dry-run >"$dir/suite" || fail "suite dry run failed"
for s in 000 001 002 003 004; do
	grep -q "== seed-$s" "$dir/suite" || fail "suite: no section seed-$s"
done
[ "$(grep -c ' rate 20/s' "$dir/suite")" -ge 2 ] || fail "suite: seed-003 has no paced cells"
# seed 000's cycle table: a 3-stage chain per mechanism and policy
# seed 000 asks where SCHED_FIFO makes the pipe switch: unpinned, on one CPU and on two
for p in none same split; do
	sed -n '/== seed-000:/,/== seed-000-cycle/p' "$dir/suite" | grep -q "^  pipe .* pin $p *sched other" ||
		fail "suite: seed-000 plans no pipe cell with pin $p"
done
n=$(sed -n '/== seed-000-cycle/,/== seed-001/p' "$dir/suite" | grep -c ' cycle .* clients 3 ')
[ "$n" -ge 6 ] || fail "suite: seed-000-cycle plans $n cycle cells of 3 stages, expected 6 or 12"
grep -q "== seed-003" "$dir/suite" && sed -n '/== seed-003/,/== seed-004/p' "$dir/suite" | grep -q '^  ring-ipc ' &&
	sed -n '/== seed-003/,/== seed-004/p' "$dir/suite" | grep -q '^  libqb-ipc ' ||
	echo "note: seed-003 without ring-ipc or libqb-ipc (not built here)"

expect_usage_error "think and think-ns together" run -t null --think 1 --think-ns 1us -n 10
expect_usage_error "bad range" run -t null -s 8k..1k -n 10
expect_usage_error "bad rate" run -t null --rate fast -n 10
expect_usage_error "bad pivot field" run -t null --pivot size,nope,msgs -n 10
expect_usage_error "bad repeat" run -t null --repeat 0 -n 10
expect_usage_error "suite without seeds" suite

new=$(new_leftovers "$before" "$(leftovers)")
[ -z "$new" ] || fail "left behind: $new"
finish
