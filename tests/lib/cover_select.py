# SPDX-License-Identifier: MIT
"""tests/cover-select.sh's reading: which lines of ipclab's code (src/,
lib/) each test ran, from the counts its own GCOV_PREFIX holds; then the
tests the sanitizer stages keep: the unit programs, the fuzz replays,
tp_direct and the fault scripts always, the others cheapest per new line
first until every line any test ran is run by a kept test.

usage: cover_select.py BUILD OUT COMMIT TEST..."""
import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

build, out, commit = sys.argv[1], sys.argv[2], sys.argv[3]
tests = sys.argv[4:]
build_abs = os.path.abspath(build)
root = os.path.abspath(".")


# a shell test is kept while the lines it adds to the kept ones come at
# this many a CPU second or more (its cost in this run, at --coverage)
MIN_RATE = float(os.environ.get("COVER_MIN_RATE", "0.5"))


def always(t):
    """Kept whatever they cover: C programs, the fault scripts, the
    transports' conformance run (sizes and data, not only lines)."""
    return not t.endswith(".sh") or t.startswith("tests/faults/") or t.startswith("tests/conformance/")


def lines_of(t):
    """The (file, line) pairs of src/ and lib/ that test t ran."""
    top = os.path.join(out, "g", t.replace("/", "_")) + build_abs
    got = set()
    for d, _, files in os.walk(top):
        gcda = [f for f in files if f.endswith(".gcda")]
        if not gcda:
            continue
        rel = os.path.relpath(d, top)
        for f in gcda:
            gcno = os.path.join(build_abs, rel, f[:-5] + ".gcno")
            link = os.path.join(d, f[:-5] + ".gcno")
            if os.path.exists(gcno) and not os.path.lexists(link):
                os.symlink(gcno, link)
        r = subprocess.run(["gcov", "--json-format", "--stdout", "-o", d] +
                           [os.path.join(d, f) for f in gcda],
                           cwd=root, capture_output=True, text=True)
        for doc in r.stdout.splitlines():
            doc = doc.strip()
            if not doc.startswith("{"):
                continue
            for fe in json.loads(doc).get("files", []):
                name = os.path.relpath(os.path.join(root, fe["file"]), root)
                if not (name.startswith("src/") or name.startswith("lib/")) or "/tests/" in name:
                    continue
                for ln in fe.get("lines", []):
                    if ln.get("count", 0) > 0:
                        got.add((name, ln["line_number"]))
    return t, got


cpu = {}
with open(os.path.join(out, "times.tsv")) as f:
    for row in f:
        p = row.rstrip("\n").split("\t")
        if len(p) >= 4 and p[0] != "test":
            try:
                cpu[p[0]] = float(p[3])
            except ValueError:
                pass

with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as ex:
    ran = dict(ex.map(lines_of, tests))

union = set().union(*ran.values()) if ran else set()
count = {}
for t in tests:
    for x in ran[t]:
        count[x] = count.get(x, 0) + 1
kept = [t for t in tests if always(t)]
have = set().union(*(ran[t] for t in kept)) if kept else set()
rest = [t for t in tests if not always(t)]
while True:
    best, best_score = None, 0.0
    for t in rest:
        new = len(ran[t] - have)
        if not new:
            continue
        score = new / max(cpu.get(t, 1.0), 0.5)
        if score > best_score:
            best, best_score = t, score
    if not best or best_score < MIN_RATE:
        break
    kept.append(best)
    rest.remove(best)
    have |= ran[best]

with open(os.path.join(out, "..", "cover-select.tsv"), "w") as f:
    f.write("# %s, commit %s: %d lines of src/ and lib/ ran in some test, %d by the kept tests\n"
            % (time.strftime("%Y-%m-%d"), commit, len(union), len(have)))
    f.write("test\tlines\tonly_here\tcpu_s\tkept\n")
    for t in tests:
        only = sum(1 for x in ran[t] if count[x] == 1)
        f.write("%s\t%d\t%d\t%.1f\t%s\n" % (t, len(ran[t]), only, cpu.get(t, float("nan")),
                                           "kept" if t in kept else "left"))
# the lines only one test runs, by test: what leaving it out would cost
only_dir = os.path.join(out, "only")
os.makedirs(only_dir, exist_ok=True)
for t in tests:
    mine = sorted(x for x in ran[t] if count[x] == 1)
    with open(os.path.join(only_dir, t.replace("/", "_") + ".txt"), "w") as f:
        for name, ln in mine:
            f.write("%s:%d\n" % (name, ln))
# tests/sanitizer-skip as this run makes it (docs/testing.md)
with open(os.path.join(out, "..", "sanitizer-skip"), "w") as f:
    f.write("# Tests that `make SAN=asan check` (and any SAN= build's check) leaves to\n"
            "# the plain `make check` (tests/run-tests.sh's TEST_SKIP): a test, a tab,\n"
            "# the reason. Made by `make cover-select` (tests/cover-select.sh) on %s,\n"
            "# commit %s: of the %d lines of src/ and lib/ that some test ran, the\n"
            "# tests kept run %d; a shell test is left out when it runs no line the\n"
            "# kept ones do not, or adds fewer than %g lines a CPU second (the unit\n"
            "# programs, fuzz replays, fault scripts and conformance run always run).\n"
            % (time.strftime("%Y-%m-%d"), commit, len(union), len(have), MIN_RATE))
    for t in os.environ.get("COVER_NOT_RUN", "").split():
        f.write("%s\truns no line of this build: its hosts build a plain ipclab of their own (not run by "
                "make cover-select)\n" % t)
    for t in tests:
        if t in kept:
            continue
        mine = len(ran[t] - have)
        if not ran[t]:
            why = "runs no line of ipclab's code"
        elif not mine:
            why = "every line it runs (%d) is run under the sanitizers by the tests kept" % len(ran[t])
        else:
            why = ("%d of its %d lines run in no kept test, for %.1f CPU s: under %g lines a CPU second"
                   % (mine, len(ran[t]), cpu.get(t, 0), MIN_RATE))
        f.write("%s\t%s\n" % (t, why))
kept_cpu = sum(cpu.get(t, 0) for t in kept)
left_cpu = sum(cpu.get(t, 0) for t in rest)
print("%d lines of src/ and lib/ ran in some test; the %d kept tests run %d of them (%.0f CPU s at "
      "--coverage); %d tests left, %.0f CPU s:" % (len(union), len(kept), len(have), kept_cpu, len(rest),
                                                  left_cpu))
for t in sorted(rest, key=lambda t: -cpu.get(t, 0)):
    print("  %-40s %6d lines, %4d in no kept test, %5.1f CPU s" % (t, len(ran[t]), len(ran[t] - have),
                                                                 cpu.get(t, 0)))
print("%s/sanitizer-skip: the list for tests/sanitizer-skip" % os.path.dirname(os.path.abspath(out)))
