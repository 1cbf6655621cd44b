// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * libtimerdev against the real module, changing armed timers: td_cancel
 * and td_modify of armed, fired-and-queued and consumed timers, bad ids and
 * another context's, and several threads arming and cancelling on one
 * context (see device_harness.h for what every libtimerdev_*_test shares).
 */
#include <pthread.h>

#include "device_harness.h"

/* ---- td_cancel ---- */

TEST_F(qt, cancel_armed)
{
	struct td_timer_spec spec = mono(FAR, 0);
	struct qtimer_record rec;
	uint64_t id;

	ASSERT_EQ(0, td_arm(self->ctx, &spec, &id));
	ASSERT_EQ(QTIMER_CANCEL_ARMED, td_cancel(self->ctx, id));
	ASSERT_EQ(-ENOENT, td_cancel(self->ctx, id));
	ASSERT_EQ(-EAGAIN, td_read(self->ctx, &rec, 1));
}

/* Cancelling a fired, unread one-shot discards its record. */
TEST_F(qt, cancel_queued)
{
	struct td_timer_spec spec = mono(NSEC_PER_MSEC, 0);
	struct qtimer_record rec;
	uint64_t id;

	ASSERT_EQ(0, td_arm(self->ctx, &spec, &id));
	ASSERT_EQ(1, t_wait_readable(td_fd(self->ctx), PATIENCE_MS));
	ASSERT_EQ(QTIMER_CANCEL_QUEUED, td_cancel(self->ctx, id));
	ASSERT_EQ(0, t_wait_readable(td_fd(self->ctx), 0));
	ASSERT_EQ(-EAGAIN, td_read(self->ctx, &rec, 1));
	ASSERT_EQ(-ENOENT, td_cancel(self->ctx, id));
}

/*
 * A periodic timer whose record is unread has fired and waits to be read:
 * cancelling it discards the record (QUEUED); ARMED means "had not fired".
 */
TEST_F(qt, cancel_periodic_queued)
{
	struct td_timer_spec spec = mono(NSEC_PER_MSEC, 0);
	struct qtimer_record rec;
	uint64_t id;

	spec.period_ns = 100 * NSEC_PER_SEC;
	ASSERT_EQ(0, td_arm(self->ctx, &spec, &id));
	ASSERT_EQ(1, t_wait_readable(td_fd(self->ctx), PATIENCE_MS));
	ASSERT_EQ(QTIMER_CANCEL_QUEUED, td_cancel(self->ctx, id));
	ASSERT_EQ(-EAGAIN, td_read(self->ctx, &rec, 1));
}

TEST_F(qt, cancel_bad_ids)
{
	struct td_timer_spec spec = mono(FAR, 0);
	uint64_t id;

	ASSERT_EQ(-ENOENT, td_cancel(self->ctx, 0));
	ASSERT_EQ(-ENOENT, td_cancel(self->ctx, ~0ULL));
	ASSERT_EQ(0, td_arm(self->ctx, &spec, &id));
	ASSERT_EQ(-ENOENT, td_cancel(self->ctx, id ^ (1ULL << 40)));
	ASSERT_EQ(-ENOENT, td_cancel(self->ctx, id + 1));
	ASSERT_EQ(QTIMER_CANCEL_ARMED, td_cancel(self->ctx, id));
}

/* Contexts are independent: one file cannot touch another's timers. */
TEST_F(qt, cancel_other_context)
{
	struct td_timer_spec spec = mono(FAR, 0);
	struct td_ctx *other;
	uint64_t id;

	ASSERT_EQ(0, td_open(&other, 0));
	ASSERT_EQ(0, td_arm(self->ctx, &spec, &id));
	EXPECT_EQ(-ENOENT, td_cancel(other, id));
	EXPECT_EQ(-ENOENT, td_modify(other, id, NSEC_PER_MSEC, 0, 0, 0));
	td_close(other);
	ASSERT_EQ(QTIMER_CANCEL_ARMED, td_cancel(self->ctx, id));
}

/* ---- td_modify ---- */

TEST_F(qt, modify_sooner)
{
	struct td_timer_spec spec = mono(FAR, 99);
	struct qtimer_record rec;
	int64_t due;
	uint64_t id;

	ASSERT_EQ(0, td_arm(self->ctx, &spec, &id));
	due = td_now(CLOCK_MONOTONIC) + 20 * NSEC_PER_MSEC;
	ASSERT_EQ(QTIMER_CANCEL_ARMED, td_modify(self->ctx, id, 20 * NSEC_PER_MSEC, 0, 0, 0));
	ASSERT_EQ(1, td_wait(self->ctx, &rec, 1, PATIENCE));
	ASSERT_LE(due, td_now(CLOCK_MONOTONIC));
	ASSERT_EQ(id, rec.id);
	ASSERT_EQ(99, rec.cookie);
	ASSERT_GE(rec.expires_ns, due);
	ASSERT_EQ(QTIMER_REC_LAST, rec.flags);
}

/* Pushed later before it fires: it fires at the new time, not the old. */
TEST_F(qt, modify_later_never_early)
{
	struct td_timer_spec spec = mono(50 * NSEC_PER_MSEC, 0);
	struct qtimer_record rec;
	int64_t due;
	uint64_t id;

	ASSERT_EQ(0, td_arm(self->ctx, &spec, &id));
	due = td_now(CLOCK_MONOTONIC) + 400 * NSEC_PER_MSEC;
	ASSERT_EQ(QTIMER_CANCEL_ARMED,
		  td_modify(self->ctx, id, due, 0, 0, TD_TIMER_ABSTIME));
	ASSERT_EQ(1, td_wait(self->ctx, &rec, 1, PATIENCE));
	ASSERT_LE(due, td_now(CLOCK_MONOTONIC));
	ASSERT_EQ(due, rec.expires_ns);
	ASSERT_EQ(1, rec.count);
}

