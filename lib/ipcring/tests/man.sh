#!/bin/sh
# SPDX-License-Identifier: MIT
# man.sh - every exported symbol of libipcring has a man page: the symbols
# of the shared library (nm -D) and of its version script must agree, and
# each must have lib/ipcring/man/SYMBOL.3, either a page whose NAME and
# SYNOPSIS name it or a .so link to such a page. Where man(1) is present,
# each page renders, as installed (man3/), without a warning. Exit 0 pass,
# 1 fail, 77 skip (the library is not built, or no nm).
set -u

here=$(cd "$(dirname "$0")/.." && pwd)
man=$here/man
map=$here/libipcring.map
so=${IPCRING_SO:-}
if [ -z "$so" ]; then
	if [ -n "${IPCLAB:-}" ]; then
		so=$(dirname "$IPCLAB")/libipcring.so
	else
		so=$here/../../build/libipcring.so
	fi
fi
[ -e "$so" ] || { echo "skip: $so is not built (set IPCRING_SO)"; exit 77; }
command -v nm >/dev/null 2>&1 || { echo "skip: nm is not installed"; exit 77; }
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
fail() { echo "FAIL: $*"; exit 1; }

# defined, exported function symbols, without their @@VERSION
nm -D --defined-only "$so" | awk '$2 == "T" { sub(/@.*/, "", $3); print $3 }' |
	sort -u > "$tmp/so" || fail "nm -D $so"
# the global: sections of the version script
sed -e 's|/\*.*\*/||' "$map" | awk '
	/global:/ { g = 1; next } /local:/ { g = 0; next } /}/ { g = 0; next }
	g { gsub(/[ \t;]/, ""); if ($0 != "") print }' | sort -u > "$tmp/map"
[ -s "$tmp/so" ] || fail "$so exports no functions"
diff "$tmp/so" "$tmp/map" > "$tmp/diff" ||
	fail "the library's symbols and $map differ (< library, > map): $(tr '\n' ' ' < "$tmp/diff")"

mkdir "$tmp/man3"
cp "$man"/*.3 "$tmp/man3/"
n=0
while read -r sym; do
	page=$man/$sym.3
	[ -f "$page" ] || fail "$sym has no man page: write $page (or a .so link to the page that documents it)"
	target=$page
	link=$(sed -n 's|^\.so man3/\(.*\)$|\1|p' "$page")
	if [ -n "$link" ]; then
		target=$man/$link
		[ -f "$target" ] || fail "$page links to man3/$link, which does not exist"
		grep -q '^\.so' "$target" && fail "$page links to man3/$link, itself a link"
	fi
	sed -n '/^\.SH NAME/,/^\.SH/p' "$target" | grep -qw -- "$sym" ||
		fail "$sym is not in the NAME section of $target"
	sed -n '/^\.SH SYNOPSIS/,/^\.SH/p' "$target" | grep -q -- "[ *]$sym(" ||
		fail "$sym is not declared in the SYNOPSIS of $target"
	if command -v man >/dev/null 2>&1; then
		(cd "$tmp" && MANWIDTH=80 man --warnings -l "man3/$sym.3" > "$tmp/out" 2> "$tmp/err")
		[ -s "$tmp/err" ] && fail "man3/$sym.3 renders with warnings: $(head -n 3 "$tmp/err")"
		grep -q "$sym" "$tmp/out" || fail "man3/$sym.3 renders without naming $sym"
	fi
	n=$((n + 1))
done < "$tmp/so"
echo "ok: $n exported functions, each with a man page"
