// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * CLOCK_REALTIME stepped forward and back, with and without cancel-on-set:
 * absolute realtime timers follow wall time, relative ones are intervals,
 * and a cancel-on-set timer is cancelled exactly when timerfd's read fails
 * with ECANCELED.  Needs CAP_SYS_TIME; the clock is put back in teardown.
 *
 * Part of the differential conformance with timerfd: conformance.h says
 * how a pair is run and judged.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <sys/timerfd.h>
#include <sys/timex.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "conformance.h"

/* --- CLOCK_REALTIME steps ------------------------------------------------- */

FIXTURE(step) {
	__s64 rt0, mono0;	/* realtime = rt0 + (monotonic - mono0) */
	bool stepped;
	int tai;		/* the TAI offset to put back, or -1 */
	struct t_knob clocksource;
};

/*
 * Steps CLOCK_REALTIME by @delta; *@high gets the highest reading the clock
 * can have had before the step.
 */
static int step_realtime(__s64 delta, __s64 *high)
{
	__s64 m0 = t_now(CLOCK_MONOTONIC), rt = t_now(CLOCK_REALTIME);
	int ret = t_set_realtime(rt + delta);

	*high = rt + t_now(CLOCK_MONOTONIC) - m0;
	return ret;
}

FIXTURE_SETUP(step)
{
	ASSERT_EQ(0, pin_here());
	self->mono0 = t_now(CLOCK_MONOTONIC);
	self->rt0 = t_now(CLOCK_REALTIME);
	self->tai = -1;
}

FIXTURE_TEARDOWN(step)
{
	struct timex tx = { .modes = ADJ_TAI, .constant = self->tai };

	if (self->tai >= 0)
		EXPECT_LE(0, adjtimex(&tx));
	EXPECT_EQ(0, t_knob_restore(&self->clocksource));
	if (self->stepped)
		EXPECT_EQ(0, t_set_realtime(self->rt0 + t_now(CLOCK_MONOTONIC) -
					  self->mono0));
}

/* Steps the clock; raises p's high-water mark if p runs on wall time. */
#define STEP(p, delta) do {						\
	__s64 __high;							\
	int __r = step_realtime(delta, &__high);			\
									\
	if (__r == -EPERM)						\
		SKIP(return, "cannot set CLOCK_REALTIME (needs CAP_SYS_TIME)"); \
	ASSERT_EQ(0, __r);						\
	self->stepped = true;						\
	if ((p)->run_clock == CLOCK_REALTIME)				\
		(p)->high = max_ns((p)->high, __high);			\
} while (0)

/* Due in 8 s, stepped 7 s forward: both fire about 1 s later. */
TEST_F(step, absolute_realtime_follows_step_forward)
{
	struct pair p;
	__s64 m0;

	ASSERT_EQ(0, arm_pair(&p, "absolute realtime, +7 s step", CLOCK_REALTIME,
			      true, t_now(CLOCK_REALTIME) + 8 * NSEC_PER_SEC,
			      0, false));
	m0 = t_now(CLOCK_MONOTONIC);
	STEP(&p, 7 * NSEC_PER_SEC);
	ASSERT_EQ(0, collect_one_shot(&p));
	EXPECT_GT(m0 + 5 * NSEC_PER_SEC, t_now(CLOCK_MONOTONIC));
	EXPECT_EQ(0, check_one_shot(&p));
	close_pair(&p);
}

/* Due in 300 ms, stepped 1 s back: both wait for the wall clock. */
TEST_F(step, absolute_realtime_follows_step_backward)
{
	struct pair p;

	ASSERT_EQ(0, arm_pair(&p, "absolute realtime, -1 s step", CLOCK_REALTIME,
			      true, t_now(CLOCK_REALTIME) + 300 * MS, 0, false));
	STEP(&p, -NSEC_PER_SEC);
	ASSERT_EQ(0, collect_one_shot(&p));
	EXPECT_EQ(0, check_one_shot(&p));
	close_pair(&p);
}

/*
 * Relative CLOCK_REALTIME is an interval in both: an hour forward does not
 * make it due, two back do not delay it.
 */
