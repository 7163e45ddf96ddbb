// SPDX-License-Identifier: MIT
/* The one error printer: "ipclab: ..." or "ipclab CMD: ...", one line on
 * stderr. Control bytes are shown escaped (\xNN): whatever the user typed
 * or a file held, the message stays one line and cannot move the cursor. */
#include <stdarg.h>
#include <stdio.h>

#include "cmd.h"

static void vsay(const char *cmd, const char *fmt, va_list ap)
{
	char msg[1024];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	fputs("ipclab", stderr);
	if (cmd) {
		fputc(' ', stderr);
		fputs(cmd, stderr);
	}
	fputs(": ", stderr);
	for (const unsigned char *p = (const unsigned char *)msg; *p; p++) {
		if (*p < 0x20 || *p == 0x7f)
			fprintf(stderr, "\\x%02x", *p);
		else
			fputc(*p, stderr);
	}
	fputc('\n', stderr);
}

void say(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay(cmd, fmt, ap);
	va_end(ap);
}

int say_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay(cmd, fmt, ap);
	va_end(ap);
	return 1;
}

int usage_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay(NULL, fmt, ap);
	va_end(ap);
	return 2;
}

int cmd_usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay(cmd, fmt, ap);
	va_end(ap);
	return 2;
}
