#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# --trace on a stream cell (pipe, half a second): its cause split has no
# exchanges to draw from, so each share's 95 % interval comes from the
# window's slices (ci_slices); every share has one that holds it; a
# leading cause is named only where its interval lies above every other
# share's, and then with its knob; otherwise the sentence says there is no
# single leading cause over the slices and gives no knob. The same cell
# run twice never names two different leading causes. The table and the
# page print the intervals. Needs --trace (root, BPF): skipped otherwise.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/trace_skip.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# A timeline (--trace=events) makes a traced cell run one untraced/traced
# pair instead of three: the same sums, a third of the time. The cell runs
# in the real-time class where it may, so that the machine's other tasks
# (other tests, a build) do not make its two runs two different cells: a
# stream under a changing load is preempted in one run and waits for a CPU
# in the next, and each run's intervals speak of its own window only.
sched=
"$IPCLAB" run -t null -n 10 --sched fifo:10 -o /dev/null 2>/dev/null && sched="--sched fifo:10"
for i in 1 2; do
	# shellcheck disable=SC2086
	"$IPCLAB" run -t pipe -p stream $sched -d 0.5s --trace=events "$work/tl$i.json" --trace-span 1ms \
		-f json -o "$work/run$i.json" 2>"$work/err" ||
		{ echo "FAIL: run $i did not run: $(head -1 "$work/err")"; exit 1; }
done

python3 - "$work/run1.json" "$work/run2.json" <<'PY' || exit 1
import json, sys
bad, leaders = [], []
for f in sys.argv[1:]:
    c = json.load(open(f))["results"][0]["trace"]["cause"]
    sh = c["shares"]
    name = f.rsplit("/", 1)[1]
    for s in sh:
        ci = s.get("pct_ci95")
        if not (isinstance(ci, list) and len(ci) == 2 and ci[0] <= s["pct"] <= ci[1]):
            bad.append("%s: %s %.1f %% has no interval holding it: %r" % (name, s["name"], s["pct"], ci))
    # half a second: 120 of the tracer's 4.2 ms slices, joined two by two
    if not c.get("ci_slices") or not 30 <= c["ci_slices"] <= 64:
        bad.append("%s: intervals over %r slices" % (name, c.get("ci_slices")))
    if c.get("ci_exchanges") is not None:
        bad.append("%s: a stream's intervals over %r exchanges" % (name, c["ci_exchanges"]))
    if "leading" not in c:
        bad.append("%s: no 'leading' key" % name)
        continue
    lead, sent = c["leading"], c["sentence"]
    stable = all(sh[0]["pct_ci95"][0] > s["pct_ci95"][1] for s in sh[1:]) if bad == [] else None
    if lead is None:
        if not sent.startswith("no single leading cause: ") or \
           "slices of the window; run longer (-d)" not in sent:
            bad.append("%s: no leader, but the sentence says %r" % (name, sent))
        if " change it most" in sent:
            bad.append("%s: a knob given with no leader: %r" % (name, sent))
        if stable:
            bad.append("%s: %s's interval is above every other, but it is not named" % (name, sh[0]["name"]))
    else:
        if lead != sh[0]["name"] or stable is False:
            bad.append("%s: %s named the leader, its interval not above the others: %r" % (name, lead, sh))
        if not sent.startswith(lead) or " change it most" not in sent:
            bad.append("%s: leader %s, sentence %r" % (name, lead, sent))
    leaders.append(lead)
    print("     %s: leading %s; %s" % (name, lead, ", ".join(
        "%s %.0f %% (%.0f-%.0f)" % (s["name"], s["pct"], *s["pct_ci95"]) for s in sh[:3])))
if len(leaders) == 2 and None not in leaders and leaders[0] != leaders[1]:
    bad.append("the same cell named two leading causes: %s, then %s" % tuple(leaders))
for b in bad:
    print("FAIL:", b)
sys.exit(1 if bad else 0)
PY

# the table: each share of the cause line with its interval; the page too
"$IPCLAB" run -t pipe -p stream -d 0.3s --trace=events "$work/tl3.json" --trace-span 1ms \
	--html "$work/run3.html" >"$work/table.txt" 2>/dev/null
grep -Eq '^    cause \((sender|receiver)\): [A-Za-z ()]+ [0-9]+% \([0-9]+-[0-9]+%\)' "$work/table.txt" ||
	fail "no intervals on the table's cause line: $(grep 'cause (' "$work/table.txt")"
grep -Eq 'class="cause"><b>cause:</b> [A-Za-z ()]+ [0-9.]+ % \([0-9]+&ndash;[0-9]+ %\)' "$work/run3.html" ||
	fail "no intervals on the page's cause line: $(grep -o 'class="cause">.\{0,120\}' "$work/run3.html")"
[ "$fails" = 0 ] && echo "ok   trace_leading_slices" || exit 1
