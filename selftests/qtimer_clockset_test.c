// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * Setting CLOCK_REALTIME: an absolute realtime timer with
 * QTIMER_F_CANCEL_ON_SET delivers one QTIMER_REC_CANCELED | QTIMER_REC_LAST
 * record (count 0, or the expirations it had pending) and is gone, like
 * timerfd's TFD_TIMER_CANCEL_ON_SET; an absolute realtime timer without the
 * flag fires when the new wall time passes its expiry, never before (in
 * wall time); MONOTONIC and BOOTTIME timers do not notice.  Needs root
 * (CAP_SYS_TIME); every test puts the clock back in its teardown.
 */
#define _GNU_SOURCE
#include "kselftest_harness.h"
#include "helpers.h"

FIXTURE(clockset)
{
	int fd;
	__s64 rt0, mono0;	/* realtime = rt0 + (monotonic - mono0) */
	bool stepped;
};

FIXTURE_SETUP(clockset)
{
	self->fd = t_open(O_NONBLOCK);
	ASSERT_LE(0, self->fd);
	self->mono0 = t_now(CLOCK_MONOTONIC);
	self->rt0 = t_now(CLOCK_REALTIME);
}

FIXTURE_TEARDOWN(clockset)
{
	if (self->stepped)
		EXPECT_EQ(0, t_restore_realtime(self->rt0, self->mono0));
	close(self->fd);
}

static int arm_cos(int fd, __s64 when, __u64 period, __u64 cookie, __u64 *id)
{
	return t_arm(fd, CLOCK_REALTIME,
		      QTIMER_F_ABSTIME | QTIMER_F_CANCEL_ON_SET, when, period,
		      cookie, id);
}

#define EXPECT_CANCELED_RECORD(rec, want_id, want_cookie) do {		\
	EXPECT_EQ(want_id, (rec).id);					\
	EXPECT_EQ(want_cookie, (rec).cookie);				\
	EXPECT_EQ(QTIMER_REC_CANCELED | QTIMER_REC_LAST, (rec).flags);	\
} while (0)

TEST_F(clockset, cancel_on_set_step_forward)
{
	struct qtimer_record rec;
	__u64 id;

	ASSERT_EQ(0, arm_cos(self->fd, t_now(CLOCK_REALTIME) +
			     20 * NSEC_PER_SEC, 0, 0xc0, &id));
	EXPECT_EQ(0, t_nothing_pending(self->fd));
	QT_STEP_REALTIME(NSEC_PER_SEC);
	ASSERT_EQ(1, t_collect(self->fd, &rec, 1, QT_ARRIVE_MS));
	EXPECT_CANCELED_RECORD(rec, id, 0xc0);
	EXPECT_EQ(0, rec.count);
	EXPECT_EQ(-ENOENT, t_cancel(self->fd, id));
	t_sleep_ms(100);
	EXPECT_EQ(0, t_nothing_pending(self->fd));
}

TEST_F(clockset, cancel_on_set_step_backward)
{
	struct qtimer_record rec;
	__u64 id;

	ASSERT_EQ(0, arm_cos(self->fd, t_now(CLOCK_REALTIME) +
			     20 * NSEC_PER_SEC, 0, 0xc1, &id));
	QT_STEP_REALTIME(-NSEC_PER_SEC);
	ASSERT_EQ(1, t_collect(self->fd, &rec, 1, QT_ARRIVE_MS));
	EXPECT_CANCELED_RECORD(rec, id, 0xc1);
	EXPECT_EQ(0, rec.count);
	EXPECT_EQ(-ENOENT, t_cancel(self->fd, id));
}

/* Only flagged timers are cancelled, each with its own record. */
TEST_F(clockset, cancel_on_set_only_flagged_timers)
{
	struct qtimer_record recs[8];
	__s64 far = t_now(CLOCK_REALTIME) + 20 * NSEC_PER_SEC;
	__u64 a, b, plain, k;

	ASSERT_EQ(0, arm_cos(self->fd, far, 0, 1, &a));
	ASSERT_EQ(0, arm_cos(self->fd, far + 1, 0, 2, &b));
	ASSERT_EQ(0, t_arm(self->fd, CLOCK_REALTIME, QTIMER_F_ABSTIME, far,
			    0, 3, &plain));
	QT_STEP_REALTIME(NSEC_PER_SEC);
	ASSERT_EQ(2, t_collect(self->fd, recs, 2, QT_ARRIVE_MS));
	for (k = 0; k < 2; k++)
		EXPECT_EQ(QTIMER_REC_CANCELED | QTIMER_REC_LAST, recs[k].flags);
	EXPECT_LE(0, t_find_cookie(recs, 2, 1));
	EXPECT_LE(0, t_find_cookie(recs, 2, 2));
	t_sleep_ms(100);
	EXPECT_EQ(0, t_nothing_pending(self->fd));
	EXPECT_EQ(QTIMER_CANCEL_ARMED, t_cancel(self->fd, plain));
}

