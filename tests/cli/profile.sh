#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# --profile through the whole binary (issue 13), behaviour only: a busy
# side's profile (the null transport with --think) names ipclab's think
# loop among its top functions, in process and thread mode, with
# percentages that add up to at most 100; a pipe cell run as root has
# kernel symbols; --profile DIR writes one folded file per side, one line
# per distinct stack ("frame;frame;... count"); as uid 65534 with
# perf_event_paranoid above 0, --profile is bad input: one line with the
# fix, exit 2. Skips where perf_event_open or libdw is unavailable.
set -u
IPCLAB=${IPCLAB:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

err=$("$IPCLAB" run -t null -n 10 --profile -f json -o "$tmp/probe.json" 2>&1)
case $err in
*libdw*|*"not available"*) echo "skip: $err"; exit 77 ;;
*CAP_PERFMON*) echo "skip: --profile needs root here: $err"; exit 77 ;;
esac

# think: pat_think_loop must lead each side; a disturbed VM run (another
# task took the CPU) is repeated, up to three times, before failing
check_busy() {	# endpoints
	"$IPCLAB" run -t null -p pingpong -n 20k --think 200 -e "$1" --profile -f json -o "$tmp/busy-$1.json" ||
		{ echo "FAIL: profiled null cell ($1) did not run"; return 1; }
	python3 - "$tmp/busy-$1.json" "$1" <<-'PY'
	import json, sys
	r = json.load(open(sys.argv[1]))["results"][0]
	bad = []
	prof, run = r["profile"], r["profile_run"]
	if len(prof) != 2 or [p["role"] for p in prof] != ["server", "client"]:
	    bad.append("sides %s" % [p["role"] for p in prof])
	for p in prof:
	    top = p["top"]
	    if p["samples"] <= 0 or not top:
	        bad.append("%s: no samples" % p["role"])
	        continue
	    names = [(e["symbol"], e["object"]) for e in top[:3]]
	    if ("pat_think_loop", "ipclab") not in names:
	        bad.append("%s: think loop not in the top 3 %s" % (p["role"], names))
	    if sum(e["pct"] for e in top) > 100.0 + 1e-6:
	        bad.append("%s: pct sum %s" % (p["role"], sum(e["pct"] for e in top)))
	    if sum(e["samples"] for e in top) > p["samples"] or len(top) > 15:
	        bad.append("%s: top has more samples than the side" % p["role"])
	    if any(top[i]["samples"] < top[i + 1]["samples"] for i in range(len(top) - 1)):
	        bad.append("%s: top not ranked" % p["role"])
	if run["lost_samples"] != 0 or not run["complete"]:
	    bad.append("lost %s" % run["lost_samples"])
	if not (run["perturbation"] and run["perturbation"] > 0) or run["perturbation_of"] != "lat_p50_ns":
	    bad.append("perturbation %s" % run["perturbation"])
	for b in bad:
	    print("FAIL (%s): %s" % (sys.argv[2], b))
	sys.exit(1 if bad else 0)
	PY
}
for ep in process thread; do
	ok=0
	for try in 1 2 3; do
		out=$(check_busy "$ep") && { ok=1; break; }
	done
	[ $ok = 1 ] || { echo "$out"; fail=1; }
done

# a pipe cell, root: kernel frames named; folded files per side
if "$IPCLAB" run -t pipe -p pingpong -n 20k --pin same --profile "$tmp/folded" -f json -o "$tmp/pipe.json"; then
	python3 - "$tmp/pipe.json" "$tmp/folded" <<-'PY' || fail=1
	import json, os, sys
	r = json.load(open(sys.argv[1]))["results"][0]
	run, prof, d = r["profile_run"], r["profile"], sys.argv[2]
	bad = []
	if os.getuid() == 0 and open("/proc/sys/kernel/kptr_restrict").read().strip() in ("0", "1"):
	    if not run["kernel_symbols"]:
	        bad.append("no kernel symbols as root: %s" % run["kernel_symbols_why"])
	    if not any(e["object"] == "[kernel.kallsyms]" and not e["symbol"].startswith("[")
	               for p in prof for e in p["top"]):
	        bad.append("no named kernel function in a pipe cell's profile")
	if run["folded_dir"] != d:
	    bad.append("folded_dir %s" % run["folded_dir"])
	files = sorted(os.listdir(d))
	want = ["pipe-pingpong-64-process-same-other-client0.folded", "pipe-pingpong-64-process-same-other-server.folded"]
	if files != want:
	    bad.append("folded files %s" % files)
	for f, p in zip(want, [prof[1], prof[0]]):
	    if f not in files:
	        continue
	    stacks, total = set(), 0
	    for line in open(os.path.join(d, f)):
	        stack, _, n = line.rstrip("\n").rpartition(" ")
	        if not stack or not n.isdigit() or int(n) <= 0 or " " in stack or ";;" in stack:
	            bad.append("%s: bad line %r" % (f, line))
	            break
	        if stack in stacks:
	            bad.append("%s: stack twice %r" % (f, stack))
	        stacks.add(stack)
	        total += int(n)
	    if not (0.9 * p["samples"] <= total <= p["samples"]):
	        bad.append("%s: %d stacks for %d samples" % (f, total, p["samples"]))
	for b in bad:
	    print("FAIL: " + b)
	sys.exit(1 if bad else 0)
	PY
else
	echo "FAIL: profiled pipe cell did not run"; fail=1
fi

# unprivileged: bad input, one line naming the privilege and the fix
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null &&
   [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -gt 0 ]; then
	out=$(cd "$tmp" && setpriv --reuid=65534 --regid=65534 --clear-groups "$IPCLAB" run -t null -n 10 --profile 2>&1)
	rc=$?
	[ $rc = 2 ] || { echo "FAIL: unprivileged --profile exit $rc, want 2"; fail=1; }
	[ "$(printf '%s\n' "$out" | wc -l)" = 1 ] || { echo "FAIL: unprivileged --profile: not one line: $out"; fail=1; }
	case $out in *CAP_PERFMON*perf_event_paranoid*sysctl*) ;; *) echo "FAIL: no privilege and fix in: $out"; fail=1 ;; esac
fi
exit $fail
