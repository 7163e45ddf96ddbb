#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# One writer for the files ipclab writes for its user: -o FILE through
# src/cmd/output.c, files inside a directory (plot -o DIR, --plot,
# --profile) through src/base/outdir.c. Outside the transports, doorbells
# and references (which make kernel objects, not the user's files), no
# other code creates a file, opens one for writing or renames one into
# place, except the run registry (src/base/registry.c: the journal that
# cleanup_add itself writes to, so it cannot go through a writer that
# registers its temporary names there). Fails naming each new writer.
. "$(dirname "$0")/../lib/common.sh"
cd "$(dirname "$0")/../.." || exit 1

allowed='^src/(cmd/output|base/outdir|base/registry)\.c:'
found=$(grep -nE 'O_CREAT|O_TRUNC|\bcreat\(|\brename(at)?\(|fopen\([^;]*"[wa]' \
	$(find src -name '*.c' -not -path 'src/transport/*' -not -path 'src/doorbell/*' \
		-not -path 'src/reference/*' | sort) |
	grep -vE "$allowed" | grep -vE ':[0-9]+:[[:space:]]*(/?\*|//)')
if [ -n "$found" ]; then
	while IFS= read -r l; do
		fail "a file written beside the writers (use output_open or outfile_open): $l"
	done <<< "$found"
else
	echo "ok   every file is written through output.c or outdir.c (and the run registry)"
fi
# the check sees a writer: each allowed file has one
for f in src/cmd/output.c src/base/outdir.c src/base/registry.c; do
	grep -qE 'O_CREAT|rename(at)?\(' "$f" || fail "$f: no writer found; is the pattern stale?"
done
finish
