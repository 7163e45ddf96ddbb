#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The layers (docs/architecture.md), bottom to top: a file may use a
# header, or call a function, of a layer below its own, or of its own
# layer, never one above. Each src/ directory and include/ipclab header
# has a layer (one without fails, so that a new one is placed). Within the
# plugins' layer a directory uses no other plugin directory (a pattern no
# transport, nor the reverse), and a header owned by one directory counts
# as that directory's. A plugin's room (src/pattern/cycle/) is of its
# directory; a subfolder of the room named after a layer
# (src/pattern/cycle/report/, .../suite/) is of that layer, and any other
# subfolder fails. include/ipclab headers include only include/ipclab
# headers. Calls are read from the
# objects of the build beside $IPCLAB (nm: the symbols a file uses, and
# the file of the build that defines each); without them only includes
# are checked. An exception is listed with its reason; one no longer
# needed fails as well. LAYERS_SRC (and LAYERS_OBJ, its build) checks
# another tree.
set -u
here=$(cd "$(dirname "$0")/../.." && pwd)
src=${LAYERS_SRC:-$here}
obj=${LAYERS_OBJ:-$(dirname "${IPCLAB:-$here/build/ipclab}")}
cd "$src" || exit 1

# dir|hdr NAME LAYER [OWNER]
map='
dir src/base 0 base: util, opt, cleanup and the run registry, netaddr, outdir, idle, msg, polling; libc only
hdr util.h 0
hdr opt.h 0
hdr cleanup.h 0
hdr registry.h 0
hdr netaddr.h 0
hdr outdir.h 0
hdr idle.h 0
hdr msg.h 0
hdr safe_print.h 0
hdr polling.h 0
dir src/metrics 1 libraries: the histogram, rusage, the statistics of repetitions
dir src/doorbell 1 libraries: the wakeup primitives of the shm-* transports
hdr metrics.h 1
hdr stats.h 1
hdr doorbell.h 1
dir src/trace 2 the tracer and profiler, which the engine opens and reads; they never call it
dir src/core 3 the engine: plan, session, runner, fold, and the drivers that run a cell traced, untraced and with the knob --explain tries
hdr engine.h 2
hdr experiment.h 2
hdr pattern.h 2
hdr transport.h 2
hdr runner.h 2
hdr placement.h 2
hdr topology.h 2
hdr interference.h 2
hdr envcheck.h 2
hdr floors.h 2
hdr result.h 2
hdr trace.h 2
hdr profile.h 2
hdr cell_remote.h 2
hdr reference.h 2
dir src/reference 3 the reference loops: the session runs them through reference_ops, a transport names its own
dir src/pattern 4 plugins
dir src/transport 4 plugins
dir src/report 5 the reporters
hdr reporter.h 5
hdr rows.h 5
dir src/remote 6 ipclab serve and its peer: transports and patterns by name, the machine as report JSON
hdr remote.h 6
dir src/db 7 the results store: result files through report/rfile.c
dir src/cmd 8 the commands
dir src/suite 8 ipclab suite: the sections of the seeds (plans, tables, questions, readings), a command beside the others
dir src 8 main.c, cli_internal.h
'
plugins=4

# kind (include|call) <TAB> from file <TAB> header or symbol <TAB> reason.
# None by include. By call, the registries: the engine walks the table of
# patterns that the plugins' layer defines (as it is handed the
# transports'); that is how a plugin is found, not a use of one.
allow=$(printf '%s\t%s\t%s\t%s\n' \
	call src/core/plan.c patterns "the pattern registry: plan_build looks a pattern up" \
	call src/core/plan.c n_patterns "the pattern registry" \
	call src/core/envcheck.c patterns "the pattern registry: env --check walks it" \
	call src/core/envcheck.c n_patterns "the pattern registry" \
	call src/core/floors.c transport_find "the transport registry: the canary and the floors run the cacheline and pipe transports' own loops")

tmp=$(mktemp -d "${TMPDIR:-/tmp}/layers.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
printf '%s\n' "$map" > "$tmp/map"
printf '%s\n' "$allow" > "$tmp/allow"
find src -name '*.c' | sort > "$tmp/sources"
ls -d src/*/ | sed 's|/$||' > "$tmp/dirs"
ls include/ipclab/*.h > "$tmp/headers"
find src include/ipclab -name '*.[ch]' | sort |
	xargs awk '/^[ \t]*#[ \t]*include[ \t]*"/ {
		n = $0; sub(/^[^"]*"/, "", n); sub(/".*/, "", n); print FILENAME, n }' > "$tmp/includes"
calls=0
objs=$(find "$obj/src" -name '*.o' 2> /dev/null | sort)
if [ -n "$objs" ] && command -v nm > /dev/null; then
	# "FILE: ADDR T SYM" and "FILE: U SYM", FILE the object's path
	# shellcheck disable=SC2086
	nm -A --defined-only -g $objs > "$tmp/defs" 2> /dev/null
	# shellcheck disable=SC2086
	nm -A -u $objs > "$tmp/undefs" 2> /dev/null
	calls=1
else
	echo "skip the calls: no objects under $obj/src"
	: > "$tmp/defs"
	: > "$tmp/undefs"
fi

