// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * libtimerdev against the real module, the record ring under load: more
 * records than it holds, each delivered once and a cancelled one never; a
 * dispatching thread cancelled while it drains an overflow; and threads
 * sharing one context's ring (see device_harness.h for what every
 * libtimerdev_*_test shares; libtimerdev_ring_test has the ring's basics).
 */
#include <pthread.h>

#include "device_harness.h"

#define OVERFLOW_TIMERS	5000	/* more than the library's 4096 entries */

struct big_tally {
	unsigned int nr, bad;
	unsigned char per_cookie[OVERFLOW_TIMERS];
};

static void big_tally_cb(const struct qtimer_record *rec, void *arg)
{
	struct big_tally *t = arg;

	t->nr++;
	if (rec->cookie < OVERFLOW_TIMERS && rec->count == 1 &&
	    rec->flags == QTIMER_REC_LAST)
		t->per_cookie[rec->cookie]++;
	else
		t->bad++;
}

/*
 * More records than the ring holds: the rest wait in the kernel and come
 * through all the same, each once.  Every seventh timer is cancelled once
 * all have fired, its record in the ring (voided) or waiting behind it
 * (dropped): none of those is ever delivered.
 */
TEST_F_TIMEOUT(qt, ring_overflow_each_record_once, 120)
{
	struct td_timer_spec spec = mono(5 * NSEC_PER_MSEC, 0);
	struct big_tally *t = calloc(1, sizeof(*t));
	uint64_t *ids = calloc(OVERFLOW_TIMERS, sizeof(*ids));
	unsigned int i, expected = 0;
	struct qtimer_record rec;

	ASSERT_NE(NULL, t);
	ASSERT_NE(NULL, ids);
	NEED_RING();
	for (i = 0; i < OVERFLOW_TIMERS; i++) {
		spec.cookie = i;
		ASSERT_EQ(0, td_arm(self->ctx, &spec, &ids[i]));
	}
	ASSERT_TRUE(t_wait_pending(td_fd(self->ctx), OVERFLOW_TIMERS, PATIENCE_MS));
	for (i = 0; i < OVERFLOW_TIMERS; i++) {
		if (i % 7 != 6) {
			expected++;
			continue;
		}
		ASSERT_EQ(QTIMER_CANCEL_QUEUED, td_cancel(self->ctx, ids[i]));
	}
	while (t->nr < expected) {
		ASSERT_EQ(1, t_wait_readable(td_fd(self->ctx), PATIENCE_MS));
		ASSERT_GT(td_dispatch(self->ctx, big_tally_cb, t, 1000), 0);
	}
	ASSERT_EQ(-ETIME, td_wait(self->ctx, &rec, 1, 100 * NSEC_PER_MSEC));
	ASSERT_EQ(expected, t->nr);
	ASSERT_EQ(0, t->bad);
	for (i = 0; i < OVERFLOW_TIMERS; i++)
		ASSERT_EQ(i % 7 != 6, t->per_cookie[i]);
	ASSERT_EQ(0, t_fdinfo_get(td_fd(self->ctx), QT_FI_TIMERS));
	free(ids);
	free(t);
}

static void cancel_self_cb(const struct qtimer_record *rec, void *arg)
{
	(void)rec;
	(void)arg;
	pthread_cancel(pthread_self());
}

/*
 * At most all records but one: with QTIMER_FEAT_RING_DRAIN the kernel may
 * refill the ring as fast as the dispatch empties it, which then takes
 * every record with no system call (no cancellation point) and is
 * cancelled only after it returns; one record is left for read_one() all
 * the same.
 */
static void *dispatch_and_die(void *arg)
{
	td_dispatch(arg, cancel_self_cb, NULL, OVERFLOW_TIMERS - 1);
	pthread_testcancel();
	return NULL;
}

static void *read_one(void *arg)
{
	struct qtimer_record rec;

	return (void *)(intptr_t)td_read(arg, &rec, 1);
}

/*
 * A thread cancelled while td_dispatch() drains an overflowing ring must not
 * keep the context's lock: another thread's td_read() still returns.  (It
 * used to stay blocked: td_dispatch() polls for the records waiting in the
 * kernel, a cancellation point, with the lock held and no handler.)
 */
