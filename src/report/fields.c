// SPDX-License-Identifier: MIT
/* THE field table: every configuration value and metric of a result, once.
 * The human table, the markdown table, JSON (top level for configuration,
 * "metrics" for the rest), CSV columns and docs/output.md all follow it, so a
 * new metric is one line here. Keys carry their unit (_ns, _bytes, _per_s,
 * _pct); a getter returns NAN when the value does not apply to this result. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipclab/result.h"
#include "ipclab/util.h"
#include "fields.h"

/* Getters that only read one member: generated, so the table stays short. */
#define GET_NUM(name, expr) \
	static double get_##name(const struct result *r) { return (double)(expr); }
#define GET_STR(name, expr) \
	static const char *get_##name(const struct result *r) { return (expr); }

GET_STR(transport, r->transport)
GET_STR(pattern, r->pattern)
GET_NUM(size, r->cell.size)
GET_NUM(count, r->cell.count)
GET_STR(endpoints, r->cell.threads ? "thread" : "process")
GET_STR(pin, r->cell.pin.text)
GET_STR(sched, r->cell.sched.text)
GET_NUM(clients, r->cell.clients)
GET_STR(status, result_status_name(r->status))
GET_STR(reason, r->status == RES_OK ? "" : r->reason)
GET_STR(section, r->section)
GET_NUM(warmup, r->cell.warmup)
GET_NUM(duration, r->cell.duration_ns)
GET_NUM(verify, r->cell.verify)
GET_NUM(timeout, r->cell.timeout_ns)
GET_NUM(max_time, r->cell.max_time_ns)
GET_NUM(think, r->cell.think)
GET_NUM(think_ns, r->cell.think_ns)
GET_NUM(rate, r->cell.rate)
GET_NUM(pm_qos, r->cell.pm_qos_us >= 0 ? (double)r->cell.pm_qos_us : NAN)
GET_NUM(keep_awake, r->cell.keep_awake)

GET_NUM(elapsed, r->elapsed_ns)
GET_NUM(msgs, r->msgs)
GET_NUM(bytes, r->bytes)
GET_NUM(msgs_per_s, r->msgs_per_s)
GET_NUM(bytes_per_s, r->bytes_per_s)
GET_STR(lat_kind, lat_kind_key(r->lat_kind))
GET_NUM(lat_samples, r->lat_samples)
GET_NUM(sample_every, r->sample_every)
GET_NUM(cpu_pct_total, r->cpu_pct_total)
GET_NUM(cpu_ns_per_msg, r->msgs ? r->cpu_ns_per_msg : NAN)
GET_NUM(sys_cs, r->sys_ctx_switches_per_s)
GET_NUM(sys_intr, r->sys_intr_per_s)
GET_NUM(sys_busy, r->sys_busy_pct)
GET_NUM(lost, r->lost)
GET_NUM(dups, r->dups)
GET_NUM(reorders, r->reorders)
GET_NUM(zerocopy, r->zerocopy)
GET_STR(serve, r->serve_spin ? "ready-spin" : r->serve_ready ? "ready" : "in-turn")
GET_NUM(repeat, r->repeat_n ? r->repeat_n : 1)
GET_NUM(noisy, r->noisy)
GET_NUM(bimodal, r->bimodal)
GET_NUM(ci95_pct, result_headline_ci_pct(r))
GET_NUM(converged, r->repeat_auto ? r->converged : NAN)

/* --rate ping-pong's other views of the round trip: only where paced */
#define GET_PACED(name, n, expr) GET_NUM(name, r->n ? (double)(expr) : NAN)
GET_PACED(lat_int_p50, paced_samples, r->lat_intended_p50_ns)
GET_PACED(lat_int_p99, paced_samples, r->lat_intended_p99_ns)
GET_PACED(lat_int_max, paced_samples, r->lat_intended_max_ns)
GET_PACED(late_p50, late_samples, r->send_late_p50_ns)
GET_PACED(late_p99, late_samples, r->send_late_p99_ns)
GET_PACED(late_max, late_samples, r->send_late_max_ns)

