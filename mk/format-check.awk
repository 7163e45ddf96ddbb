# SPDX-License-Identifier: MIT
# Filter for `make format-check`: reads the unified diff git clang-format
# --diff prints and keeps the hunks that change more than the blanks inside
# a line. Aligning trailing comments and initialisers with tabs is the
# house style, which clang-format cannot reproduce; indentation, line
# breaks and braces are checked. Exit 1 when a hunk is left.
function norm(s, lead) {
	match(s, /^[ \t]*/)
	lead = substr(s, 1, RLENGTH)
	s = substr(s, RLENGTH + 1)
	gsub(/[ \t]+/, " ", s)
	sub(/ $/, "", s)
	return lead s
}
function flush(i, same) {
	if (hunk == "")
		return
	same = nold == nnew
	for (i = 1; same && i <= nold; i++)
		if (old[i] != new[i])
			same = 0
	if (!same) {
		if (file != shown)
			print file
		shown = file
		printf "%s", hunk
		bad++
	}
	hunk = ""
	nold = nnew = 0
}
/^diff --git / { flush(); next }
/^\+\+\+ / { file = $0; next }
/^--- |^index / { next }
/^@@/ { flush(); hunk = $0 "\n"; next }
/^-/ { old[++nold] = norm(substr($0, 2)); hunk = hunk $0 "\n"; next }
/^\+/ { new[++nnew] = norm(substr($0, 2)); hunk = hunk $0 "\n"; next }
{ if (hunk != "") hunk = hunk $0 "\n" }
END { flush(); exit bad ? 1 : 0 }