TEST_F_TIMEOUT(qt, ring_dispatch_cancelled_keeps_no_lock, 120)
{
	struct td_timer_spec spec = mono(5 * NSEC_PER_MSEC, 0);
	struct timespec until;
	pthread_t th;
	void *ret;
	unsigned int i;

	NEED_RING();
	for (i = 0; i < OVERFLOW_TIMERS; i++) {
		spec.cookie = i;
		ASSERT_EQ(0, td_arm(self->ctx, &spec, NULL));
	}
	ASSERT_TRUE(t_wait_pending(td_fd(self->ctx), OVERFLOW_TIMERS, PATIENCE_MS));
	ASSERT_EQ(0, pthread_create(&th, NULL, dispatch_and_die, self->ctx));
	ASSERT_EQ(0, pthread_join(th, &ret));
	ASSERT_EQ(PTHREAD_CANCELED, ret);
	/* The records the dying dispatch left are still there to read. */
	ASSERT_EQ(0, pthread_create(&th, NULL, read_one, self->ctx));
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += PATIENCE / NSEC_PER_SEC;
	ASSERT_EQ(0, pthread_timedjoin_np(th, &ret, &until))
		TH_LOG("td_read() still blocked on the lock");
	ASSERT_EQ(1, (int)(intptr_t)ret);
}

#define RING_READERS		4
#define RING_READER_TIMERS	2000

struct ring_reader {
	struct td_ctx *ctx;
	unsigned int *total;
	unsigned char *per_cookie;
	int err;
};

static void *ring_reader_thread(void *arg)
{
	int64_t deadline = td_now(CLOCK_MONOTONIC) + PATIENCE;
	struct ring_reader *r = arg;
	struct qtimer_record recs[8];
	unsigned int total, seen = 0;
	int i, ret;

	/*
	 * Patience runs out only when no reader has taken a record for that
	 * long: arming takes a while on a slow kernel, and records flow as
	 * it goes.
	 */
	while ((total = __atomic_load_n(r->total, __ATOMIC_RELAXED)) <
	       RING_READER_TIMERS) {
		if (total != seen) {
			seen = total;
			deadline = td_now(CLOCK_MONOTONIC) + PATIENCE;
		}
		if (td_now(CLOCK_MONOTONIC) > deadline) {
			r->err = -ETIMEDOUT;
			break;
		}
		ret = td_wait(r->ctx, recs, 8, 50 * NSEC_PER_MSEC);
		if (ret == -ETIME)
			continue;
		if (ret < 0) {
			r->err = ret;
			break;
		}
		for (i = 0; i < ret; i++) {
			if (recs[i].cookie >= RING_READER_TIMERS ||
			    recs[i].flags != QTIMER_REC_LAST) {
				r->err = -EBADMSG;
				continue;
			}
			__atomic_fetch_add(&r->per_cookie[recs[i].cookie], 1,
					   __ATOMIC_RELAXED);
		}
		__atomic_fetch_add(r->total, ret, __ATOMIC_RELAXED);
	}
	return NULL;
}

/* Threads reading one context share its ring: each record reaches one. */
TEST_F_TIMEOUT(qt, ring_threads_take_each_record_once, 120)
{
	static unsigned char per_cookie[RING_READER_TIMERS];
	struct td_timer_spec spec = mono(20 * NSEC_PER_MSEC, 0);
	struct ring_reader r[RING_READERS];
	pthread_t th[RING_READERS];
	unsigned int total = 0;
	int i;

	NEED_RING();
	for (i = 0; i < RING_READERS; i++) {
		r[i] = (struct ring_reader){ .ctx = self->ctx, .total = &total,
					     .per_cookie = per_cookie };
		ASSERT_EQ(0, pthread_create(&th[i], NULL, ring_reader_thread,
					    &r[i]));
	}
	for (i = 0; i < RING_READER_TIMERS; i++) {
		spec.cookie = i;
		ASSERT_EQ(0, td_arm(self->ctx, &spec, NULL));
	}
	for (i = 0; i < RING_READERS; i++) {
		ASSERT_EQ(0, pthread_join(th[i], NULL));
		ASSERT_EQ(0, r[i].err);
	}
	ASSERT_EQ(RING_READER_TIMERS, total);
	for (i = 0; i < RING_READER_TIMERS; i++)
		ASSERT_EQ(1, per_cookie[i]);
}

TEST_HARNESS_MAIN