awk -v obj="$obj/" -v plugins="$plugins" -v calls="$calls" '
function norm(p,   n, a, i, out, k) {	# collapse "x/../" and "./"
	n = split(p, a, "/"); k = 0
	for (i = 1; i <= n; i++) {
		if (a[i] == "." || a[i] == "") continue
		if (a[i] == ".." && k > 0 && s[k] != "..") { k--; continue }
		s[++k] = a[i]
	}
	out = s[1]; for (i = 2; i <= k; i++) out = out "/" s[i]
	return out
}
function dirof(p) { sub(/\/[^\/]*$/, "", p); return p }
# src/trace/bpf -> src/trace; the room of a plugin and its subfolders
# by layer: src/pattern/cycle -> src/pattern, src/pattern/cycle/report/x
# -> src/pattern/cycle/report, of the layer of src/report
function owner(d,   a, n, o) {
	n = split(d, a, "/")
	if (n < 2 || a[1] != "src") return d
	o = "src/" a[2]
	if (n >= 4 && (o in dl) && dl[o] == plugins && (("src/" a[4]) in dl)) {
		o = o "/" a[3] "/" a[4]
		dl[o] = dl["src/" a[4]]
	}
	return o
}
function up(fl, fo, tl, to) {		# does from (layer, owner) -> to run up?
	if (tl > fl) return 1
	if (tl == fl && fl == plugins && fo != to) return 1
	return 0
}
function arrow(kind, f, what, msg) {
	if ((kind SUBSEP f SUBSEP what) in allowed) { used[kind SUBSEP f SUBSEP what] = 1; return }
	printf "FAIL %s: an arrow back up\n", msg; bad = 1; n_up[kind]++
}
FILENAME ~ /\/map$/ {
	if ($1 == "dir") dl[$2] = $3
	if ($1 == "hdr") { hl[$2] = $3; ho[$2] = (NF >= 4 ? $4 : "") }
	next
}
FILENAME ~ /\/allow$/ {
	split($0, a, "\t"); if (a[1] == "") next
	allowed[a[1] SUBSEP a[2] SUBSEP a[3]] = 1; why[a[1] SUBSEP a[2] SUBSEP a[3]] = a[4]
	next
}
FILENAME ~ /\/sources$/ {
	srcs[$1] = 1
	if (split(dirof($1), a, "/") >= 4 && ("src/" a[2]) in dl && dl["src/" a[2]] == plugins && !(("src/" a[4]) in dl)) {
		printf "FAIL %s has no layer: a subfolder of a room is named after its layer (report, suite, ...)\n", $1; bad = 1
	}
	next
}
FILENAME ~ /\/dirs$/ {
	if (!($1 in dl)) { printf "FAIL %s has no layer: place it in tests/cli/layers.sh and docs/architecture.md\n", $1; bad = 1 }
	next
}
FILENAME ~ /\/headers$/ {
	h = $1; sub(/.*\//, "", h)
	if (!(h in hl)) { printf "FAIL %s has no layer: place it in tests/cli/layers.sh and docs/architecture.md\n", $1; bad = 1 }
	next
}
FILENAME ~ /\/includes$/ {
	f = $1; n = $2
	if (f ~ /^include\/ipclab\//) {
		fh = f; sub(/.*\//, "", fh)
		if (n !~ /^ipclab\//) { printf "FAIL %s includes %s: a header under include/ipclab includes only include/ipclab headers\n", f, n; bad = 1; n_up["include"]++; next }
		if (!(fh in hl)) next
		fl = hl[fh]; fo = ho[fh] != "" ? ho[fh] : "include"
	} else {
		fo = owner(dirof(f)); if (!(fo in dl)) next
		fl = dl[fo]
	}
	if (n ~ /^ipclab\//) {
		h = substr(n, 8); if (!(h in hl)) next
		tl = hl[h]; to = ho[h] != "" ? ho[h] : fo
	} else {
		t = norm(dirof(f) "/" n)
		if (t !~ /^src\//) next	# generated beside it, or a library header
		to = owner(dirof(t)); if (!(to in dl)) next
		tl = dl[to]
	}
	if (up(fl, fo, tl, to))
		arrow("include", f, n, sprintf("%s (layer %d) includes %s (layer %d, %s)", f, fl, n, tl, to))
	next
}
FILENAME ~ /\/defs$/ {
	o = $1; sub(/:$/, "", o); sub(/:.*/, "", o)
	if ($(NF - 1) !~ /^[TDBRVWCG]$/) next
	g = substr(o, length(obj) + 1); sub(/\.o$/, ".c", g)
	if (g in srcs) def[$NF] = g
	next
}
FILENAME ~ /\/undefs$/ {
	o = $1; sub(/:.*/, "", o)
	if (!($NF in def)) next
	f = substr(o, length(obj) + 1); sub(/\.o$/, ".c", f)
	g = def[$NF]
	if (!(f in srcs)) next	# an object whose source has gone
	fo = owner(dirof(f)); to = owner(dirof(g))
	if (!(fo in dl) || !(to in dl) || fo == to) next
	if (up(dl[fo], fo, dl[to], to))
		arrow("call", f, $NF, sprintf("%s (layer %d) calls %s of %s (layer %d)", f, dl[fo], $NF, g, dl[to]))
	next
}
END {
	for (k in allowed) {
		split(k, a, SUBSEP)
		if (a[1] == "call" && !calls) continue
		if (!(k in used)) {
			printf "FAIL exception \"%s %s %s\" (%s) is no longer needed: drop it from tests/cli/layers.sh\n", a[1], a[2], a[3], why[k]
			bad = 1
		}
	}
	printf "arrows back up: %d by include, %d by call%s\n", n_up["include"], n_up["call"], calls ? "" : " (not checked)"
	exit bad
}
' "$tmp/map" "$tmp/allow" "$tmp/sources" "$tmp/dirs" "$tmp/headers" "$tmp/includes" \
	"$tmp/defs" "$tmp/undefs"
rc=$?
[ "$rc" = 0 ] && echo "ok   no arrow runs back up"
exit "$rc"
