#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `ipclab suite seeds`: a seed section tests its thread's own question.
# The cheapest section, seed-001 --quick (a pipe grid of 60 ms cells, three
# repetitions each), prints "Question:", "Hypothesis:", "Answer:" and "Verdict:"
# lines; the result file's sections[].why holds the same question, answer
# and verdict (one of the five), hypotheses with claim, conditions,
# reproduced and evidence, compared {of, ratio, ratio_ci95, ci_basis} and
# tests with knob, of, ratio, ratio_ci95, ci_basis (what the interval is
# over, or null with none), p_value and verdict; the page shows the
# answer in a box of its own, outside the section's scrolled text. The
# headline (the busiest cell over the least busy) has its interval over
# the repetitions at --quick too.
. "$(dirname "$0")/../lib/common.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

out=$("$IPCLAB" suite seeds --quick --section seed-001 -f json -o "$tmp/s.json" --html "$tmp/s.html" 2>&1) ||
	{ echo "FAIL: suite seeds --quick --section seed-001 exited $?: $out"; exit 1; }
for k in Question Hypothesis Answer Verdict; do
	printf '%s\n' "$out" | grep -q "^$k: " || { echo "FAIL: no '$k:' line in: $out"; exit 1; }
done
# the section's time and the suite's, as they end
printf '%s\n' "$out" | grep -qE '^\(seed-001 took [0-9]+ s\)$' &&
	printf '%s\n' "$out" | grep -qE '^suite seeds --quick: 1 section in [0-9.]+ min$' ||
	{ echo "FAIL: no section or suite time in: $(printf '%s\n' "$out" | tail -n 3)"; exit 1; }
printf '%s\n' "$out" | grep '^Answer: ' >"$tmp/answer"
printf '%s\n' "$out" | grep '^Verdict: ' >"$tmp/verdict"
python3 - "$tmp/s.json" "$tmp/answer" "$tmp/verdict" "$tmp/s.html" <<-'PY' || exit 1
	import html, json, sys
	secs = json.load(open(sys.argv[1]))["sections"]
	w = [s for s in secs if s["name"] == "seed-001"][0].get("why")
	if not isinstance(w, dict):
	    sys.exit("FAIL: sections[].why missing: %r" % secs)
	five = {"confirmed", "refuted", "no difference", "not reproduced here", "too noisy"}
	if w.get("verdict") not in five:
	    sys.exit("FAIL: verdict %r is not one of %s" % (w.get("verdict"), sorted(five)))
	for k, t in (("question", str), ("answer", str), ("hypotheses", list), ("tests", list),
	             ("compared", dict)):
	    if not isinstance(w.get(k), t) or not w[k]:
	        sys.exit("FAIL: why.%s is not a non-empty %s: %r" % (k, t.__name__, w.get(k)))
	for h in w["hypotheses"]:
	    if set(h) != {"claim", "conditions", "reproduced", "evidence"} or type(h["reproduced"]) is not bool:
	        sys.exit("FAIL: a hypothesis's fields: %r" % h)
	bases = {None, "repetitions", "exchanges"}
	if set(w["compared"]) != {"of", "ratio", "ratio_ci95", "ci_basis"} or w["compared"]["ci_basis"] not in bases:
	    sys.exit("FAIL: compared's fields: %r" % w["compared"])
	if (w["compared"]["ratio_ci95"] is None) != (w["compared"]["ci_basis"] is None):
	    sys.exit("FAIL: an interval without its basis, or a basis without one: %r" % w["compared"])
	if w["compared"]["ci_basis"] != "repetitions" or len(w["compared"]["ratio_ci95"]) != 2:
	    sys.exit("FAIL: the headline has no interval over the repetitions: %r" % w["compared"])
	for t in w["tests"]:
	    if set(t) != {"knob", "of", "ratio", "ratio_ci95", "ci_basis", "p_value", "verdict"} or \
	       t["verdict"] not in five or t["ci_basis"] not in bases or \
	       (t["ratio_ci95"] is None) != (t["ci_basis"] is None):
	        sys.exit("FAIL: a test's fields: %r" % t)
	if open(sys.argv[2]).read().strip() != "Answer: " + w["answer"]:
	    sys.exit("FAIL: the printed answer is not the file's: %r" % w["answer"])
	if open(sys.argv[3]).read().strip() != "Verdict: " + w["verdict"]:
	    sys.exit("FAIL: the printed verdict is not the file's: %r" % w["verdict"])
	page = open(sys.argv[4]).read()
	box = page.find('<div class="why">')
	if box < 0 or html.escape(w["answer"], quote=False) not in page[box:page.find("</div>", box)]:
	    sys.exit("FAIL: the page has no box with the answer")
	pre = page.rfind("<pre", 0, box)
	if pre >= 0 and page.rfind("</pre>", 0, box) < pre:
	    sys.exit("FAIL: the answer's box is inside a scrolled block")
	PY
echo "ok: seed-001 tests its question: text, sections[].why and the page agree"