/*
 * A ticker with expirations pending when the clock is set: one record,
 * cancelled, standing for the expirations it had pending.  The step is
 * backwards so that it cannot itself make expirations due.
 */
TEST_F(clockset, cancel_on_set_periodic_with_pending)
{
	const __s64 period = 20 * NSEC_PER_MSEC;
	struct qtimer_record recs[4];
	__s64 first, before;
	__u64 id;

	first = t_now(CLOCK_REALTIME) + period;
	ASSERT_EQ(0, arm_cos(self->fd, first, period, 0xc2, &id));
	ASSERT_EQ(1, t_wait_readable(self->fd, QT_ARRIVE_MS));
	t_sleep_ms(100);
	before = t_now(CLOCK_REALTIME);
	QT_STEP_REALTIME(-NSEC_PER_SEC);
	t_sleep_ms(100);
	ASSERT_EQ(1, t_read(self->fd, recs, 4));
	EXPECT_CANCELED_RECORD(recs[0], id, 0xc2);
	EXPECT_LE(1, recs[0].count);
	EXPECT_GE((before - first) / period + 1, recs[0].count);
	t_sleep_ms(100);
	EXPECT_EQ(0, t_nothing_pending(self->fd));
	EXPECT_EQ(-ENOENT, t_cancel(self->fd, id));
}

/* Without a clock set, a CANCEL_ON_SET timer is an ordinary timer. */
TEST_F(clockset, cancel_on_set_fires_normally)
{
	struct qtimer_record rec;
	__s64 when, stamp;
	__u64 id;

	when = t_now(CLOCK_REALTIME) + 50 * NSEC_PER_MSEC;
	ASSERT_EQ(0, arm_cos(self->fd, when, 0, 0xc3, &id));
	ASSERT_EQ(1, t_collect_stamped(self->fd, &rec, 1, QT_ARRIVE_MS,
					CLOCK_REALTIME, &stamp));
	EXPECT_EQ(id, rec.id);
	EXPECT_EQ(QTIMER_REC_LAST, rec.flags);
	EXPECT_EQ(1, rec.count);
	EXPECT_EQ(when, rec.expires_ns);
	EXPECT_LE(when, stamp);
}

/* MODIFY can add the flag... */
TEST_F(clockset, modify_adds_cancel_on_set)
{
	struct qtimer_record rec;
	__s64 far = t_now(CLOCK_REALTIME) + 20 * NSEC_PER_SEC;
	__u64 id;

	ASSERT_EQ(0, t_arm(self->fd, CLOCK_REALTIME, QTIMER_F_ABSTIME, far, 0,
			    0xc4, &id));
	ASSERT_EQ(QTIMER_CANCEL_ARMED,
		  t_modify(self->fd, id,
			    QTIMER_F_ABSTIME | QTIMER_F_CANCEL_ON_SET, far, 0, 0));
	QT_STEP_REALTIME(NSEC_PER_SEC);
	ASSERT_EQ(1, t_collect(self->fd, &rec, 1, QT_ARRIVE_MS));
	EXPECT_CANCELED_RECORD(rec, id, 0xc4);
}

/* ... and take it away. */
TEST_F(clockset, modify_removes_cancel_on_set)
{
	__s64 far = t_now(CLOCK_REALTIME) + 20 * NSEC_PER_SEC;
	__u64 id;

	ASSERT_EQ(0, arm_cos(self->fd, far, 0, 0xc5, &id));
	ASSERT_EQ(QTIMER_CANCEL_ARMED,
		  t_modify(self->fd, id, QTIMER_F_ABSTIME, far, 0, 0));
	QT_STEP_REALTIME(NSEC_PER_SEC);
	t_sleep_ms(200);
	EXPECT_EQ(0, t_nothing_pending(self->fd));
	EXPECT_EQ(QTIMER_CANCEL_ARMED, t_cancel(self->fd, id));
}

