// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * Latency under attack (latency.h) by clock sets:
 *
 *  - clock_set_walks_file: set CLOCK_REALTIME over and over while a file
 *    holds 10^6 timers and a cancel-on-set timer: each set walks the file.
 *    Its baseline is the same sets with a file of CONTROL_TIMERS.
 *  - clock_set_wakes_watchers: set CLOCK_REALTIME once while a file of
 *    1024 cancel-on-set timers is watched by 1000 epoll instances: each
 *    cancellation queued used to wake every watcher.  Its baseline is the
 *    same set with no watchers.
 *  - clock_set_walks_many_files: set CLOCK_REALTIME once while 2 x 10^5
 *    files that each had a cancel-on-set timer, and have none left, are on
 *    the list a set walks.  Its baseline is the same set with one file.
 */
#define _GNU_SOURCE
#include <poll.h>
#include <sys/epoll.h>
#include <sys/resource.h>

#include "kselftest_harness.h"
#include "latency.h"

/*
 * The clock is set to what it reads, counted on the monotonic clock, and a
 * millisecond ahead every other time: so that however many sets move it by
 * nothing overall, and yet each moves CLOCK_REALTIME against
 * CLOCK_MONOTONIC, which is what a set is (to the module as to timerfd;
 * two sets in a row to "what it reads" may leave that offset where it was,
 * to the nanosecond, and then nothing was set).  The notifier runs on the
 * CPU that sets the clock, and queues its work there.  Each set walks
 * @fd, which the cancellation record of the timer it arms there for it
 * proves.  For ATTACK_NS, at least one set; returns how many.
 */
static long clock_sets(struct __test_metadata *_metadata, int fd,
		       __u64 cookie)
{
	__s64 offset = t_now(CLOCK_REALTIME) - t_now(CLOCK_MONOTONIC);
	__s64 deadline = t_now(CLOCK_MONOTONIC) + ATTACK_NS;
	long sets = 0;

	do {
		struct qtimer_record rec;
		__u64 id;

		ASSERT_EQ(0, t_arm(fd, CLOCK_REALTIME,
				    QTIMER_F_ABSTIME | QTIMER_F_CANCEL_ON_SET,
				    t_now(CLOCK_REALTIME) + FAR_NS, 0, cookie,
				    &id));
		ASSERT_EQ(0, t_set_realtime(t_now(CLOCK_MONOTONIC) + offset +
					     (sets & 1) * NSEC_PER_MSEC));
		/* The walk is over when the cancellation record is queued. */
		ASSERT_EQ(1, t_collect(fd, &rec, 1, QT_ARRIVE_MS));
		ASSERT_EQ(id, rec.id);
		ASSERT_EQ(QTIMER_REC_CANCELED | QTIMER_REC_LAST, rec.flags);
		sets++;
	} while (t_now(CLOCK_MONOTONIC) < deadline);
	return sets;
}

static void run_clock_sets(struct __test_metadata *_metadata,
			   FIXTURE_DATA(latency) *self)
{
	self->ops = clock_sets(_metadata, self->fds[0], self->n);
}

/*
 * The baseline: the same sets, from the victim's CPU, with a file of
 * CONTROL_TIMERS.  A clock set interrupts every CPU and waits for them,
 * and under TCG a vCPU the host took away answers late: in the logs, a
 * busy host's sets ran at 2-3 a second against 10-23 on a quiet one.  An
 * idle baseline has none of that, so host load looked like a long walk.
 */
static void control_clock_sets(struct __test_metadata *_metadata,
			       FIXTURE_DATA(latency) *self)
{
	int fd = control_file(_metadata, self, t_now(CLOCK_MONOTONIC) + FAR_NS);

	ASSERT_EQ(0, t_pin_self(self->cpu));
	clock_sets(_metadata, fd, CONTROL_TIMERS);
	ASSERT_EQ(0, t_pin_self(self->home_cpu));
	control_end(self);
}

ATTACK_TEST(clock_set_walks_file,
	.what = "CLOCK_REALTIME sets with a cancel-on-set timer",
	.idle = control_clock_sets,
	.idle_what = "the same sets with a small file",
	.prepare = prepare_far,
	.run = run_clock_sets,
	.ops = "sets")

/*
 * A file of WATCHED_COS cancel-on-set timers (one hold of the clock set's
 * walk) in WATCHERS epoll instances, which any user may make.  The walk
 * queued each cancellation with a wakeup of the file's waiters, which
 * calls every watcher: WATCHED_COS x WATCHERS callbacks in one hold,
 * interrupts off.
 */
#define WATCHED_COS	1024
#define WATCHERS	1000

static int watchers[WATCHERS];

static void arm_cos_op(struct qtimer_op *op, long k, void *arg)
{
	*op = t_op(CLOCK_REALTIME, QTIMER_F_ABSTIME | QTIMER_F_CANCEL_ON_SET,
		    *(__s64 *)arg, 0, k);
}

