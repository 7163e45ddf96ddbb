// SPDX-License-Identifier: MIT
/* A cell between hosts in a result file: the "remote" object of a result
 * and the server host's "remote_env" beside "env" (run --peer). */
#include <jansson.h>

#include "ipclab/result.h"
#include "remote_json.h"

json_t *remote_result_json(const struct remote_result *r)
{
	json_t *o = json_object(), *st = json_object();

	if (!o || !st) {
		json_decref(o);
		json_decref(st);
		return NULL;
	}
	for (unsigned i = 0; i < r->settings.n; i++)
		json_object_set_new(st, r->settings.kv[i].key, json_string(r->settings.kv[i].val));
	json_object_set_new(o, "host", json_string(r->host));
	json_object_set_new(o, "server_pin_cpu", r->server_pin >= 0 ? json_integer(r->server_pin) : json_null());
	json_object_set_new(o, "server_cpu", r->server_cpu >= 0 ? json_integer(r->server_cpu) : json_null());
	json_object_set_new(o, "clock_offset_ns", r->clock_known ? json_integer(r->clock_offset_ns) : json_null());
	json_object_set_new(o, "clock_offset_err_ns", r->clock_known ? json_integer((json_int_t)r->clock_err_ns) : json_null());
	json_object_set_new(o, "one_way_latency", r->one_way_unknown ?
			    json_string("unknown: the timestamps were read on two hosts' clocks") :
			    json_string("not applicable: round trips timed on this host's clock"));
	json_object_set_new(o, "server_settings", st);
	return o;
}

json_t *remote_env_json(const char *text)
{
	json_t *e = text ? json_loads(text, 0, NULL) : NULL;

	if (e && !json_is_object(e)) {
		json_decref(e);
		return NULL;
	}
	return e;
}
