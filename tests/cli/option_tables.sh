#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The commands' option tables and what is made from them agree: the
# completion's generated block is what `ipclab --dump-completion` makes
# (run `make completion` after changing an option), the man page documents
# every option of each table in the command's section and no option the
# table lacks, --help names every pattern ipclab list has; -f takes one
# vocabulary in every command ("text" an alias of "table") and its error
# lists the names the command takes.
. "$(dirname "$0")/../lib/common.sh"
docs=$(cd "$(dirname "$0")/../../docs" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# ---- completion -------------------------------------------------------------------

"$IPCLAB" --dump-completion >"$work/gen" 2>&1 || fail "--dump-completion: exit $?"
grep -q '^# BEGIN made by ipclab --dump-completion' "$work/gen" ||
	fail "--dump-completion: no generated block: $(head -c 200 "$work/gen")"
sed -n '/^# BEGIN made by ipclab --dump-completion/,/^# END made by ipclab --dump-completion/p' \
	"$docs/ipclab.bash-completion" >"$work/file"
if diff -u "$work/file" "$work/gen" >"$work/diff"; then
	echo "ok   completion: the generated block is the option tables' ($(wc -l <"$work/gen") lines)"
else
	fail "docs/ipclab.bash-completion differs from the option tables (run make completion): $(head -20 "$work/diff")"
fi

# ---- man page ---------------------------------------------------------------------

"$IPCLAB" --dump-options >"$work/opts" 2>&1 || fail "--dump-options: exit $?"
[ "$(wc -l <"$work/opts")" -gt 10 ] || fail "--dump-options: $(head -c 200 "$work/opts")"
sed 's/\\-/-/g' "$docs/ipclab.1" >"$work/man.txt"	# roff writes a hyphen as \-
# The option headers (the line after each .TP) of one .SH section.
man_headers() {
	awk -v sec=".SH $1" '$0 == sec { on = 1; next } /^\.SH / { on = 0 }
		on && tp { print } { tp = on && $0 == ".TP" }' "$work/man.txt"
}
awk -F'\t' 'NF == 4' "$work/opts" >"$work/rows"
for sec in $(cut -f2 "$work/rows" | sort -u | tr ' ' '_'); do
	sec=${sec//_/ }
	man_headers "$sec" >"$work/headers"
	grep -o -- '--[a-z][a-z-]*' "$work/headers" | sort -u >"$work/man_longs"
	awk -F'\t' -v s="$sec" '$2 == s { print $4 }' "$work/opts" | sort -u >"$work/table_longs"
	[ -s "$work/table_longs" ] || fail "--dump-options: no option for '$sec'"
	missing=$(comm -13 "$work/man_longs" "$work/table_longs" | tr '\n' ' ')
	extra=$(comm -23 "$work/man_longs" "$work/table_longs" | tr '\n' ' ')
	[ -z "$missing" ] || fail "docs/ipclab.1 $sec: no entry for $missing"
	[ -z "$extra" ] || fail "docs/ipclab.1 $sec: documents $extra, which the command does not take"
	# a short name stands beside its long one in the entry
	while IFS=$'\t' read -r _ s short long; do
		[ "$s" = "$sec" ] && [ "$short" != - ] || continue
		grep -E -- "$long([^a-z-]|$)" "$work/headers" | grep -qE -- "(^|[^a-z-])$short([^a-zA-Z-]|$)" ||
			fail "docs/ipclab.1 $sec: $long's entry does not name $short"
	done <"$work/rows"
	echo "ok   man page: $sec documents the $(wc -l <"$work/table_longs") options of the table"
done

# ---- help -------------------------------------------------------------------------

before=$fails
"$IPCLAB" --help >"$work/help" || fail "--help: exit $?"
pline=$(grep -- '--pattern' "$work/help")
for p in $("$IPCLAB" list | awk '/^[a-z]+:$/ { s = $0; next } s == "patterns:" && /^  [^ ]/ { print $1 }'); do
	case $pline in *"$p"*) ;; *) fail "--help: -p does not name pattern $p: $pline" ;; esac
done
while IFS=$'\t' read -r cmd _ short long; do
	[ "$cmd" = run ] || continue
	grep -qE -- "(^|[ ,])$long([ =[]|$)" "$work/help" || fail "--help: no line for $long"
done <"$work/rows"
[ "$fails" != "$before" ] || echo "ok   help: every option of the table, every pattern"

finish
