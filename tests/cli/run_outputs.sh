#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A successful run in each output format, process and thread endpoints;
# the JSON parses and carries the schema's keys; nothing is left behind.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/json.sh"
tmp_long=$(mktemp -u)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
before=$(leftovers)

"$IPCLAB" run -t null -p pingpong,stream -s 64,4k -n 2000 -e process,thread --verify -q >"$dir/table" 2>"$dir/err" ||
	fail "table run failed: $(cat "$dir/err")"
grep -q 'null' "$dir/table" || fail "table has no null row"
[ "$(grep -c 'null' "$dir/table")" -ge 8 ] || fail "table has fewer than 8 null rows"
# every row shows each CPU's busy % beside cs/s: N/N/... up to 4 CPUs, else
# "max N mean M" (then the last word, checked here, is the mean); "-" only
# for a window without a clock tick, so a 300 ms cell must show numbers
head -1 "$dir/table" | grep -Eq 'cs/s +busy/CPU$' || fail "table header lacks busy/CPU after cs/s: $(head -1 "$dir/table")"
"$IPCLAB" run -t null -p pingpong -d 300ms -q >"$dir/busy" 2>"$dir/err" || fail "300 ms run failed: $(cat "$dir/err")"
ncpu=$(nproc)
check_busy() { # cell text; "-" allowed when $2 = short
	local b=$1 v
	[ "$2" = short ] && [ "$b" = - ] && return 0
	if [ "$ncpu" -le 4 ]; then
		[[ $b =~ ^[0-9]+(/[0-9]+)*$ ]] && [ "$(tr -cd / <<<"$b" | wc -c)" = $((ncpu - 1)) ] ||
			{ echo "busy/CPU cell '$b' is not one value per CPU ($ncpu)"; return 1; }
	fi
	for v in ${b//\// }; do
		[[ $v =~ ^[0-9]+$ ]] && [ "$v" -le 100 ] || { echo "busy/CPU cell '$b': '$v' is not a % from 0 to 100"; return 1; }
	done
}
for b in $(grep '^null' "$dir/table" | awk '{print $NF}'); do check_busy "$b" short || fail "busy/CPU column"; done
check_busy "$(grep '^null' "$dir/busy" | awk '{print $NF}')" long || fail "busy/CPU of a 300 ms cell"

"$IPCLAB" run -t null -p pingpong -n 1000 -f json -o "$dir/r.json" -q || fail "json run failed"
python3 - "$dir/r.json" <<'PY' || fail "json checks"
import json, sys
d = json.load(open(sys.argv[1]))
for k in ("schema_version", "ipclab_version", "cmdline", "env", "results"):
    assert k in d, k
r = d["results"][0]
for k in ("transport", "pattern", "size_bytes", "count", "endpoints", "pin", "sched", "clients", "status", "metrics", "sides", "histogram"):
    assert k in r, k
m = r["metrics"]
assert m["lat_kind"] == "rtt", m["lat_kind"]
assert m["lat_p50_ns"] > 0 and m["lat_p50_ns"] <= m["lat_p99_ns"] <= m["lat_max_ns"]
assert sum(c for _, c in r["histogram"]["buckets"]) == m["lat_samples"] == 1000, m["lat_samples"]
assert len(r["sides"]) == 2
PY
ls "$dir" | grep -q tmp && fail "temporary output file left behind"

"$IPCLAB" run -t null -p stream -n 1000 -f csv -q >"$dir/r.csv" || fail "csv run failed"
[ "$(wc -l <"$dir/r.csv")" = 2 ] || fail "csv: expected header + 1 row, got $(wc -l <"$dir/r.csv") lines"
head -1 "$dir/r.csv" | grep -q 'transport' || fail "csv header lacks transport"

"$IPCLAB" list >"$dir/list" || fail "list failed"
grep -q 'stream' "$dir/list" && grep -q 'pingpong' "$dir/list" || fail "list lacks patterns"
"$IPCLAB" --version | grep -q '^ipclab ' || fail "--version"
"$IPCLAB" --help | grep -q 'usage' || fail "--help"

# the long spellings reach the same place: --format, --output, --quiet
out=$("$IPCLAB" run -t null -n 100 --format json --output "$tmp_long" --quiet 2>&1)
[ -z "$out" ] || fail "run --format json --output F --quiet printed: $out"
json_is "$tmp_long" results.0.status ok "run --format json --output F --quiet"
rm -f "$tmp_long"
# clean --quiet says nothing, --dry-run removes nothing
out=$("$IPCLAB" clean --quiet 2>&1) && [ -z "$out" ] || fail "clean --quiet printed: $out"
"$IPCLAB" clean --dry-run | grep -q '^ipclab clean: would remove 0 objects' || fail "clean --dry-run"

after=$(leftovers)
new=$(new_leftovers "$before" "$after")
[ -z "$new" ] || fail "left behind: $new"
finish