/* Modifying a fired, unread timer drops its record and re-arms it. */
TEST_F(qt, modify_queued)
{
	struct td_timer_spec spec = mono(NSEC_PER_MSEC, 0);
	struct qtimer_record rec;
	uint64_t id;

	ASSERT_EQ(0, td_arm(self->ctx, &spec, &id));
	ASSERT_EQ(1, t_wait_readable(td_fd(self->ctx), PATIENCE_MS));
	ASSERT_EQ(QTIMER_CANCEL_QUEUED, td_modify(self->ctx, id, FAR, 0, 0, 0));
	ASSERT_EQ(-EAGAIN, td_read(self->ctx, &rec, 1));
	ASSERT_EQ(QTIMER_CANCEL_ARMED, td_cancel(self->ctx, id));
}

TEST_F(qt, modify_after_read)
{
	struct td_timer_spec spec = mono(NSEC_PER_MSEC, 0);
	struct qtimer_record rec;
	uint64_t id;

	ASSERT_EQ(0, td_arm(self->ctx, &spec, &id));
	ASSERT_EQ(1, td_wait(self->ctx, &rec, 1, PATIENCE));
	ASSERT_EQ(-ENOENT, td_modify(self->ctx, id, NSEC_PER_MSEC, 0, 0, 0));
}

TEST_F(qt, modify_bad_id)
{
	ASSERT_EQ(-ENOENT, td_modify(self->ctx, 12345, NSEC_PER_MSEC, 0, 0, 0));
}

TEST_F(qt, modify_negative_relative)
{
	struct td_timer_spec spec = mono(FAR, 0);
	uint64_t id;

	ASSERT_EQ(0, td_arm(self->ctx, &spec, &id));
	ASSERT_EQ(-EINVAL, td_modify(self->ctx, id, -1, 0, 0, 0));
	ASSERT_EQ(QTIMER_CANCEL_ARMED, td_cancel(self->ctx, id));
}

TEST_F(qt, modify_bad_flags)
{
	struct td_timer_spec spec = mono(FAR, 0);
	uint64_t id;

	ASSERT_EQ(0, td_arm(self->ctx, &spec, &id));
	ASSERT_EQ(-EINVAL, td_modify(self->ctx, id, NSEC_PER_MSEC, 0, 0, QTIMER_F_CPU));
	ASSERT_EQ(QTIMER_CANCEL_ARMED, td_cancel(self->ctx, id));
}

/* One-shot turned periodic keeps its id and cookie. */
TEST_F(qt, modify_to_periodic)
{
	struct td_timer_spec spec = mono(FAR, 31);
	struct qtimer_record rec;
	uint64_t id;

	ASSERT_EQ(0, td_arm(self->ctx, &spec, &id));
	ASSERT_EQ(QTIMER_CANCEL_ARMED,
		  td_modify(self->ctx, id, NSEC_PER_MSEC, 5 * NSEC_PER_MSEC, 0, 0));
	ASSERT_EQ(1, td_wait(self->ctx, &rec, 1, PATIENCE));
	ASSERT_EQ(id, rec.id);
	ASSERT_EQ(31, rec.cookie);
	ASSERT_EQ(0, rec.flags & QTIMER_REC_LAST);
	ASSERT_EQ(1, td_wait(self->ctx, &rec, 1, PATIENCE));
	ASSERT_EQ(id, rec.id);
	/*
	 * Armed, or fired again since the read, or (taken from the record
	 * ring, whose tail the kernel has not reaped yet) neither: 0.  Either
	 * way it existed: not -ENOENT.
	 */
	ASSERT_GE(td_cancel(self->ctx, id), 0);
}

/* ---- thread safety ---- */

/*
 * Timers each thread arms and cancels: enough for the threads to overlap
 * in the kernel many times over, few enough that 4 x 2 x 1000 single
 * ioctls finish well within the timeout on the debug kernel under TCG
 * with the host busy (4 x 2 x 2000 took more than the default 30 s).
 */
#define ARMER_TIMERS	1000

struct armer {
	struct td_ctx *ctx;
	uint64_t ids[ARMER_TIMERS];
	int err;
};

static void *armer_thread(void *arg)
{
	struct td_timer_spec spec = mono(FAR, 0);
	struct armer *a = arg;
	int i;

	for (i = 0; i < ARMER_TIMERS && !a->err; i++)
		a->err = td_arm(a->ctx, &spec, &a->ids[i]);
	for (i = 0; i < ARMER_TIMERS && !a->err; i++)
		if (td_cancel(a->ctx, a->ids[i]) != QTIMER_CANCEL_ARMED)
			a->err = -EBADE;
	return NULL;
}

/* Several threads on one context: distinct ids, every cancel exact. */
TEST_F_TIMEOUT(qt, threads_share_context, 120)
{
	static struct armer a[4];
	pthread_t th[4];
	int i;

	for (i = 0; i < 4; i++) {
		a[i].ctx = self->ctx;
		ASSERT_EQ(0, pthread_create(&th[i], NULL, armer_thread, &a[i]));
	}
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(0, pthread_join(th[i], NULL));
		ASSERT_EQ(0, a[i].err);
	}
}

TEST_HARNESS_MAIN