TEST_F(step, relative_realtime_is_an_interval)
{
	struct pair p;
	bool q_ready, t_ready;
	__s64 now;

	ASSERT_EQ(0, arm_pair(&p, "relative realtime, +-1 h steps",
			      CLOCK_REALTIME, false, NSEC_PER_SEC, 0, false));
	STEP(&p, 3600 * NSEC_PER_SEC);
	t_sleep_ms(300);
	q_ready = readable(p.qfd);
	t_ready = readable(p.tfd);
	now = t_now(CLOCK_MONOTONIC);
	EXPECT_FALSE(q_ready && now < p.q_lo)
		TH_LOG("qtimer fired %lld ms early after a +1 h step",
		       (long long)(p.q_lo - now) / MS);
	EXPECT_FALSE(t_ready && now < p.t_lo);
	STEP(&p, -7200 * NSEC_PER_SEC);
	ASSERT_EQ(0, collect_one_shot(&p));
	EXPECT_EQ(0, check_one_shot(&p));
	close_pair(&p);
}

/*
 * An absolute realtime ticker, stepped 1 s forward (both count the ten
 * periods it skipped in one read) and 1 s back (both pause for it).
 */
TEST_F(step, absolute_realtime_ticker_across_steps)
{
	const __s64 period = 100 * MS;
	struct pair p;
	__u64 before;

	ASSERT_EQ(0, arm_pair(&p, "absolute realtime ticker, +-1 s",
			      CLOCK_REALTIME, true,
			      t_now(CLOCK_REALTIME) + period, period, false));
	ASSERT_EQ(0, tick_for(&p, 500 * MS));
	/* Just after a read: a step between two expirations. */
	ASSERT_EQ(0, tick_read(&p));
	before = p.sum_q;
	STEP(&p, NSEC_PER_SEC);
	ASSERT_EQ(0, tick_read(&p));
	EXPECT_LE(before + 10, p.sum_q);
	ASSERT_EQ(0, tick_for(&p, 300 * MS));
	ASSERT_EQ(0, tick_read(&p));
	STEP(&p, -NSEC_PER_SEC);
	ASSERT_EQ(0, tick_for(&p, 1500 * MS));
	ASSERT_EQ(0, tick_settle(&p));
	close_pair(&p);
}

/* A relative realtime ticker counts monotonic periods through +-1 h steps. */
TEST_F(step, relative_realtime_ticker_across_steps)
{
	struct pair p;

	ASSERT_EQ(0, arm_pair(&p, "relative realtime ticker, +-1 h",
			      CLOCK_REALTIME, false, 100 * MS, 100 * MS, false));
	ASSERT_EQ(0, tick_for(&p, 400 * MS));
	STEP(&p, 3600 * NSEC_PER_SEC);
	ASSERT_EQ(0, tick_for(&p, 400 * MS));
	STEP(&p, -7200 * NSEC_PER_SEC);
	ASSERT_EQ(0, tick_for(&p, 400 * MS));
	ASSERT_EQ(0, tick_settle(&p));
	close_pair(&p);
}

/* --- cancel-on-set -------------------------------------------------------- */

/*
 * timerfd learns of a set in clock_settime() itself: its read fails with
 * ECANCELED, once.  Its timer is not disarmed by that (qtimer's is gone:
 * the record is LAST), so when the step made it due it may still fire
 * after the read (this CPU's hrtimers see the new time at their next
 * interrupt): only when nothing is due is the next read checked to be empty.
 * Returns 0 when it does so.
 */
static int timerfd_canceled(const struct pair *p, bool then_empty)
{
	__u64 ticks;
	ssize_t n;

	n = read(p->tfd, &ticks, sizeof(ticks));
	CHK(n < 0 && errno == ECANCELED, "%s: timerfd read %zd (%s), not ECANCELED",
	    p->name, n, n < 0 ? strerror(errno) : "a count");
	n = read(p->tfd, &ticks, sizeof(ticks));
	CHK(!then_empty || (n < 0 && errno == EAGAIN),
	    "%s: timerfd read %zd again", p->name, n);
	return 0;
}

