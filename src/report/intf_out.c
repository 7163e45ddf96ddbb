// SPDX-License-Identifier: MIT
/* Interference in the reports: the `interference` object of a result
 * (docs/output.md) and its CSV columns. */
#include <math.h>
#include <stdio.h>

#include "ipclab/util.h"
#include "fields.h"
#include "intf_out.h"

static json_t *num(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

static json_t *cpu_json(const struct intf_cpu *c)
{
	json_t *o = json_object();

	if (!o)
		return NULL;
	json_object_set_new(o, "cpu", json_integer(c->cpu));
	json_object_set_new(o, "busy_pct", num(c->busy_pct));
	json_object_set_new(o, "endpoint_pct", num(c->endpoint_pct));
	json_object_set_new(o, "helper_pct", num(c->helper_pct));
	json_object_set_new(o, "foreign_pct", num(c->foreign_pct));
	json_object_set_new(o, "irq_pct", num(c->irq_pct));
	json_object_set_new(o, "steal_pct", num(c->steal_pct));
	return o;
}

json_t *interference_json(const struct interference *in)
{
	json_t *o = json_object(), *cpus = json_array();

	if (!o || !cpus) {
		json_decref(o);
		json_decref(cpus);
		return NULL;
	}
	for (unsigned i = 0; i < in->ncpus && i < INTF_MAX_CPUS; i++)
		json_array_append_new(cpus, cpu_json(&in->cpu[i]));
	json_object_set_new(o, "method", json_string(intf_method_name(in->method)));
	json_object_set_new(o, "window_ns", in->window_ns ? json_integer((json_int_t)in->window_ns) :
							   json_null());
	json_object_set_new(o, "resolution_pct", num(in->resolution_pct));
	json_object_set_new(o, "foreign_pct", num(in->foreign_pct));
	json_object_set_new(o, "foreign_cpu", in->foreign_cpu >= 0 ? json_integer(in->foreign_cpu) :
								      json_null());
	json_object_set_new(o, "steal_pct", num(in->steal_pct));
	json_object_set_new(o, "irq_pct", num(in->irq_pct));
	json_object_set_new(o, "endpoint_wait_pct", num(in->endpoint_wait_pct));
	json_object_set_new(o, "loadavg_1min", num(in->loadavg_1min));
	json_object_set_new(o, "noisy", json_boolean(in->noisy));
	json_object_set_new(o, "per_cpu", cpus);
	return o;
}

/* interference_foreign_pct, _steal_pct, _irq_pct, _endpoint_wait_pct, _noisy */
void intf_csv_value(const struct interference *in, size_t k, char *buf, size_t len)
{
	const double v[] = { in->foreign_pct, in->steal_pct, in->irq_pct, in->endpoint_wait_pct };

	buf[0] = '\0';
	if (k < ARRAY_SIZE(v)) {
		if (isfinite(v[k]))
			fmt_double_exact(buf, len, v[k]);
	} else if (k == ARRAY_SIZE(v)) {
		snprintf(buf, len, "%s", in->noisy ? "true" : "false");
	}
}
