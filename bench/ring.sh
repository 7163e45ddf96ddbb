#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Issue 4's goals for the ring transports, measured side by side. Each group
# is ONE ipclab run with --repeat $REPS: the cells are interleaved and every
# metric is the median of the repetitions, so the transports compared in a
# group share the machine's state. Endpoints on different CPUs (--pin split).
#   1. stream 4 KiB: ring vs pipe, unix-stream, posix-mq, libqb-rb
#   2. stream 64 B: the same five
#   3. ping-pong 64 B, ring (default: spin, then futex) vs pipe and libqb-rb
#      busy-polling (-O wait=poll: sem_trywait; and wait=nosem: no semaphore)
#   4. ping-pong 64 B, ring-spin vs cacheline (the cache-line floor)
#   5. paced ping-pong at 10/s, ring vs shm-futex (a cold wakeup each time)
#   6. idle: a reader blocked 1 s (bench/ring_idle, getrusage + ring stats)
#   7. futex calls per message while streaming: ring's own counters
#      (bench/ring_idle) and, with perf, every futex call of an ipclab run
#   8. harness overhead: ipclab's ring stream 64 B vs build/bench/ring_bare,
#      alternated $REPS times (both: threads on CPU 0 and 1, publish every 32),
#      and where it goes: bench/ring_layers adds one layer at a time
# Streams run ring with -O batch=32 (publish every 32nd message, as ring_bare
# does); batch=1, the default before batch=auto, is shown beside them for reference.
# Prints one table of ratios and whether each goal is met. Raw results stay
# in $OUT (JSON per group). Not part of `make check`: numbers, not tests.
set -u
cd "$(dirname "$0")/.."
B=${B:-build}
IPCLAB=${IPCLAB:-$B/ipclab}
BARE=$B/bench/ring_bare
IDLE=$B/bench/ring_idle
LAYERS=$B/bench/ring_layers
REPS=${REPS:-5}
DUR=${DUR:-1s}
OUT=${OUT:-$(mktemp -d /tmp/ring-bench.XXXXXX)}
for f in "$IPCLAB" "$BARE" "$IDLE" "$LAYERS"; do
	[ -x "$f" ] || { echo "ring.sh: $f missing: run make first"; exit 1; }
done
command -v python3 >/dev/null || { echo "ring.sh: needs python3"; exit 1; }
mkdir -p "$OUT"
# REPORT_ONLY=1 OUT=dir: print the table of an earlier run again
if [ -z "${REPORT_ONLY:-}" ]; then

run() { # name args...: one interleaved group -> $OUT/name.json
	local name=$1; shift
	echo "ring.sh: $name: ipclab run $* --repeat $REPS" >&2
	"$IPCLAB" run "$@" --pin split --repeat "$REPS" -q -f json -o "$OUT/$name.json" ||
		echo "ring.sh: $name: ipclab exited $? (failed cells are shown as n/a)" >&2
}

STREAM=(-p stream -d "$DUR")
run stream4k -t ring,pipe,unix-stream,posix-mq,libqb-rb "${STREAM[@]}" -s 4k -O batch=32
run stream64 -t ring,pipe,unix-stream,posix-mq,libqb-rb "${STREAM[@]}" -s 64 -O batch=32
run stream_b1 -t ring,pipe "${STREAM[@]}" -s 64,4k
run pp_poll -t ring,pipe,libqb-rb -p pingpong -s 64 -d "$DUR" -O wait=poll
run pp_nosem -t ring,libqb-rb -p pingpong -s 64 -d "$DUR" -O wait=nosem
run pp_spin -t ring-spin,cacheline -p pingpong -s 64 -d "$DUR"
run paced -t ring,shm-futex -p pingpong -s 64 --rate 10/s -n 20

echo "ring.sh: idle and futex counters: $IDLE" >&2
"$IDLE" >"$OUT/idle.txt"
if command -v perf >/dev/null && perf list 2>/dev/null | grep -q 'syscalls:sys_enter_futex '; then
	for b in 1 32; do
		perf stat -x, -e syscalls:sys_enter_futex -o "$OUT/perf_futex_b$b.txt" -- \
			"$IPCLAB" run -t ring -p stream -s 64 -n 5M --pin split -O batch=$b -q -f json \
			-o "$OUT/perf_stream_b$b.json" || true
	done
fi

echo "ring.sh: harness: ipclab ring stream 64 B vs $BARE, alternated $REPS times" >&2
for ((i = 0; i < REPS; i++)); do
	"$IPCLAB" run -t ring -p stream -s 64 -d "$DUR" -e thread --pin 1:0 -O batch=32 -q -f json \
		-o "$OUT/harness_$i.json"
	"$BARE" -s 0.5 -r 1 >"$OUT/bare_$i.txt"
done

echo "ring.sh: layers: $LAYERS $((2 * REPS + 1))" >&2
"$LAYERS" $((2 * REPS + 1)) >"$OUT/layers.txt"
fi

