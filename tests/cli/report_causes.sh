#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# ipclab report draws --trace's reading and a cycle's xrun causes
# (docs/report.md): the cause split as stacked bars whose segments add up
# to 100 % with the shares named and the sentence beside; preempted_by as
# a table of comm, pid, time and share of the side's window; --explain's
# before, after, ratio and verdict; a cycle cell's xrun causes as a bar
# and the xruns each stage made. Every string from the file is hostile
# and lands as text. With chromium, the page loads clean and its DOM holds
# the takers' table. A traced file is made from tests/data by jq, so no
# tracer is needed; the cycle file by a short run.
. "$(dirname "$0")/../lib/common.sh"
command -v jq >/dev/null || { echo "skip: no jq"; exit 77; }
command -v python3 >/dev/null || { echo "skip: no python3"; exit 77; }
data=$(cd "$(dirname "$0")/../data" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# the first cell: a cause split (one share with a hostile name), a hostile
# taker beside the client, an --explain that confirmed; the second: one
# that did not
jq '.results[0].trace += {
	cause: { of: "rtt_mean_ns", total_ns: 10000, whose: "round trip",
		 shares: [ { name: "wakeup latency", ns: 6000, pct: 60 },
			   { name: "kernel work", ns: 3000, pct: 30 },
			   { name: "<b>evil</b>", ns: 1000, pct: 10 } ],
		 largest: "wakeup latency", sentence: "wakeup latency is 60 % <i>of</i> the round trip" },
	explain: { cause: "cross-CPU wakeups", knob: "--pin same", share_pct: 60, applied: true,
		   pairs: 3, of: "lat_p50_ns", before: 80000, after: 40000, ratio: 0.5,
		   ratio_lo: 0.45, ratio_hi: 0.55, confirmed: true, note: null } } |
    .results[0].trace.sides[1] += { preempted_by_ns: 6400000, preempted_by: [
	{ comm: "hog\"<b>&?\\", pid: 4242, tid: 4243, ns: 5115251, count: 7 },
	{ comm: "cc1", pid: 77, tid: 77, ns: 1000000, count: 2 } ] } |
    .results[1].trace += { explain: { cause: "idle exits", knob: "--keep-awake", share_pct: 20,
	applied: true, pairs: 3, of: "lat_p50_ns", before: 50000, after: 49000, ratio: 0.98,
	ratio_lo: 0.9, ratio_hi: 1.1, confirmed: false, note: "a <note>" } }' \
	"$data/report-traced.json" >"$work/traced.json" || { echo "FAIL: jq"; exit 1; }
wall=$(jq '.results[0].trace.sides[1].wall_ns' "$work/traced.json")

page=$work/traced.html
"$IPCLAB" report "$work/traced.json" -o "$page" 2>"$work/err" || fail "report: $(cat "$work/err")"

cat >"$work/traced.py" <<'PY'
import re, sys
page = open(sys.argv[1]).read()
wall = float(sys.argv[2])
# the cause split: its figure, one bar for the one cell with a split,
# segments that add up to 100 %, each named (the hostile one as other)
fig = re.search(r'<figure[^>]*>(?:(?!</figure>).)*cause split of each traced cell(?:(?!</figure>).)*</figure>',
                page, re.S)
assert fig, "no cause split figure"
titles = re.findall(r'<rect class="p\d+"[^>]*><title>([^<]*)</title>', fig.group(0))
pcts = [float(re.search(r'\(([0-9.]+) %\)$', t).group(1)) for t in titles]
assert len(titles) == 3 and abs(sum(pcts) - 100) < 0.5, titles
names = sorted(t.split(' ')[0] for t in titles)
assert any(t.startswith('wakeup latency ') for t in titles), titles
assert any(t.startswith('other ') for t in titles), titles
# the sentence and the shares in words, escaped
assert '<b>evil' not in page and '<i>of' not in page, "hostile markup reached the page"
assert 'wakeup latency 60.0 %, kernel work 30.0 %, &lt;b&gt;evil&lt;/b&gt; 10.0 %' in page, "shares in words"
assert 'wakeup latency is 60 % &lt;i&gt;of&lt;/i&gt; the round trip' in page, "the sentence"
# preempted_by: the hostile comm as text, its pid, tid, slices and share of the window
tab = re.search(r'<table class="kv takers">.*?</table>', page, re.S)
assert tab, "no takers table"
rows = re.findall(r'<tr>(.*?)</tr>', tab.group(0), re.S)
hog = [r for r in rows if '4242' in r]
assert hog, rows
cells = re.findall(r'<td[^>]*>(.*?)</td>', hog[0])
assert cells[1] == 'hog&quot;&lt;b&gt;&amp;?\\', cells
assert cells[2] == '4242' and cells[3] == '4243' and cells[5] == '7', cells
assert cells[6] == '%.1f %%' % (100 * 5115251 / wall), (cells, 100 * 5115251 / wall)
assert 'all other tasks' in tab.group(0) and '%.1f %%' % (100 * 6400000 / wall) in tab.group(0)
# --explain: before, after, the ratio with its range, the verdict
ex = re.findall(r'<table class="kv explain">.*?</table>', page, re.S)
assert len(ex) == 2, len(ex)
assert '<td>--pin same</td>' in ex[0] and '80' in ex[0] and '40' in ex[0], ex[0]
assert '0.50x (0.45-0.55 over 3 pairs)' in ex[0] and 'badge ok">confirmed<' in ex[0], ex[0]
assert 'badge inc">not confirmed<' in ex[1] and 'a &lt;note&gt;' in ex[1], ex[1]
# shown once: not again as the generic tables
assert not re.search(r'<h5>(cause|explain)</h5>', page), "cause or explain repeated as a generic table"
PY
if python3 "$work/traced.py" "$page" "$wall"; then
	echo "ok   traced page: cause split bar at 100 %, sentence, takers table, two explain verdicts"
