// SPDX-License-Identifier: MIT
/* The one option parser: typed, ranged, defaulted tables (opt.h). */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "ipclab/opt.h"
#include "ipclab/util.h"

const struct opt_desc *opt_find(const struct opt_desc *d, const char *key)
{
	for (; d && d->name; d++)
		if (strcmp(d->name, key) == 0)
			return d;
	return NULL;
}

static int parse_bool(const char *v, int *out)
{
	static const char *const yes[] = { "1", "yes", "on", "true" };
	static const char *const no[] = { "0", "no", "off", "false" };

	for (size_t i = 0; i < ARRAY_SIZE(yes); i++) {
		if (strcasecmp(v, yes[i]) == 0)
			return *out = 1, 0;
		if (strcasecmp(v, no[i]) == 0)
			return *out = 0, 0;
	}
	return -EINVAL;
}

static int parse_choice(const struct opt_desc *d, const char *v, int *out)
{
	const char *c = d->choices;
	size_t vl = strlen(v);

	for (int idx = 0; c && *c; idx++) {
		const char *bar = strchr(c, '|');
		size_t l = bar ? (size_t)(bar - c) : strlen(c);

		if (l == vl && strncmp(c, v, l) == 0)
			return *out = idx, 0;
		c = bar ? bar + 1 : c + l;
	}
	return -EINVAL;
}

static int parse_number(const struct opt_desc *d, const char *v, uint64_t *out)
{
	switch (d->type) {
	case OPT_SIZE:
		return parse_size(v, out);
	case OPT_DURATION:
		return parse_duration(v, out);
	default:
		return parse_count(v, out);
	}
}

int opt_set(const struct opt_desc *d, void *dst, const char *val, char *err, size_t errlen)
{
	char *field = (char *)dst + d->offset;
	uint64_t v;
	int ret;

	switch (d->type) {
	case OPT_BOOL:
		if (parse_bool(val, (int *)field))
			return errf(err, errlen, EINVAL, "-O %s=%s: expected 0 or 1", d->name, val);
		return 0;
	case OPT_CHOICE:
		if (parse_choice(d, val, (int *)field))
			return errf(err, errlen, EINVAL, "-O %s=%s: expected one of %s", d->name, val,
				    d->choices);
		return 0;
	case OPT_STRING:
		if (strlen(val) >= OPT_STR_MAX)
			return errf(err, errlen, EINVAL, "-O %s: value longer than %d characters",
				    d->name, OPT_STR_MAX - 1);
		snprintf(field, OPT_STR_MAX, "%s", val);
		return 0;
	default:
		break;
	}
	if (d->zero_word && !strcmp(val, d->zero_word)) {
		memset(field, 0, sizeof(uint64_t));
		return 0;
	}
	ret = parse_number(d, val, &v);
	if (ret)
		return errf(err, errlen, EINVAL, "-O %s=%s: not a valid %s%s%s", d->name, val,
			    d->type == OPT_SIZE ? "size (e.g. 64, 4k, 1M)" :
			    d->type == OPT_DURATION ? "duration (e.g. 100ms, 5s)" : "number",
			    d->zero_word ? " or " : "", d->zero_word ? d->zero_word : "");
	if (v < d->min || (d->max && v > d->max))
		return errf(err, errlen, ERANGE, "-O %s=%s: out of range [%llu, %llu]", d->name, val,
			    (unsigned long long)d->min, (unsigned long long)d->max);
	if ((d->flags & OPT_POW2) && (v & (v - 1)))
		return errf(err, errlen, EINVAL, "-O %s=%s: not a power of two; use e.g. 64k, 1M or 4M",
			    d->name, val);
	memcpy(field, &v, sizeof(v));
	return 0;
}

int opt_defaults(const struct opt_desc *d, void *dst, char *err, size_t errlen)
{
	for (; d && d->name; d++) {
		const char *def = d->def ? d->def : "";
		char *field = (char *)dst + d->offset;
		int ret;

		if (!*def) {
			if (d->type == OPT_STRING)
				field[0] = '\0';
			else if (d->type == OPT_BOOL || d->type == OPT_CHOICE)
				*(int *)field = 0;
			else
				memset(field, 0, sizeof(uint64_t));
			continue;
		}
		ret = opt_set(d, dst, def, err, errlen);
		if (ret)
			return ret;
	}
	return 0;
}

void opt_format(const struct opt_desc *d, const void *src, char *buf, size_t len)
{
	const char *field = (const char *)src + d->offset;
	uint64_t v;

	switch (d->type) {
	case OPT_BOOL:
		snprintf(buf, len, "%d", *(const int *)field);
		return;
	case OPT_STRING:
		snprintf(buf, len, "%s", field);
		return;
	case OPT_CHOICE: {
		const char *c = d->choices ? d->choices : "";
		int idx = *(const int *)field;

		while (idx-- > 0 && strchr(c, '|'))
			c = strchr(c, '|') + 1;
		snprintf(buf, len, "%.*s", (int)strcspn(c, "|"), c);
		return;
	}
	default:
		memcpy(&v, field, sizeof(v));
		if (!v && d->zero_word) {
			snprintf(buf, len, "%s", d->zero_word);
			return;
		}
		/* a duration keeps its unit, so that -O reads it back the same */
		snprintf(buf, len, d->type == OPT_DURATION ? "%lluns" : "%llu", (unsigned long long)v);
	}
}