/* qtimer delivers the cancellation from a work item: wait for it. */
static int qtimer_canceled(const struct pair *p, struct qtimer_record *rec)
{
	CHK(t_collect(p->qfd, rec, 1, WAIT_MS) == 1,
	    "%s: no record %d ms after the set", p->name, WAIT_MS);
	CHK(rec->id == p->id && rec->cookie == 0xc0f &&
	    rec->flags == (QTIMER_REC_CANCELED | QTIMER_REC_LAST),
	    "%s: record id %#llx count %u flags %#x, not CANCELED|LAST",
	    p->name, (unsigned long long)rec->id, rec->count, rec->flags);
	CHK(!t_nothing_pending(p->qfd), "%s: a record after LAST", p->name);
	CHK(t_cancel(p->qfd, p->id) == -ENOENT, "%s: still there", p->name);
	return 0;
}

/*
 * Steps forward and back, with a cancel-on-set pair armed before each (far
 * away, so nothing fires): both report each step to the pair armed before
 * it, and a pair armed after a step does not hear of that step.  A pair
 * without the flag, armed through all of them, hears of none.
 */
TEST_F(step, cancel_on_set_same_steps)
{
	static const __s64 steps[] = { NSEC_PER_SEC, -NSEC_PER_SEC,
				       10 * NSEC_PER_SEC, -10 * NSEC_PER_SEC };
	struct qtimer_record rec;
	struct itimerspec cur;
	struct pair plain, cos;
	unsigned int i;

	ASSERT_EQ(0, arm_pair(&plain, "without the flag", CLOCK_REALTIME, true,
			      t_now(CLOCK_REALTIME) + 7200 * NSEC_PER_SEC, 0,
			      false));
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(0, arm_pair(&cos, "cancel-on-set", CLOCK_REALTIME,
				      true, t_now(CLOCK_REALTIME) +
				      30 * NSEC_PER_SEC, 0, true));
		/* Not cancelled by the step before it, even a little later. */
		t_sleep_ms(50);
		EXPECT_FALSE(readable(cos.tfd));
		EXPECT_EQ(0, t_nothing_pending(cos.qfd));
		STEP(&cos, steps[i]);
		EXPECT_EQ(0, timerfd_canceled(&cos, true)) TH_LOG("step %u", i);
		EXPECT_EQ(0, qtimer_canceled(&cos, &rec)) TH_LOG("step %u", i);
		EXPECT_EQ(0, rec.count);
		close_pair(&cos);
		EXPECT_FALSE(readable(plain.tfd));
	}
	/* The work that cancelled the last pair has run: nothing for plain. */
	t_sleep_ms(100);
	EXPECT_FALSE(readable(plain.tfd));
	ASSERT_EQ(0, timerfd_gettime(plain.tfd, &cur));
	EXPECT_LT(0, ts_to_ns(&cur.it_value));
	EXPECT_EQ(0, t_nothing_pending(plain.qfd));
	EXPECT_EQ(QTIMER_CANCEL_ARMED, t_cancel(plain.qfd, plain.id));
	close_pair(&plain);
}

/*
 * A step that makes the timers due: with the flag, the set is what both
 * report (timerfd ECANCELED, qtimer CANCELED|LAST of count 0), not an
 * expiry; without it, both fire, at the step.
 */
TEST_F(step, cancel_on_set_step_makes_it_due)
{
	struct qtimer_record rec;
	struct pair plain, cos;
	__s64 when = t_now(CLOCK_REALTIME) + 2 * NSEC_PER_SEC;

	ASSERT_EQ(0, arm_pair(&cos, "cancel-on-set, stepped past", CLOCK_REALTIME,
			      true, when, 0, true));
	ASSERT_EQ(0, arm_pair(&plain, "without the flag, stepped past",
			      CLOCK_REALTIME, true, when, 0, false));
	STEP(&plain, 2500 * MS);
	EXPECT_EQ(0, timerfd_canceled(&cos, false));
	ASSERT_EQ(0, collect_one_shot(&plain));
	EXPECT_EQ(0, check_one_shot(&plain));
	EXPECT_EQ(0, qtimer_canceled(&cos, &rec));
	EXPECT_EQ(0, rec.count);
	close_pair(&cos);
	close_pair(&plain);
}

