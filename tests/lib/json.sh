# SPDX-License-Identifier: MIT
# JSON assertions for the shell tests, without jq: source it after
# common.sh. A PATH is keys and array indexes joined by dots
# (results.0.metrics.msgs_per_s); `*` stands for every element of an
# array or every value of an object, one output line each
# (results.*.transport).
#
#   json_get FILE PATH    print the value: a string as it is, a number,
#                         true/false/null as JSON writes them, an object or
#                         array as compact JSON; exit 1 with one line on
#                         stderr when PATH is not there, 2 when FILE is not
#                         JSON. FILE - reads stdin.
#   json_has FILE PATH    exit 0 when PATH is there, 1 when not, silently.
#   json_is FILE PATH VALUE [WHAT]  json_get's output is VALUE; otherwise
#                         fail (common.sh) says what it was, after WHAT.

_json_py='
import json, sys

def walk(v, keys, at):
    if not keys:
        yield v
        return
    k, rest = keys[0], keys[1:]
    if k == "*":
        items = v if isinstance(v, list) else list(v.values()) if isinstance(v, dict) else None
        if items is None:
            raise KeyError(at + " is not an array or object")
        for x in items:
            yield from walk(x, rest, at + ".*")
        return
    if isinstance(v, list):
        if not k.isdigit() or int(k) >= len(v):
            raise KeyError("no element " + k + " in " + at + " (" + str(len(v)) + " elements)")
        yield from walk(v[int(k)], rest, at + "." + k)
    elif isinstance(v, dict):
        if k not in v:
            raise KeyError("no key " + k + " in " + at)
        yield from walk(v[k], rest, at + "." + k)
    else:
        raise KeyError(at + " is a " + type(v).__name__ + ", not an array or object")

def text(v):
    if isinstance(v, str):
        return v
    return json.dumps(v, separators=(",", ":"))

name, path = sys.argv[1], sys.argv[2]
try:
    doc = json.load(sys.stdin if name == "-" else open(name))
except (OSError, ValueError) as e:
    print("json_get: " + name + ": not JSON: " + str(e).splitlines()[0], file=sys.stderr)
    sys.exit(2)
try:
    out = [text(v) for v in walk(doc, [k for k in path.split(".") if k != ""], "$")]
except KeyError as e:
    print("json_get: " + name + ": " + e.args[0] + " (path " + path + ")", file=sys.stderr)
    sys.exit(1)
for line in out:
    print(line)
'

json_get() {
	[ $# = 2 ] || { echo "usage: json_get FILE PATH" >&2; return 2; }
	python3 -c "$_json_py" "$1" "$2"
}

json_has() {
	json_get "$1" "$2" >/dev/null 2>&1
}

json_is() {
	local got
	got=$(json_get "$1" "$2" 2>&1)
	[ "$got" = "$3" ] || fail "${4:+$4: }$1: $2 is '${got:0:200}', expected '$3'"
}
