// SPDX-License-Identifier: MIT
/* The one error printer: "ipclab: ..." or "ipclab CMD: ...", one line on
 * stderr, through the safe printer (control bytes, C1 controls and invalid
 * UTF-8 shown escaped, \xNN): whatever the user typed or a file held, the
 * message stays one line and cannot move the cursor. */
#include <stdarg.h>
#include <stdio.h>

#include "ipclab/safe_print.h"
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
	safe_fputs(stderr, msg);
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
