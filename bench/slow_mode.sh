#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Which mode is this VM in, and where does a spinning ring's time go in it?
# ring_floor (the smallest spinning ring), ref_cacheline (one cache line's
# round trip, CPU 0 <-> 1), then ipclab's ring stream and ring-spin
# ping-pong across the two CPUs, traced, and pipe's same-CPU round trip
# (no cross-CPU line), alternated in 3 rounds.
cd "$(dirname "$0")/.."
B=${B:-build}
for r in 1 2 3; do
  echo "== round $r $(date +%T) load $(cut -d' ' -f1 /proc/loadavg)"
  $B/bench/ring_floor -r 3 2>&1 | grep plain
  $B/bench/ref_cacheline 16 2000000 2>&1 | tail -1
  $B/ipclab run -t ring -p stream -s 64 -n 5M --pin split --trace -f json -q 2>/dev/null | python3 -c "
import json,sys
r=json.load(sys.stdin)['results'][0]; m=r['metrics']; t=r['trace']
s=[(x['role'], round(100*x['user_ns']/max(1,x['wall_ns'])), round(100*x['sys_ns']/max(1,x['wall_ns'])), x['ctx_switches']) for x in t['sides']]
print('ring stream 64B split: %.1f M msg/s; sides (role, user%%, sys%%, switches) %s; cause %s' % (m['msgs_per_s']/1e6, s, [(c['name'], c['pct']) for c in (t.get('cause') or {}).get('shares', [])][:3]))"
  $B/ipclab run -t ring-spin -p pingpong -s 64 -n 500k --pin split -f json -q 2>/dev/null | python3 -c "
import json,sys
m=json.load(sys.stdin)['results'][0]['metrics']; print('ring-spin pingpong split p50 %d ns' % m['lat_p50_ns'])"
  $B/ipclab run -t pipe -p pingpong -s 64 -n 200k --pin same -f json -q 2>/dev/null | python3 -c "
import json,sys
m=json.load(sys.stdin)['results'][0]['metrics']; print('pipe pingpong same-CPU p50 %d ns' % m['lat_p50_ns'])"
done
# Not part of `make check`: numbers, not tests. Usage: B=build bench/slow_mode.sh
