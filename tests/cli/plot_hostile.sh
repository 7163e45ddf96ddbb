#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# ipclab plot on a result file someone else wrote: every string in it (the
# transports, patterns, pins, options and their names, env, cmdline, the
# size, matrix.metric, the file's own path) carries a newline and
# system(...), backquotes, quotes of both kinds, a trailing backslash, '/'
# and '..'. Nothing of it runs (no marker file appears anywhere), every
# file plot writes lands inside -o DIR under a name of letters, digits, _
# and -, and a file whose names cannot be figure names (matrix.metric,
# --pivot) is bad input: one line, exit 2.
. "$(dirname "$0")/../lib/common.sh"
data=$(cd "$(dirname "$0")/../data" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if ! command -v gnuplot >/dev/null || ! command -v python3 >/dev/null; then
	echo "SKIP: needs gnuplot (make deps installs gnuplot-nox) and python3"
	exit 77
fi

# The hostile files, from the small stored result file.
python3 - "$data/plot-small.json" "$work" <<'PY' || { echo "FAIL: cannot write the hostile files"; exit 1; }
import json, os, sys
src, work = sys.argv[1], sys.argv[2]

# the ways out of a gnuplot string, one per text in turn; markers are
# relative (gnuplot's working directory is inside $work, or inside -o DIR)
ways = ["x\n!touch M-bang-%s\n", "x`touch M-bq-%s`", "x\"; system(\"touch M-dq-%s\") #\\",
        "x'; system('touch M-sq-%s') #/../..", "x\nsystem(\"touch M-nl-%s\")\n#"]
n = [0]

def h(tag):
    n[0] += 1
    return ways[n[0] % len(ways)] % tag

def blank_free(tag):  # for cmdline words, split at blanks
    return 'k"\nsystem("touch${IFS}M-%s")\n#' % tag

def every_string(v, tag, keep, rename=()):
    if isinstance(v, str):
        return h(tag)
    if isinstance(v, list):
        return [every_string(x, "%s%d" % (tag, i), keep) for i, x in enumerate(v)]
    if isinstance(v, dict):
        return {h(tag + "-k") if k in rename else k:
                v2 if k in keep else every_string(v2, tag, keep) for k, v2 in v.items()}
    return v

base = json.load(open(src))
keep = {"status", "metrics", "histogram", "size_bytes", "schema_version", "results",
        "sides", "count", "clients", "warmup", "repeat"}

def labels():
    d = json.loads(json.dumps(base))
    d["env"] = every_string(d["env"], "env", set(), set(d["env"]))
    pkey = blank_free("pivot")
    d["cmdline"] = "ipclab run --pivot size," + pkey + ",cpu_pct_total " + h("cmdline")
    for i, r in enumerate(d["results"]):
        t = r["transport"]
        r2 = every_string(r, "cell", keep, {"sched"})
        r2["transport"] = "x`touch M-bq-%s`" % t  # two transports: in every label
        r2["pin"] = h("pin-" + r["pin"])
        r2["pattern"] = h("pattern")
        r2["options"] = {"transport": {h("optkey"): h("optval")},
                         "pattern": {pkey: h("pivotval%d" % (i % 2))}}
        r2["sides"] = r["sides"]
        d["results"][i] = r2
    return d

def size():
    d = json.loads(json.dumps(base))
    for r in d["results"]:
        r["size_bytes"] = "1:2]\nsystem(\"touch M-size\")\n#"
    return d

def matrix(metric):
    d = json.loads(json.dumps(base))
    d["matrix"] = {"metric": metric, "cpus": [0, 1], "pairs": {"0:1": "smt"}}
    return d

files = {
    "labels.json": labels(),
    "size.json": size(),
    "matrix-nl.json": matrix("p\nsystem(\"touch M-matrix\")#"),
    "matrix-slash.json": matrix("x/../../escaped"),
}
for name, d in files.items():
    json.dump(d, open(os.path.join(work, name), "w"), indent=1)
# the file's own path: a directory name with a newline and system()
odd = os.path.join(work, 'dir\nsystem("touch M-path")\n#\\')
os.mkdir(odd)
json.dump(base, open(os.path.join(odd, "r.json"), "w"))
PY
odd=$(find "$work" -mindepth 1 -maxdepth 1 -type d -name 'dir*')
t=$work/.t	# this script's own files
mkdir "$t"

# what is in DIR, but the matrix-x made below
names() { find "$1" -mindepth 1 -maxdepth 1 ! -name matrix-x -printf '%f\n'; }

# plot one file into a fresh DIR; exit status, and what appeared where
plot_case() {	# what expected-rc dir file [options]
	local what=$1 want=$2 dir=$3 file=$4 rc bad
	shift 4
	find "$work" \( -path "$dir" -o -path "$t" \) -prune -o -print | sort >"$t/before.lst"
	"$IPCLAB" plot "$file" -o "$dir" -q "$@" >"$t/out" 2>"$t/err"
	rc=$?
	find "$work" \( -path "$dir" -o -path "$t" \) -prune -o -print | sort >"$t/after.lst"
	bad=$(find "$work" -name 'M-*' | tr '\n' ' ')
	[ -z "$bad" ] && bad=$(find "$work" -maxdepth 1 -name 'escaped*' | tr '\n' ' ')
	if [ -n "$bad" ]; then
		fail "plot $what: the file's text ran or escaped -o DIR: $bad"
	elif [ "$rc" != "$want" ]; then
		fail "plot $what: exit $rc, expected $want: $(head -c 300 "$t/err")"
	elif [ "$want" = 2 ] && [ "$(wc -l <"$t/err")" != 1 ]; then
		fail "plot $what: not one line: $(cat "$t/err")"
	elif ! cmp -s "$t/before.lst" "$t/after.lst"; then
		fail "plot $what: wrote outside -o DIR: $(comm -13 "$t/before.lst" "$t/after.lst" | tr '\n' ' ')"
	elif [ -d "$dir" ] && names "$dir" | grep -qvE '^[A-Za-z0-9_-]+\.(dat|gp|png|svg)$'; then
		fail "plot $what: names in DIR: $(names "$dir" | grep -vE '^[A-Za-z0-9_-]+\.(dat|gp|png|svg)$' | tr '\n' ' ')"
	else
		echo "ok   plot $what: exit $rc$( [ "$want" = 2 ] && echo ": $(cat "$t/err")")"
	fi
	find "$work" \( -name 'M-*' -o -name 'escaped*' \) -delete	# each case shows its own
}

plot_case "hostile labels, env, options, cmdline --pivot" 0 "$work/o1" "$work/labels.json"
[ -s "$work/o1/latency-percentiles-rtt.png" ] && [ -s "$work/o1/cpu-per-msg.svg" ] ||
	fail "plot hostile labels: figures missing: $(ls "$work/o1" | tr '\n' ' ')"
# the labels are in the figures, quoted: a heatmap titled with backquotes
plot_case "hostile labels in a heatmap's title" 0 "$work/o2" "$work/labels.json" \
	--pivot size,pin,cpu_pct_total
ls "$work/o2" | grep -q '^heatmap-size_bytes-pin-cpu_pct_total-1\.svg$' ||
	fail "plot --pivot on hostile labels: no heatmap: $(ls "$work/o2" | tr '\n' ' ')"
grep -q "^set title 'cpu_pct_total over size_bytes x pin: .*touch M-" "$work/o2/heatmap-size_bytes-pin-cpu_pct_total-1.gp" ||
	fail "plot --pivot: the title lost its text: $(grep -m1 '^set title' "$work/o2/heatmap-size_bytes-pin-cpu_pct_total-1.gp")"
plot_case "a size that is not a number" 0 "$work/o3" "$work/size.json"
plot_case "a path with a newline" 0 "$work/o4" "$odd/r.json"
plot_case "matrix.metric with a newline" 2 "$work/o5" "$work/matrix-nl.json"
mkdir -p "$work/o6/matrix-x"	# so that matrix-x/../../escaped resolves
plot_case "matrix.metric with / and .." 2 "$work/o6" "$work/matrix-slash.json"
rmdir "$work/o6/matrix-x"
plot_case "--pivot naming a path" 2 "$work/o7" "$data/plot-small.json" --pivot "size,../../x,cpu_pct_total"
plot_case "--pivot with a newline" 2 "$work/o8" "$data/plot-small.json" \
	--pivot "$(printf 'size,pin,p50\nsystem("touch M-cli")')"

# what gnuplot scripts hold of the file: quoted text only
before=$fails
for gp in "$work"/o[1-4]/*.gp; do
	[ -e "$gp" ] || continue
	if grep -n '`' "$gp" | grep -v "^[0-9]*:set title '" | grep -q .; then
		fail "$(basename "$gp"): a backquote outside a quoted title: $(grep -n '`' "$gp" | head -2)"
	fi
	if grep -qE '^[[:space:]]*(system|call|load|!)' "$gp"; then
		fail "$(basename "$gp"): a command line: $(grep -nE '^[[:space:]]*(system|call|load|!)' "$gp" | head -2)"
	fi
done
[ "$fails" = "$before" ] && echo "ok   scripts: the file's text only inside quotes"
finish
