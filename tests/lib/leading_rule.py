# SPDX-License-Identifier: MIT
"""The leading-cause rule, checked on result files of one traced cell run
more than once (tests/cli/trace_leading*.sh): every share has a 95 %
interval that holds it; the intervals are over UNIT (exchanges or slices)
counted between LO and HI, the other unit's count null; a leader is named
only where its interval lies above every other share's and it is not
"unattributed" (time the trace did not place), with its knob in the
sentence; otherwise the sentence says there is no single leading cause
(over the unit, "run longer (-d)") and gives no knob; two runs never name
two different leaders.

usage: python3 leading_rule.py UNIT LO HI FILE...
"""
import json
import sys


def main(unit, lo, hi, files):
    other = "ci_slices" if unit == "exchanges" else "ci_exchanges"
    count = "ci_" + unit
    words = "slices of the window" if unit == "slices" else "exchanges"
    bad, leaders = [], []
    for f in files:
        tr = json.load(open(f))["results"][0]["trace"]
        c = tr["cause"]
        sh = c["shares"]
        name = f.rsplit("/", 1)[1]
        for s in sh:
            ci = s.get("pct_ci95")
            if not (isinstance(ci, list) and len(ci) == 2 and ci[0] <= s["pct"] <= ci[1]):
                bad.append("%s: %s %.1f %% has no interval holding it: %r" % (name, s["name"], s["pct"], ci))
        if not c.get(count) or not lo <= c[count] <= hi:
            bad.append("%s: intervals over %r %s" % (name, c.get(count), unit))
        if c.get(other) is not None:
            bad.append("%s: intervals over %r (%s)" % (name, c[other], other))
        if "leading" not in c:
            bad.append("%s: no 'leading' key" % name)
            continue
        lead, sent = c["leading"], c["sentence"]
        stable = all(sh[0]["pct_ci95"][0] > s["pct_ci95"][1] for s in sh[1:]) if bad == [] else None
        # what the trace did not place never leads
        if stable and sh[0]["name"] == "unattributed":
            stable = False
        # user and kernel work split in the window's proportion (no
        # syscalls traced): over slices neither leads the other
        pair = {"user work", "kernel work"}
        if stable and unit == "slices" and tr.get("sys_from") == "getrusage" and len(sh) > 1 and \
           {sh[0]["name"], sh[1]["name"]} == pair:
            stable = False
        if lead is None:
            if not sent.startswith("no single leading cause: ") or \
               "%s; run longer (-d)" % words not in sent:
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
    decided = [x for x in leaders if x is not None]
    if len(set(decided)) > 1:
        bad.append("the same cell named different leading causes: %s" % ", ".join(decided))
    for b in bad:
        print("FAIL:", b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]))
