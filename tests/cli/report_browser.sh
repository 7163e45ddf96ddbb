#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# ipclab report's page in a real browser (Debian's chromium, headless, with
# the network off where it can be): the page of a traced and profiled file
# loads without a script error or a refused fetch in the console; its DOM
# holds every transport and pattern of the file, tables, an SVG per figure
# and the time-budget bars; its screenshot is not blank; the script's
# sorting, legend toggles, hover values and flame zoom work; a hostile
# file's markup never runs; the suite's page has one section per seed.
# Without chromium: skipped (77) with the line that installs it.
. "$(dirname "$0")/../lib/common.sh"
data=$(cd "$(dirname "$0")/../data" && pwd)

browser=$(command -v chromium || command -v chromium-browser)
if [ -z "$browser" ]; then
	echo "skip: chromium not found; install it with: apt-get install chromium (or make deps)"
	exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# the network off: a namespace of its own where root may make one
netoff=()
if [ "$(id -u)" = 0 ] && unshare --net true 2>/dev/null; then
	netoff=(unshare --net)
fi

# browse PAGE WHAT...: chromium headless on PAGE (--dump-dom to stdout,
# the console to $work/console); a fresh profile each time, a deadline
browse() {
	local page=$1 profile
	shift
	profile=$(mktemp -d)
	timeout -k 5 120 "${netoff[@]}" "$browser" --headless --disable-gpu --no-sandbox \
		--user-data-dir="$profile" --no-first-run --disable-extensions --hide-scrollbars \
		--enable-logging=stderr --v=0 "$@" "file://$page" 2>"$work/console.raw"
	local rc=$?
	grep -a ':CONSOLE' "$work/console.raw" >"$work/console"
	grep -aiE 'Refused to|net::ERR_|Uncaught' "$work/console.raw" >>"$work/console"
	rm -rf "$profile"
	return $rc
}

"$IPCLAB" report "$data/report-traced.json" --folded "$data/report-folded" -o "$work/traced.html" ||
	fail "report of the traced file"

# ---- loads cleanly, the DOM has it all, the script works --------------------------------
# A copy of the page with a script of the test's own at its end: it sorts a
# table, toggles a series, hovers a curve and zooms a flame graph, then
# logs what it saw; all else in the console would be the page's error.

cp "$work/traced.html" "$work/selftest.html"
cat >>"$work/selftest.html" <<'EOF'
<script>
(function () {
	var out = [], th = document.querySelectorAll('table.sortable thead th')[2];
	var tbody = th.closest('table').tBodies[0];
	th.click();
	th.click();
	out.push('sorted=' + th.className + ':' + tbody.rows.length);
	var li = document.querySelector('ul.legend li');
	li.click();
	var fig = document.getElementById(li.parentNode.getAttribute('data-fig'));
	out.push('toggled=' + fig.querySelectorAll('g.s.off').length);
	var path = fig.querySelector('svg.chart g.s:not(.off) path'), svg = path.ownerSVGElement;
	var p = path.getPointAtLength(path.getTotalLength() / 2), m = svg.getScreenCTM();
	svg.dispatchEvent(new MouseEvent('mousemove', { clientX: p.x * m.a + p.y * m.c + m.e,
		clientY: p.x * m.b + p.y * m.d + m.f, bubbles: true }));
	var tip = document.querySelector('.tip');
	out.push('tip=' + (tip.style.display === 'block' && tip.textContent.length > 0 ? 'shown' : 'none'));
	var frames = document.querySelectorAll('svg.flame g.fr'), fr = frames[frames.length - 1];
	fr.dispatchEvent(new MouseEvent('click', { bubbles: true }));
	var hidden = 0;
	fr.ownerSVGElement.querySelectorAll('g.fr').forEach(function (g) { if (g.style.display === 'none') hidden++; });
	out.push('zoom=' + fr.querySelector('rect').getAttribute('width') + ':' + (hidden > 0 ? 'some-hidden' : 'none-hidden'));
	console.log('SELFTEST ' + out.join(' '));
})();
</script>
EOF
browse "$work/selftest.html" --dump-dom >"$work/dom" || fail "chromium --dump-dom failed (exit $?)"
line=$(grep -o 'SELFTEST [^"]*' "$work/console")
grep -v SELFTEST "$work/console" >"$work/errors"
if [ -s "$work/errors" ] || [ -z "$line" ]; then
	fail "the console has more than the test's line: $(head -c 400 "$work/errors")"
