#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# ipclab report from the outside (the browser's view is report_browser.sh):
# a page from a traced and profiled result file with its tables, figures,
# time budgets and flame graphs; self-contained (nothing fetched from an
# address, a policy that forbids fetching); every hostile string of a result
# file or a folded stack lands as text, a hostile folded_file name is not
# followed; run --html and suite --html write the same page beside their
# output, the suite's with a section per seed; two files get a compare view;
# bad input is one line and exit 2, leaving nothing behind.
. "$(dirname "$0")/../lib/common.sh"
data=$(cd "$(dirname "$0")/../data" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# the page's tags that would fetch or run something, one a line
active_tags() {
	grep -oiE '<(script|iframe|img|object|embed|link|svg|image|use|a|audio|video|source)\b[^>]*>' "$1" |
		grep -viE '^<svg xmlns="http://www.w3.org/2000/svg" viewBox="[0-9 .]*"( width="[0-9%]*")?( height="[0-9]*")?( role="img")? class="(chart|flame)"( data-fig="[a-z0-9-]*")?( data-w="[0-9]*")?>$' |
		grep -viE '^<script( type="application/json" id="ipclab-data")?>$' |
		grep -viE '^<a href="#[a-z0-9-]*">$'
}

# ---- a traced and profiled file ------------------------------------------------

page=$work/traced.html
if "$IPCLAB" report "$data/report-traced.json" --folded "$data/report-folded" -o "$page" 2>"$work/err"; then
	echo "ok   report of a traced and profiled file: $(wc -c <"$page") bytes"
else
	fail "report of the traced file: exit $?: $(cat "$work/err")"
fi
head -c 15 "$page" | grep -q '^<!DOCTYPE html>' || fail "the page does not start with <!DOCTYPE html>"
for t in $(grep -o '"transport": "[^"]*"' "$data/report-traced.json" | sort -u | cut -d'"' -f4); do
	grep -q ">$t<" "$page" || fail "transport $t is not on the page"
done
for what in 'time budget of each side over its window' 'critical path of a round trip' \
	'round-trip latency by percentile' 'round-trip latency histogram' 'class="fr ' '<table'; do
	grep -qF "$what" "$page" || fail "the traced page has no '$what'"
done
[ "$(grep -c '<figure class="fig"' "$page")" -ge 4 ] || fail "the traced page has fewer than 4 figures"
[ "$(grep -c '<figure class="fig"' "$page")" = "$(grep -c '<svg[^>]* class="chart"' "$page")" ] ||
	fail "a figure without its SVG"
[ "$(grep -c '<figure class="flame"' "$page")" = 4 ] || fail "not one flame graph per side (4)"

# self-contained: nothing fetches, and the policy says so
if [ -n "$(active_tags "$page")" ]; then
	fail "tags that fetch or run: $(active_tags "$page" | head -3 | tr '\n' ' ')"
fi
grep -qiE '(src|href|xlink:href)[[:space:]]*=[[:space:]]*"?([a-z]+:)?//' "$page" &&
	fail "a src or href to a network address: $(grep -oiE '(src|href)="?[a-z]*:?//[^" >]*' "$page" | head -2)"
grep -qiE '@import|url\([^#]' "$page" && fail "the page fetches through CSS (@import or url())"
grep -qF "default-src 'none'" "$page" || fail "no Content-Security-Policy forbidding fetches"
echo "ok   the page is self-contained: no tag fetches, no src/href to an address, CSP default-src 'none'"

# without --folded: the profile's tables, no stacks read, and a note where they are
"$IPCLAB" report "$data/report-traced.json" -o "$work/nofold.html" 2>"$work/err" || fail "report without --folded"
grep -q 'class="fr ' "$work/nofold.html" && fail "flame graphs without --folded"
grep -q 'folded stacks in' "$work/err" || fail "no note about --folded: $(cat "$work/err")"

# ---- hostile strings -----------------------------------------------------------

x1="<script>console.log('PWNED1')</script>"
x2="</script><img src=x onerror=console.log('PWNED2')>"
x3="<svg onload=console.log('PWNED3')>"
x4='" onmouseover="console.log(4)'
mkdir -p "$work/fold"
for f in "$data"/report-folded/*.folded; do
	cp "$f" "$work/fold/"
done
# a frame named as markup, with a byte that is no UTF-8
printf '%s;bad\377name 40\n' "<script>console.log('PWNED5')</script>" \
	>>"$work/fold/pipe-pingpong-64-process-none-other-server.folded"
printf 'the secret 1\n' >"$work/secret.folded"
sed -e "s|\"transport\": \"pipe\"|\"transport\": \"${x1//\//\\/}\"|" \
    -e "s|\"cmdline\": \"[^\"]*\"|\"cmdline\": \"${x2//\//\\/}\"|" \
    -e "s|\"kernel\": \"[^\"]*\"|\"kernel\": \"$x3\"|" \
    -e "s|\"symbol\": \"read\"|\"symbol\": \"${x4//\"/\\\\\"}\"|" \
    -e "0,/\"folded_file\": \"unix-stream[^\"]*\"/s||\"folded_file\": \"../secret.folded\"|" \
    "$data/report-traced.json" >"$work/hostile.json"
grep -qF 'PWNED1' "$work/hostile.json" && grep -qF 'secret.folded' "$work/hostile.json" ||
	fail "the hostile file was not made"
hpage=$work/hostile.html
"$IPCLAB" report "$work/hostile.json" --folded "$work/fold" -o "$hpage" 2>"$work/err" ||
	fail "report of a hostile file: exit $?: $(cat "$work/err")"
[ "$(grep -oi '<script' "$hpage" | wc -l)" = 2 ] || fail "the hostile page has more than its two <script> elements"
[ "$(grep -oi '</script' "$hpage" | wc -l)" = 2 ] || fail "a </script> from the file ended an element"
if [ -n "$(active_tags "$hpage")" ]; then
	fail "hostile markup became tags: $(active_tags "$hpage" | head -3 | tr '\n' ' ')"
fi
grep -qiE '<[a-z][^>]*[[:space:]]on[a-z]+=' "$hpage" && fail "an event handler attribute came from the file"
grep -qF '&lt;script&gt;console.log(&#39;PWNED1&#39;)&lt;/script&gt;' "$hpage" ||
	fail "the hostile transport name is not shown as text"
grep -qF '&lt;svg onload=console.log(&#39;PWNED3&#39;)&gt;' "$hpage" || fail "the hostile kernel is not shown as text"
grep -qF '&lt;script&gt;console.log(&#39;PWNED5&#39;)&lt;/script&gt;: 40 samples' "$hpage" ||
	fail "the hostile frame name is not shown as text"
grep -qaF $'bad\xef\xbf\xbdname' "$hpage" || fail "a byte that is no UTF-8 is not shown as U+FFFD"
grep -qF 'the secret' "$hpage" && fail "folded_file ../secret.folded was followed out of the directory"
echo "ok   hostile strings (transport, cmdline, env, symbol, frame names) land as text; ../ in folded_file not followed"

# ---- run --html, suite --html, two files ---------------------------------------

before=$(leftovers)
"$IPCLAB" run -t pipe,unix-stream -p stream -s 64,1k -n 2000 -q -f json -o "$work/run.json" \
	--html "$work/run.html" >"$work/out" 2>"$work/err" || fail "run --html: exit $?: $(cat "$work/err")"
[ -s "$work/run.json" ] || fail "run --html did not write its -o file"
grep -q 'throughput against message size' "$work/run.html" || fail "run --html: no throughput figure"
"$IPCLAB" report "$work/run.json" -o "$work/again.html" -q || fail "report of run --html's JSON"
# the same page but for the name and the dates
norm() { sed -e 's/[0-9]\{4\}-[0-9-]*T[0-9:]*Z//g' -e 's/this run\|[^ ]*run\.json//g' "$1"; }
cmp -s <(norm "$work/run.html") <(norm "$work/again.html") ||
	fail "run --html's page differs from ipclab report's of the same results"
[ -z "$(new_leftovers "$before" "$(leftovers)")" ] || fail "run --html left: $(new_leftovers "$before" "$(leftovers)")"
ls "$work" | grep -q 'tmp-' && fail "a temporary file was left beside the page"

nseeds=$("$IPCLAB" suite seeds --dry-run -q 2>/dev/null | grep -c '^== seed-')
"$IPCLAB" suite seeds --dry-run -q -f json -o "$work/suite.json" --html "$work/suite.html" >/dev/null 2>"$work/err" ||
	fail "suite --html: exit $?: $(cat "$work/err")"
[ "$(grep -c '<section class="seed"' "$work/suite.html")" = "$nseeds" ] ||
	fail "suite page: $(grep -c '<section class="seed"' "$work/suite.html") sections, expected one per seed ($nseeds)"
grep -q '"sections": \[' "$work/suite.json" || fail "suite -f json has no sections"
"$IPCLAB" report "$work/suite.json" -o "$work/suite2.html" -q || fail "report of a suite file"
[ "$(grep -c '<section class="seed"' "$work/suite2.html")" = "$nseeds" ] || fail "report of a suite file: not one section per seed"
order=$(grep -o '<section class="seed" id="[^"]*"><h2>seed-[0-9a-z-]*' "$work/suite2.html" | sed 's/.*<h2>//' | tr '\n' ' ')
[ "$order" = "$("$IPCLAB" suite seeds --dry-run -q 2>/dev/null | sed -n 's/^== \(seed-[0-9a-z-]*\):.*/\1/p' | tr '\n' ' ')" ] ||
	fail "suite sections out of the seeds' order: $order"
echo "ok   run --html and suite --html: the same page as report; $nseeds seed sections in order"

# a real suite's file (--quick --trace --profile, stored): a section per
# seed with its reading and its figures, the page under 2 MB
gzip -dc "$data/report-suite.json.gz" >"$work/real-suite.json" || fail "cannot unpack the stored suite"
"$IPCLAB" report "$work/real-suite.json" -q -o "$work/real-suite.html" || fail "report of the stored suite"
size=$(stat -c %s "$work/real-suite.html")
[ "$size" -lt $((2 << 20)) ] || fail "the suite's page is $size bytes, over 2 MB"
n=$(grep -c '<section class="seed"' "$work/real-suite.html")
readings=$(grep -c '<p class="reading">Reading:' "$work/real-suite.html")
[ "$n" = 6 ] && [ "$readings" -ge 5 ] || fail "the stored suite: $n sections, $readings readings"
awk '/<section class="seed"/ { if (s && !f) bad++; s = 1; f = 0 } /<figure class="fig"/ { f = 1 }
     END { if (s && !f) bad++; exit bad > 0 }' "$work/real-suite.html" || fail "a suite section without a figure"
echo "ok   a real suite's page: $n sections, each with its reading and figures, $size bytes"

"$IPCLAB" report "$data/compare-before.json" "$data/compare-after.json" -o "$work/cmp.html" ||
	fail "report of two files"
grep -q '<section id="compare">' "$work/cmp.html" || fail "two files: no compare view"
grep -q 'worse, beyond spread' "$work/cmp.html" || fail "two files: no verdict beyond the spread"
grep -q '0.775 &ndash; 0.827' "$work/cmp.html" || fail "two files: msgs/s ratio range 0.775 - 0.827 missing"
grep -q 'What differs between the machines' "$work/cmp.html" || fail "two files: no env difference"
grep -q 'class="hc"' <("$IPCLAB" report "$data/report-matrix.json") || fail "matrix file: no heatmap"
"$IPCLAB" report "$data/report-cycle.json" -o "$work/cyc.html" || fail "report of a cycle file"
grep -q 'completion time over the run' "$work/cyc.html" && grep -q 'class="mk"' "$work/cyc.html" &&
	grep -q 'class="hline"' "$work/cyc.html" || fail "cycle file: no timeline with deadline and xruns"

# ---- bad input ---------------------------------------------------------------------

printf '{"nothing": 1}\n' >"$work/notres.json"
expect_usage_error "report without a file" report -o "$work/x.html"
expect_usage_error "report of a missing file" report "$work/missing.json" -o "$work/x.html"
expect_usage_error "report of a non-result" report "$work/notres.json" -o "$work/x.html"
expect_usage_error "report of a directory" report "$work" -o "$work/x.html"
expect_usage_error "report --folded not a directory" report "$data/report-traced.json" --folded "$work/notres.json" -o "$work/x.html"
expect_usage_error "report -o a directory" report "$data/report-traced.json" -o "$work"
expect_usage_error "report with an unknown option" report --bogus "$data/report-traced.json"
[ -e "$work/x.html" ] && fail "a refused report left $work/x.html"
finish