else
	fail "the traced page's reading"
fi

# ---- a cycle's xrun causes ---------------------------------------------------------
# every cycle an xrun (a 1 ns deadline), stage 2 working 500 us of each
if "$IPCLAB" run -p cycle -q -t pipe -e thread --clients 3 --period 2ms --think-ns 500us -O think_stage=2 \
	-O deadline=1ns -n 100 --warmup 1 -f json -o "$work/cycle.json" 2>"$work/cycle.err"; then
	"$IPCLAB" report "$work/cycle.json" -o "$work/cycle.html" 2>"$work/err" || fail "report of the cycle file"
	cat >"$work/cycle.py" <<'PY'
import json, re, sys
page = open(sys.argv[1]).read()
m = json.load(open(sys.argv[2]))["results"][0]["metrics"]
fig = re.search(r'<figure[^>]*>(?:(?!</figure>).)*what caused each xrun(?:(?!</figure>).)*</figure>', page, re.S)
assert fig, "no xrun cause figure"
titles = re.findall(r'<rect class="p\d+"[^>]*><title>([^<]*)</title>', fig.group(0))
assert abs(sum(float(re.search(r'\(([0-9.]+) %\)$', t).group(1)) for t in titles) - 100) < 0.5, titles
want = {k for k, v in m["xrun_causes"].items() if v}
assert {t.split(' ')[0] for t in titles} == want, (titles, want)
tab = re.search(r'<table class="kv blame">.*?</table>', page, re.S).group(0)
for i, s in enumerate(m["stages"]):
    row = re.search(r'<tr><td>stage %d</td>(.*?)</tr>' % (i + 1), tab).group(1)
    cells = re.findall(r'<td[^>]*>(.*?)</td>', row)
    assert cells == [str(s["xruns_caused"]), str(s["xrun_causes"]["stage_wait"]),
                     str(s["xrun_causes"]["stage_busy"]), 'not known without --trace'], (i, cells, s)
assert m["stages"][1]["xrun_causes"]["stage_busy"] >= 1, m["stages"]
PY
	if python3 "$work/cycle.py" "$work/cycle.html" "$work/cycle.json"; then
		echo "ok   cycle page: xrun causes at 100 %, the stage that made them"
	else
		fail "the cycle page's xrun causes"
	fi
else
	fail "cycle run: $(head -3 "$work/cycle.err")"
fi

# ---- in a browser: loads clean, the takers' table in the DOM -------------------------
browser=$(command -v chromium || command -v chromium-browser)
if [ -n "$browser" ]; then
	profile=$(mktemp -d)
	timeout -k 5 120 "$browser" --headless --disable-gpu --no-sandbox --user-data-dir="$profile" \
		--no-first-run --disable-extensions --enable-logging=stderr --v=0 --dump-dom \
		"file://$page" >"$work/dom" 2>"$work/console.raw" || fail "chromium --dump-dom failed"
	if grep -aiE ':CONSOLE|Refused to|Uncaught' "$work/console.raw" >"$work/console"; then
		fail "the console is not empty: $(head -c 300 "$work/console")"
	elif grep -q '<table class="kv takers">' "$work/dom" && grep -qF 'hog"&lt;b&gt;&amp;?\' "$work/dom" &&
	     grep -q 'badge ok">confirmed<' "$work/dom"; then
		echo "ok   chromium: the page loads clean, the takers and the verdict in its DOM"
	else
		fail "the DOM lacks the takers table or the verdict"
	fi
else
	echo "skip browser part: no chromium"
fi
finish