/*
 * A ticker with expirations pending: timerfd discards them and fails with
 * ECANCELED; qtimer's cancellation record keeps them in its count (the
 * header says so).  Both report the set.  qtimer's is read once its work
 * item has had time to run: a read at once is the next test.
 */
TEST_F(step, cancel_on_set_ticker_with_pending)
{
	const __s64 period = 20 * MS;
	struct qtimer_record rec;
	struct pair cos;

	ASSERT_EQ(0, arm_pair(&cos, "cancel-on-set ticker", CLOCK_REALTIME, true,
			      t_now(CLOCK_REALTIME) + period, period, true));
	ASSERT_EQ(1, t_wait_readable(cos.qfd, WAIT_MS));
	EXPECT_TRUE(readable(cos.tfd));
	t_sleep_ms(100);
	STEP(&cos, -NSEC_PER_SEC);
	EXPECT_EQ(0, timerfd_canceled(&cos, true));
	t_sleep_ms(200);
	EXPECT_EQ(0, qtimer_canceled(&cos, &rec));
	EXPECT_LE(1, rec.count);
	close_pair(&cos);
}

/*
 * The same, read as soon as clock_settime() returns.  timerfd has applied
 * the set by then (ECANCELED); qtimer must not hand out the expirations it
 * had pending as if the clock had not been set: its record must be the
 * cancellation.  The header allows a plain record only to a read() that
 * was copying it out when the clock was set.  qtimer applies sets from a
 * work item on this CPU, which an ordinary task may or may not let run
 * before it reads; SCHED_FIFO makes the read come first every time.
 */
TEST_F(step, cancel_on_set_ticker_read_at_once)
{
	const __s64 period = 20 * MS;
	struct sched_param sp = { .sched_priority = 10 };
	struct qtimer_record recs[2];
	struct pair cos;
	int n;

	ASSERT_EQ(0, arm_pair(&cos, "cancel-on-set ticker, read at once",
			      CLOCK_REALTIME, true,
			      t_now(CLOCK_REALTIME) + period, period, true));
	ASSERT_EQ(1, t_wait_readable(cos.qfd, WAIT_MS));
	EXPECT_TRUE(readable(cos.tfd));
	t_sleep_ms(100);
	if (sched_setscheduler(0, SCHED_FIFO, &sp))
		SKIP(return, "cannot use SCHED_FIFO: %s", strerror(errno));
	STEP(&cos, -NSEC_PER_SEC);
	EXPECT_EQ(0, timerfd_canceled(&cos, true));
	n = t_read(cos.qfd, recs, 1);
	sp.sched_priority = 0;
	ASSERT_EQ(0, sched_setscheduler(0, SCHED_OTHER, &sp));
	ASSERT_EQ(1, n);
	/* What follows, for the log. */
	memset(&recs[1], 0, sizeof(recs[1]));
	n = t_collect(cos.qfd, recs + 1, 1, 500);
	EXPECT_EQ(QTIMER_REC_CANCELED | QTIMER_REC_LAST, recs[0].flags)
		TH_LOG("timerfd: ECANCELED; qtimer: flags %#x count %u, then %d more: flags %#x count %u",
		       recs[0].flags, recs[0].count, n, recs[1].flags,
		       recs[1].count);
	close_pair(&cos);
}

/*
 * A one-shot that fired but was not read when the clock is set: timerfd
 * reports the set (ECANCELED; the expiration is discarded), so qtimer must
 * too.  The header says a cancel-on-set timer "is cancelled when the
 * realtime clock is set" and delivers CANCELED|LAST with "count 0 (or the
 * expirations it had pending)"; a plain record that hides the set is a
 * difference it does not document.
 */
