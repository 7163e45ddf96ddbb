// SPDX-License-Identifier: MIT
/*
 * eventfd.c - event-loop mode: the consumer's eventfd sits in epoll; the
 * producer writes it only after the consumer announced sleep with
 * ipcring_prepare_wait(), once per sleep episode, and on close.
 */
#include <errno.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "tutil.h"

static int ready_events(int ep, int timeout_ms)
{
	struct epoll_event ev;

	return epoll_wait(ep, &ev, 1, timeout_ms);
}

static uint64_t wakes(struct ipcring *r)
{
	struct ipcring_stats st;

	T_EQ(ipcring_stats(r, &st), 0);
	return st.producer.wakes;
}

static void drain(struct ipcring *r, int n)
{
	uint32_t v;
	size_t len;

	for (int i = 0; i < n; i++)
		T_EQ(ipcring_read(r, &v, sizeof(v), &len, 0), 1);
	T_EQ(ipcring_read(r, &v, sizeof(v), &len, 0), -EAGAIN);
}

int main(void)
{
	struct ipcring_opts o = { .capacity = 8192, .wait_mode = IPCRING_WAIT_EVENTFD };
	struct epoll_event ev = { .events = EPOLLIN };
	const void *m;
	struct t_pair p;
	uint32_t v = 7;
	size_t len;
	int ep;

	t_pair_open(&p, &o);
	ep = epoll_create1(EPOLL_CLOEXEC);
	T_ASSERT(ep >= 0 && ipcring_fd(p.cons) >= 0);
	T_EQ(epoll_ctl(ep, EPOLL_CTL_ADD, ipcring_fd(p.cons), &ev), 0);
	T_EQ(ipcring_fd(p.prod), -EINVAL);

	/* consumer awake (never announced): no eventfd writes at all */
	for (int i = 0; i < 100; i++)
		T_EQ(ipcring_write(p.prod, &v, sizeof(v), 0, 0), 0);
	T_EQ(wakes(p.prod), 0);
	T_EQ(ready_events(ep, 0), 0);
	T_EQ(ipcring_prepare_wait(p.cons), 1);		/* records pending */
	drain(p.cons, 100);

	/* announced: one write wakes the loop, later writes do not syscall */
	T_EQ(ipcring_prepare_wait(p.cons), 0);
	T_EQ(ready_events(ep, 0), 0);
	for (int i = 0; i < 10; i++)
		T_EQ(ipcring_write(p.prod, &v, sizeof(v), 0, 0), 0);
	T_EQ(ready_events(ep, 1000), 1);
	T_EQ(wakes(p.prod), 1);
	drain(p.cons, 10);
	T_EQ(ipcring_prepare_wait(p.cons), 0);		/* drains the eventfd */
	T_EQ(ready_events(ep, 0), 0);

	/* batched commits wake only at the flush */
	T_EQ(ipcring_write(p.prod, &v, sizeof(v), IPCRING_MORE, 0), 0);
	T_EQ(ready_events(ep, 0), 0);
	T_EQ(ipcring_flush(p.prod), 0);
	T_EQ(ready_events(ep, 1000), 1);
	T_EQ(wakes(p.prod), 2);
	drain(p.cons, 1);

	/* close wakes the loop; the consumer then sees end of stream */
	T_EQ(ipcring_prepare_wait(p.cons), 0);
	ipcring_close(p.prod);
	p.prod = NULL;
	T_EQ(ready_events(ep, 1000), 1);
	T_EQ(ipcring_prepare_wait(p.cons), 1);
	T_EQ(ipcring_peek(p.cons, &m, &len, 0), 0);
	close(ep);
	t_pair_close(&p);
	return 0;
}
