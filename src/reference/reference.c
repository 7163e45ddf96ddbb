// SPDX-License-Identifier: MIT
/* --reference: a cell's bare loop. The same transport's plain calls (its
 * channel from channels.c, shm.c or libs.c), the same sizes, warm-up and
 * count (with -d: the count the cell moved), direction, think time,
 * placement, scheduling and endpoint kind as the cell, and nothing else:
 * no header, no histogram, no checks, no sampling beyond keeping up to
 * REF_MAX_SAMPLES RTTs for the median. Each side's loop is loop.c's;
 * processes are forked here and watched here (waitpid, a deadline);
 * threads are this file's own. */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ipclab/cleanup.h"
#include "ipclab/experiment.h"
#include "ipclab/pattern.h"
#include "ipclab/reference.h"
#include "ipclab/result.h"
#include "ipclab/runner.h"
#include "ref_int.h"

bool reference_exists(const struct cell *c, char *why, size_t whylen)
{
	if (!c->tp->reference)
		snprintf(why, whylen, "no reference loop for %s", c->tp->name);
	else if (c->pat->reference == PAT_REF_NONE)
		snprintf(why, whylen, "no reference loop for the %s pattern", c->pat->name);
	else if (c->clients > 1)
		snprintf(why, whylen,
			 "a reference is one client and one server; with --clients %u the cell's "
			 "server serves them in its own order, which one loop cannot mirror",
			 c->clients);
	else if (c->rate > 0)
		snprintf(why, whylen,
			 "a reference runs unpaced; --rate %s paces the cell's sends by its own "
			 "clock (each round trip timed from the actual send, its lateness beside "
			 "it), which one loop cannot mirror",
			 c->rate_text);
	else if (!ref_chan_mirrors(c, why, whylen))
		return false;
	else
		return true;
	return false;
}

static const char *const role_name[2] = { "server", "client" };

static uint64_t ref_deadline(const struct cell *c)
{
	uint64_t lim = c->max_time_ns ? c->max_time_ns : 600ull * 1000000000ull;

	return lim > UINT64_MAX - ref_now() ? UINT64_MAX : ref_now() + lim;
}

/* The watcher's sleep between looks at its sides: 20 ms, as the runner's
 * watchdog (a watcher that woke every millisecond would take more of the
 * sides' CPUs than the cell's does); 1 ms while a dead side's peer ends. */
static void nap_ms(long ms)
{
	struct timespec ts = { 0, ms * 1000000 };

	nanosleep(&ts, NULL);
}

static void nap(void)
{
	nap_ms(20);
}

/* Threads: the peer of a side that failed (or both, past the deadline) is
 * cancelled; every blocking call of the loops is a cancellation point. */
static int run_threads(struct ref_side *sd, char *why, size_t whylen)
{
	pthread_t th[2];
	bool live[2] = { false, false };
	uint64_t deadline = ref_deadline(sd[0].c);
	int ret = 0;

	for (int i = 0; i < 2; i++) {
		int e = pthread_create(&th[i], NULL, ref_side_thread, &sd[i]);

		if (e) {
			snprintf(why, whylen, "reference: pthread_create: %s", strerror(e));
			ret = -e;
			break;
		}
		live[i] = true;
	}
	if (ret && live[0])
		pthread_cancel(th[0]);
	while (live[0] || live[1]) {
		for (int i = 0; i < 2; i++) {
			if (!live[i] || pthread_tryjoin_np(th[i], NULL))
				continue;
			live[i] = false;
			if (sd[0].out->status[i] && live[!i]) {
				pthread_cancel(th[!i]);
				pthread_join(th[!i], NULL);
				live[!i] = false;
			}
		}
		if ((live[0] || live[1]) && (ref_now() > deadline || runner_interrupted)) {
			for (int i = 0; i < 2; i++)
				if (live[i]) {
					pthread_cancel(th[i]);
					pthread_join(th[i], NULL);
					live[i] = false;
				}
			if (runner_interrupted)
				return -EINTR;
			snprintf(why, whylen, "reference timed out after %.0f s",
				 (double)sd[0].c->max_time_ns / 1e9);
			return -ETIMEDOUT;
		}
		if (live[0] || live[1])
			nap();
	}
	return ret;
}

/* Processes: forked and reaped here, killed when the peer dies, the run
 * is interrupted or the deadline passes. */
