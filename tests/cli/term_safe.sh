#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Strings from a result file or a store on their way to a terminal: a file
# whose transport, pattern, reason, dates, env keys and values, folded
# stack directory hold ESC sequences (colour, window
# title), CR, BS, DEL, a C1 control (U+009B, the one-byte CSI) and a
# bidirectional override reach no terminal raw. compare (table and
# markdown), report's note on stderr, history's table and db ls show them
# escaped (\x1b, \u009b), and an ordinary file prints as before.
. "$(dirname "$0")/../lib/common.sh"
data=$(cd "$(dirname "$0")/../data" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
command -v python3 >/dev/null || { echo "skip: needs python3"; exit 77; }

python3 - "$data" "$work" <<'PY' || { echo "FAIL: cannot write the hostile files"; exit 1; }
import copy, json, sys
data, work = sys.argv[1], sys.argv[2]
H = "x\x1b[31mRED\x1b]0;title\x07\rCR\bBS\x7fDEL\u009b2J\u202eevil"
for name in ("a", "b"):
    d = json.load(open("%s/compare-env-%s.json" % (data, name)))
    d["created_utc"] = "2025" + H
    d["env"]["kernel"] = "6.1" + H
    d["env"]["hostname"] = "lab" + H
    d["env"]["k" + H] = "v" + H + name
    r = d["results"][0]
    r["transport"] = "tcp" + H
    r["profile_run"] = {"folded_dir": "dir" + H}
    gone = copy.deepcopy(r)
    gone["pattern"] = "pp" + H
    gone["status"], gone["reason"] = "failed", "why" + H
    d["results"].append(gone)
    only = copy.deepcopy(r)
    only["pattern"] = "only-" + name + H
    d["results"].append(only)
    json.dump(d, open("%s/%s.json" % (work, name), "w"))
PY

# raw FILE: the bytes a terminal would act on (C0 but newline and tab, DEL,
# C1 as UTF-8 or alone, the bidirectional controls), counted
raw() {
	python3 - "$1" <<'PY'
import re, sys
b = open(sys.argv[1], "rb").read()
print(len(re.findall(rb"[\x00-\x08\x0b-\x1f\x7f]|\xc2[\x80-\x9f]|\xe2\x80[\xa8-\xae]|\xe2\x81[\xa6-\xa9]", b)))
PY
}

# check WHAT FILE: nothing raw, the escapes shown
check() {
	local n
	n=$(raw "$2")
	if [ "$(grep -c $'\x1b' "$2")" != 0 ] || [ "$n" != 0 ]; then
		fail "$1: $n raw control bytes reach the terminal: $(head -c 300 "$2" | cat -v)"
	elif ! grep -qF '\x1b[31mRED\x1b]0;title\x07\x0dCR\x08BS\x7fDEL\u009b2J\u202eevil' "$2"; then
		fail "$1: the hostile text is not shown escaped: $(head -c 300 "$2")"
	else
		echo "ok   $1: shown escaped"
	fi
}

cd "$work" || exit 1
"$IPCLAB" compare a.json b.json >cmp.txt 2>err || fail "compare: exit $?: $(cat -v err)"
check "compare (table)" cmp.txt
grep -q '^  kernel  ' cmp.txt || fail "compare (table): the environment difference is gone"
"$IPCLAB" compare -f markdown a.json b.json >cmp.md 2>err || fail "compare -f markdown: exit $?"
[ "$(grep -c $'\x1b' cmp.md)" = 0 ] && [ "$(raw cmp.md)" = 0 ] &&
	grep -qF 'tcpx\x1b[31mRED' cmp.md && echo "ok   compare (markdown): shown escaped" ||
	fail "compare (markdown): raw control bytes: $(head -c 300 cmp.md | cat -v)"
"$IPCLAB" report a.json -o page.html 2>note || fail "report: exit $?: $(cat -v note)"
grep -q 'folded stacks in' note || fail "report: no note of the folded stacks: $(cat -v note)"
check "report's note (stderr)" note

# an ordinary pair prints as it did
"$IPCLAB" compare "$data/compare-env-a.json" "$data/compare-env-b.json" >plain.txt ||
	fail "compare of the fixtures: exit $?"
grep -q '^  kernel           6.1.0 #1 SMP PREEMPT_DYNAMIC x86_64  ->  6.2.0 #1 SMP PREEMPT_DYNAMIC x86_64$' plain.txt &&
	echo "ok   an ordinary file prints unchanged" || fail "compare of the fixtures: $(head -12 plain.txt)"

# the store: a stored file's strings, in history's table and db ls
if ! has_sqlite; then
	echo "skip: store part (built without libsqlite3)"
else
	"$IPCLAB" db import -q --db "$work/s.db" a.json 2>err ||
		fail "db import: exit $?: $(cat -v err)"
	"$IPCLAB" history --db "$work/s.db" >hist.txt 2>err || fail "history: exit $?: $(cat -v err)"
	check "history (table)" hist.txt
	"$IPCLAB" db ls --db "$work/s.db" >ls.txt 2>err || fail "db ls: exit $?: $(cat -v err)"
	check "db ls" ls.txt
fi
finish
