#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# ipclab compare shows what differs between the hosts beside the ratios:
# two result files whose env differs in kernel and CPU model print exactly
# those two keys (text, markdown and JSON), readings that change from run to
# run on one machine (load, clock cost, current MHz) are no difference, two
# files of one machine print none, and a --peer file's remote_env (the
# server host) is set against its own env.
. "$(dirname "$0")/../lib/common.sh"
data=$(cd "$(dirname "$0")/../data" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
a=$data/compare-env-a.json a2=$data/compare-env-a2.json b=$data/compare-env-b.json

# two hosts: kernel and cpu_model, nothing else
"$IPCLAB" compare "$a" "$b" >"$work/ab.txt" 2>"$work/err" || fail "compare a b: exit $?: $(cat "$work/err")"
sed -n '/^environment differs (before -> after):$/,/^[^ ]/p' "$work/ab.txt" | grep '^  ' >"$work/diff"
cat >"$work/want" <<'TXT'
  kernel           6.1.0 #1 SMP PREEMPT_DYNAMIC x86_64  ->  6.2.0 #1 SMP PREEMPT_DYNAMIC x86_64
  cpu_model        Test CPU A  ->  Test CPU B
TXT
cmp -s "$work/diff" "$work/want" && echo "ok   text: kernel and cpu_model differ, nothing else" ||
	fail "text: environment difference: $(cat "$work/diff")"
grep -q '^  msgs/s .* 0\.800 ' "$work/ab.txt" || fail "text: the ratio is not beside the difference"
# the --peer file: its client host against its server host
sed -n '/^after, a --peer run: this host -> server host:$/,/^[^ ]/p' "$work/ab.txt" | grep '^  ' >"$work/peer"
grep -q '^  hostname  *lab-a  ->  lab-s$' "$work/peer" && grep -q '^  cpu_model  *Test CPU B  ->  Test CPU A$' "$work/peer" ||
	fail "text: --peer file's env against its remote_env: $(cat "$work/peer")"
grep -q 'only one file is of a --peer run' "$work/ab.txt" || fail "text: one file with remote_env not said"
echo "ok   text: a --peer file's client and server hosts set side by side"

"$IPCLAB" compare -f markdown "$a" "$b" >"$work/ab.md" || fail "compare -f markdown: exit $?"
sed -n '/^\*\*Environment differs (before -> after):\*\*$/,/^\*\*/p' "$work/ab.md" | grep '^- ' >"$work/mdiff"
printf '%s\n' '- kernel: 6.1.0 #1 SMP PREEMPT\_DYNAMIC x86\_64 -> 6.2.0 #1 SMP PREEMPT\_DYNAMIC x86\_64' \
	'- cpu_model: Test CPU A -> Test CPU B' >"$work/mwant"
cmp -s "$work/mdiff" "$work/mwant" || fail "markdown: environment list: $(cat "$work/mdiff")"
[ "$(grep -c '^| --- |' "$work/ab.md")" = 1 ] || fail "markdown: more than one table"
grep -q '^| | msgs/s\|^| tcp pingpong 64B process | msgs/s' "$work/ab.md" || fail "markdown: no ratio table"
echo "ok   markdown: the environment difference listed under the one table"

"$IPCLAB" compare -f json "$a" "$b" >"$work/ab.json" || fail "compare -f json: exit $?"
python3 - "$work/ab.json" <<'PY' || fail "json: env_diff"
import json, sys
d = json.load(open(sys.argv[1]))
e = d["env_diff"]
assert [x["key"] for x in e["before_after"]] == ["kernel", "cpu_model"], e
assert e["before_after"][1] == {"key": "cpu_model", "before": "Test CPU A", "after": "Test CPU B"}, e
assert "remote_before_after" not in e and "before_peer" not in e, e
assert {x["key"] for x in e["after_peer"]} == {"hostname", "kernel", "cpu_model"}, e
assert abs(d["cells"][0]["metrics"]["msgs_per_s"]["ratio"] - 0.8) < 1e-9
print("ok   json: env_diff.before_after kernel, cpu_model; after_peer client vs server")
PY

# one machine: no difference, in any format
"$IPCLAB" compare "$a" "$a2" >"$work/aa.txt" || fail "compare a a2: exit $?"
grep -q '^environment: no difference' "$work/aa.txt" || fail "same machine: no 'no difference' line"
grep -qE 'differs|->|--peer' "$work/aa.txt" && fail "same machine: a difference printed: $(grep -E 'differs|->' "$work/aa.txt")"
"$IPCLAB" compare -f markdown "$a" "$a2" | grep -q '^- ' && fail "same machine: markdown environment list"
"$IPCLAB" compare -f json "$a" "$a2" | python3 -c '
import json, sys
e = json.load(sys.stdin)["env_diff"]
assert e == {"before_after": []}, e' || fail "same machine: json env_diff not empty"
echo "ok   same machine (other load, clock cost, MHz): no difference printed"
finish