/*
 * No flag, clock stepped forward past most of the wait: the timer fires
 * when the new wall time reaches its expiry, long before the monotonic
 * time it would otherwise have needed.
 */
TEST_F(clockset, absolute_realtime_follows_step_forward)
{
	struct qtimer_record rec;
	__s64 when, stamp, m0, m1;
	__u64 id;

	when = t_now(CLOCK_REALTIME) + 5 * NSEC_PER_SEC;
	ASSERT_EQ(0, t_arm(self->fd, CLOCK_REALTIME, QTIMER_F_ABSTIME, when,
			    0, 0xd0, &id));
	m0 = t_now(CLOCK_MONOTONIC);
	QT_STEP_REALTIME(4 * NSEC_PER_SEC);
	ASSERT_EQ(1, t_collect_stamped(self->fd, &rec, 1, QT_ARRIVE_MS,
					CLOCK_REALTIME, &stamp));
	m1 = t_now(CLOCK_MONOTONIC);
	EXPECT_EQ(id, rec.id);
	EXPECT_EQ(QTIMER_REC_LAST, rec.flags);
	EXPECT_EQ(1, rec.count);
	EXPECT_EQ(when, rec.expires_ns);
	EXPECT_LE(when, stamp);		/* never early in wall time */
	/* About 1 s of monotonic time, not 5 s. */
	EXPECT_GT(m0 + 3500 * NSEC_PER_MSEC, m1);
}

/* Stepped back: the expiry is further away in wall time; not early. */
TEST_F(clockset, absolute_realtime_follows_step_backward)
{
	struct qtimer_record rec;
	__s64 when, stamp;
	__u64 id;

	when = t_now(CLOCK_REALTIME) + 300 * NSEC_PER_MSEC;
	ASSERT_EQ(0, t_arm(self->fd, CLOCK_REALTIME, QTIMER_F_ABSTIME, when,
			    0, 0xd1, &id));
	QT_STEP_REALTIME(-NSEC_PER_SEC);
	/* Past the old monotonic moment, still well before the new one. */
	t_sleep_ms(600);
	EXPECT_EQ(0, t_nothing_pending(self->fd));
	ASSERT_EQ(1, t_collect_stamped(self->fd, &rec, 1, QT_ARRIVE_MS,
					CLOCK_REALTIME, &stamp));
	EXPECT_EQ(id, rec.id);
	EXPECT_EQ(when, rec.expires_ns);
	EXPECT_LE(when, stamp);
}

/*
 * Nothing of @fd may be pending before @deadline on CLOCK_MONOTONIC.  On a
 * host slow enough that the check ends after it, a record may be the
 * timer's own, so only a check that ended before it counts.
 */
#define EXPECT_NOTHING_PENDING_BEFORE(fd, deadline) do {		\
	int __pending = t_nothing_pending(fd);				\
									\
	if (t_now(CLOCK_MONOTONIC) < (deadline)) {			\
		EXPECT_EQ(0, __pending);				\
	} else {							\
		TH_LOG("past the first expiry before the check ended");	\
	}								\
} while (0)

TEST_F(clockset, monotonic_and_boottime_unaffected)
{
	struct qtimer_record recs[4];
	__s64 mwhen, bwhen, bstamp, stamp[4];
	__u64 mid, bid;
	int i;

	mwhen = t_now(CLOCK_MONOTONIC) + 400 * NSEC_PER_MSEC;
	bwhen = t_now(CLOCK_BOOTTIME) + 400 * NSEC_PER_MSEC;
	ASSERT_EQ(0, t_arm(self->fd, CLOCK_MONOTONIC, QTIMER_F_ABSTIME, mwhen,
			    0, 1, &mid));
	ASSERT_EQ(0, t_arm(self->fd, CLOCK_BOOTTIME, QTIMER_F_ABSTIME, bwhen,
			    0, 2, &bid));
	QT_STEP_REALTIME(10 * NSEC_PER_SEC);
	t_sleep_ms(50);
	/* bwhen is as far out on CLOCK_BOOTTIME, armed after mwhen. */
	EXPECT_NOTHING_PENDING_BEFORE(self->fd, mwhen);
	QT_STEP_REALTIME(-20 * NSEC_PER_SEC);
	ASSERT_EQ(2, t_collect_stamped(self->fd, recs, 2, QT_ARRIVE_MS,
					CLOCK_MONOTONIC, stamp));
	bstamp = t_now(CLOCK_BOOTTIME);
	for (i = 0; i < 2; i++) {
		EXPECT_EQ(QTIMER_REC_LAST, recs[i].flags);
		EXPECT_EQ(1, recs[i].count);
		if (recs[i].cookie == 1) {
			EXPECT_EQ(mwhen, recs[i].expires_ns);
			EXPECT_LE(mwhen, stamp[i]);
		} else {
			EXPECT_EQ(bwhen, recs[i].expires_ns);
			EXPECT_LE(bwhen, bstamp);
		}
	}
}

