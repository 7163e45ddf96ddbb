// SPDX-License-Identifier: MIT
/* The command line a result file records: the words as typed, with a
 * password in a URL (--db postgresql://user:PASSWORD@host/db, or
 * ?password=...) shown as ***, so that no result file, store or log holds
 * it. */
#include <stdio.h>

#include "dbcmd.h"

void cmdline_redacted(char *buf, size_t len, int argc, char **argv)
{
	size_t off = 0;

	if (len)
		buf[0] = '\0';
	for (int i = 0; i < argc && off < len; i++) {
		char word[1024];

		db_url_redact(argv[i], word, sizeof(word));
		off += (size_t)snprintf(buf + off, len - off, "%s%s", i ? " " : "", word);
	}
}
