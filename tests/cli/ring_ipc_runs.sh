#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# ring-ipc moving runs, every byte checked (--verify): closed-loop streams
# of 64 B and 4 KiB from one client and from four, each way (c2s: each
# client commits runs, the server reads one client's run as one, four
# clients' in turn or as each is ready; s2c: a server of one client
# commits runs, one of four sends to each in turn, and each client peeks
# its messages in runs), process and thread endpoints, with -O batch=auto
# (the default: a run is published at its end) and -O batch=7 (runs cut
# at every 7th message's publication); four clients also under each of
# the fan-in server's ways of waiting (-O serve=in-turn, epoll). And
# ping-pongs, every request and reply checked, with one client and four
# (the server's replies each published at once, as no request waits
# behind one), under each way of waiting. Every cell must be ok with all
# its messages, none lost; nothing left behind.
. "$(dirname "$0")/../lib/common.sh"
command -v jq >/dev/null || { echo "skip: no jq"; exit 77; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
before=$(leftovers)
n=5000

# name args...: every cell of the run ok, n messages per client, none lost
check_run() {
	local name=$1 pat=stream
	shift
	case $name in pp-*) pat=pingpong ;; esac
	"$IPCLAB" run -t ring-ipc -p $pat -n $n --verify "$@" -q -f json -o "$dir/$name.json" \
		2>"$dir/$name.err" ||
		{ fail "$name: ipclab run $* failed: $(head -c 300 "$dir/$name.err")"; return; }
	jq -e --argjson n $n '.results | length > 0 and all(.status == "ok" and
		.verify and .metrics.lost == 0 and .metrics.msgs == $n * .clients)' "$dir/$name.json" \
		>/dev/null ||
		fail "$name: $(jq -c '[.results[] | {s: .size_bytes, c: .clients,
			e: .endpoints, status, reason, m: .metrics.msgs, lost: .metrics.lost}]' \
			"$dir/$name.json")"
}

for b in auto 7; do
	for d in c2s s2c; do
		check_run "$b-$d" -O batch=$b -O dir=$d -s 64,4k -e process,thread --clients 1,4
	done
done
for s in in-turn epoll; do
	check_run "serve-$s" -O serve=$s -s 64,4k -e process,thread --clients 4
done
check_run pp-auto -s 64,4k -e process,thread --clients 1,4
for s in in-turn epoll; do
	check_run "pp-$s" -O serve=$s -s 64,4k -e process,thread --clients 4
done
jq -e '[.results[].clients] | sort == [1, 1, 1, 1, 4, 4, 4, 4]' "$dir/auto-c2s.json" \
	>/dev/null || fail "the cells are not the ones asked: $(jq -c '[.results[] | [.size_bytes, .clients, .endpoints]]' "$dir/auto-c2s.json")"

after=$(leftovers)
[ -z "$(new_leftovers "$before" "$after")" ] || fail "left behind: $(new_leftovers "$before" "$after")"
finish
