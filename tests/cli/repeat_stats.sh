#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Trust under noise, on real null cells: --repeat N gives each median its
# 95 % interval (and says when 3 rounds are too few for one); --repeat auto
# converges in a few rounds on a quiet ping-pong cell (its p50 rides out
# load), and on a stream cell (msgs/s: its CPU share) beside a hog on its
# CPU that comes and goes it stops at the cap and says it did not converge; --budget ends the rounds; two runs of one cell (an A/A pair,
# interleaved in one run) compare as "no change", and a ping-pong 3 us
# slower (--think-ns 3us on one CPU: both sides' busy time lands in the round
# trip) as "worse" with its p-value and ratio interval; --fail-above fails it
# only past the interval. Bad --repeat and --budget values are one-line
# errors.
. "$(dirname "$0")/../lib/common.sh"
work=$(mktemp -d)
hog=
cleanup() {
	[ -n "$hog" ] && kill "$hog" 2>/dev/null && wait "$hog" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
before=$(leftovers)
cell=(-t null -p pingpong -n 3k --pin 0:0 -q)
stream=(-t null -p stream -n 10k --pin 0:0 -q)

# json FILE PYTHON: assertions on a result file ($d is the parsed JSON)
json() {
	python3 - "$1" <<PY
import json, sys
d = json.load(open(sys.argv[1]))
$2
PY
}

# split FILE: its two cells into FILE.a and FILE.b, each a result file
split() {
	python3 - "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for i, name in enumerate("ab"):
    one = dict(d, results=[d["results"][i]])
    json.dump(one, open(sys.argv[1] + "." + name, "w"))
PY
}

# ---- --repeat N: the interval, or why there is none -----------------------------------
"$IPCLAB" run "${cell[@]}" --repeat 3 -f json -o "$work/r3.json" || fail "--repeat 3: exit $?"
json "$work/r3.json" '
r = d["results"][0]["repeat"]
assert r["rounds"] == 3 and r["ci95"] is None and r["ci95_note"] == "ci95 needs >= 6 rounds", r
assert r["lat_p50_ns"]["ci95"] is None and len(r["lat_p50_ns"]["values"]) == 3, r["lat_p50_ns"]
assert "ci95_pct" not in d["results"][0]["metrics"]
print("ok   --repeat 3: no interval, and the file says it needs 6 rounds")' || fail "--repeat 3: json"
"$IPCLAB" run "${cell[@]}" --repeat 3 >"$work/r3.txt" || fail "--repeat 3 table: exit $?"
grep -q '^ci95 needs >= 6 rounds: 1 cell ran 3' "$work/r3.txt" || fail "--repeat 3 table: no note: $(tail -n 3 "$work/r3.txt")"
grep -q '±' "$work/r3.txt" && fail "--repeat 3 table: an interval shown"

# ---- --repeat auto on a quiet cell: converged, in few rounds ---------------------------
# Quiet only where the machine is: when the tool itself flags the cell
# noisy (spread over 10 %) or bimodal, other work on this CPU made it so,
# and convergence is not asked of it (said, not failed).
"$IPCLAB" run "${cell[@]}" --repeat auto -f json -o "$work/quiet.json" || fail "--repeat auto: exit $?"
json "$work/quiet.json" '
res = d["results"][0]
r, m = res["repeat"], res["metrics"]
assert r["target_pct"] == 5 and 6 <= r["rounds"] <= 30 and len(r["lat_p50_ns"]["values"]) == r["rounds"], r
lo, hi = r["ci95"]
med = m["lat_p50_ns"]
assert lo <= med <= hi, (lo, med, hi)
if not r["converged"] and (m["noisy"] or m["bimodal"]):
    print("skip --repeat auto, quiet: this machine is busy (p50 spread %.0f %%%s), not quiet" %
          (r["lat_p50_ns"]["spread_pct"], ", bimodal" if m["bimodal"] else ""))
    sys.exit(0)
assert r["converged"] is True and r["stopped_by"] == "converged" and r["rounds"] < 30, r
assert max(med - lo, hi - med) <= 0.05 * med and m["converged"] is True and m["ci95_pct"] <= 5
print("ok   --repeat auto, quiet: converged in %d rounds, p50 %d ns in [%d, %d]" % (r["rounds"], med, lo, hi))' ||
	fail "--repeat auto, quiet: json"
"$IPCLAB" run "${cell[@]}" --repeat 6 >"$work/six.txt" || fail "--repeat 6 table: exit $?"
grep -qE 'RTT +[0-9.]+[nu]s ±[0-9.]+%|RTT +[0-9.]+[nu]s/[0-9.]+[nu]s' "$work/six.txt" ||
	fail "table: no ± (or modes) on the headline: $(sed -n 3p "$work/six.txt")"
grep -q "^±: the 95 % interval of the headline's median\|^a/b: bimodal" "$work/six.txt" ||
	fail "table: ± not explained: $(tail -n 2 "$work/six.txt")"

# ---- --repeat auto beside a hog on the cell's CPU: the cap, not converged ---------------
# busy for 50 to 250 ms, idle for as long, for ever: some rounds run beside
# it (a smaller share of the CPU), some not
taskset -c 0 python3 -c '
import random, time
while True:
    end = time.monotonic() + random.uniform(0.05, 0.25)
    while time.monotonic() < end:
        pass
    time.sleep(random.uniform(0.05, 0.25))
' &
hog=$!
"$IPCLAB" run "${stream[@]}" --repeat auto,max=10 -f json -o "$work/hog.json" || fail "--repeat auto, hog: exit $?"
json "$work/hog.json" '
res = d["results"][0]
r = res["repeat"]
assert r["rounds"] == 10 and r["converged"] is False and r["stopped_by"] == "cap", r
assert res["metrics"]["converged"] is False
print("ok   --repeat auto beside a hog: stopped at the cap (10 rounds), not converged, spread %.0f %%" %
      r["msgs_per_s"]["spread_pct"])' || fail "--repeat auto, hog: json"
"$IPCLAB" run "${stream[@]}" --repeat auto,max=10 >"$work/hog.txt" || fail "--repeat auto, hog table: exit $?"
grep -q '^--repeat auto: 1 cell did not converge within ±5% in 10 rounds (stopped by cap):$' "$work/hog.txt" &&
	grep -qE '^  null/stream 64B process pin 0:0 sched other: (ci95 ±[0-9.]+%|ci95 needs).*, spread [0-9.]+%' "$work/hog.txt" ||
	fail "table: the unconverged cell not listed: $(tail -n 3 "$work/hog.txt")"
kill "$hog" && wait "$hog" 2>/dev/null
hog=

# ---- --budget: no round past it -------------------------------------------------------
start=$(date +%s)
"$IPCLAB" run -t null -p stream -n 2k -q --repeat auto=0.0001,max=1000 --budget 2s -f json -o "$work/budget.json" ||
	fail "--budget: exit $?"
secs=$(( $(date +%s) - start ))
json "$work/budget.json" '
r = d["results"][0]["repeat"]
assert r["stopped_by"] == "budget" and r["converged"] is False and 1 <= r["rounds"] < 1000, r
print("ok   --budget 2s: stopped by the budget after %d rounds" % r["rounds"])' || fail "--budget: json"
[ "$secs" -le 30 ] || fail "--budget 2s: ran ${secs}s"

# ---- A/A: two runs of one cell read "no change" ---------------------------------------
# Two identical cells of one run, interleaved, split into two files. At
# p < 0.05 an A/A pair reads changed once in 20 at most by design: only a
# second pair reading changed as well (1 in 400) fails. A pair in which
# other work on the machine made one file bimodal and not the other reads
# "cannot compare", and one whose canary changed from start to end "not
# comparable": no false change either.
aa_pair() {
	"$IPCLAB" run -t null,null -p pingpong -n 3k --pin 0:0 -q --repeat 8 -f json -o "$work/aa.json" &&
		split "$work/aa.json" &&
		"$IPCLAB" compare -f json --fail-above 25 "$work/aa.json.a" "$work/aa.json.b" >"$work/aa.cmp"
}
aa_same() {
	json "$work/aa.cmp" '
v = d["cells"][0]["metrics"]["lat_p50_ns"]
assert v["verdict"] in ("no change", "cannot compare", "not comparable"), v
assert v["regressed"] is False and d["regressions"] == 0, v
if v["verdict"] != "no change":	# bimodal apart, or the run changed state (its canary)
    print("ok   A/A: p50 %s" % v["why"])
    sys.exit(0)
if v["test"] is None:		# both bimodal: compared mode by mode
    assert all(m["verdict"] in ("no change", "untested") for m in v["modes"].values()), v
    print("ok   A/A: p50 no change in either mode")
    sys.exit(0)
assert v["test"] == "mann-whitney" and v["n_before"] == 8 and v["n_after"] == 8, v
lo, hi = v["ratio_ci95"]
assert 0 <= v["p_value"] <= 1 and lo <= hi, v
print("ok   A/A: p50 no change (p %.2f, ratio %.3f..%.3f)" % (v["p_value"], lo, hi))'
}
aa_pair || fail "A/A: run or compare failed (exit $?)"
aa_same || { aa_pair && aa_same; } || fail "A/A: two pairs read changed: $(head -c 600 "$work/aa.cmp")"

# ---- 3 us slower: worse, with p and the interval; --fail-above past the interval only --
# As above, asked only of cells the tool does not find noisy or bimodal: a
# busy machine's slow mode is itself a few us.
"$IPCLAB" run -t null -p pingpong -n 5k --pin 0:0 -q --think-ns 0,3us --repeat 10 -f json -o "$work/slow.json" ||
	fail "slower: run: exit $?"
json "$work/slow.json" 'assert [r["think_ns"] for r in d["results"]] == [0, 3000]' || fail "slower: --think-ns did not reach the cells"
split "$work/slow.json"
"$IPCLAB" compare -f json --ignore think_ns --fail-above 5 "$work/slow.json.a" "$work/slow.json.b" >"$work/slow.cmp"
rc=$?
if json "$work/slow.cmp" '
c = d["cells"][0]
sys.exit(0 if any(c["noisy"].values()) or any(c["bimodal"].values()) else 1)'; then
	echo "skip 3 us slower: this machine is busy (a cell noisy or bimodal), not quiet: $(
		json "$work/slow.cmp" 'print(d["cells"][0]["metrics"]["lat_p50_ns"]["verdict"])')"
