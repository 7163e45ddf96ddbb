#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# One read side for results (docs/architecture.md): a result file or a
# stored run is read back only through the reader, src/report/rfile.c and
# the typed accessors of src/report/rec_*.c (and of a pattern's room,
# src/pattern/NAME/report/rec*.c); the reporters and the commands above
# them (src/report, src/cmd, src/suite, a room's report/ and suite/) take
# no value out of a record's JSON by key themselves. A json_object_get( anywhere else there
# fails here, with where it is.
set -u
cd "$(dirname "$0")/../.." || exit 1
bad=$(grep -n 'json_object_get(' src/report/*.c src/cmd/*.c src/suite/*.c \
	src/pattern/*/report/*.c src/pattern/*/suite/*.c 2>/dev/null |
	grep -v -E '^src/report/(rfile|rec_[a-z_]+)\.c:|^src/pattern/[^/]+/report/rec(_[a-z_]+)?\.c:')
if [ -n "$bad" ]; then
	echo "FAIL: a record read by key outside the reader (use or add an accessor in src/report/rec_*.c):"
	printf '%s\n' "$bad" | head -n 20 | sed 's/^/  /'
	exit 1
fi
n=$(grep -c 'json_object_get(' src/report/rfile.c src/report/rec_*.c \
	$(ls src/pattern/*/report/rec*.c 2> /dev/null) | awk -F: '{ s += $2 } END { print s }')
echo "ok   every record read by key in the reader ($n calls in rfile.c and rec_*.c), none outside"
