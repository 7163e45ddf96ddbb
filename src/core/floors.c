// SPDX-License-Identifier: MIT
/* The canary and the round-trip floors (include/ipclab/floors.h): a
 * ping-pong through a registered transport - cacheline for the cache
 * line's round trip, pipe for the pipe's - between two threads pinned to
 * the run's CPUs, timed by the client, the first tenth left out as
 * warm-up. The transports' own loops are used, not a copy of them. The
 * wake-to-run and system call floors are in floors_wake.c. */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ipclab/floors.h"
#include "ipclab/transport.h"
#include "ipclab/util.h"
#include "floors_int.h"

#define PP_MSG 16			/* bytes a ping-pong message carries */
#define PP_DEADLINE_NS (5 * NSEC_PER_SEC)	/* a ping-pong that takes longer is cut there */
#define PP_MIN_N 50				/* round trips past the warm-up that make a figure */
/* every run measures the canary twice: small, and bounded in time (a
 * loaded machine can hold one side of a spinning ping-pong off its CPU
 * for a time slice at each round trip; past the bound the canary is left
 * unmeasured rather than the run held up) */
#define CANARY_CACHELINE_N 600
#define CANARY_PIPE_N 200
#define CANARY_DEADLINE_NS (NSEC_PER_SEC / 2)
#define FLOORS_CACHELINE_N 20000

static bool cpu_allowed(const cpu_set_t *set, int cpu)
{
	return cpu >= 0 && cpu < CPU_SETSIZE && CPU_ISSET(cpu, set);
}

void floors_pick_cpus(const int *want, unsigned nwant, int out[2])
{
	cpu_set_t set;
	unsigned k = 0;

	out[0] = out[1] = -1;
	if (sched_getaffinity(0, sizeof(set), &set))
		return;
	for (unsigned i = 0; i < nwant && k < 2; i++)
		if (cpu_allowed(&set, want[i]) && (k == 0 || want[i] != out[0]))
			out[k++] = want[i];
	for (int cpu = 0; cpu < CPU_SETSIZE && k < 2; cpu++)
		if (CPU_ISSET(cpu, &set) && (k == 0 || cpu != out[0]))
			out[k++] = cpu;
}

int floors_pin_self(int cpu)
{
	cpu_set_t set;

	if (cpu < 0 || cpu >= CPU_SETSIZE)
		return -EINVAL;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) ? -errno : 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

void floors_stat(uint64_t *v, unsigned n, struct floor_stat *s)
{
	*s = (struct floor_stat){ .median_ns = NAN, .p10_ns = NAN, .p90_ns = NAN };
	if (!n)
		return;
	qsort(v, n, sizeof(*v), cmp_u64);
	s->median_ns = n % 2 ? (double)v[n / 2] : ((double)v[n / 2 - 1] + (double)v[n / 2]) / 2;
	s->p10_ns = (double)v[n / 10];
	s->p90_ns = (double)v[n - 1 - n / 10];
	s->n = n;
}

/* ---- a ping-pong through a transport ---- */

struct pingpong {
	const struct transport *tp;
	struct tp_channel ch;
	struct tp_config cfg;
	_Atomic int stop;
	int cpu[2];			/* [TP_SERVER], [TP_CLIENT] */
	unsigned n;
	uint64_t *rtt;			/* n, the client's */
	_Atomic unsigned done;		/* ... of them measured */
	int ret[2];
};

static void *pp_side(void *arg, enum tp_role role)
{
	struct pingpong *p = arg;
	unsigned char buf[PP_MSG] = { 0 };
	struct tp_endpoint *ep = NULL;
	char err[ERRLEN];
	ssize_t r = floors_pin_self(p->cpu[role]);

	if (!r)
		r = p->tp->open(&p->ch, role, 0, &ep, err, sizeof(err));
	for (unsigned i = 0; !r && i < p->n; i++) {
		uint64_t t0 = now_ns();

		r = role == TP_CLIENT ? p->tp->send(ep, buf, sizeof(buf)) : 0;
		if (r >= 0)
			r = p->tp->recv(ep, buf, sizeof(buf));
		if (r > 0 && role == TP_SERVER)
			r = p->tp->send(ep, buf, sizeof(buf));
		r = r == (ssize_t)sizeof(buf) ? 0 : r < 0 ? r : -EPROTO;
		if (role == TP_CLIENT && !r) {
			p->rtt[i] = now_ns() - t0;
			atomic_store(&p->done, i + 1);
		}
	}
	if (ep)
		p->tp->close(ep);
	p->ret[role] = (int)r;
	if (r)
		atomic_store(&p->stop, 1);
	return NULL;
}

static void *pp_server(void *arg)
{
	return pp_side(arg, TP_SERVER);
}

static void *pp_client(void *arg)
{
	return pp_side(arg, TP_CLIENT);
}

/* Both threads joined by the deadline, else asked to stop (a spinning
 * transport looks at the stop word), then cancelled (one blocked in a
 * read does not). 0 or -ETIMEDOUT. */
