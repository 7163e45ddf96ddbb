#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The flame graphs of ipclab report --folded DIR from hostile folded stacks
# (src/report/html_flame.c): tens of thousands of distinct frames drawn
# (the tree's array grows many times while it is built), frame names of
# markup, quotes, control bytes and invalid UTF-8 shown escaped in a page
# that stays valid UTF-8, and each limit of docs/report.md (depth, line
# length, distinct frames, counts, file size) applied and said in a note
# under the graph, the page still written with exit 0.
# FLAME_BIG_MB=64 also draws a generated file of that size and prints the
# time it took (not asserted).
. "$(dirname "$0")/../lib/common.sh"
data=$(cd "$(dirname "$0")/../data" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# report-traced.json's four sides, each of which reads one file
slots=(pipe-pingpong-64-process-none-other-server pipe-pingpong-64-process-none-other-client0
	unix-stream-pingpong-64-process-none-other-server unix-stream-pingpong-64-process-none-other-client0)

# page NAME CASE...: a page whose sides' stacks are the files CASE (in $work/cases)
page() {
	local out=$work/$1.html i=0
	shift
	rm -rf "$work/fold"
	mkdir "$work/fold"
	cp "$data"/report-folded/*.folded "$work/fold/"
	for c in "$@"; do
		cp --sparse=always "$work/cases/$c" "$work/fold/${slots[i]}.folded"
		i=$((i + 1))
	done
	TIMEFORMAT='%R s wall, %U s user, %S s system'
	{ time "$IPCLAB" report "$data/report-traced.json" --folded "$work/fold" -o "$out" 2>"$work/err"; } \
		2>"$work/time"
}

# fig PAGE SLOT: the slot's figure, or its note, and the note under it
fig() {
	[ -f "$work/$1.html" ] || return 1
	awk -v s="${slots[$2]}.folded" 'index($0, "flame graph of " s) || index($0, "flame graph: " s) ||
		index($0, "flame graph: not drawn, " s) { on = 1 }
		on { print } on && /^<p class="note">/ { exit }
		on && /<\/figure>/ { getline; if (/^<p class="note">/) print; exit }' "$work/$1.html"
}

# stacks: N distinct lines under main;loop, each frame_I with count 1
mkdir "$work/cases"
awk 'BEGIN { for (i = 0; i < 20000; i++) printf "main;loop;frame_%d 1\n", i }' >"$work/cases/wide"
awk 'BEGIN { s = "main"; for (i = 0; i < 600; i++) { s = s ";f" i; print s " 1" } }' >"$work/cases/deep600"
cp "$data/report-folded/${slots[0]}.folded" "$work/cases/real"

# ---- many frames: the tree grows past its first 256 nodes many times -------------

if page wide wide deep600 real real; then
	echo "ok   a page from 20000 distinct frames (and 600 nested ones): $(wc -c <"$work/wide.html") bytes"
else
	fail "report of 20000 distinct frames: exit $?: $(tail -3 "$work/err")"
fi
fig wide 0 | grep -qF '<title>all: 20000 samples, 100.00 %' || fail "the wide graph's root is not 20000 samples"
fig wide 0 | grep -qF '<title>loop: 20000 samples, 100.00 %' || fail "the wide graph has no main;loop of 20000"
fig wide 0 | grep -qF 'frame_' && fail "a frame of 1/20000 of the samples was drawn (narrower than 0.1 %)"
# the deep file: 600 stacks, each one frame deeper, all but 128 cut
fig wide 1 | grep -qF '<title>all: 600 samples' || fail "the deep graph's root is not 600 samples"
fig wide 1 | grep -qF 'viewBox="0 0 1200 2064"' || fail "the deep graph is not 129 rows high (128 frames and the root)"
fig wide 1 | grep -qF '473 stacks cut at 128 frames' || fail "the deep graph's note: $(fig wide 1 | tail -1)"
fig wide 2 | grep -q '^<p class="note">' && fail "a note under an ordinary file's graph"
echo "ok   distinct frames counted and drawn; deep stacks cut at 128 frames, said in a note"

# ---- hostile frame names ---------------------------------------------------------

printf '%s\n' \
	"main;<script>alert(1)</script> 10" \
	"main;a&b \"q\" 'single' 10" \
	$'main;ctl\x01\x1b\x7fend 10' \
	$'main;bad\xffbyte;overlong\xc0\xbcx;surrogate\xed\xa0\x80y 10' \
	$'main;caf\xc3\xa9 10' \
	"main;]]></title><g onload=x> 10" >"$work/cases/names"
page names names real real real || fail "report of hostile frame names: exit $?: $(tail -3 "$work/err")"
fig names 0 >"$work/names.fig"
grep -qF '<title>&lt;script&gt;alert(1)&lt;/script&gt;: 10 samples' "$work/names.fig" ||
	fail "markup in a frame name is not shown as text"
grep -qF '<title>a&amp;b &quot;q&quot; &#39;single&#39;: 10 samples' "$work/names.fig" ||
	fail "& and quotes in a frame name are not escaped"
grep -qaF $'<title>ctl\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbdend: 10' "$work/names.fig" ||
	fail "control bytes in a frame name are not shown as U+FFFD"
grep -qaF $'<title>bad\xef\xbf\xbdbyte: 10' "$work/names.fig" || fail "a stray byte is not shown as U+FFFD"
grep -qaF $'<title>caf\xc3\xa9: 10' "$work/names.fig" || fail "valid UTF-8 in a frame name was not kept"
grep -qF '<title>]]&gt;&lt;/title&gt;&lt;g onload=x&gt;: 10' "$work/names.fig" ||
	fail "a frame name closing the title is not shown as text"
iconv -f UTF-8 -t UTF-8 "$work/names.html" >/dev/null 2>&1 || fail "the page is not valid UTF-8"
LC_ALL=C grep -qa $'[\x01-\x08\x0b\x0c\x0e-\x1f\x7f]' "$work/names.html" && fail "a control byte reached the page"
grep -qiE '<[a-z][^>]*[[:space:]]on[a-z]+=' "$work/names.html" && fail "an event handler attribute came from a frame name"
[ "$(grep -oi '<script' "$work/names.html" | wc -l)" = 2 ] || fail "a frame name made a <script> element"
echo "ok   frame names of markup, &, quotes, control bytes and invalid UTF-8 land escaped, the page valid UTF-8"

# ---- the limits ------------------------------------------------------------------

{
	printf 'main;ok 5\n'
	printf 'no count here\nmain;;empty 3\n;main 3\nmain; 3\n 3\nmain -1\nmain 1e3\nmain 0\n'
	printf 'main 1099511627777\nmain 12x\n'
	printf 'main;nul\0byte 3\n'
	printf 'main;windows 2\r\n'
	head -c 300000 /dev/zero | tr '\0' 'x'
	printf ' 1\n'
} >"$work/cases/malformed"
# 2^40 each: the 8193rd would take the file past 2^53 samples
awk 'BEGIN { for (i = 0; i < 8196; i++) printf "main;big 1099511627776\n" }' >"$work/cases/overflow"
# one frame more than the limit of distinct frames
awk 'BEGIN { for (i = 0; i < 1048576; i++) printf "f%d 1\n", i }' >"$work/cases/full"
truncate -s $((64 * 1024 * 1024 + 1)) "$work/cases/huge"
page limits malformed overflow full huge || fail "report of files past the limits: exit $?: $(tail -3 "$work/err")"
fig limits 0 | grep -qF '<title>all: 7 samples' || fail "the malformed file's valid lines are not 7 samples"
fig limits 0 | grep -qF '<title>windows: 2 samples' || fail "a line ending in CR was not read"
fig limits 0 | grep -qF '11 lines skipped, not FRAME;...;FRAME COUNT (1 to 1099511627776); 1 line skipped, longer than 262144 bytes' ||
	fail "the malformed file's note: $(fig limits 0 | tail -1)"
fig limits 1 | grep -qF '<title>all: 9007199254740992 samples' || fail "the overflowing file's total is not 2^53"
fig limits 1 | grep -qF '4 lines skipped, the samples would pass 9007199254740992' ||
	fail "the overflowing file's note: $(fig limits 1 | tail -1)"
fig limits 2 | grep -qF '<title>all: 1048576 samples' || fail "the full file's root is not 1048576 samples"
fig limits 2 | grep -qF '1 stack cut short, past 1048576 distinct frames' ||
	fail "the full file's note: $(fig limits 2 | tail -1)"
fig limits 3 | grep -qF "not drawn, ${slots[3]}.folded is larger than 64 MiB" ||
	fail "the file over 64 MiB: $(fig limits 3)"
grep -c '<figure class="flame"' "$work/limits.html" | grep -qx 3 || fail "not 3 flame graphs beside the file over 64 MiB"
echo "ok   malformed and long lines skipped, counts bounded (2^40 a line, 2^53 a file), 2^20 distinct frames, 64 MiB: each said in a note"

# ---- optional: a large file, timed -----------------------------------------------

if [ -n "${FLAME_BIG_MB:-}" ]; then
	# as a profiler writes them: each stack shares a prefix with the one
	# before, then 1 to 6 frames of its own (5000 names, a few of them hot), 2 to 40 deep
	awk -v max=$((FLAME_BIG_MB * 1024 * 1024)) 'BEGIN { srand(7); f[0] = "start_thread"; f[1] = "main"; d = 2
		while (n < max) {
			keep = 2 + int(rand() * (d - 1)); d = keep + 1 + int(rand() * 6); if (d > 40) d = 40
			for (i = keep; i < d; i++) f[i] = "some_module::function_number_" int(5000 * rand() ^ 4)
			l = f[0]; for (i = 1; i < d; i++) l = l ";" f[i]
			l = l " " (1 + int(rand() * 100)); if (n + length(l) + 1 > max) break
			print l; n += length(l) + 1 } }' >"$work/cases/big"
	page big big real real real || fail "report of a ${FLAME_BIG_MB} MiB file: exit $?: $(tail -3 "$work/err")"
	echo "info a $(stat -c %s "$work/cases/big")-byte file, $(wc -l <"$work/cases/big") lines: report $(cat "$work/time");" \
		"$(fig big 0 | grep -c '<g class="fr') frames drawn; $(fig big 0 | tail -1 | grep '^<p class="note">' || echo 'nothing cut')"
fi
finish