static int run_procs(struct ref_side *sd, char *why, size_t whylen)
{
	pid_t pid[2] = { -1, -1 };
	int h[2] = { -1, -1 }, ret = 0, live = 0, parent = getpid();
	uint64_t deadline = ref_deadline(sd[0].c);

	for (int i = 0; i < 2; i++) {
		if ((h[i] = cleanup_add(CL_PID, "")) < 0) {
			ret = h[i];
			break;
		}
		pid[i] = fork();
		if (pid[i] < 0) {
			ret = -errno;
			cleanup_forget(h[i]);
			h[i] = -1;
			snprintf(why, whylen, "reference: fork: %s", strerror(-ret));
			break;
		}
		if (pid[i] == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			if (getppid() != parent)
				_exit(1);
			prctl(PR_SET_NAME, i == REF_SERVER ? "ref-server" : "ref-client");
			signal(SIGINT, SIG_IGN);
			signal(SIGHUP, SIG_IGN);
			signal(SIGQUIT, SIG_IGN);
			signal(SIGPIPE, SIG_IGN);
			signal(SIGTERM, SIG_DFL);
			ref_chan_close(sd[i].ch, !i);
			_exit(ref_side_main(&sd[i]) ? 1 : 0);
		}
		cleanup_set_id(h[i], pid[i]);
		live++;
	}
	ref_chan_close(sd[0].ch, -1); /* the sides hold them now: EOF when one dies */
	int st[2] = { 0, 0 };
	bool killed[2] = { false, false }, bad = false;

	while (live) {
		for (int i = 0; i < 2; i++) {
			if (pid[i] <= 0 || waitpid(pid[i], &st[i], WNOHANG) != pid[i])
				continue;
			live--;
			cleanup_forget(h[i]);
			if (WIFSIGNALED(st[i]) || WEXITSTATUS(st[i]))
				bad = true;
			/* the peer of one that died: killed, unless it ends too
			 * (EOF) and says which of the two went first */
			if (bad && pid[!i] > 0 && !killed[!i]) {
				for (int k = 0;
				     k < 200 && waitpid(pid[!i], &st[!i], WNOHANG) != pid[!i]; k++)
					nap_ms(1);
				if (WIFEXITED(st[!i]) || WIFSIGNALED(st[!i])) {
					live--;
					cleanup_forget(h[!i]);
					pid[!i] = -pid[!i];
				} else {
					kill(pid[!i], SIGKILL);
					killed[!i] = true;
				}
			}
			pid[i] = -pid[i];
		}
		if (live && (ref_now() > deadline || runner_interrupted)) {
			for (int i = 0; i < 2; i++)
				if (pid[i] > 0) {
					kill(pid[i], SIGKILL);
					killed[i] = true;
				}
			if (!ret && runner_interrupted)
				ret = -EINTR;
			else if (!ret) {
				snprintf(why, whylen, "reference timed out after %.0f s",
					 (double)sd[0].c->max_time_ns / 1e9);
				ret = -ETIMEDOUT;
			}
			deadline = UINT64_MAX;
		}
		if (live)
			nap();
	}
	/* who failed first: one killed by someone else, then one that gave up */
	for (int pass = 0; !ret && pass < 2; pass++)
		for (int i = 0; !ret && i < 2; i++) {
			if (pass == 0 && WIFSIGNALED(st[i]) && !killed[i]) {
				snprintf(why, whylen, "reference %s (pid %d) died: killed by signal %d",
					 role_name[i], -(int)pid[i], WTERMSIG(st[i]));
				ret = -ECHILD;
			} else if (pass == 1 && WIFEXITED(st[i]) && WEXITSTATUS(st[i])) {
				snprintf(why, whylen, "reference %s: %s", role_name[i],
					 sd[0].out->status[i] ? sd[0].out->err[i] :
								"exited with status 1");
				ret = -EIO;
			}
		}
	return ret;
}

/* One reference run, top to bottom (long: every step's failure lands in r's
 * reason and the one teardown at the end, so the steps stay in one place). */
