// SPDX-License-Identifier: MIT
/* `ipclab env --check` printed: a heading that says which CPUs were looked
 * at and for how long, one line per check (status, name, what it found,
 * the fix), a count of each status; or the same as one JSON object. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "envcheck_out.h"

static void cpus_text(const struct env_checks *ck, char *buf, size_t len)
{
	if (ck->cpus[0] < 0 && ck->cpus[1] < 0)
		snprintf(buf, len, "all %u CPUs (--pin %s)", ck->ncpu, ck->pin_text);
	else if (ck->cpus[0] == ck->cpus[1] || ck->cpus[1] < 0)
		snprintf(buf, len, "CPU %d (--pin %s)", ck->cpus[0], ck->pin_text);
	else
		snprintf(buf, len, "CPUs %d and %d (--pin %s)", ck->cpus[0], ck->cpus[1],
			 ck->pin_text);
}

int env_check_text(FILE *f, const struct env_checks *ck)
{
	unsigned count[4] = { 0 };
	char cpus[64];

	cpus_text(ck, cpus, sizeof(cpus));
	fprintf(f, "what makes figures noisy here, for endpoints on %s; watched %.1f s\n", cpus,
		(double)ck->sample_ns / 1e9);
	for (unsigned i = 0; i < ck->n && i < ENVC_MAX; i++) {
		const struct env_check *c = &ck->c[i];

		count[c->status & 3]++;
		fprintf(f, "%-4s  %-13s %s%s%s\n", check_status_name(c->status), c->name, c->found,
			c->fix[0] ? "; fix: " : "", c->fix);
	}
	fprintf(f, "%u ok, %u warn, %u bad, %u n/a\n", count[CHECK_OK], count[CHECK_WARN],
		count[CHECK_BAD], count[CHECK_NA]);
	return ferror(f) ? -EIO : 0;
}

static json_t *check_json(const struct env_check *c)
{
	return json_pack("{s:s, s:s, s:s, s:o}", "name", c->name, "status",
			 check_status_name(c->status), "found", c->found, "fix",
			 c->fix[0] ? json_string(c->fix) : json_null());
}

json_t *env_check_json(const struct env_checks *ck)
{
	json_t *arr = json_array(), *cpus = json_array(), *obj;
	int rc = !arr || !cpus;

	for (unsigned i = 0; !rc && i < ck->n && i < ENVC_MAX; i++)
		rc |= json_array_append_new(arr, check_json(&ck->c[i]));
	for (unsigned i = 0; !rc && i < 2; i++)
		if (ck->cpus[i] >= 0 && (i == 0 || ck->cpus[1] != ck->cpus[0]))
			rc |= json_array_append_new(cpus, json_integer(ck->cpus[i]));
	if (rc) {
		json_decref(arr);
		json_decref(cpus);
		return NULL;
	}
	obj = json_pack("{s:s, s:o, s:I, s:o}", "pin", ck->pin_text, "cpus", cpus, "sample_ns",
			(json_int_t)ck->sample_ns, "checks", arr);
	return obj;
}
