#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# ipclab compare at the level of runs, from the outside: several result
# files a side (A1 A2 A3 -- B1 B2 B3) are judged over the runs, each run's
# median; runs that differ by their drift read "within run-to-run noise",
# 1.7x slower reads worse (exit 3 past --fail-above); --db --by machine sets
# each machine's stored runs (db import --label machine=...) against the
# baseline machine's; one run a side uses this machine's stored calibration
# (a run labelled kind=calibration, as env --calibrate stores it). Every
# verdict says its basis. Fixtures are made from tests/data, no run.
. "$(dirname "$0")/../lib/common.sh"
data=$(cd "$(dirname "$0")/../data" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export IPCLAB_DB="$work/none.db"	# no store of the user's: no calibration

# run NAME FACTOR [CALIBRATION]: tests/data's pipe ping-pong, its latency
# times FACTOR (its rate divided), one cell; with a calibration object.
mk() {
	python3 - "$data/compare-before.json" "$work/$1.json" "$2" "${3:-}" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
f = float(sys.argv[3])
r = d["results"][0]
d["results"] = [r]
d["env"]["hostname"] = "lab"
for k in ("lat_p50_ns", "lat_p99_ns", "cpu_ns_per_msg"):
    r["metrics"][k] *= f
for k in ("msgs_per_s", "bytes_per_s"):
    r["metrics"][k] /= f
r.pop("repeat", None)
if sys.argv[4]:
    lo, hi = sys.argv[4].split(":")
    d["calibration"] = {"runs": 6, "metric": "lat_p50_ns", "cells": [
        {"transport": "pipe", "pattern": "pingpong", "what": "pipe pingpong 64B pin=split",
         "lo": float(lo), "hi": float(hi)}]}
json.dump(d, open(sys.argv[2], "w"))
PY
}
mk a1 1.00; mk a2 1.20; mk a3 0.90
mk b1 1.10; mk b2 0.95; mk b3 1.15
mk s1 1.70; mk s2 2.00; mk s3 1.60
mk cal 1.0 0.70:1.43

# ---- several runs a side ----
"$IPCLAB" compare -m p50 --fail-above 5 "$work/a1.json" "$work/a2.json" "$work/a3.json" -- \
	"$work/b1.json" "$work/b2.json" "$work/b3.json" >"$work/aa.txt" 2>"$work/err"
rc=$?
[ $rc = 0 ] || fail "A/A runs: exit $rc, expected 0: $(cat "$work/err")"
grep -q '^basis: runs (3 before, 3 after)' "$work/aa.txt" || fail "A/A runs: no basis line: $(head -8 "$work/aa.txt")"
grep -q 'p50 .*no change: within run-to-run noise .*\[runs\]' "$work/aa.txt" ||
	fail "A/A runs: not within run-to-run noise: $(grep p50 "$work/aa.txt")"
"$IPCLAB" compare -m p50 --fail-above 20 "$work/a1.json" "$work/a2.json" "$work/a3.json" -- \
	"$work/s1.json" "$work/s2.json" "$work/s3.json" >"$work/slow.txt" 2>"$work/err"
rc=$?
[ $rc = 3 ] || fail "1.7x slower runs, --fail-above 20: exit $rc, expected 3: $(cat "$work/err")"
grep -q 'p50 .*REGRESSION.*\[runs\]' "$work/slow.txt" || fail "1.7x slower runs: $(grep p50 "$work/slow.txt")"
"$IPCLAB" compare -f json -m p50,msgs_per_s "$work/a1.json" "$work/a2.json" -- "$work/s1.json" "$work/s2.json" \
	>"$work/slow.json" || fail "compare -f json with sides: exit $?"
python3 - "$work/slow.json" <<'PY' || fail "compare -f json with sides: basis or verdicts wrong"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["basis"]["runs_before"] == 2 and d["basis"]["runs_after"] == 2, d["basis"]
m = d["cells"][0]["metrics"]
for k in ("lat_p50_ns", "msgs_per_s"):
    assert m[k]["basis"] == "runs" and m[k]["verdict"] == "worse", m[k]
    assert m[k]["runs"]["n_before"] == 2, m[k]
PY
echo "ok   several runs a side: A/A within run-to-run noise, 1.7x worse (exit 3), basis said"

expect_usage_error "compare A1 -- (no after side)" compare "$work/a1.json" --
expect_usage_error "compare -- B1 (no before side)" compare -- "$work/b1.json"
expect_usage_error "compare with a missing run in a side" compare "$work/a1.json" -- "$work/b1.json" "$work/nosuch.json"
expect_usage_error "compare --by host" compare --by host
expect_usage_error "compare --label without --by" compare --label fleet_run=1 "$work/a1.json" "$work/b1.json"

# ---- --by machine ----
store=$work/fleet.db
"$IPCLAB" db import -q --db "$store" --label machine=host-a,fleet_run=7 "$work/a1.json" "$work/a2.json" "$work/a3.json" &&
"$IPCLAB" db import -q --db "$store" --label machine=host-b,fleet_run=7 "$work/s1.json" "$work/s2.json" "$work/s3.json" &&
"$IPCLAB" db import -q --db "$store" --label machine=host-c,fleet_run=8 "$work/b1.json" ||
	fail "db import: exit $?"
"$IPCLAB" compare --db "$store" --by machine --label fleet_run=7 -m p50 >"$work/by.txt" 2>"$work/err" ||
	fail "compare --by machine: exit $?: $(cat "$work/err")"
grep -q '^== host-b against host-a (3 and 3 runs) ==$' "$work/by.txt" || fail "--by machine: no host-b against host-a: $(head -3 "$work/by.txt")"
grep -q 'p50 .*worse \[runs\]' "$work/by.txt" || fail "--by machine: host-b not worse: $(grep p50 "$work/by.txt")"
grep -q 'host-c' "$work/by.txt" && fail "--by machine --label fleet_run=7: host-c (fleet_run=8) compared"
"$IPCLAB" compare --db "$store" --by machine --label fleet_run=7 --baseline machine=host-b -m p50 -f json \
	>"$work/by.json" || fail "compare --by machine --baseline machine=host-b: exit $?"
python3 - "$work/by.json" <<'PY' || fail "--by machine -f json: $(head -c 300 "$work/by.json")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["baseline"] == "host-b" and len(d["comparisons"]) == 1
c = d["comparisons"][0]
assert c["machine"] == "host-a", c["machine"]
assert c["cells"][0]["metrics"]["lat_p50_ns"]["verdict"] == "better"
PY
# a calibration run of host-a (env --calibrate's) is no side
"$IPCLAB" db import -q --db "$store" --label machine=host-a,kind=calibration "$work/cal.json" || fail "db import cal: exit $?"
"$IPCLAB" compare --db "$store" --by machine -m p50 >"$work/all.txt" 2>"$work/err" || fail "compare --by machine, all runs: exit $?: $(cat "$work/err")"
grep -q '^== host-b against host-a (3 and 3 runs) ==$' "$work/all.txt" && grep -q '^== host-c against host-a (1 and 3 runs) ==$' "$work/all.txt" ||
	fail "--by machine, all runs: $(grep '^==' "$work/all.txt" | tr '\n' ' ')"
expect_usage_error "--by machine --baseline machine=nosuch" compare --db "$store" --by machine --label fleet_run=7 --baseline machine=nosuch
expect_usage_error "--by machine, one machine" compare --db "$store" --by machine --label fleet_run=8
echo "ok   --by machine: each machine's stored runs a side, the baseline first by name or named"

# ---- one run a side: the stored calibration ----
"$IPCLAB" compare -m p50 "$work/a1.json" "$work/b3.json" >"$work/nocal.txt" || fail "compare without calibration: exit $?"
grep -q '^basis: repetitions of one run a side; this machine.s run-to-run drift is not calibrated' "$work/nocal.txt" ||
	fail "no calibration: basis not said: $(grep basis "$work/nocal.txt")"
"$IPCLAB" db import -q --db "$work/cal.db" --label kind=calibration "$work/cal.json" || fail "db import cal: exit $?"
"$IPCLAB" compare --db "$work/cal.db" -m p50 "$work/a1.json" "$work/b3.json" >"$work/cal.txt" ||
	fail "compare with calibration: exit $?"
grep -q '^basis: one run a side and this machine.s calibrated run-to-run drift (env --calibrate of lab' "$work/cal.txt" ||
	fail "calibration: basis not said: $(grep -A1 basis "$work/cal.txt")"
grep -q 'p50 .*no change: within run-to-run noise (calibrated drift 0.700..1.430) \[calibrated drift\]' "$work/cal.txt" ||
	fail "calibration: 1.15x not within the drift: $(grep p50 "$work/cal.txt")"
"$IPCLAB" compare --db "$work/cal.db" -m p50 --fail-above 20 "$work/a1.json" "$work/s2.json" >"$work/cal2.txt"
rc=$?
[ $rc = 3 ] && grep -q 'p50 .*REGRESSION.*\[calibrated drift\]' "$work/cal2.txt" ||
	fail "calibration: 2x beyond the drift: exit $rc, $(grep p50 "$work/cal2.txt")"
echo "ok   one run a side: the stored calibration used (within it no change, 2x worse), the basis said"

[ $fails = 0 ] || { echo "$fails check(s) failed"; exit 1; }
