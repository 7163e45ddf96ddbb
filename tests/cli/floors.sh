#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The machine's floors and a run's canary: env --floors gives four positive
# figures, the cache line's round trip below a wake-to-run; run --floors
# puts them in the record's env.floors; every run records env.canary.start
# and .end; compare gives no verdict on two records whose canaries are 1.9x
# apart (or one whose own start and end are), and its verdict on a pair
# with equal canaries; history marks the point of another state. Behaviour,
# not speed: no figure is held to a bound.
. "$(dirname "$0")/../lib/common.sh"
data=$(cd "$(dirname "$0")/../data" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# ---- env --floors ------------------------------------------------------------------

# A figure is null where too few of its round trips or wakeups finished
# by its deadline (a machine loaded by other work, as CI's parallel tests
# load it; measured, not failed): such a run is tried once more, and
# twice null fails.
floors_ok() {
	"$IPCLAB" env --floors -f json >"$work/floors.json" 2>"$work/err" ||
		{ fail "env --floors -f json: exit $?: $(cat "$work/err")"; return 0; }
	python3 - "$work/floors.json" <<'PY'
import json, sys
f = json.load(open(sys.argv[1]))
keys = ("cacheline_rtt_ns", "wake_idle_ns", "wake_busy_ns", "syscall_ns")
if any(f[k] is None for k in keys):
    sys.exit(3)
for k in keys:
    assert isinstance(f[k], (int, float)) and f[k] > 0, k
    s = f["spread"][k]
    assert s["n"] > 0 and s["p10_ns"] <= f[k] <= s["p90_ns"], (k, s)
assert f["cacheline_rtt_ns"] < f["wake_idle_ns"], f
assert len(f["cpus"]) == 2 and f["cpus"][0] != f["cpus"][1], f["cpus"]
PY
}
floors_ok
rc=$?
[ $rc = 3 ] && { floors_ok; rc=$?; }
[ $rc = 0 ] && echo "ok   env --floors: four figures above zero, cache line below wake-to-run" ||
	fail "env --floors -f json (rc $rc): $(tr -d '\n ' <"$work/floors.json" | head -c 400)"
# the text, on the CPUs of --pin
"$IPCLAB" env --floors --pin 1:0 >"$work/floors.txt" 2>&1 || fail "env --floors --pin 1:0: exit $?"
grep -q '^floors on CPUs 1 (waker) and 0 (woken)$' "$work/floors.txt" ||
	fail "env --floors --pin 1:0: not on CPUs 1, 0: $(head -1 "$work/floors.txt")"
for l in "cache-line round trip" "wake-to-run, idle CPU" "wake-to-run, busy CPU" "system call"; do
	grep -q "$l .*(p10 .*, p90 .*, n [0-9]*)" "$work/floors.txt" || fail "env --floors: no line '$l': $(cat "$work/floors.txt")"
done
echo "ok   env --floors --pin 1:0: a line per floor, on CPUs 1 and 0"
expect_usage_error "env --check --floors" env --check --floors
expect_usage_error "env --floors --sample" env --floors --sample 1s
expect_usage_error "env --pin without --check or --floors" env --pin split

# ---- the record: canary in every run, floors with --floors --------------------------------

records_ok() {	# as floors_ok: 3 when a figure came out null (by its deadline)
	"$IPCLAB" run -t pipe -p pingpong -n 200 -q -f json -o "$work/run.json" >/dev/null 2>"$work/err" ||
		{ fail "run: exit $?: $(cat "$work/err")"; return 0; }
	"$IPCLAB" run -t pipe -p pingpong -n 200 --floors -q -f json -o "$work/floors-run.json" >/dev/null 2>"$work/err" ||
		{ fail "run --floors: exit $?: $(cat "$work/err")"; return 0; }
	python3 - "$work/run.json" "$work/floors-run.json" <<'PY'
import json, sys
plain, floors = (json.load(open(p))["env"] for p in sys.argv[1:])
keys = ("cacheline_rtt_ns", "wake_idle_ns", "wake_busy_ns", "syscall_ns")
for e in (plain, floors):
    for k in ("start", "end"):
        c = e["canary"][k]
        assert len(c["cpus"]) == 2, c
        if c["cacheline_rtt_ns"] is None or c["pipe_rtt_ns"] is None:
            sys.exit(3)
        assert c["cacheline_rtt_ns"] > 0 and c["pipe_rtt_ns"] > 0, c
assert "floors" not in plain, "floors without --floors"
f = floors["floors"]
if any(f[k] is None for k in keys):
    sys.exit(3)
for k in keys:
    assert f[k] > 0, k
PY
}
records_ok
rc=$?
[ $rc = 3 ] && { records_ok; rc=$?; }
[ $rc = 0 ] && echo "ok   records: env.canary.start and .end in each, env.floors with --floors only" ||
	fail "records: canary or floors wrong (rc $rc): $(tr -d '\n ' <"$work/floors-run.json" | head -c 300)"
# the table puts a round trip across two CPUs against the floors
"$IPCLAB" run -t pipe -p pingpong -n 200 --pin split --floors >"$work/floors-run.txt" 2>"$work/err" ||
	fail "run --floors -f table: exit $?: $(cat "$work/err")"
grep -q '^  pipe pingpong 64B: RTT p50 .* = 2 wake-to-run onto an idle CPU of ' "$work/floors-run.txt" &&
	echo "ok   run --floors: the pipe's round trip put against two wakeups" ||
	fail "run --floors: no line against the floors: $(tail -3 "$work/floors-run.txt")"
"$IPCLAB" run -t null -n 10 --dry-run -q -f json -o "$work/dry.json" >/dev/null 2>&1 || fail "run --dry-run: exit $?"
python3 -c 'import json, sys; assert "canary" not in json.load(open(sys.argv[1]))["env"]' "$work/dry.json" &&
	echo "ok   --dry-run: no canary (nothing ran)" || fail "--dry-run measured a canary"

# ---- compare: canaries of two modes ---------------------------------------------------

# The fixtures of tests/cli/compare*.sh with canaries: CL and PIPE at the
# start, and at the end (ECL, EPIPE; default the same).
with_canary() {
	python3 - "$1" "$2" "$3" "$4" "${5:-$3}" "${6:-$4}" <<'PY'
import json, sys
src, dst, cl, pipe, ecl, epipe = sys.argv[1:]
d = json.load(open(src))
one = lambda c, p: {"cacheline_rtt_ns": float(c), "pipe_rtt_ns": float(p), "cpus": [0, 1]}
d["env"]["canary"] = {"start": one(cl, pipe), "end": one(ecl, epipe)}
json.dump(d, open(dst, "w"))
PY
}
with_canary "$data/compare-before.json" "$work/b.json" 110 4000
with_canary "$data/compare-after.json" "$work/slow.json" 209 4100	# 1.9x on the cache line
with_canary "$data/compare-after.json" "$work/same.json" 112 4050
with_canary "$data/compare-after.json" "$work/drift.json" 112 4050 470 17000

"$IPCLAB" compare "$work/b.json" "$work/slow.json" >"$work/slow.txt" 2>&1
rc=$?
[ $rc = 0 ] || fail "compare of two modes: exit $rc"
grep -q 'the machine was in another state (cache-line RTT 1.9x): not comparable' "$work/slow.txt" ||
	fail "compare of two modes: not said: $(head -c 600 "$work/slow.txt")"
# the metrics' lines: a ratio, then no verdict of better or worse
grep '^  msgs/s\|^  p50 ' "$work/slow.txt" >"$work/slow.rows"
[ -s "$work/slow.rows" ] && ! grep -q 'better\|worse\|no change\|within spread' "$work/slow.rows" ||
	fail "compare of two modes: a verdict given: $(cat "$work/slow.rows")"
echo "ok   compare, canaries 1.9x apart: not comparable, no verdict"
"$IPCLAB" compare -f json --fail-above 5 "$work/b.json" "$work/slow.json" >"$work/slow.cmp.json" 2>&1
rc=$?
python3 - "$work/slow.cmp.json" <<'PY' && [ $rc = 0 ] && echo "ok   compare -f json: canary.comparable false, every verdict 'not comparable', no regression" || fail "compare -f json of two modes (exit $rc): $(head -c 400 "$work/slow.cmp.json")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["canary"]["comparable"] is False and "another state" in d["canary"]["why"], d["canary"]
vs = [m["verdict"] for c in d["cells"] if c["compared"] for m in c["metrics"].values()]
assert vs and set(vs) == {"not comparable"}, vs
assert d["regressions"] == 0
PY
"$IPCLAB" compare -f markdown "$work/b.json" "$work/slow.json" 2>&1 | grep -q '^\*\*Not comparable:\*\* the machine was in another state' &&
	echo "ok   compare -f markdown: said" || fail "compare -f markdown: not comparable not said"

"$IPCLAB" compare "$work/b.json" "$work/same.json" >"$work/same.txt" 2>&1 || fail "compare, one mode: exit $?"
grep -q '^  p50 .*worse' "$work/same.txt" && ! grep -q 'not comparable' "$work/same.txt" &&
	echo "ok   compare, equal canaries: the verdict (p50 worse)" ||
	fail "compare, equal canaries: $(grep '^  p50\|canary' "$work/same.txt")"
"$IPCLAB" compare "$work/b.json" "$work/drift.json" 2>&1 |
	grep -q 'the machine changed state during the after run (cache-line RTT 4.2x from its start to its end): not comparable' &&
	echo "ok   compare: a run whose start and end canaries differ is not comparable" ||
	fail "compare: a state change within the after run not said"
# Two cells of one run in interleaved rounds share its drift: a change of
# state mid-run fell on both sides alike, so they are compared (and the
# drift said); the same cells without rounds (one after the other) are not.
one_run_pair() {	# REPEAT: a run of two null cells, its end canary 4.2x its start, split
	"$IPCLAB" run -t null,null -p pingpong -n 300 -q $1 -f json -o "$work/one.json" || return 1
	python3 - "$work/one.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["env"]["canary"] = {"start": {"cacheline_rtt_ns": 112.0, "pipe_rtt_ns": 4050.0, "cpus": [0, 1]},
                      "end": {"cacheline_rtt_ns": 470.0, "pipe_rtt_ns": 17000.0, "cpus": [0, 1]}}
for i, name in enumerate("ab"):
    json.dump(dict(d, results=[d["results"][i]]), open(sys.argv[1] + "." + name, "w"))
PY
}
one_run_pair "--repeat 3" || fail "one run, rounds: run: exit $?"
"$IPCLAB" compare -f json "$work/one.json.a" "$work/one.json.b" >"$work/one.cmp" 2>&1
python3 - "$work/one.cmp" <<'PY' && echo "ok   compare: one run's interleaved cells share its drift: compared, one_run said" || fail "compare of one run's interleaved cells: $(head -c 400 "$work/one.cmp")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["canary"]["one_run"] is True and d["canary"]["comparable"] is True, d["canary"]
vs = [m["verdict"] for c in d["cells"] if c["compared"] for m in c["metrics"].values()]
assert vs and "not comparable" not in vs, vs
PY
"$IPCLAB" compare "$work/one.json.a" "$work/one.json.b" 2>&1 |
	grep -q "^canary: one run's cells, interleaved: its change of state (cache-line RTT 4.2x from start to end) fell on both sides alike" ||
	fail "compare of one run's interleaved cells: the shared drift not said"