int floors_join2(pthread_t t[2], _Atomic int *stop, uint64_t deadline_ns)
{
	struct timespec ts;
	int ret = 0;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += (time_t)(deadline_ns / NSEC_PER_SEC);
	ts.tv_nsec += (long)(deadline_ns % NSEC_PER_SEC);
	if (ts.tv_nsec >= (long)NSEC_PER_SEC) {
		ts.tv_sec++;
		ts.tv_nsec -= (long)NSEC_PER_SEC;
	}
	for (int i = 0; i < 2; i++) {
		if (!pthread_timedjoin_np(t[i], NULL, &ts))
			continue;
		atomic_store(stop, 1);
		ret = -ETIMEDOUT;
		ts.tv_sec += 1;
		if (pthread_timedjoin_np(t[i], NULL, &ts)) {
			pthread_cancel(t[i]);
			pthread_join(t[i], NULL);
		}
	}
	return ret;
}

/* n round trips of tp between server_cpu and client_cpu: their median and
 * spread in s (n 0 when it failed). */
static void pingpong_run(const char *name, int server_cpu, int client_cpu, unsigned n,
			 uint64_t deadline_ns, struct floor_stat *s)
{
	struct pingpong p = { .tp = transport_find(name), .n = n, .cpu = { server_cpu, client_cpu } };
	unsigned warm = n / 10, got;
	char err[ERRLEN];
	pthread_t t[2];
	int ret;

	floors_stat(NULL, 0, s);
	p.rtt = calloc(n, sizeof(*p.rtt));
	p.cfg = (struct tp_config){ .msg_size = PP_MSG, .clients = 1, .threads = true,
				    .stop = &p.stop };
	p.ch = (struct tp_channel){ .tp = p.tp, .cfg = &p.cfg };
	if (!p.tp || !p.rtt || server_cpu < 0 || client_cpu < 0) {
		free(p.rtt);
		return;
	}
	ret = p.tp->create(&p.ch, err, sizeof(err));
	if (!ret && pthread_create(&t[0], NULL, pp_server, &p))
		ret = -EAGAIN;
	if (!ret && pthread_create(&t[1], NULL, pp_client, &p)) {
		atomic_store(&p.stop, 1);
		pthread_cancel(t[0]);
		pthread_join(t[0], NULL);
		ret = -EAGAIN;
	}
	if (!ret)
		ret = floors_join2(t, &p.stop, deadline_ns);
	p.tp->destroy(&p.ch);
	/* what was measured by the deadline, when enough of it: a loaded
	 * machine's canary from fewer round trips, rather than none */
	got = atomic_load(&p.done);
	if (got >= warm + PP_MIN_N)
		floors_stat(p.rtt + warm, got - warm, s);
	free(p.rtt);
}

void canary_measure(const int cpus[2], struct canary *c)
{
	struct floor_stat cl, pipe;

	pingpong_run("cacheline", cpus[0], cpus[1], CANARY_CACHELINE_N, CANARY_DEADLINE_NS, &cl);
	pingpong_run("pipe", cpus[0], cpus[0], CANARY_PIPE_N, CANARY_DEADLINE_NS, &pipe);
	*c = (struct canary){ .on = true, .cpus = { cpus[0], cpus[1] },
			      .cacheline_rtt_ns = cl.median_ns, .pipe_rtt_ns = pipe.median_ns };
}

void floors_measure(const int cpus[2], struct floors *f)
{
	*f = (struct floors){ .on = true, .cpus = { cpus[0], cpus[1] } };
	pingpong_run("cacheline", cpus[0], cpus[1], FLOORS_CACHELINE_N, PP_DEADLINE_NS, &f->cacheline_rtt);
	floors_wake(cpus, false, &f->wake_idle);
	floors_wake(cpus, true, &f->wake_busy);
	floors_syscall(cpus[0], &f->syscall);
	if (cpus[1] < 0)
		snprintf(f->why, sizeof(f->why), "one CPU only (CPU %d): no cross-CPU floor", cpus[0]);
	else if (!f->cacheline_rtt.n || !f->wake_idle.n || !f->wake_busy.n || !f->syscall.n)
		snprintf(f->why, sizeof(f->why), "a measurement failed on CPUs %d and %d (not allowed, or a thread could not start)",
			 cpus[0], cpus[1]);
}

static double ratio_ge1(double a, double b)
{
	double r = a / b;

	return isfinite(r) && r > 0 ? fmax(r, 1 / r) : 0;
}

double canary_ratio(double cl_a, double pipe_a, double cl_b, double pipe_b, const char **what)
{
	(void)pipe_a, (void)pipe_b;
	/* the cache line's round trip alone tells the machine's state: the
	 * same-CPU pipe's also moves with whatever else shares that CPU (4.7x
	 * and 5.0x from start to end of one run at load 10, its cache line
	 * steady), so it is recorded and shown, never a verdict's block */
	*what = "cache-line RTT";
	return ratio_ge1(cl_a, cl_b);
}