/* Latency exists only when something was timed: 0 would read as "instant". */
#define GET_LAT(name, expr) GET_NUM(name, r->lat_samples ? (double)(expr) : NAN)
GET_LAT(lat_min, r->lat_min_ns)
GET_LAT(lat_mean, r->lat_mean_ns)
GET_LAT(lat_p50, r->lat_p50_ns)
GET_LAT(lat_p90, r->lat_p90_ns)
GET_LAT(lat_p99, r->lat_p99_ns)
GET_LAT(lat_p99_9, r->lat_p99_9_ns)
GET_LAT(lat_p99_99, r->lat_p99_99_ns)
GET_LAT(lat_max, r->lat_max_ns)

#define CFG_S(k, l, g, tbl, d) \
	{ .key = k, .label = l, .kind = F_STR, .get_str = get_##g, .config = true, .table = tbl, .doc = d }
#define CFG_N(k, l, kd, u, g, tbl, d) \
	{ .key = k, .label = l, .kind = kd, .unit = u, .get_num = get_##g, .config = true, .table = tbl, .doc = d }
#define MET_S(k, l, g, tbl, d) \
	{ .key = k, .label = l, .kind = F_STR, .get_str = get_##g, .table = tbl, .doc = d }
#define MET_N(k, l, kd, u, g, tbl, d) \
	{ .key = k, .label = l, .kind = kd, .unit = u, .get_num = get_##g, .table = tbl, .doc = d }

/* a metric with a better direction (ipclab compare's verdicts) */
#define MET_NB(k, l, kd, u, g, tbl, d, b) \
	{ .key = k, .label = l, .kind = kd, .unit = u, .get_num = get_##g, .table = tbl, .doc = d, \
	  .better = b }
#define PACED_N(k, l, g, d) \
	{ .key = k, .label = l, .kind = F_U64, .unit = U_NS, .get_num = get_##g, .optional = true, \
	  .doc = d }

/* Order: JSON and CSV order; the fields marked for the table, in this order,
 * are the human table's columns. The engine's configuration (head), each
 * pattern's (pat_report.config), the engine's metrics (tail), each
 * pattern's (pat_report.metrics): see fields_build. */
static const struct field head_fields[] = {
	CFG_S("transport", "transport", transport, true, "transport name, as given to -t"),
	CFG_S("pattern", "pattern", pattern, true, "pattern name, as given to -p"),
	CFG_N("size_bytes", "size", F_U64, U_BYTES, size, true,
	      "bytes per message, the 16-byte header included"),
	CFG_N("count", "count", F_U64, U_COUNT, count, false,
	      "measured messages asked for (0 when the window is a duration)"),
	CFG_S("endpoints", "endpoints", endpoints, true,
	      "\"process\" (forked) or \"thread\" (threads of one process)"),
	CFG_S("pin", "pin", pin, true, "CPU placement as given: none, same, split or SERVER:CLIENT"),
	CFG_S("sched", "sched", sched, true, "scheduling policy as given: other, fifo:PRIO, rr:PRIO, ..."),
	CFG_N("clients", "clients", F_U64, U_COUNT, clients, true, "client endpoints (one server)"),
	CFG_S("status", "status", status, false, "\"ok\", \"skipped\" (cannot run here) or \"failed\""),
	CFG_S("reason", "reason", reason, false,
	      "why the result is skipped or failed; absent from JSON when ok"),
	CFG_S("section", "section", section, false, "suite section; absent from JSON when none"),
	CFG_N("warmup", "warmup", F_U64, U_COUNT, warmup, false,
	      "messages exchanged before the measured window"),
	CFG_N("duration_ns", "duration", F_U64, U_NS, duration, false,
	      "measured window asked for, instead of count (0 = by count)"),
	CFG_N("verify", "verify", F_BOOL, U_NONE, verify, false,
	      "payload checksums were checked (--verify)"),
	CFG_N("timeout_ns", "timeout", F_U64, U_NS, timeout, false,
	      "watchdog: a run without progress for this long fails"),
	CFG_N("max_time_ns", "max-time", F_U64, U_NS, max_time, false,
	      "a cell running longer than this is ended and fails (--max-time; derived when not given)"),
	CFG_N("think", "think", F_U64, U_COUNT, think, false,
	      "busy-loop iterations per message byte between messages, both sides (--think)"),
	CFG_N("think_ns", "think-ns", F_U64, U_NS, think_ns, false,
	      "calibrated busy time between messages, both sides (--think-ns)"),
	CFG_N("rate_per_s", "rate", F_DBL, U_PER_S, rate, false,
	      "messages per second the client paces itself to (--rate; 0 = as fast as it can)"),
	CFG_N("pm_qos_us", "pm-qos", F_U64, U_NONE, pm_qos, false,
	      "/dev/cpu_dma_latency held at this many microseconds during the run (--pm-qos); null = untouched"),
	CFG_N("keep_awake", "keep-awake", F_BOOL, U_NONE, keep_awake, false,
	      "a SCHED_IDLE busy loop kept each endpoint CPU out of idle states (--keep-awake)"),
};

static const struct field tail_fields[] = {
	CFG_N("repeat_n", "repeat", F_U64, U_COUNT, repeat, false,
	      "repetitions folded into this result: each metric is their median (--repeat)"),

	MET_N("elapsed_ns", "elapsed", F_U64, U_NS, elapsed, false, "length of the measured window"),
	MET_N("msgs", "msgs", F_U64, U_COUNT, msgs, false, "messages moved in the window (all clients)"),
	MET_N("bytes", "bytes", F_U64, U_BYTES, bytes, false, "bytes moved in the window (all clients)"),
	MET_NB("msgs_per_s", "msgs/s", F_DBL, U_PER_S, msgs_per_s, true,
	      "messages per second over the measured window (all clients)", +1),
	MET_NB("bytes_per_s", "MB/s", F_DBL, U_BYTES_PER_S, bytes_per_s, true,
	      "message bytes per second, headers included (table: MB/s = 10^6 bytes/s)", +1),
	MET_S("lat_kind", "lat", lat_kind, true,
	      "\"rtt\" (round trip: send to reply), \"one_way\" (send to receive) or \"cycle\" (-p cycle: a period's completion, intended start to the graph's end)"),
	MET_N("lat_min_ns", "min", F_U64, U_NS, lat_min, false, "smallest latency (exact)"),
	MET_N("lat_mean_ns", "mean", F_DBL, U_NS, lat_mean, false, "mean latency (exact)"),
	MET_NB("lat_p50_ns", "p50", F_U64, U_NS, lat_p50, true, "median latency", -1),
	MET_N("lat_p90_ns", "p90", F_U64, U_NS, lat_p90, false, "90th percentile latency"),
	MET_NB("lat_p99_ns", "p99", F_U64, U_NS, lat_p99, true, "99th percentile latency", -1),
	MET_N("lat_p99_9_ns", "p99.9", F_U64, U_NS, lat_p99_9, false, "99.9th percentile latency"),
	MET_N("lat_p99_99_ns", "p99.99", F_U64, U_NS, lat_p99_99, false,
	      "99.99th percentile latency"),
	MET_NB("lat_max_ns", "max", F_U64, U_NS, lat_max, true, "largest latency (exact)", -1),
	MET_N("lat_samples", "samples", F_U64, U_COUNT, lat_samples, false,
	      "latencies in the histogram (0: the lat_* values are null)"),
	PACED_N("lat_intended_p50_ns", "int p50", lat_int_p50,
		"--rate ping-pong: median round trip from the intended send time (the open-loop view, the sender's lateness included; lat_* count from the actual send)"),
	PACED_N("lat_intended_p99_ns", "int p99", lat_int_p99,
		"--rate ping-pong: 99th percentile round trip from the intended send time"),
	PACED_N("lat_intended_max_ns", "int max", lat_int_max,
		"--rate ping-pong: largest round trip from the intended send time"),
	PACED_N("send_late_p50_ns", "late", late_p50,
		"--rate: median lateness of a send (intended -> actual: the sender's timer wake-up and what ran before it)"),
	PACED_N("send_late_p99_ns", "late p99", late_p99,
		"--rate: 99th percentile lateness of a send"),
	PACED_N("send_late_max_ns", "late max", late_max,
		"--rate: largest lateness of a send"),
	MET_N("sample_every", "every", F_U64, U_COUNT, sample_every, false,
	      "one-way: every Nth message carried a send timestamp"),
	MET_NB("cpu_pct_total", "CPU%", F_DBL, U_PCT, cpu_pct_total, true,
	      "user+sys time of all sides, % of one CPU (200 = two CPUs busy)", -1),
	MET_NB("cpu_ns_per_msg", "CPU/msg", F_DBL, U_NS, cpu_ns_per_msg, false,
	      "user+sys time of all sides per message", -1),
	MET_NB("sys_ctx_switches_per_s", "cs/s", F_DBL, U_PER_S, sys_cs, true,
	      "system-wide context switches per second (/proc/stat, vmstat's cs)", -1),
	MET_N("sys_intr_per_s", "intr/s", F_DBL, U_PER_S, sys_intr, false,
	      "system-wide interrupts per second (/proc/stat)"),
	MET_N("sys_busy_pct", "sys busy", F_DBL, U_PCT, sys_busy, false,
	      "all CPUs' busy time, % of all CPUs (100 = every CPU busy)"),
	MET_N("lost", "lost", F_U64, U_COUNT, lost, false, "messages lost (lossy transports)"),
	MET_N("dups", "dups", F_U64, U_COUNT, dups, false, "messages duplicated (lossy transports)"),
	MET_N("reorders", "reorders", F_U64, U_COUNT, reorders, false,
	      "messages out of order (lossy transports)"),
	MET_N("zerocopy", "zerocopy", F_BOOL, U_NONE, zerocopy, false,
	      "received in place (peek/release) instead of copied"),
	MET_S("serve", "serve", serve, false,
	      "how the server waited on its clients: \"ready-spin\" (spinning over all, then on all at once), \"ready\" (on all at once) or \"in-turn\""),
	MET_N("noisy", "noisy", F_BOOL, U_NONE, noisy, false,
	      "the headline metric (p50 RTT, or msgs/s) spread over 10 % across repetitions"),
	MET_N("bimodal", "bimodal", F_BOOL, U_NONE, bimodal, false,
	      "the headline metric's repetitions fall in two clusters (repeat.<metric>.modes)"),
	{ .key = "ci95_pct", .label = "ci95", .kind = F_DBL, .unit = U_PCT, .get_num = get_ci95_pct,
	  .optional = true,
	  .doc = "with --repeat N >= 6: the 95 % interval of the headline's median, as +-% of it" },
	{ .key = "converged", .label = "converged", .kind = F_BOOL, .get_num = get_converged,
	  .optional = true,
	  .doc = "--repeat auto: the headline's interval came within the target before the cap or budget" },
};

#define FIELDS_MAX 160
static struct field all_fields[FIELDS_MAX];
const struct field *const result_fields = all_fields;
size_t n_result_fields;

static void fields_add(const struct field *f, size_t n)
{
	for (size_t i = 0; i < n && n_result_fields < FIELDS_MAX; i++)
		all_fields[n_result_fields++] = f[i];
}

/* THE table, made once before main from the engine's fields and every
 * registered pattern's own (a pattern's are optional: absent from JSON
 * where they do not apply). */
__attribute__((constructor)) static void fields_build(void)
{
	const struct pat_report *pr;

	fields_add(head_fields, ARRAY_SIZE(head_fields));
	for (size_t i = 0; i < n_patterns; i++)
		if ((pr = pat_report_of(patterns[i])))
			fields_add(pr->config, pr->nconfig);
	fields_add(tail_fields, ARRAY_SIZE(tail_fields));
	for (size_t i = 0; i < n_patterns; i++)
		if ((pr = pat_report_of(patterns[i])))
			fields_add(pr->metrics, pr->nmetrics);
}

const struct field *field_find(const char *key)
{
	for (size_t i = 0; i < n_result_fields; i++)
		if (!strcmp(result_fields[i].key, key))
			return &result_fields[i];
	return NULL;
}

/* the interference columns last, as intf_out.h says */
const char *const csv_extra_keys[] = {
	"cpu_busy_pct", "settings", "tp_options", "pat_options", "interference_foreign_pct",
	"interference_steal_pct", "interference_irq_pct", "interference_endpoint_wait_pct",
	"interference_noisy",
};
const size_t n_csv_extra_keys = ARRAY_SIZE(csv_extra_keys);

const char *const side_keys[] = {
	"role", "id", "user_ns", "sys_ns", "cpu_pct", "vol_ctx_switches",
	"invol_ctx_switches", "msgs", "bytes", "elapsed_ns",
};
const size_t n_side_keys = ARRAY_SIZE(side_keys);

const char *result_status_name(enum result_status s)
{
	switch (s) {
	case RES_OK:
		return "ok";
	case RES_SKIPPED:
		return "skipped";
	case RES_FAILED:
		return "failed";
	}
	return "failed";
}

const char *tp_role_name(enum tp_role role)
{
	return role == TP_SERVER ? "server" : "client";
}

bool field_missing(const struct field *fd, const struct result *r)
{
	if (!fd->config && r->status != RES_OK)
		return true;
	if (fd->kind == F_STR)
		return !fd->get_str(r)[0];
	return isnan(fd->get_num(r));
}

void fmt_double_exact(char *buf, size_t len, double v)
{
	snprintf(buf, len, "%.15g", v);
	if (strtod(buf, NULL) != v)
		snprintf(buf, len, "%.17g", v);
}

void field_text(const struct field *fd, const struct result *r, char *buf, size_t len)
{
	double v;

	buf[0] = '\0';
	if (field_missing(fd, r))
		return;
	if (fd->kind == F_STR) {
		snprintf(buf, len, "%s", fd->get_str(r));
		return;
	}
	v = fd->get_num(r);
	if (fd->kind == F_BOOL)
		snprintf(buf, len, "%s", v != 0 ? "true" : "false");
	else if (fd->kind == F_U64)
		snprintf(buf, len, "%" PRIu64, (uint64_t)v);
	else
		fmt_double_exact(buf, len, v);
}

/* Sizes are usually powers of two: "4KiB" reads better than "4.00KiB". */
static void fmt_size(char *buf, size_t len, double v)
{
	uint64_t b = (uint64_t)v;

	if (b && b % (1u << 20) == 0)
		snprintf(buf, len, "%" PRIu64 "MiB", b >> 20);
	else if (b && b % 1024 == 0)
		snprintf(buf, len, "%" PRIu64 "KiB", b >> 10);
	else if (b < 1024)
		snprintf(buf, len, "%" PRIu64 "B", b);
	else
		fmt_bytes(buf, len, v);
}

void field_human_num(const struct field *fd, double v, char *buf, size_t len)
{
	double mb = v / 1e6;

	switch (fd->unit) {
	case U_NS:
		fmt_ns(buf, len, v);
		break;
	case U_BYTES:
		fmt_size(buf, len, v);
		break;
	case U_PER_S:
		fmt_count(buf, len, v);
		break;
	case U_BYTES_PER_S:
		snprintf(buf, len, mb >= 100 ? "%.0f" : mb >= 10 ? "%.1f" : "%.2f", mb);
		break;
	case U_PCT:
		snprintf(buf, len, "%.0f", v);
		break;
	case U_NONE:
	case U_COUNT:
		snprintf(buf, len, "%.0f", v);
		break;
	}
}

void field_human_value(const struct field *fd, double v, char *buf, size_t len)
{
	field_human_num(fd, v, buf, len);
}

void field_human(const struct field *fd, const struct result *r, char *buf, size_t len)
{
	const char *s;

	if (field_missing(fd, r)) {
		snprintf(buf, len, "-");
		return;
	}
	if (fd->kind == F_BOOL) {
		snprintf(buf, len, "%s", fd->get_num(r) != 0 ? "yes" : "no");
		return;
	}
	if (fd->kind != F_STR) {
		field_human_num(fd, fd->get_num(r), buf, len);
		return;
	}
	s = !strcmp(fd->key, "lat_kind") ? lat_kind_text(r->lat_kind) : fd->get_str(r);
	snprintf(buf, len, "%s", s);
}