else
	echo "ok   the traced page loads with nothing in the console but the test's line (no script error, nothing refused)${netoff:+, network off}"
fi
case "$line" in
"SELFTEST sorted=desc:"*" toggled=1 tip=shown zoom=1200.0:some-hidden") echo "ok   script: $line" ;;
*) fail "the page's script: '$line'" ;;
esac
grep -q 'class="tip"' "$work/dom" || fail "the page's script did not run (no tooltip element)"
for t in $(grep -o '"transport": "[^"]*"' "$data/report-traced.json" | sort -u | cut -d'"' -f4) \
	 $(grep -o '"pattern": "[^"]*"' "$data/report-traced.json" | sort -u | cut -d'"' -f4); do
	grep -qE ">$t[<, ]" "$work/dom" || fail "'$t' is not in the DOM"
done
[ "$(grep -o '<table' "$work/dom" | wc -l)" -ge 1 ] || fail "no table in the DOM"
figs=$(grep -o '<figure class="fig"' "$work/dom" | wc -l)
svgs=$(grep -o '<svg[^>]*class="chart"' "$work/dom" | wc -l)
[ "$figs" -ge 4 ] && [ "$figs" = "$svgs" ] || fail "$figs figures but $svgs charts"
grep -q 'time budget of each side over its window' "$work/dom" || fail "no time-budget figure in the DOM"
[ "$(grep -oE '<rect class="p[0-4]"' "$work/dom" | wc -l)" -ge 8 ] || fail "the time budget has no bars"
echo "ok   the DOM: every transport and pattern, tables, $figs figures each an SVG, the time-budget bars"

# ---- a screenshot that is not blank ---------------------------------------------------

printf '<!DOCTYPE html><html><head><meta charset="utf-8"></head><body></body></html>\n' >"$work/blank.html"
browse "$work/blank.html" --window-size=1280,1600 --screenshot="$work/blank.png" >/dev/null
browse "$work/traced.html" --window-size=1280,1600 --screenshot="$work/traced.png" >/dev/null ||
	fail "chromium --screenshot failed"
bs=$(stat -c %s "$work/blank.png" 2>/dev/null || echo 0)
ts=$(stat -c %s "$work/traced.png" 2>/dev/null || echo 0)
if [ "$ts" -gt $((bs * 4)) ] && [ "$ts" -gt 20000 ]; then
	echo "ok   screenshot: $ts bytes of PNG, a blank page's is $bs"
else
	fail "the screenshot looks blank: $ts bytes, a blank page's $bs"
fi

# ---- hostile markup never runs ------------------------------------------------------------

sed -e "s|\"transport\": \"pipe\"|\"transport\": \"<script>console.log('PWNED1')<\\\\/script>\"|" \
    -e "s|\"cmdline\": \"[^\"]*\"|\"cmdline\": \"<\\\\/script><img src=x onerror=console.log('PWNED2')>\"|" \
    -e "s|\"kernel\": \"[^\"]*\"|\"kernel\": \"<svg onload=console.log('PWNED3')>\"|" \
    "$data/report-traced.json" >"$work/hostile.json"
"$IPCLAB" report "$work/hostile.json" -q -o "$work/hostile.html" || fail "report of the hostile file"
browse "$work/hostile.html" --dump-dom >"$work/hdom"
if grep -q PWNED "$work/console"; then
	fail "hostile markup ran: $(grep PWNED "$work/console" | head -c 300)"
elif ! grep -qF "&lt;script&gt;console.log('PWNED1')&lt;/script&gt;" "$work/hdom"; then
	fail "the hostile transport name is not text in the DOM"
else
	echo "ok   a transport named <script>...</script>, an <img onerror> and an <svg onload> render as text, never run"
fi

# ---- the suite's page -------------------------------------------------------------------

nseeds=$("$IPCLAB" suite seeds --dry-run -q 2>/dev/null | grep -c '^== seed-')
"$IPCLAB" suite seeds --dry-run -q --html "$work/suite.html" >/dev/null 2>&1 || fail "suite --html"
browse "$work/suite.html" --dump-dom >"$work/sdom" || fail "chromium on the suite's page"
[ -s "$work/console" ] && fail "the suite page's console: $(head -c 300 "$work/console")"
n=$(grep -o '<section class="seed"' "$work/sdom" | wc -l)
[ "$n" = "$nseeds" ] && echo "ok   the suite's page: $n sections, one per seed" ||
	fail "the suite's page has $n sections, expected $nseeds"
finish