python3 - "$OUT" "$REPS" <<'PY'
import glob, json, os, re, statistics, sys

out, reps = sys.argv[1], int(sys.argv[2])

def cells(name):
    p = os.path.join(out, name + ".json")
    try:
        return json.load(open(p))["results"]
    except (OSError, ValueError, KeyError):
        return []

def metric(name, tp, m, size=None):
    for r in cells(name):
        if r["transport"] == tp and (size is None or r["size_bytes"] == size):
            return r["metrics"].get(m) if r["status"] == "ok" else None
    return None

rows = []

def goal(what, a, b, op, limit, unit, fmt="{:.3g}"):
    """Ratio a/b against a goal: op '>=' or '<='."""
    if a is None or b is None or not b:
        rows.append((what, "n/a", "n/a", "n/a", f"{op} {limit}", "NOT MEASURED"))
        return
    ratio = a / b
    ok = ratio >= limit if op == ">=" else ratio <= limit
    rows.append((what, fmt.format(a) + unit, fmt.format(b) + unit, f"{ratio:.3g}",
                 f"{op} {limit}", "met" if ok else "NOT met"))

def info(what, a, unit=""):
    rows.append((what, "n/a" if a is None else f"{a:.3g}{unit}", "", "", "", "info"))

M = 1e6
for size, name in ((4096, "stream4k"), (64, "stream64")):
    r = metric(name, "ring", "msgs_per_s")
    others = {tp: metric(name, tp, "msgs_per_s") for tp in ("pipe", "unix-stream", "posix-mq")}
    best_tp = max((tp for tp in others if others[tp]), key=lambda t: others[t], default=None)
    lq = metric(name, "libqb-rb", "msgs_per_s")
    sz = "4 KiB" if size == 4096 else "64 B"
    rm = r / M if r else None
    if size == 4096:
        goal(f"stream {sz} msgs/s: ring / best kernel ({best_tp})", rm,
             others[best_tp] / M if best_tp else None, ">=", 4, " M")
    else:
        goal(f"stream {sz} msgs/s: ring / pipe", rm,
             others["pipe"] / M if others["pipe"] else None, ">=", 30, " M")
    goal(f"stream {sz} msgs/s: ring / libqb-rb", rm, lq / M if lq else None,
         ">=", 1.5 if size == 4096 else 10, " M")
    for tp in ("pipe", "unix-stream", "posix-mq", "libqb-rb"):
        v = metric(name, tp, "msgs_per_s")
        info(f"  stream {sz} {tp} msgs/s", v / M if v else None, " M")
    info(f"  stream {sz} ring GB/s", (metric(name, "ring", "bytes_per_s") or 0) / 1e9 or None)
    zc = metric(name, "ring", "zerocopy")
    info(f"  stream {sz} ring received in place (zerocopy)", 1.0 if zc else 0.0)
for size in (64, 4096):
    v = metric("stream_b1", "ring", "msgs_per_s", size)
    p = metric("stream_b1", "pipe", "msgs_per_s", size)
    info(f"  stream {size} B ring batch=1 (default) msgs/s", v / M if v else None, " M")
    info(f"  stream {size} B ring batch=1 / pipe", v / p if v and p else None)

us = 1e3
r = metric("pp_poll", "ring", "lat_p50_ns")
goal("ping-pong 64 B p50 RTT: ring / pipe", r / us if r else None,
     (metric("pp_poll", "pipe", "lat_p50_ns") or 0) / us or None, "<=", 0.01, " us")
lq = [x for x in (metric("pp_poll", "libqb-rb", "lat_p50_ns"),
                  metric("pp_nosem", "libqb-rb", "lat_p50_ns")) if x]
goal("ping-pong 64 B p50 RTT: ring / libqb-rb busy-poll (wait=poll)", r / us if r else None,
     (metric("pp_poll", "libqb-rb", "lat_p50_ns") or 0) / us or None, "<=", 0.5, " us")
r2 = metric("pp_nosem", "ring", "lat_p50_ns")
goal("ping-pong 64 B p50 RTT: ring / libqb-rb busy-poll (wait=nosem)", r2 / us if r2 else None,
     (metric("pp_nosem", "libqb-rb", "lat_p50_ns") or 0) / us or None, "<=", 0.5, " us")
s = metric("pp_spin", "ring-spin", "lat_p50_ns")
goal("ping-pong 64 B p50 RTT: ring-spin / cacheline", s / us if s else None,
     (metric("pp_spin", "cacheline", "lat_p50_ns") or 0) / us or None, "<=", 2.5, " us")
pr = metric("paced", "ring", "lat_p50_ns")
goal("paced 10/s ping-pong p50 RTT: ring / shm-futex", pr / us if pr else None,
     (metric("paced", "shm-futex", "lat_p50_ns") or 0) / us or None, "<=", 1.1, " us")