/*
 * A relative CLOCK_REALTIME timer is an interval, as for timerfd and POSIX
 * timers: stepping the clock forward an hour does not make it fire (it used
 * to, at once), nor does stepping it back delay it.  It keeps its
 * realtime id (fdinfo counts it as realtime; MODIFY by that id works), and
 * its record's expires_ns is in wall time, never after the read.
 */
TEST_F(clockset, relative_realtime_is_an_interval)
{
	struct qtimer_record recs[2];
	__s64 m0, stamp[2];
	__u64 id[2];
	int i;

	m0 = t_now(CLOCK_MONOTONIC);
	ASSERT_EQ(0, t_arm(self->fd, CLOCK_REALTIME, 0, NSEC_PER_SEC, 0,
			    0xe0, &id[0]));
	ASSERT_EQ(0, t_arm(self->fd, CLOCK_REALTIME, 0, 3 * NSEC_PER_SEC,
			    0, 0xe1, &id[1]));
	/* Re-timed by its realtime id, relative again: 1.2 s from now. */
	ASSERT_EQ(QTIMER_CANCEL_ARMED,
		  t_modify(self->fd, id[1], 0, 1200 * NSEC_PER_MSEC, 0, 0));
	QT_STEP_REALTIME(3600 * NSEC_PER_SEC);
	t_sleep_ms(300);
	EXPECT_NOTHING_PENDING_BEFORE(self->fd, m0 + NSEC_PER_SEC);
	QT_STEP_REALTIME(-7200 * NSEC_PER_SEC);
	ASSERT_EQ(2, t_collect_stamped(self->fd, recs, 2, QT_ARRIVE_MS,
					CLOCK_MONOTONIC, stamp));
	for (i = 0; i < 2; i++) {
		__s64 after = recs[i].cookie == 0xe0 ? NSEC_PER_SEC :
						       1200 * NSEC_PER_MSEC;

		EXPECT_EQ(id[recs[i].cookie - 0xe0], recs[i].id);
		EXPECT_EQ(QTIMER_REC_LAST, recs[i].flags);
		/* Never early on the monotonic clock it runs on. */
		EXPECT_LE(m0 + after, stamp[i]);
		/* In wall time, and not in the reader's future. */
		EXPECT_LE(recs[i].expires_ns, t_now(CLOCK_REALTIME));
		EXPECT_LT(t_now(CLOCK_REALTIME) - 60 * NSEC_PER_SEC,
			  recs[i].expires_ns);
	}
}

/* The same timer armed absolute then re-timed relative, and back. */
TEST_F(clockset, modify_between_absolute_and_relative_realtime)
{
	struct qtimer_record rec;
	__s64 m0, stamp;
	__u64 id;

	ASSERT_EQ(0, t_arm(self->fd, CLOCK_REALTIME, QTIMER_F_ABSTIME,
			    t_now(CLOCK_REALTIME) + 60 * NSEC_PER_SEC, 0,
			    0xe2, &id));
	m0 = t_now(CLOCK_MONOTONIC);
	ASSERT_EQ(QTIMER_CANCEL_ARMED,
		  t_modify(self->fd, id, 0, 800 * NSEC_PER_MSEC, 0, 0));
	QT_STEP_REALTIME(3600 * NSEC_PER_SEC);
	t_sleep_ms(200);
	EXPECT_NOTHING_PENDING_BEFORE(self->fd, m0 + 800 * NSEC_PER_MSEC);
	ASSERT_EQ(1, t_collect_stamped(self->fd, &rec, 1, QT_ARRIVE_MS,
					CLOCK_MONOTONIC, &stamp));
	EXPECT_EQ(id, rec.id);
	EXPECT_LE(m0 + 800 * NSEC_PER_MSEC, stamp);
	/* Gone after its one record: nothing left to modify. */
	EXPECT_EQ(-ENOENT, t_modify(self->fd, id, 0, NSEC_PER_SEC, 0, 0));
}

TEST_HARNESS_MAIN