static int cos_file(struct __test_metadata *_metadata)
{
	__s64 when = t_now(CLOCK_REALTIME) + FAR_NS;
	int fd = t_open(0);

	if (fd < 0)
		return fd;
	if (t_arm_many(fd, WATCHED_COS, arm_cos_op, &when, NULL, 0)) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * One set, from the victim's CPU, and its walk: ends once @nr cancellations
 * are queued on @fd.
 */
static void one_set(struct __test_metadata *_metadata,
		    FIXTURE_DATA(latency) *self, int fd, unsigned int nr)
{
	__s64 offset = t_now(CLOCK_REALTIME) - t_now(CLOCK_MONOTONIC);

	ASSERT_EQ(0, t_pin_self(self->cpu));
	ASSERT_EQ(0, t_set_realtime(t_now(CLOCK_MONOTONIC) + offset));
	ASSERT_EQ(1, t_wait_pending(fd, nr, 60 * 1000));
	ASSERT_EQ(0, t_pin_self(self->home_cpu));
	self->ops++;
}

static void control_unwatched_set(struct __test_metadata *_metadata,
				  FIXTURE_DATA(latency) *self)
{
	int fd = cos_file(_metadata);

	ASSERT_LE(0, fd);
	self->fds[1] = fd;
	one_set(_metadata, self, fd, WATCHED_COS);
	control_end(self);
}

static void prepare_watched(struct __test_metadata *_metadata,
			    FIXTURE_DATA(latency) *self)
{
	struct rlimit rl = { WATCHERS + 256, WATCHERS + 256 };
	struct epoll_event ev = { .events = EPOLLIN };
	int fd, i;

	ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &rl));
	fd = cos_file(_metadata);
	ASSERT_LE(0, fd);
	self->fds[0] = fd;
	for (i = 0; i < WATCHERS; i++) {
		watchers[i] = epoll_create1(EPOLL_CLOEXEC);
		ASSERT_LE(0, watchers[i]);
		ASSERT_EQ(0, epoll_ctl(watchers[i], EPOLL_CTL_ADD, fd, &ev));
	}
}

static void run_watched_set(struct __test_metadata *_metadata,
			    FIXTURE_DATA(latency) *self)
{
	one_set(_metadata, self, self->fds[0], WATCHED_COS);
}

static void restore_watched(struct __test_metadata *_metadata,
			    FIXTURE_DATA(latency) *self)
{
	int i;

	for (i = 0; i < WATCHERS; i++) {
		if (watchers[i] > 0)
			close(watchers[i]);
		watchers[i] = 0;
	}
}

ATTACK_TEST(clock_set_wakes_watchers,
	.what = "a CLOCK_REALTIME set, the file watched by 1000 epolls",
	.idle = control_unwatched_set,
	.idle_what = "the same set, not watched",
	.prepare = prepare_watched,
	.run = run_watched_set,
	.restore = restore_watched,
	.ops = "sets")

/*
 * A file that once had a cancel-on-set timer stays on the list a clock set
 * walks until it is closed, with none left, and any user may have as many
 * such files as it may open.  The walk took each file's shard locks in
 * turn with no rescheduling point between files.  EMPTY_COS_FILES of them
 * (fewer on a debug kernel), then a file with one cancel-on-set timer, last
 * on the list, whose cancellation record says the walk is done.
 */
#define EMPTY_COS_FILES		200000
#define EMPTY_COS_FILES_DEBUG	5000

static int *empty_cos_fds;
static long nr_empty_cos;

/* A file with one cancel-on-set timer, or with none left if @cancel. */
static int cos_file_of_one(bool cancel)
{
	int fd = t_open(0);
	__u64 id;

	if (fd < 0)
		return fd;
	if (t_arm(fd, CLOCK_REALTIME, QTIMER_F_ABSTIME | QTIMER_F_CANCEL_ON_SET,
		   t_now(CLOCK_REALTIME) + FAR_NS, 0, 0, &id) ||
	    (cancel && t_cancel(fd, id) != QTIMER_CANCEL_ARMED)) {
		close(fd);
		return -1;
	}
	return fd;
}

static void control_one_cos_file(struct __test_metadata *_metadata,
				 FIXTURE_DATA(latency) *self)
{
	int fd = cos_file_of_one(false);

	ASSERT_LE(0, fd);
	self->fds[1] = fd;
	one_set(_metadata, self, fd, 1);
	control_end(self);
}

static void prepare_empty_cos_files(struct __test_metadata *_metadata,
				    FIXTURE_DATA(latency) *self)
{
	long n = t_debug_kernel() ? EMPTY_COS_FILES_DEBUG : EMPTY_COS_FILES;
	struct rlimit rl = { n + 256, n + 256 };
	long i;

	ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &rl));
	empty_cos_fds = calloc(n, sizeof(*empty_cos_fds));
	ASSERT_NE(NULL, empty_cos_fds);
	for (nr_empty_cos = 0; nr_empty_cos < n; nr_empty_cos++) {
		i = nr_empty_cos;
		empty_cos_fds[i] = cos_file_of_one(true);
		ASSERT_LE(0, empty_cos_fds[i]);
	}
	self->fds[0] = cos_file_of_one(false);
	ASSERT_LE(0, self->fds[0]);
}

static void run_empty_cos_set(struct __test_metadata *_metadata,
			      FIXTURE_DATA(latency) *self)
{
	one_set(_metadata, self, self->fds[0], 1);
}

static void restore_empty_cos_files(struct __test_metadata *_metadata,
				    FIXTURE_DATA(latency) *self)
{
	long i;

	for (i = 0; i < nr_empty_cos; i++)
		close(empty_cos_fds[i]);
	nr_empty_cos = 0;
	free(empty_cos_fds);
	empty_cos_fds = NULL;
}

ATTACK_TEST(clock_set_walks_many_files,
	.what = "a CLOCK_REALTIME set walking files with no cancel-on-set timer left",
	.idle = control_one_cos_file,
	.idle_what = "the same set with one file",
	.prepare = prepare_empty_cos_files,
	.run = run_empty_cos_set,
	.restore = restore_empty_cos_files,
	.ops = "sets")

TEST_HARNESS_MAIN
