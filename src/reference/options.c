// SPDX-License-Identifier: MIT
/* The cell's -O values as its reference sees them: read through the
 * transport's (or pattern's) own option table, by name, so that nothing of
 * the transport's code or structs is shared. An option the reference does
 * not mirror, set away from its default, takes the reference away (with
 * the option named) rather than compare unlike things. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipclab/experiment.h"
#include "ipclab/opt.h"
#include "ipclab/pattern.h"
#include "ref_int.h"

static uint64_t field(const struct opt_desc *d, const void *base)
{
	const char *p = (const char *)base + d->offset;

	if (d->type == OPT_BOOL || d->type == OPT_CHOICE) {
		int v;

		memcpy(&v, p, sizeof(v));
		return (uint64_t)v;
	}
	if (d->type == OPT_STRING)
		return p[0] != '\0';
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static size_t field_size(const struct opt_desc *d)
{
	return d->type == OPT_BOOL || d->type == OPT_CHOICE ? sizeof(int) :
	       d->type == OPT_STRING			    ? OPT_STR_MAX :
							      sizeof(uint64_t);
}

/* name's value in opts (or its default when opts is NULL). */
static uint64_t opt_value(const struct opt_desc *table, size_t size, const void *opts, const char *name)
{
	const struct opt_desc *d = table ? opt_find(table, name) : NULL;
	char err[128];
	uint64_t v = 0;

	if (!d)
		return 0;
	if (opts)
		return field(d, opts);
	void *def = calloc(1, size ? size : 1);

	if (def && !opt_defaults(table, def, err, sizeof(err)))
		v = field(d, def);
	free(def);
	return v;
}

uint64_t ref_tp_opt(const struct cell *c, const char *name)
{
	return opt_value(c->tp->options, c->tp->opts_size, c->tp_opts, name);
}

uint64_t ref_pat_opt(const struct cell *c, const char *name)
{
	return opt_value(c->pat->options, c->pat->opts_size, c->pat_opts, name);
}

static bool listed(const char *const *list, const char *name)
{
	for (; list && *list; list++)
		if (!strcmp(*list, name))
			return true;
	return false;
}

bool ref_opts_mirrored(const struct cell *c, const char *const *mirrored, char *why, size_t whylen)
{
	const struct opt_desc *t = c->tp->options;
	char err[128];
	void *def;
	bool ok = true;

	if (!t || !c->tp_opts)
		return true;
	def = calloc(1, c->tp->opts_size ? c->tp->opts_size : 1);
	if (!def || opt_defaults(t, def, err, sizeof(err))) {
		free(def);
		return true; /* the defaults cannot be made: nothing to compare with */
	}
	for (const struct opt_desc *d = t; ok && d->name; d++) {
		char val[OPT_STR_MAX + 8];

		if (listed(mirrored, d->name) || !memcmp((const char *)c->tp_opts + d->offset,
							 (const char *)def + d->offset, field_size(d)))
			continue;
		opt_format(d, c->tp_opts, val, sizeof(val));
		snprintf(why, whylen, "the %s reference does not mirror -O %s=%s", c->tp->name,
			 d->name, val);
		ok = false;
	}
	free(def);
	return ok;
}

bool ref_zerocopy(const struct cell *c)
{
	const struct opt_desc *d = c->pat->options ? opt_find(c->pat->options, "recv") : NULL;

	if (!(c->tp->caps & TP_ZEROCOPY) || !c->tp->peek)
		return false;
	/* the choices are auto|copy|peek: copy is the only one that copies */
	return !d || ref_pat_opt(c, "recv") != 1;
}
