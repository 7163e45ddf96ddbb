// SPDX-License-Identifier: MIT
/* --profile in the reports: per side, the functions its samples were taken
 * in, as a list in JSON (docs/output.md) and as a table in the text
 * output, in the columns of an oprofile listing: samples, %, symbol,
 * object. */
#include <math.h>

#include "profile_out.h"
#include "trace_out.h"

/* --profile DIR: the side's folded stacks, DIR/<cell>-<side>.folded */
static json_t *folded_file(const struct profile_result *pr, const struct profile_side *s)
{
	char name[256];

	if (!pr->folded || !pr->folded_name[0])
		return json_null();
	if (s->server)
		snprintf(name, sizeof(name), "%s-server.folded", pr->folded_name);
	else
		snprintf(name, sizeof(name), "%s-client%u.folded", pr->folded_name, s->id);
	return json_string(name);
}

static json_t *side_json(const struct profile_result *pr, const struct profile_side *s)
{
	json_t *o = json_pack("{s:s, s:I, s:I, s:I}", "role", s->server ? "server" : "client",
			      "id", (json_int_t)s->id, "samples", (json_int_t)s->samples,
			      "kernel_samples", (json_int_t)s->kernel_samples);
	json_t *top = json_array();

	if (!o || !top) {
		json_decref(o);
		json_decref(top);
		return NULL;
	}
	for (unsigned k = 0; k < s->ntop; k++)
		json_array_append_new(top, json_pack("{s:s, s:s, s:I, s:f, s:b}", "symbol", s->top[k].symbol,
						     "object", s->top[k].object,
						     "samples", (json_int_t)s->top[k].samples,
						     "pct", s->top[k].pct, "skid", s->top[k].skid));
	json_object_set_new(o, "skid_samples", json_integer((json_int_t)s->skid_samples));
	json_object_set_new(o, "top", top);
	json_object_set_new(o, "folded_file", folded_file(pr, s));
	return o;
}

json_t *profile_json(const struct profile_result *pr)
{
	json_t *a = json_array();

	for (unsigned i = 0; a && i < pr->nsides && i < PROFILE_MAX_SIDES; i++)
		json_array_append_new(a, side_json(pr, &pr->sides[i]));
	return a;
}

json_t *profile_run_json(const struct profile_result *pr)
{
	json_t *o = json_pack("{s:I, s:I, s:b, s:b}", "hz", (json_int_t)pr->hz,
			      "lost_samples", (json_int_t)pr->lost_samples,
			      "complete", !pr->lost_samples, "kernel_symbols", pr->kernel_symbols);

	if (!o)
		return NULL;
	json_object_set_new(o, "kernel_symbols_why",
			    pr->kernel_symbols ? json_null() : json_string(pr->kernel_symbols_why));
	json_object_set_new(o, "folded_dir", pr->folded ? json_string(pr->folded_dir) : json_null());
	json_object_set_new(o, "perturbation",
			    pr->perturbation > 0 && isfinite(pr->perturbation) ?
			    json_real(pr->perturbation) : json_null());
	json_object_set_new(o, "perturbation_of",
			    pr->perturbation_of ? json_string(pr->perturbation_of) : json_null());
	perturbation_json(o, pr->perturbation_pairs, pr->perturbation_lo, pr->perturbation_hi,
			  pr->perturbation_separable);
	return o;
}

void profile_table(FILE *f, const struct profile_result *pr)
{
	fprintf(f, "    profile: %u Hz", pr->hz);
	if (pr->perturbation > 0)
		perturbation_text(f, "profiled/unprofiled", pr->perturbation, pr->perturbation_pairs,
				  pr->perturbation_lo, pr->perturbation_hi, pr->perturbation_separable);
	if (pr->lost_samples)
		fprintf(f, "  INCOMPLETE: %llu samples lost", (unsigned long long)pr->lost_samples);
	if (!pr->kernel_symbols)
		fprintf(f, "\n    kernel frames unnamed: %s", pr->kernel_symbols_why);
	fputc('\n', f);
	for (unsigned i = 0; i < pr->nsides; i++) {
		const struct profile_side *s = &pr->sides[i];

		if (s->server)
			fprintf(f, "    server: %llu samples (%.0f%% in the kernel)\n",
				(unsigned long long)s->samples,
				s->samples ? 100.0 * (double)s->kernel_samples / (double)s->samples : 0.0);
		else
			fprintf(f, "    client %u: %llu samples (%.0f%% in the kernel)\n", s->id,
				(unsigned long long)s->samples,
				s->samples ? 100.0 * (double)s->kernel_samples / (double)s->samples : 0.0);
		if (s->samples && 100.0 * (double)s->skid_samples / (double)s->samples >= PROFILE_SKID_PCT)
			fprintf(f, "      %.0f%% of its samples at interrupt-enable points (skid): a timer-sampled "
				   "profile takes a tick when interrupts come back on, so read them as the code "
				   "before, not as hot functions\n",
				100.0 * (double)s->skid_samples / (double)s->samples);
		if (s->ntop)
			fprintf(f, "      %8s %7s  %-40s %s\n", "samples", "%", "symbol", "object");
		for (unsigned k = 0; k < s->ntop; k++)
			fprintf(f, "      %8llu %7.3f  %-40s %s%s\n", (unsigned long long)s->top[k].samples,
				s->top[k].pct, s->top[k].symbol, s->top[k].object,
				s->top[k].skid ? "  (skid)" : "");
	}
}
