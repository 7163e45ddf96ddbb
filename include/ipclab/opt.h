/* SPDX-License-Identifier: MIT */
/* Options are data: typed, ranged, defaulted tables with help text, parsed by
 * one parser. Transports and patterns declare their private options (-O
 * key=value) this way. */
#ifndef IPCLAB_OPT_H
#define IPCLAB_OPT_H

#include <stddef.h>
#include <stdint.h>

enum opt_type {
	OPT_BOOL,	/* 0/1, yes/no, on/off -> int */
	OPT_UINT,	/* plain or decimal-suffixed count -> uint64_t */
	OPT_SIZE,	/* 4k, 1M -> uint64_t bytes */
	OPT_DURATION,	/* 5s, 100ms -> uint64_t ns */
	OPT_STRING,	/* -> char[OPT_STR_MAX] */
	OPT_CHOICE,	/* one of choices (|-separated) -> int index */
};

#define OPT_STR_MAX 64

struct opt_desc {
	const char *name;
	enum opt_type type;
	size_t offset;		/* offsetof() into the options struct */
	const char *def;	/* default, as text ("" = 0/empty) */
	uint64_t min, max;	/* inclusive range for numbers (max 0 = none) */
	const char *choices;	/* OPT_CHOICE: "a|b|c" */
	const char *help;
	unsigned flags;		/* OPT_POW2 */
	const char *zero_word;	/* a number: this word means 0 (e.g. "auto"), shown as it */
};

#define OPT_POW2 1u		/* a number: only a power of two */

/* Set every field of dst to its default. */
int opt_defaults(const struct opt_desc *d, void *dst, char *err, size_t errlen);
/* Find key in the table (NULL-terminated by name == NULL). */
const struct opt_desc *opt_find(const struct opt_desc *d, const char *key);
/* Parse val into dst per desc; -EINVAL/-ERANGE with a message in err. */
int opt_set(const struct opt_desc *d, void *dst, const char *val, char *err, size_t errlen);
/* Render the current value of one option as text. */
void opt_format(const struct opt_desc *d, const void *src, char *buf, size_t len);

#endif
