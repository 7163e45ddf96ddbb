#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The ring transports' -O batch=auto (ring, ring-spin, ring-eventfd and
# ring-ipc), their default: the setting reaches the record; a closed-loop stream through it loses, repeats and tears
# nothing (--verify, process and thread endpoints, each ring variant); and
# no message waits for a batch to fill: a paced stream's one-way p50 stays
# far under the pacing interval with auto (as with batch=1), while
# batch=8 holds each message for the next ones, over one interval.
# A -O scoped to one transport (-O ring-ipc:batch=8) reaches that
# transport's cells only, record and behaviour, and wins over an unscoped
# one in either order.
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

# scoped: one run, ring at auto beside ring-ipc at batch=8, interleaved
sel() { jq -c --arg t "$2" '.results[] | select(.transport == $t)' "$dir/$1.json"; }
if run_json scoped -t ring,ring-ipc -O ring-ipc:batch=8 -p stream -s 64 --rate 100 -n 60 \
	--warmup 5 --repeat 2; then
	sel scoped ring | jq -e '.settings.batch == "auto" and .options.transport.batch == "auto"' >/dev/null ||
		fail "-O ring-ipc:batch=8 reached ring: $(sel scoped ring | jq -c '{s: .settings, o: .options.transport}')"
	sel scoped ring-ipc | jq -e '.settings.batch == 8 and .options.transport.batch == 8' >/dev/null ||
		fail "-O ring-ipc:batch=8 did not reach ring-ipc: $(sel scoped ring-ipc | jq -c '{s: .settings, o: .options.transport}')"
	a=$(sel scoped ring | jq -r .metrics.lat_p50_ns)
	b=$(sel scoped ring-ipc | jq -r .metrics.lat_p50_ns)
	[ "$a" != null ] && [ "$a" -lt $((interval / 2)) ] ||
		fail "scoped run: ring (auto) paced one-way p50 $a ns is not under half the interval"
	[ "$b" != null ] && [ "$b" -gt "$interval" ] ||
		fail "scoped run: ring-ipc (batch=8) paced one-way p50 $b ns is not over the interval"
	echo "scoped: one run, ring auto p50 $a ns, ring-ipc batch=8 p50 $b ns"
fi
# the scoped value wins over the unscoped one, whichever comes first
for order in "-O ring:batch=64 -O batch=2" "-O batch=2 -O ring:batch=64"; do
	# shellcheck disable=SC2086
	run_json prec -t ring,ring-ipc $order -p stream -s 64 -n 2k || continue
	got=$(jq -r '[.results[] | "\(.transport)=\(.settings.batch)"] | join(" ")' "$dir/prec.json")
	[ "$got" = "ring=64 ring-ipc=2" ] || fail "$order: $got, expected ring=64 ring-ipc=2"
done
expect_usage_error "-O scoped to no transport" run -t ring -O rng:batch=4 -n 10
expect_usage_error "-O scoped to an unselected transport" run -t ring -O ring-ipc:batch=4 -n 10
expect_usage_error "-O scoped, key unknown" run -t ring,pipe -O pipe:batch=4 -n 10
expect_usage_error "-O with an empty scope" run -t ring -O :batch=4 -n 10

after=$(leftovers)
[ -z "$(new_leftovers "$before" "$after")" ] || fail "left behind: $(new_leftovers "$before" "$after")"
finish
