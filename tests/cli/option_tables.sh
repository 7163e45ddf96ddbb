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
		on && tp { print } { tp = on && ($0 == ".TP" || $0 == ".TQ") }' "$work/man.txt"
}
awk -F'\t' 'NF == 4' "$work/opts" >"$work/rows"
for sec in $(cut -f2 "$work/rows" | sort -u | tr ' ' '_'); do
	sec=${sec//_/ }
	man_headers "$sec" >"$work/headers"
	# --help is said once for every command, in the synopsis
	grep -o -- '--[a-z][a-z-]*' "$work/headers" | grep -vx -- --help | sort -u >"$work/man_longs"
	awk -F'\t' -v s="$sec" '$2 == s && $4 != "--help" { print $4 }' "$work/rows" | sort -u \
		>"$work/table_longs"
	[ -s "$work/table_longs" ] || fail "--dump-options: no option for '$sec'"
	missing=$(comm -13 "$work/man_longs" "$work/table_longs" | tr '\n' ' ')
	extra=$(comm -23 "$work/man_longs" "$work/table_longs" | tr '\n' ' ')
	[ -z "$missing" ] || fail "docs/ipclab.1 $sec: no entry for $missing"
	[ -z "$extra" ] || fail "docs/ipclab.1 $sec: documents $extra, which the command does not take"
	# a short name stands beside its long one in the entry
	while IFS=$'\t' read -r _ s short long; do
		[ "$s" = "$sec" ] && [ "$short" != - ] && [ "$long" != --help ] || continue
		grep -E -- "$long([^a-z-]|$)" "$work/headers" | grep -qE -- "(^|[^a-z-])$short([^a-zA-Z-]|$)" ||
			fail "docs/ipclab.1 $sec: $long's entry does not name $short"
	done <"$work/rows"
	echo "ok   man page: $sec documents the $(wc -l <"$work/table_longs") options of the table"
done

# ---- every command -------------------------------------------------------------------

# Each command of ipclab --help (and each of suite's) parses by a table: its
# --help has a line for every option of it, and the completion of
# `ipclab CMD -` offers the table's options, no other.
before=$fails
cmds=$("$IPCLAB" --help | awk '$1 == "usage:" || $1 == "ipclab" { sub(/^usage: /, ""); print $2 }' |
	tr -d '[]')
subs=$("$IPCLAB" suite --help | grep -oE 'ipclab suite [a-z]+' | awk '{ print $3 }' | sort -u)
[ -n "$subs" ] || fail "suite --help names no subcommand"
for c in $cmds; do
	if [ "$c" = suite ]; then
		for s in $subs; do echo "suite $s"; done
	else
		echo "$c"
	fi
done >"$work/cmds"
[ "$(wc -l <"$work/cmds")" -ge 12 ] || fail "ipclab --help: commands: $(paste -sd' ' "$work/cmds")"
# what `ipclab CMD -` completes to (db: after its subcommand), a block per command
bash -c '. "$0"; compopt() { :; }
	while read -r c; do
		[ "$c" = db ] && c="db ls"
		read -ra w <<<"ipclab $c -"
		COMP_WORDS=("${w[@]}") COMP_CWORD=$((${#w[@]} - 1)) COMPREPLY=()
		_ipclab
		printf "%s\n" "${COMPREPLY[@]}" | grep -- "^--" | grep -v = | grep -vx -- --help |
			sort -u | sed "s/^/$c\t/"
	done <"$1"' "$docs/ipclab.bash-completion" "$work/cmds" >"$work/completed"
while read -r c; do
	awk -F'\t' -v c="$c" '$1 == c && $4 != "--help" { print $4 }' "$work/rows" | sort -u >"$work/want"
	if [ ! -s "$work/want" ]; then
		fail "ipclab $c: no option table (ipclab --dump-options has no row of it)"
		continue
	fi
	"$IPCLAB" $c --help >"$work/cmd_help" 2>&1 || fail "ipclab $c --help: exit $?"
	missing=$(grep -oE -- '(^|[ ,])--[a-z][a-z-]*([ =[]|$)' "$work/cmd_help" |
		grep -oE -- '--[a-z][a-z-]*' | sort -u | comm -13 - "$work/want")
	[ -z "$missing" ] || fail "ipclab $c --help: no line for $(echo $missing)"
	[ "$c" = db ] && c="db ls"
	awk -F'\t' -v c="$c" '$1 == c { print $2 }' "$work/completed" >"$work/got"
	diff -u "$work/want" "$work/got" >"$work/diff" ||
		fail "completion of 'ipclab $c -' is not the table's options: $(grep '^[-+]-' "$work/diff" | tr '\n' ' ')"
done <"$work/cmds"
[ "$fails" != "$before" ] ||
	echo "ok   every command ($(paste -sd, "$work/cmds")) parses by its table: --help and completion agree with it"

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

# ---- list -f json -------------------------------------------------------------------

"$IPCLAB" list >"$work/list.txt" || fail "list: exit $?"
"$IPCLAB" list -f json >"$work/list.json" || fail "list -f json: exit $?"
"$IPCLAB" list -f text | cmp -s - "$work/list.txt" || fail "list -f text: not the list"
python3 - "$work/list.txt" "$work/list.json" "$work/rows" <<'PY' || fail "list -f json disagrees with list and the option tables"
import json, re, sys
text = open(sys.argv[1]).read().splitlines()
d = json.load(open(sys.argv[2]))
section, names, keys = None, {"transports:": [], "patterns:": []}, {}
for line in text:
    if re.match(r"^[a-z]+:$", line):
        section = line
    elif re.match(r"^  [^ -]", line) and section in names:
        cur = line.split()[0]
        names[section].append(cur)
        keys[cur] = []
    elif line.strip().startswith("-O "):
        keys[cur].append(line.split()[1].split("=")[0])
got = {"transports:": [t["name"] for t in d["transports"]], "patterns:": [p["name"] for p in d["patterns"]]}
# the list groups transports (kernel, shared memory, ...); the JSON names each one's group
assert {k: sorted(v) for k, v in got.items()} == {k: sorted(v) for k, v in names.items()}, (got, names)
for t in d["transports"] + d["patterns"]:
    assert [o["name"] for o in t["options"]] == keys[t["name"]], t["name"]
    for o in t["options"]:
        assert o["type"] in ("bool", "count", "size", "duration", "string", "choice"), o
        assert (o["choices"] is not None) == (o["type"] == "choice"), o
assert {"table", "json", "markdown", "ranked"} <= {f["name"] for f in d["formats"]}
assert [f for f in d["formats"] if f["name"] == "table"][0]["alias"] == "text"
rows = {}
for line in open(sys.argv[3]):
    cmd, _, short, long = line.rstrip("\n").split("\t")
    rows.setdefault(cmd, []).append(long)
assert {c["name"]: ["--" + o["name"] for o in c["options"]] for c in d["commands"]} == rows
pat = [o for c in d["commands"] if c["name"] == "run" for o in c["options"] if o["name"] == "pattern"][0]
assert all(p in pat["help"] for p in got["patterns:"]) and "{" not in pat["help"], pat
PY
echo "ok   list -f json: the list's transports, patterns and -O keys, the formats, every table's options"
expect_usage_error "list -f yaml" list -f yaml

# ---- one format vocabulary ----------------------------------------------------------

data=$(cd "$(dirname "$0")/../data" && pwd)
same_output() {	# description, then the command with FMT where -f's value goes
	local what=$1 a b
	shift
	a=$("$IPCLAB" "${@/FMT/table}" 2>&1) || fail "$what -f table: exit $?: $a"
	b=$("$IPCLAB" "${@/FMT/text}" 2>&1) || fail "$what -f text: exit $?: $b"
	[ -n "$a" ] && [ "$a" = "$b" ] || fail "$what: -f text and -f table differ"
}
same_output "run" run -t null -n 10 --dry-run -q -f FMT
same_output "compare" compare -f FMT "$data/compare-before.json" "$data/compare-after.json"
# env's figures move (load, clock): its keys stay
a=$("$IPCLAB" env -f table | awk '{ print $1 }') b=$("$IPCLAB" env -f text | awk '{ print $1 }')
[ -n "$a" ] && [ "$a" = "$b" ] || fail "env: -f text and -f table differ"
echo "ok   -f: table and its alias text in run, compare and env"
# each command's error lists the names its completion offers
for c in run compare env; do
	err=$("$IPCLAB" $c -f yaml 2>&1 >/dev/null)
	words=$(bash -c '. "$0"; compopt() { :; }; COMP_WORDS=(ipclab "$1" -f ""); COMP_CWORD=3
		_ipclab; printf "%s\n" "${COMPREPLY[@]}"' "$docs/ipclab.bash-completion" "$c" | tr '\n' ' ')
	for w in $words; do
		case $err in *"$w"*) ;; *) fail "$c -f yaml: '$err' does not name $w" ;; esac
	done
	[ -n "$words" ] || fail "$c -f: the completion offers nothing"
done
expect_usage_error "suite -f yaml" suite seeds -f yaml
expect_usage_error "history -f yaml" history -f yaml
expect_usage_error "db ls -f yaml" db ls -f yaml

finish
