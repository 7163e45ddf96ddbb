#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# ipclab env --check: one line per check (ok / warn / bad / n/a, what it
# found, the fix), exit 0 whatever it finds; it names this machine's
# governor, SMT and isolation state as sysfs has them; -f json carries the
# same checks; a busy loop during the watch is a busy task, and a hostile
# task name comes out printable; bad input is one line and exit 2.
. "$(dirname "$0")/../lib/common.sh"
command -v jq >/dev/null || { echo "skip: no jq"; exit 77; }
dir=$(mktemp -d)
hog=
trap '[ -n "$hog" ] && kill "$hog" 2>/dev/null; wait 2>/dev/null; rm -rf "$dir"' EXIT
cpu=/sys/devices/system/cpu
names="governor boost smt isolation cstates thp rt_throttling timer_slack irqbalance steal interrupts busy_tasks"

# 1. text: every check once, each line a status, a name and what it found
"$IPCLAB" env --check --sample 300ms >"$dir/text" 2>"$dir/err"
rc=$?
[ $rc = 0 ] && [ ! -s "$dir/err" ] || fail "env --check: exit $rc: $(cat "$dir/err")"
for n in $names; do
	[ "$(grep -cE "^(ok|warn|bad|n/a) +$n +[^ ]" "$dir/text")" = 1 ] || fail "no line for $n"
done
bad_lines=$(sed '1d;$d' "$dir/text" | grep -vE '^(ok|warn|bad|n/a) ')
[ -z "$bad_lines" ] || fail "lines without a status: $bad_lines"
tail -1 "$dir/text" | grep -qE '^[0-9]+ ok, [0-9]+ warn, [0-9]+ bad, [0-9]+ n/a$' ||
	fail "no count line: $(tail -1 "$dir/text")"
# a warning or a bad finding says how to fix it
grep -E '^(warn|bad) ' "$dir/text" | grep -v '; fix: .' | grep . &&
	fail "a warning without its fix"
line() { grep -E "^[a-z/]+ +$1 " "$dir/text"; }

# 2. this machine's governor, SMT and isolation, as sysfs says, for the
# two CPUs --pin split takes here (the first two this process may use)
read -r c0 c1 < <("$IPCLAB" env --check --sample 10ms -f json | jq -r '.cpus | @tsv')
[ -n "${c1:-}" ] || { echo "skip: --pin split needs two CPUs"; exit 77; }
if [ -r $cpu/cpu$c0/cpufreq/scaling_governor ]; then
	gov=$(cat $cpu/cpu$c0/cpufreq/scaling_governor)
	if [ "$gov" = performance ]; then want="^ok +governor +performance on"; else want="^warn +governor +'$gov' on CPU"; fi
else
	want="^n/a +governor +no cpufreq on CPUs $c0 and $c1"
fi
line governor | grep -qE -- "$want" && echo "ok   $(line governor)" ||
	fail "governor: '$(line governor)', expected /$want/"
sib0=$(cat $cpu/cpu$c0/topology/thread_siblings_list 2>/dev/null)
sib1=$(cat $cpu/cpu$c1/topology/thread_siblings_list 2>/dev/null)
if [ -z "$sib0" ] || [ -z "$sib1" ]; then
	want="^n/a +smt"
elif [ "$sib0" = "$sib1" ]; then
	want="^warn +smt +CPUs $c0 and $c1 are SMT siblings"
elif [ "$sib0" = "$c0" ] && [ "$sib1" = "$c1" ]; then
	want="^ok +smt +no SMT sibling: CPUs $c0 and $c1 each have a core of their own"
else
	want="^warn +smt +SMT on"
fi
line smt | grep -qE -- "$want" && echo "ok   $(line smt)" || fail "smt: '$(line smt)', expected /$want/"
iso=$(cat $cpu/isolated 2>/dev/null)
if [ -z "$iso" ]; then
	want="^warn +isolation +no CPU is isolated .*; fix: boot with isolcpus="
else
	want="^(ok|warn) +isolation +.*isolated"
fi
line isolation | grep -qE -- "$want" && echo "ok   $(line isolation | cut -c1-100)..." ||
	fail "isolation: '$(line isolation)', expected /$want/"

# 3. JSON: the same checks, statuses and fixes
"$IPCLAB" env --check --sample 200ms -f json >"$dir/json" 2>"$dir/err" || fail "env --check -f json: $(cat "$dir/err")"
got=$(jq -r '[.checks[].name] | join(" ")' "$dir/json")
[ "$got" = "$names" ] || fail "json checks: '$got'"
jq -e --argjson c0 "$c0" --argjson c1 "$c1" '.pin == "split" and .cpus == [$c0, $c1] and .sample_ns == 200000000 and
	all(.checks[]; (.status | IN("ok", "warn", "bad", "n/a")) and (.found | length) > 0 and
	    (if .status == "warn" or .status == "bad" then (.fix | type) == "string" else true end))' \
	"$dir/json" >/dev/null && echo "ok   json: $(jq -c '[.checks[] | .status] | group_by(.) | map({(.[0]): length}) | add' "$dir/json")" ||
	fail "json: $(head -c 400 "$dir/json")"
"$IPCLAB" env --check --sample 50ms --pin none -f json | jq -e '.pin == "none" and .cpus == []' >/dev/null ||
	fail "--pin none: not every CPU"

# 4. a busy loop with a hostile name during the watch: a busy task, printed
# printable (the name's control byte as '?')
sh -c 'printf "hog\001)x" >/proc/self/comm; while :; do :; done' &
hog=$!
for _ in $(seq 100); do
	grep -q '^hog' "/proc/$hog/comm" 2>/dev/null && break
	sleep 0.02
done
"$IPCLAB" env --check --sample 1s >"$dir/busy" 2>&1 || fail "env --check with a busy loop failed"
kill $hog
wait $hog 2>/dev/null
hog=
grep -qE '^(warn|bad) +busy_tasks +other tasks used [0-9]+% of a CPU' "$dir/busy" &&
	echo "ok   $(grep busy_tasks "$dir/busy" | cut -c1-110)..." ||
	fail "busy loop not seen: $(grep busy_tasks "$dir/busy")"
LC_ALL=C grep -q '[^ -~]' "$dir/busy" && fail "unprintable bytes in the output: $(grep busy_tasks "$dir/busy" | od -c | head -5)"
if grep -q "hog?)x (pid" "$dir/busy"; then echo "ok   the hostile name printed as hog?)x"; fi

# 5. bad input
expect_usage_error "--sample 0" env --check --sample 0
expect_usage_error "--sample past a minute" env --check --sample 2m
expect_usage_error "--sample not a time" env --check --sample soon
expect_usage_error "--pin to a CPU that is not there" env --check --pin 0:99999
expect_usage_error "--pin without --check" env --pin 0:1
expect_usage_error "--sample without --check" env --sample 1s
expect_usage_error "unknown option" env --check --bogus
finish
