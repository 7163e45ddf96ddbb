#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The skeleton transport (src/transport/skeleton.c), the template a new
# transport is copied from: its list of hooks names every field of struct
# transport and every cap of enum tp_caps (include/ipclab/transport.h), so
# that a hook added there cannot be left out of the template; it fills
# every required hook; and it is in no registry (`ipclab list` does not
# show it, -t skeleton is bad input). tp_direct, in `make check`, runs it
# through every case a registered transport passes.
. "$(dirname "$0")/../lib/common.sh"
command -v python3 >/dev/null || { echo "skip: needs python3"; exit 77; }
src=$(cd "$(dirname "$0")/../.." && pwd)

out=$(python3 - "$src/include/ipclab/transport.h" "$src/src/transport/skeleton.c" <<'EOF'
import re, sys

hdr, skel = (open(p).read() for p in sys.argv[1:3])
nocomment = re.sub(r'/\*.*?\*/', '', hdr, flags=re.S)
body = re.search(r'struct transport \{(.*?)\n\};', nocomment, re.S)
caps = re.search(r'enum tp_caps \{(.*?)\};', nocomment, re.S)
if not body or not caps:
    print("FAIL: no struct transport or enum tp_caps in transport.h")
    sys.exit(0)
fields = []
for decl in body.group(1).split(';'):
    decl = decl.strip()
    if not decl:
        continue
    m = re.search(r'\(\s*\*\s*(\w+)\s*\)\s*\(', decl) or re.search(r'(\w+)\s*(\[[^]]*\])?$', decl)
    fields.append(m.group(1))
names = re.findall(r'\b(TP_\w+)\s*=', caps.group(1))
block = re.search(r'/\* Every field of struct transport.*?\*/', skel, re.S)
if not block:
    print("FAIL: skeleton.c has no comment 'Every field of struct transport'")
    sys.exit(0)
words = set(re.findall(r'\w+', block.group(0)))
for f in fields + names:
    if f not in words:
        print(f"FAIL: skeleton.c's list of hooks does not name {f}")
print(f"named {len(fields)} fields, {len(names)} caps")
EOF
)
case $out in
*FAIL*) fail "$(printf '%s\n' "$out" | grep FAIL | paste -sd ';')" ;;
"named "*) echo "ok   the skeleton's comment: $out" ;;
*) fail "the comment check printed: $out" ;;
esac

# the required hooks (transports_validate's list) are filled in
for h in name summary caps create open send recv close destroy; do
	grep -Eq "^[[:space:]]*\.$h = " "$src/src/transport/skeleton.c" ||
		fail "skeleton.c does not fill .$h"
done

if "$IPCLAB" list 2>&1 | grep -qw skeleton; then
	fail "ipclab list shows the skeleton"
else
	echo "ok   ipclab list does not show the skeleton"
fi
expect_usage_error "-t skeleton: no such transport" run -t skeleton
finish
