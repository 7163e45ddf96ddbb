// SPDX-License-Identifier: MIT
/* Unit tests of every doorbell, between threads and across fork: a ring
 * wakes a wait, a ring before the wait is kept (and counted), an unrung
 * wait times out (not early), a stop request or a signal ends a wait with
 * -EINTR (a signal alone: where the primitive allows), and thousands of ping-pong rounds lose no wakeup. Nothing here
 * asserts speed; every wait has a deadline far above any plausible delay,
 * so a timed-out wait while rung is a lost wakeup, i.e. a failure. */
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "ipclab/doorbell.h"

#define LONG_NS (20 * NSEC_PER_SEC)	/* "never" for a rung doorbell */
#define SHORT_NS (50 * NSEC_PER_MSEC)	/* the timeout test's timeout */
#define ROUNDS 2000

/* Two doorbells of the kind under test, in one shared mapping. */
struct pair {
	const struct doorbell *db;
	unsigned char *map;
	size_t span;
	void *a, *b;		/* a: main -> peer, b: peer -> main */
	int peer_err;		/* first failing round, or a wait's -errno */
};

static const struct doorbell *cur_db;	/* the doorbell under test */
/* The stop word every wait here is given (a runner hands its cell's). */
static _Atomic int stop_word;

static int pair_setup(void **state)
{
	struct pair *p = calloc(1, sizeof(*p));
	char err[ERRLEN];

	assert_non_null(p);
	p->db = cur_db;
	p->span = doorbell_span(p->db);
	p->map = mmap(NULL, 2 * p->span, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	assert_true(p->map != MAP_FAILED);
	p->a = p->map;
	p->b = p->map + p->span;
	if (p->db->create(p->a, err, sizeof(err)))
		fail_msg("%s create: %s", p->db->name, err);
	if (p->db->create(p->b, err, sizeof(err))) {
		p->db->destroy(p->a);
		fail_msg("%s create: %s", p->db->name, err);
	}
	*state = p;
	return 0;
}

static int pair_teardown(void **state)
{
	struct pair *p = *state;

	atomic_store(&stop_word, 0);	/* even after a failed test */
	p->db->destroy(p->a);
	p->db->destroy(p->b);
	munmap(p->map, 2 * p->span);
	free(p);
	return 0;
}

static int db_open(const struct doorbell *db, void *shm, enum db_side side)
{
	char err[ERRLEN];

	return db->open ? db->open(shm, side, err, sizeof(err)) : 0;
}

static void db_close(const struct doorbell *db, void *shm, enum db_side side)
{
	if (db->close)
		db->close(shm, side);
}

/* Main's sides: rings a, waits on b. The peer's: waits on a, rings b. */
static void open_main(struct pair *p)
{
	assert_int_equal(db_open(p->db, p->a, DB_RINGER), 0);
	assert_int_equal(db_open(p->db, p->b, DB_WAITER), 0);
}

static void close_main(struct pair *p)
{
	db_close(p->db, p->a, DB_RINGER);
	db_close(p->db, p->b, DB_WAITER);
}

/* The peer's half of a ping-pong: 0, or the failing round + 1. */
static int peer_rounds(struct pair *p, int rounds)
{
	for (int i = 0; i < rounds; i++) {
		int r = p->db->wait(p->a, LONG_NS, &stop_word);

		if (r)
			return i + 1;
		if (p->db->ring(p->b))
			return i + 1;
	}
	return 0;
}

static int main_rounds(struct pair *p, int rounds)
{
	for (int i = 0; i < rounds; i++) {
		int r = p->db->ring(p->a);

		if (r)
			fail_msg("%s round %d: ring: %s", p->db->name, i, strerror(-r));
		r = p->db->wait(p->b, LONG_NS, &stop_word);
		if (r)
			fail_msg("%s round %d: wait: %s (a lost wakeup if ETIMEDOUT)", p->db->name, i,
				 strerror(-r));
	}
	return 0;
}

static void *peer_thread(void *arg)
{
	struct pair *p = arg;

	if (db_open(p->db, p->a, DB_WAITER) || db_open(p->db, p->b, DB_RINGER))
		p->peer_err = -1;
	if (!p->peer_err)
		p->peer_err = peer_rounds(p, ROUNDS);
	db_close(p->db, p->a, DB_WAITER);
	db_close(p->db, p->b, DB_RINGER);
	return NULL;
}

/* A ring before the wait is kept; two rings satisfy two waits; a third
 * wait finds nothing. */
static void test_ring_before_wait(void **state)
{
	struct pair *p = *state;

	assert_int_equal(db_open(p->db, p->a, DB_WAITER), 0);
	assert_int_equal(db_open(p->db, p->a, DB_RINGER), 0);
	assert_int_equal(p->db->ring(p->a), 0);
	assert_int_equal(p->db->wait(p->a, LONG_NS, &stop_word), 0);
	assert_int_equal(p->db->ring(p->a), 0);
	assert_int_equal(p->db->ring(p->a), 0);
	assert_int_equal(p->db->wait(p->a, LONG_NS, &stop_word), 0);
	assert_int_equal(p->db->wait(p->a, LONG_NS, &stop_word), 0);
	assert_int_equal(p->db->wait(p->a, 1 * NSEC_PER_MSEC, &stop_word), -ETIMEDOUT);
	db_close(p->db, p->a, DB_WAITER);
	db_close(p->db, p->a, DB_RINGER);
}

/* An unrung wait times out, and not before its time. */
static void test_timeout(void **state)
{
	struct pair *p = *state;
	uint64_t t0, dt;

	assert_int_equal(db_open(p->db, p->a, DB_WAITER), 0);
	t0 = now_ns();
	assert_int_equal(p->db->wait(p->a, SHORT_NS, &stop_word), -ETIMEDOUT);
	dt = now_ns() - t0;
	if (dt < SHORT_NS - NSEC_PER_MSEC)
		fail_msg("%s: timed out after %llu ns, before the %llu ns asked", p->db->name,
			 (unsigned long long)dt, (unsigned long long)SHORT_NS);
	db_close(p->db, p->a, DB_WAITER);
}

/* A stop request (the wait's stop word) ends an unrung wait with -EINTR;
 * a rung one still wins. */
static void test_stop_requested(void **state)
{
	struct pair *p = *state;

	assert_int_equal(db_open(p->db, p->a, DB_WAITER), 0);
	assert_int_equal(db_open(p->db, p->a, DB_RINGER), 0);
	atomic_store(&stop_word, 1);
	assert_int_equal(p->db->wait(p->a, LONG_NS, &stop_word), -EINTR);
	/* the word is the caller's: a wait given another (none) is not stopped */
	assert_int_equal(p->db->wait(p->a, 1 * NSEC_PER_MSEC, NULL), -ETIMEDOUT);
	assert_int_equal(p->db->ring(p->a), 0);
	assert_int_equal(p->db->wait(p->a, LONG_NS, &stop_word), 0);
	atomic_store(&stop_word, 0);
	db_close(p->db, p->a, DB_WAITER);
	db_close(p->db, p->a, DB_RINGER);
}

/* ROUNDS of ping-pong between two threads. */
static void test_thread_pingpong(void **state)
{
	struct pair *p = *state;
	pthread_t t;

	open_main(p);
	assert_int_equal(pthread_create(&t, NULL, peer_thread, p), 0);
	main_rounds(p, ROUNDS);
	pthread_join(t, NULL);
	if (p->peer_err)
		fail_msg("%s: peer thread failed (round %d)", p->db->name, p->peer_err);
	close_main(p);
}

/* ROUNDS of ping-pong with a forked child. */
static void test_fork_pingpong(void **state)
{
	struct pair *p = *state;
	pid_t pid;
	int status;

	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int r = db_open(p->db, p->a, DB_WAITER) || db_open(p->db, p->b, DB_RINGER);

		_exit(r ? 2 : peer_rounds(p, ROUNDS) ? 1 : 0);
	}
	open_main(p);
	main_rounds(p, ROUNDS);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	close_main(p);
}