TEST_F(step, cancel_on_set_one_shot_fired_unread)
{
	struct qtimer_record rec;
	struct pair cos;

	ASSERT_EQ(0, arm_pair(&cos, "cancel-on-set, fired, unread",
			      CLOCK_REALTIME, true,
			      t_now(CLOCK_REALTIME) + 30 * MS, 0, true));
	ASSERT_EQ(1, t_wait_readable(cos.qfd, WAIT_MS));
	EXPECT_TRUE(readable(cos.tfd));
	STEP(&cos, NSEC_PER_SEC);
	EXPECT_EQ(0, timerfd_canceled(&cos, true));
	t_sleep_ms(200);	/* not the race of the test above */
	ASSERT_EQ(1, t_collect(cos.qfd, &rec, 1, WAIT_MS));
	EXPECT_EQ(cos.id, rec.id);
	EXPECT_EQ(QTIMER_REC_CANCELED | QTIMER_REC_LAST, rec.flags)
		TH_LOG("timerfd: ECANCELED; qtimer: flags %#x, count %u",
		       rec.flags, rec.count);
	EXPECT_GE(1, rec.count);
	close_pair(&cos);
}

/*
 * The timekeeper announces "clock was set" for changes that leave the wall
 * clock where it was against the monotonic one: a new TAI offset, a switch
 * of clocksource.  timerfd cancels only when that offset moved, so neither
 * may cancel a cancel-on-set timer: the pair armed before the change fires
 * as armed, with no cancellation on either side (one would turn even a
 * record already pending into CANCELED, so how soon it fires is moot).
 */
static void expect_fires_as_armed(struct __test_metadata *_metadata,
				  struct pair *p)
{
	t_sleep_ms(100);	/* for a cancellation's work item */
	ASSERT_EQ(0, collect_one_shot(p));
	EXPECT_EQ(0, check_one_shot(p));
}

TEST_F(step, cancel_on_set_not_by_a_tai_change)
{
	struct timex tx = { 0 };
	struct pair cos;

	ASSERT_LE(0, adjtimex(&tx));
	ASSERT_EQ(0, arm_pair(&cos, "cancel-on-set, TAI offset changed",
			      CLOCK_REALTIME, true,
			      t_now(CLOCK_REALTIME) + NSEC_PER_SEC, 0, true));
	self->tai = tx.tai;
	tx = (struct timex){ .modes = ADJ_TAI, .constant = self->tai + 1 };
	if (adjtimex(&tx) < 0) {
		self->tai = -1;
		if (errno == EPERM)
			SKIP(return, "cannot adjtimex(ADJ_TAI) (needs CAP_SYS_TIME)");
		ASSERT_EQ(0, errno);
	}
	expect_fires_as_armed(_metadata, &cos);
	close_pair(&cos);
}

TEST_F(step, cancel_on_set_not_by_a_clocksource_switch)
{
	const char *dir = "/sys/devices/system/clocksource/clocksource0";
	char path[128], cur[64], avail[256], *other;
	struct pair cos;
	int ret;

	snprintf(path, sizeof(path), "%s/current_clocksource", dir);
	ASSERT_EQ(0, t_read_str(path, cur, sizeof(cur)));
	snprintf(path, sizeof(path), "%s/available_clocksource", dir);
	ASSERT_EQ(0, t_read_str(path, avail, sizeof(avail)));
	for (other = strtok(avail, " "); other; other = strtok(NULL, " "))
		if (strcmp(other, cur))
			break;
	if (!other)
		SKIP(return, "one clocksource only (%s)", cur);
	ASSERT_EQ(0, arm_pair(&cos, "cancel-on-set, clocksource switched",
			      CLOCK_REALTIME, true,
			      t_now(CLOCK_REALTIME) + NSEC_PER_SEC, 0, true));
	snprintf(path, sizeof(path), "%s/current_clocksource", dir);
	ret = t_knob_set(&self->clocksource, path, other);
	if (ret == -EPERM || ret == -EACCES)
		SKIP(return, "cannot switch clocksource: %s", strerror(-ret));
	ASSERT_EQ(0, ret) TH_LOG("%s to %s", cur, other);
	ASSERT_EQ(0, t_knob_restore(&self->clocksource));
	expect_fires_as_armed(_metadata, &cos);
	close_pair(&cos);
}

TEST_HARNESS_MAIN