else
	[ $rc = 3 ] || fail "slower: compare --fail-above 5: exit $rc, expected 3"
	json "$work/slow.cmp" '
v = d["cells"][0]["metrics"]["lat_p50_ns"]
lo, hi = v["ratio_ci95"]
assert v["verdict"] == "worse" and v["p_value"] < 0.05 and lo > 1.05 and v["regressed"] is True, v
print("ok   3 us slower: worse, p %.4f, ratio %.3f..%.3f, regressed past 5 %%" % (v["p_value"], lo, hi))' ||
		fail "slower: json"
	"$IPCLAB" compare --ignore think_ns "$work/slow.json.a" "$work/slow.json.b" |
		grep -qE '^  p50 .* [0-9.]+\.\.[0-9.]+ +[0-9.e-]+ .* worse' ||
		fail "slower: text: no interval, p and worse on the p50 line"
fi
# whatever the machine: the interval is never past 200 %, so this never fails
"$IPCLAB" compare -f json --ignore think_ns --fail-above 200 "$work/slow.json.a" "$work/slow.json.b" >"$work/slow200.cmp" ||
	fail "slower: --fail-above 200 failed (exit $?): the interval is not past 200 %"
json "$work/slow200.cmp" '
v = d["cells"][0]["metrics"]["lat_p50_ns"]
assert v["verdict"] in ("worse", "no change", "cannot compare") and v["regressed"] is False, v' ||
	fail "slower: --fail-above 200: json"

# ---- bad input ------------------------------------------------------------------------
expect_usage_error "--repeat auto=0" run -t null --repeat auto=0 -q
expect_usage_error "--repeat auto=x" run -t null --repeat auto=x -q
expect_usage_error "--repeat auto,max=3" run -t null --repeat auto,max=3 -q
expect_usage_error "--repeat auto,cap=9" run -t null --repeat auto,cap=9 -q
expect_usage_error "--budget without auto" run -t null --budget 1s -q
expect_usage_error "--budget 0" run -t null --repeat auto --budget 0 -q

after=$(leftovers)
[ -z "$(new_leftovers "$before" "$after")" ] || fail "left behind: $(new_leftovers "$before" "$after")"
finish