/* A child rings three times and exits before the parent waits at all. */
static void test_fork_ring_before_wait(void **state)
{
	struct pair *p = *state;
	pid_t pid;
	int status;

	assert_int_equal(db_open(p->db, p->a, DB_WAITER), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int r = db_open(p->db, p->a, DB_RINGER);

		for (int i = 0; !r && i < 3; i++)
			r = p->db->ring(p->a);
		_exit(r ? 1 : 0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	for (int i = 0; i < 3; i++)
		assert_int_equal(p->db->wait(p->a, LONG_NS, &stop_word), 0);
	assert_int_equal(p->db->wait(p->a, 1 * NSEC_PER_MSEC, &stop_word), -ETIMEDOUT);
	db_close(p->db, p->a, DB_WAITER);
}

static volatile sig_atomic_t set_stop_flag;

static void on_sigusr1(int sig)
{
	(void)sig;
	if (set_stop_flag)
		atomic_store(&stop_word, 1);
}

struct intr_arg {
	struct pair *p;
	_Atomic int done;
	int ret;
};

static void *intr_waiter(void *arg)
{
	struct intr_arg *a = arg;

	if (db_open(a->p->db, a->p->a, DB_WAITER))
		a->ret = 1;
	else
		a->ret = a->p->db->wait(a->p->a, 2 * NSEC_PER_SEC, &stop_word);
	db_close(a->p->db, a->p->a, DB_WAITER);
	atomic_store(&a->done, 1);
	return NULL;
}

/* Signal a waiting thread (a handler without SA_RESTART, as the runner's)
 * every millisecond until its wait is over: no guess of when it slept. */
static int interrupt_wait(struct pair *p, bool stop_flag)
{
	struct sigaction sa = { .sa_handler = on_sigusr1 }, old;
	struct intr_arg a = { .p = p };
	struct timespec ms = { 0, 1000000 };
	pthread_t t;

	set_stop_flag = stop_flag;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, &old);
	assert_int_equal(pthread_create(&t, NULL, intr_waiter, &a), 0);
	while (!atomic_load(&a.done)) {
		pthread_kill(t, SIGUSR1);
		nanosleep(&ms, NULL);
	}
	pthread_join(t, NULL);
	sigaction(SIGUSR1, &old, NULL);
	atomic_store(&stop_word, 0);
	return a.ret;
}

/* A signal handler that runs while the wait sleeps ends it with -EINTR,
 * except where the primitive cannot be interrupted (those time out). */
static void test_signal_interrupts(void **state)
{
	struct pair *p = *state;
	int want = p->db->flags & DB_UNINTERRUPTIBLE ? -ETIMEDOUT : -EINTR;

	assert_int_equal(interrupt_wait(p, false), want);
}

/* The runner's stop signal (its handler sets the stop word) ends every
 * doorbell's wait with -EINTR. */
static void test_stop_signal(void **state)
{
	assert_int_equal(interrupt_wait(*state, true), -EINTR);
}

static const struct CMUnitTest db_tests[] = {
	cmocka_unit_test_setup_teardown(test_ring_before_wait, pair_setup, pair_teardown),
	cmocka_unit_test_setup_teardown(test_timeout, pair_setup, pair_teardown),
	cmocka_unit_test_setup_teardown(test_stop_requested, pair_setup, pair_teardown),
	cmocka_unit_test_setup_teardown(test_thread_pingpong, pair_setup, pair_teardown),
	cmocka_unit_test_setup_teardown(test_fork_pingpong, pair_setup, pair_teardown),
	cmocka_unit_test_setup_teardown(test_fork_ring_before_wait, pair_setup, pair_teardown),
	cmocka_unit_test_setup_teardown(test_signal_interrupts, pair_setup, pair_teardown),
	cmocka_unit_test_setup_teardown(test_stop_signal, pair_setup, pair_teardown),
};

static void test_registry(void **state)
{
	(void)state;
	assert_true(n_doorbells >= 8);
	for (size_t i = 0; i < n_doorbells; i++) {
		const struct doorbell *db = doorbells[i];

		assert_non_null(db->name);
		assert_non_null(db->summary);
		assert_non_null(db->create);
		assert_non_null(db->wait);
		assert_non_null(db->ring);
		assert_non_null(db->destroy);
		assert_true(db->shm_size > 0);
		assert_ptr_equal(doorbell_find(db->name), db);
	}
	assert_null(doorbell_find("no-such-doorbell"));
}

int main(int argc, char **argv)
{
	const struct CMUnitTest reg[] = { cmocka_unit_test(test_registry) };
	int failed = cmocka_run_group_tests_name("registry", reg, NULL, NULL);

	/* ./test_doorbell [name]: only that doorbell */
	for (size_t i = 0; i < n_doorbells; i++) {
		if (argc > 1 && strcmp(argv[1], doorbells[i]->name))
			continue;
		cur_db = doorbells[i];
		failed += _cmocka_run_group_tests(cur_db->name, db_tests, ARRAY_SIZE(db_tests),
						  NULL, NULL);
	}
	return failed ? 1 : 0;
}