int reference_run(const struct cell *c, const struct result *cell, struct ref_result *r)
{
	struct ref_chan ch;
	struct ref_side sd[2] = { { 0 }, { 0 } };
	struct ref_out *out;
	char why[ERRLEN] = "";
	int ret;

	r->on = true;
	r->status = REF_FAILED;
	r->msgs_per_s = r->lat_mean_ns = NAN;
	r->lat_p50_ns = 0;
	if (!reference_exists(c, r->reason, sizeof(r->reason))) {
		r->status = REF_NONE;
		return 0;
	}
	/* -d: the count the cell moved in its window */
	uint64_t count = c->count ? c->count : cell && cell->status == RES_OK ? cell->msgs : 0;

	if (!count) {
		snprintf(r->reason, sizeof(r->reason),
			 "reference: -d runs as many messages as the cell moved, and it moved none");
		return 0;
	}
	out = mmap(NULL, sizeof(*out), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (out == MAP_FAILED) {
		snprintf(r->reason, sizeof(r->reason), "reference: mmap: %s", strerror(errno));
		return 0;
	}
	memset(out, 0, sizeof(*out));
	ret = ref_chan_open(&ch, c, why, sizeof(why));
	/* stream -O dir=s2c: the server floods */
	bool s2c = c->pat->reference == PAT_REF_STREAM && ref_pat_opt(c, "dir") == 1;

	for (int i = 0; !ret && i < 2; i++) {
		sd[i] = (struct ref_side){ .c = c,
					   .ch = &ch,
					   .out = out,
					   .role = i,
					   .count = count,
					   .flood = (i == REF_CLIENT) != s2c,
					   .pingpong = c->pat->reference == PAT_REF_PINGPONG };
		sd[i].buf = aligned_alloc(64, (c->size + 63) / 64 * 64);
		if (sd[i].buf)
			memset(sd[i].buf, 0x5a, c->size);
		if (i == REF_CLIENT && sd[i].pingpong)
			sd[i].samples = malloc(REF_MAX_SAMPLES * sizeof(uint64_t));
		if (!sd[i].buf || (i == REF_CLIENT && sd[i].pingpong && !sd[i].samples)) {
			snprintf(why, sizeof(why), "reference: out of memory");
			ret = -ENOMEM;
		}
	}
	if (!ret)
		ret = c->threads ? run_threads(sd, why, sizeof(why)) : run_procs(sd, why, sizeof(why));
	if (!ret && c->threads)
		for (int i = 0; i < 2 && !ret; i++)
			if (out->status[i]) {
				snprintf(why, sizeof(why), "reference %s: %s", role_name[i],
					 out->err[i]);
				ret = -EIO;
			}
	if (!ret) {
		r->status = REF_OK;
		r->msgs_per_s = out->msgs_per_s;
		r->lat_mean_ns = out->lat_mean_ns;
		r->lat_p50_ns = out->lat_p50_ns;
		r->reason[0] = '\0';
	} else {
		snprintf(r->reason, sizeof(r->reason), "%s", why[0] ? why : strerror(-ret));
	}
	ref_chan_destroy(&ch);
	for (int i = 0; i < 2; i++) {
		free(sd[i].buf);
		free(sd[i].samples);
	}
	munmap(out, sizeof(*out));
	return ret == -EINTR ? -EINTR : 0;
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median_of(double *v, unsigned n)
{
	qsort(v, n, sizeof(*v), cmp_dbl);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

void reference_fold(const struct result *reps, unsigned n, struct ref_result *into)
{
	double a[n], b[n], p[n];
	unsigned k = 0;

	*into = reps[0].ref;
	for (unsigned i = 0; i < n; i++) {
		const struct ref_result *x = &reps[i].ref;

		if (x->status != REF_OK && into->status == REF_OK)
			*into = *x; /* a failed (or missing) one decides, with its reason */
		if (x->status == REF_OK) {
			a[k] = x->msgs_per_s;
			b[k] = x->lat_mean_ns;
			p[k++] = (double)x->lat_p50_ns;
		}
	}
	into->pairs = 0;
	for (unsigned i = 0; i < n && into->pairs < REF_MAX_PAIRS; i++)
		for (unsigned j = 0; j < reps[i].ref.pairs && into->pairs < REF_MAX_PAIRS; j++) {
			into->order[into->pairs][0] = reps[i].ref.order[j][0];
			into->order[into->pairs++][1] = reps[i].ref.order[j][1];
		}
	if (into->status == REF_OK && k) {
		into->msgs_per_s = median_of(a, k);
		into->lat_mean_ns = median_of(b, k);
		into->lat_p50_ns = (uint64_t)median_of(p, k);
	}
}

void reference_ratio(struct result *r)
{
	struct ref_result *x = &r->ref;
	bool rtt = r->lat_kind == LAT_RTT;

	x->ratio = x->overhead_pct = NAN;
	if (x->status != REF_OK || r->status != RES_OK)
		return;
	if (rtt && r->lat_samples && x->lat_mean_ns > 0) {
		x->ratio = r->lat_mean_ns / x->lat_mean_ns;
		x->overhead_pct = 100.0 * (x->ratio - 1);
	} else if (!rtt && x->msgs_per_s > 0 && r->msgs_per_s > 0) {
		x->ratio = r->msgs_per_s / x->msgs_per_s;
		x->overhead_pct = 100.0 * (1 / x->ratio - 1);
	}
}

const struct reference_ops reference_ops = {
	.run = reference_run,
	.fold = reference_fold,
	.ratio = reference_ratio,
};
