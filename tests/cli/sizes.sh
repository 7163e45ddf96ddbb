#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Small files: no .c or .h under src/, include/ or lib/ longer than 600
# lines, unless the allow-list below names it with its reason. Fails
# listing the offenders. Also prints, as a report that does not fail, the
# functions over 60 lines without a comment directly above them
# (mk/long-functions.awk).
set -u
cd "$(dirname "$0")/../.." || exit 1
MAX_LINES=600

# path<TAB>reason, one a line: files allowed past MAX_LINES for now;
# e.g. allow=$(printf '%s\t%s\n' src/x.c "being split")
allow=''

bad=0
while read -r n f; do
	[ "$f" = total ] && continue
	[ "$n" -le "$MAX_LINES" ] && continue
	why=$(printf '%s\n' "$allow" | awk -F'\t' -v f="$f" '$1 == f { print $2 }')
	if [ -n "$why" ]; then
		echo "allowed $f: $n lines ($why)"
	else
		echo "FAIL $f: $n lines, more than $MAX_LINES: split it along a natural seam"
		bad=1
	fi
done < <(find src include lib -name '*.[ch]' -print0 | sort -z | xargs -0 wc -l)

# an allow-list entry for a file that is short now (or gone) is stale
while IFS=$'\t' read -r f why; do
	[ -z "$f" ] && continue
	if [ ! -f "$f" ] || [ "$(wc -l < "$f")" -le "$MAX_LINES" ]; then
		echo "FAIL allow-list: $f is no longer over $MAX_LINES lines: drop it from tests/cli/sizes.sh"
		bad=1
	fi
done <<< "$allow"

long=$(find src include lib -name '*.[ch]' -print0 | sort -z |
	xargs -0 awk -f mk/long-functions.awk)
if [ -n "$long" ]; then
	echo "report: functions over 60 lines without a comment above saying why:"
	printf '%s\n' "$long" | sed 's/^/  /'
fi
[ "$bad" -eq 0 ] && echo "ok   no file over $MAX_LINES lines outside the allow-list"
exit "$bad"