pm = metric("paced", "ring", "lat_mean_ns")
info("  paced 10/s ring mean RTT / shm-futex mean RTT",
     pm / metric("paced", "shm-futex", "lat_mean_ns") if pm and metric("paced", "shm-futex", "lat_mean_ns") else None)

idle = {}
try:
    for line in open(os.path.join(out, "idle.txt")):
        k, v = line.split()
        idle[k] = float(v)
except OSError:
    pass
for mode in ("futex", "eventfd"):
    c = idle.get(f"idle_{mode}_cpu_ns")
    goal(f"idle: CPU of a reader blocked 1 s ({mode}; thread CPU clock), ms vs 1 ms",
         c / 1e6 if c is not None else None, 1.0, "<=", 1, " ms")
    c = idle.get(f"idle_{mode}_rusage_ns")
    info(f"  idle ({mode}): the same by getrusage (tick-based here), ms", c / 1e6 if c is not None else None)
c = idle.get("idle_sleep_only_cpu_ns")
info("  idle floor: a thread sleeping 10 x 100 ms, CPU ms", c / 1e6 if c is not None else None)
for size in (64, 4096):
    v = idle.get(f"stream_{size}_futex_per_msg")
    info(f"streaming {size} B, batch=1: futex calls per message (ring counters)", v)
    if v is not None:
        rows[-1] = rows[-1][:5] + ("met (< 0.001)" if v < 0.001 else "NOT met",)
for b in (1, 32):
    try:
        txt = open(os.path.join(out, f"perf_futex_b{b}.txt")).read()
        calls = float(re.search(r"^([0-9.]+),,syscalls:sys_enter_futex", txt, re.M).group(1))
        msgs = json.load(open(os.path.join(out, f"perf_stream_b{b}.json")))["results"][0]["metrics"]["msgs"]
        info(f"ipclab run, stream 64 B batch={b}: all futex calls per message (perf)", calls / msgs)
    except (OSError, ValueError, AttributeError, KeyError, IndexError):
        info(f"ipclab run, stream 64 B batch={b}: futex calls per message (perf)", None)

lab, bare, bare_rtt = [], [], []
for i in range(reps):
    try:
        x = json.load(open(os.path.join(out, f"harness_{i}.json")))["results"][0]["metrics"]["msgs_per_s"]
        t = open(os.path.join(out, f"bare_{i}.txt")).read()
        y = float(re.search(r"stream\s+64 B futex.*?median\s+([0-9.]+) M msg/s", t).group(1)) * M
        lab.append(x)
        bare.append(y)
        bare_rtt.append(float(re.search(r"pingpong 64 B spin.*?median (\d+) ns", t).group(1)))
    except (OSError, ValueError, AttributeError, KeyError, IndexError):
        pass
if lab and bare:
    # harness overhead = ipclab's time per message over the bare loop's, minus 1;
    # the median of the alternated pairs' ratios (the machine drifts between
    # fast and slow phases), beside the ratio of the two medians
    pairs = sorted(b / l for l, b in zip(lab, bare))
    ml, mb = statistics.median(lab), statistics.median(bare)
    rows.append(("harness: ipclab ring stream 64 B time/msg / ring_bare's, median of pairs",
                 f"{1e3 / (ml / M):.1f} ns", f"{1e3 / (mb / M):.1f} ns",
                 f"{statistics.median(pairs):.3g}", "<= 1.1",
                 "met" if statistics.median(pairs) <= 1.1 else "NOT met"))
    info("  the same, ratio of the medians", mb / ml)
    info("  ipclab ring stream 64 B msgs/s (threads, batch=32), each run", None)
    rows[-1] = (rows[-1][0], " ".join(f"{x / M:.1f}" for x in lab), "M", "", "", "info")
    info("  ring_bare stream 64 B msgs/s, each run", None)
    rows[-1] = (rows[-1][0], " ".join(f"{x / M:.1f}" for x in bare), "M", "", "", "info")
    if bare_rtt:
        info("  ring_bare spin ping-pong 64 B RTT (median of runs), ns", statistics.median(bare_rtt))
else:
    goal("harness overhead vs ring_bare", None, None, "<=", 1.1, "")
try:
    for line in open(os.path.join(out, "layers.txt")).read().splitlines()[1:]:
        m = re.match(r"(.*?)\s+([0-9.]+) M/s\s+([0-9.]+) ns/msg\s+time/bare ([0-9.]+)", line)
        if m:
            rows.append(("  layers: " + m.group(1), m.group(3) + " ns", "", m.group(4), "", "info"))
except OSError:
    pass

print(f"\n| goal (medians of {reps}, interleaved) | ring | reference | ratio | goal | verdict |")
print("|---|---|---|---|---|---|")
for r in rows:
    print("| " + " | ".join(r) + " |")
print(f"\nraw results: {out}")
PY