one_run_pair "" || fail "one run, no rounds: run: exit $?"
"$IPCLAB" compare "$work/one.json.a" "$work/one.json.b" 2>&1 | grep -q 'changed state during the before run .*not comparable' &&
	echo "ok   compare: one run's cells without rounds (one after the other): not comparable" ||
	fail "compare of one run's cells without rounds: compared"
# a record without a canary (older files) is compared as before
"$IPCLAB" compare "$data/compare-before.json" "$data/compare-after.json" 2>&1 | grep -q '^  p50 .*worse' ||
	fail "compare without canaries: no verdict"

# ---- history: the point of another state is marked ---------------------------------------

unset IPCLAB_DB
db=$work/h.db
i=0
for cl in 110 115 470 112 108; do	# the third run in the slow mode
	i=$((i + 1))
	with_canary "$data/compare-before.json" "$work/h$i.json" "$cl" 4000
	sed -i "s/2025-01-01T00:00:00Z/2025-01-0${i}T00:00:00Z/" "$work/h$i.json"
	"$IPCLAB" db import -q --db "$db" --label "commit=c$i" "$work/h$i.json" ||
		fail "db import h$i: exit $?"
done
"$IPCLAB" history --db "$db" -t pipe -p pingpong -f json -o "$work/hist.json" 2>"$work/err" ||
	fail "history -f json: exit $?: $(cat "$work/err")"
python3 - "$work/hist.json" <<'PY' && echo "ok   history -f json: the slow-mode point, and it alone, other_state" || fail "history -f json: $(head -c 600 "$work/hist.json")"
import json, sys
d = json.load(open(sys.argv[1]))
for s in d["series"]:
    marks = [(p["labels"]["commit"], p["other_state"]) for p in s["points"]]
    assert [c for c, o in marks if o] == ["c3"], marks
    st = [p["state"] for p in s["points"] if p["other_state"]][0]
    assert st.startswith("another state (cache-line RTT 4."), st
PY
"$IPCLAB" history --db "$db" -t pipe -p pingpong >"$work/hist.txt" 2>&1 || fail "history: exit $?"
grep -q 'commit=c3 .* ! another state (cache-line RTT 4\.' "$work/hist.txt" &&
	! grep 'commit=c[1245]' "$work/hist.txt" | grep -q ' ! ' && echo "ok   history: the slow-mode point marked in the table" ||
	fail "history table: $(cat "$work/hist.txt")"

finish
