#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The ring transports' -O batch=auto (ring, ring-spin, ring-eventfd and
# ring-ipc), their default: the setting reaches the record; a closed-loop stream through it loses, repeats and tears
# nothing (--verify, process and thread endpoints, each ring variant); and
# no message waits for a batch to fill: a paced stream's one-way p50 stays
# far under the pacing interval with auto (as with batch=1), while
# batch=8 holds each message for the next ones, over one interval.
. "$(dirname "$0")/../lib/common.sh"
command -v jq >/dev/null || { echo "skip: no jq"; exit 77; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
before=$(leftovers)

run_json() { # name args...: the run's JSON in $dir/name.json
	local name=$1
	shift
	"$IPCLAB" run "$@" -q -f json -o "$dir/$name.json" 2>"$dir/$name.err" ||
		{ fail "$name: ipclab run $* failed: $(head -c 300 "$dir/$name.err")"; return 1; }
}

# the default, and what the record says
if run_json default -t ring -p stream -s 64 -n 20k; then
	jq -e '.results[0].settings.batch == "auto"' "$dir/default.json" >/dev/null ||
		fail "default batch is not recorded as auto: $(jq -c '.results[0].settings' "$dir/default.json")"
fi
if run_json n64 -t ring -O batch=64 -p stream -s 64 -n 20k; then
	jq -e '.results[0].settings.batch == 64' "$dir/n64.json" >/dev/null ||
		fail "-O batch=64 is not recorded: $(jq -c '.results[0].settings' "$dir/n64.json")"
fi
expect_usage_error "-O batch=often" run -t ring -O batch=often -n 10

if run_json ipc-default -t ring-ipc -p stream -s 64 -n 20k; then
	jq -e '.results[0].settings.batch == "auto"' "$dir/ipc-default.json" >/dev/null ||
		fail "ring-ipc's default batch is not recorded as auto: $(jq -c '.results[0].settings' "$dir/ipc-default.json")"
fi

# closed-loop streams through auto: every byte checked (ring-ipc's clients
# move runs, one client or four, while its server reads each in turn)
for c in 1 4; do
	for e in process thread; do
		for b in auto 64; do
			run_json "ipc-$c-$e-$b" -t ring-ipc -O batch=$b -p stream -s 4k -n 40k --clients $c -e "$e" --verify || continue
			jq -e --argjson n $((40000 * c)) '.results[0] | .status == "ok" and .metrics.msgs == $n' \
				"$dir/ipc-$c-$e-$b.json" >/dev/null ||
				fail "ring-ipc $c clients $e batch=$b: $(jq -c '.results[0] | {status, reason, m: .metrics.msgs}' "$dir/ipc-$c-$e-$b.json")"
		done
	done
done
for t in ring ring-spin ring-eventfd; do
	for e in process thread; do
		for s in 64 4k; do
			run_json "v-$t-$e-$s" -t "$t" -p stream -s "$s" -n 50k -e "$e" --verify || continue
			jq -e '.results[0] | .status == "ok" and .metrics.lost == 0 and .metrics.msgs == 50000' \
				"$dir/v-$t-$e-$s.json" >/dev/null ||
				fail "$t $e $s: $(jq -c '.results[0] | {status, reason, m: .metrics.msgs}' "$dir/v-$t-$e-$s.json")"
		done
	done
done

# paced at 100/s (10 ms apart): nothing waits for the next message
p50() { jq -r '.results[0].metrics.lat_p50_ns' "$dir/$1.json"; }
for b in auto 1 8; do
	run_json "paced-$b" -t ring -O batch=$b -p stream -s 64 --rate 100 -n 60 --warmup 5 || continue
done
run_json paced-ipc -t ring-ipc -p stream -s 64 --rate 100 -n 60 --warmup 5
interval=10000000
for b in auto 1 ipc; do
	v=$(p50 "paced-$b")
	[ -n "$v" ] && [ "$v" != null ] && [ "$v" -lt $((interval / 2)) ] ||
		fail "batch=$b: paced one-way p50 $v ns is not under half the 10 ms interval: a message waited"
done
v=$(p50 paced-8)
[ -n "$v" ] && [ "$v" != null ] && [ "$v" -gt "$interval" ] ||
	fail "batch=8: paced one-way p50 $v ns, expected over the interval (the check cannot tell)"
echo "paced one-way p50: auto $(p50 paced-auto) ns, batch=1 $(p50 paced-1) ns, batch=8 $(p50 paced-8) ns"

after=$(leftovers)
[ -z "$(new_leftovers "$before" "$after")" ] || fail "left behind: $(new_leftovers "$before" "$after")"
finish
