// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * Calls that must not wait do not wait for other users' work.  A poll()
 * with a zero timeout and an O_NONBLOCK read() of a ringed file answer
 * from what they can see; before, both waited for a clock set to be
 * brought to every file that ever held a cancel-on-set timer, which any
 * user can make 10^5 files long.
 *
 *  - zero_timeout_calls_during_clock_set_walks: while CLOCK_REALTIME is
 *    set every 100 ms, a thread polls a ringed file (which has a
 *    cancel-on-set timer of its own) with a zero timeout and reads it
 *    O_NONBLOCK, and keeps the longest call.  First with that file alone
 *    on the list a set walks, then with EMPTY_FILES more that each once
 *    held a cancel-on-set timer.  The longest call with them may be
 *    SLOW_FACTOR times the longest without (SLOW_FLOOR_NS at least, for
 *    the host's hiccups under TCG); measured again from scratch once
 *    before it fails.  On stock 6.1 under TCG the calls took about as
 *    long as the walk of every file, 100 ms and more with 10^5 files.
 *
 * Needs root (the clock, RLIMIT_NOFILE).
 */
#define _GNU_SOURCE
#include <poll.h>
#include <pthread.h>
#include <sys/resource.h>

#include "kselftest_harness.h"
#include "helpers.h"

#define EMPTY_FILES		100000
#define EMPTY_FILES_DEBUG	4000
#define SETS			8
#define SET_EVERY_NS		(100 * NSEC_PER_MSEC)
#define SLOW_FACTOR		4
#define SLOW_FLOOR_NS		(40 * NSEC_PER_MSEC)
#define FAR_NS			(3600 * NSEC_PER_SEC)

/* A file with a cancel-on-set timer; cancelled again if @empty. */
static int cos_file(bool empty)
{
	__u64 id;
	int fd = t_open(O_NONBLOCK);

	if (fd < 0)
		return fd;
	if (t_arm(fd, CLOCK_REALTIME,
		   QTIMER_F_ABSTIME | QTIMER_F_CANCEL_ON_SET,
		   t_now(CLOCK_REALTIME) + FAR_NS, 0, 1, &id) ||
	    (empty && t_cancel(fd, id) != QTIMER_CANCEL_ARMED)) {
		close(fd);
		return -1;
	}
	return fd;
}

struct prober {
	int fd;
	_Atomic bool stop;
	__s64 worst_poll, worst_read;
	long calls;
};

static void *prober_fn(void *arg)
{
	struct prober *p = arg;
	struct qtimer_record rec;

	while (!atomic_load(&p->stop)) {
		struct pollfd pfd = { .fd = p->fd, .events = POLLIN };
		__s64 t0 = t_now(CLOCK_MONOTONIC), t1, t2;

		poll(&pfd, 1, 0);
		t1 = t_now(CLOCK_MONOTONIC);
		if (read(p->fd, &rec, sizeof(rec)) < 0 && errno != EAGAIN)
			break;
		t2 = t_now(CLOCK_MONOTONIC);
		if (t1 - t0 > p->worst_poll)
			p->worst_poll = t1 - t0;
		if (t2 - t1 > p->worst_read)
			p->worst_read = t2 - t1;
		p->calls++;
	}
	return NULL;
}

/* SETS sets of CLOCK_REALTIME while a prober runs: its worst call. */
static __s64 probe_sets(struct __test_metadata *_metadata, int fd,
			const char *what)
{
	struct prober p = { .fd = fd };
	__s64 rt0 = t_now(CLOCK_REALTIME), mono0 = t_now(CLOCK_MONOTONIC);
	pthread_t thread;
	int i, ret = 0;

	if (pthread_create(&thread, NULL, prober_fn, &p))
		return -1;
	for (i = 0; i < SETS && !ret; i++) {
		t_sleep_ns(SET_EVERY_NS);
		/* A millisecond either way: a set must move the offset. */
		ret = t_set_realtime(t_now(CLOCK_REALTIME) + (i % 2 ? -1 : 1) * NSEC_PER_MSEC);
	}
	t_sleep_ns(SET_EVERY_NS);
	atomic_store(&p.stop, true);
	pthread_join(thread, NULL);
	t_restore_realtime(rt0, mono0);
	EXPECT_EQ(0, ret) TH_LOG("setting CLOCK_REALTIME: %s", strerror(-ret));
	TH_LOG("%s: %ld calls, longest poll() %.2f ms, read() %.2f ms", what,
	       p.calls, p.worst_poll / 1e6, p.worst_read / 1e6);
	return p.worst_poll > p.worst_read ? p.worst_poll : p.worst_read;
}

FIXTURE(nowait) {};
FIXTURE_SETUP(nowait) {}
FIXTURE_TEARDOWN(nowait) {}

TEST_F_TIMEOUT(nowait, zero_timeout_calls_during_clock_set_walks, 180)
{
	long n = t_debug_kernel() ? EMPTY_FILES_DEBUG : EMPTY_FILES, i, nr = 0;
	struct rlimit rl = { n + 256, n + 256 };
	__s64 control, attack, bound;
	struct t_ring r;
	int *fds, fd, round;

	if (!t_ring_offered())
		SKIP(return, "no record ring: QTIMER_FEAT_RING not offered");
	if (t_set_realtime(t_now(CLOCK_REALTIME)) == -EPERM)
		SKIP(return, "cannot set CLOCK_REALTIME (needs CAP_SYS_TIME)");
	ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &rl));
	fds = calloc(n, sizeof(*fds));
	ASSERT_NE(NULL, fds);
	fd = cos_file(false);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, t_ring_map(&r, fd, 64));

	for (round = 1; round <= 2; round++) {
		control = probe_sets(_metadata, fd, "the file alone");
		ASSERT_LE(0, control);
		for (; nr < n; nr++) {
			fds[nr] = cos_file(true);
			ASSERT_LE(0, fds[nr]) TH_LOG("file %ld", nr);
		}
		attack = probe_sets(_metadata, fd, "with the other files");
		ASSERT_LE(0, attack);
		bound = SLOW_FACTOR * control;
		if (bound < SLOW_FLOOR_NS * (t_debug_kernel() ? 2 : 1))
			bound = SLOW_FLOOR_NS * (t_debug_kernel() ? 2 : 1);
		TH_LOG("round %d: %ld other files, longest call %.2f ms, bound %.2f ms",
		       round, n, attack / 1e6, bound / 1e6);
		if (attack <= bound)
			break;
		for (i = 0; i < nr; i++)
			close(fds[i]);
		nr = 0;
	}
	EXPECT_GE(bound, attack)
		TH_LOG("a zero-timeout call waited for other files' clock-set walk");
	for (i = 0; i < nr; i++)
		close(fds[i]);
	free(fds);
	t_ring_unmap(&r);
	close(fd);
}

TEST_HARNESS_MAIN
