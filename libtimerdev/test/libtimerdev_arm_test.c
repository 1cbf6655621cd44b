// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * libtimerdev against the real module, arming timers: td_arm on each clock,
 * relative and absolute, pinned and not, every spec the library or the
 * kernel refuses, cancel-on-set; td_get, which reads a schedule back as a
 * spec that arms its twin; and a periodic timer's counts (see
 * device_harness.h for what every libtimerdev_*_test shares).
 */
#include "device_harness.h"

/* ---- td_arm ---- */

FIXTURE(clock) {
	struct td_ctx *ctx;
};

FIXTURE_VARIANT(clock) {
	clockid_t clockid;
	bool abstime;
};

FIXTURE_VARIANT_ADD(clock, monotonic) {
	.clockid = CLOCK_MONOTONIC,
};

FIXTURE_VARIANT_ADD(clock, realtime) {
	.clockid = CLOCK_REALTIME,
};

FIXTURE_VARIANT_ADD(clock, boottime) {
	.clockid = CLOCK_BOOTTIME,
};

FIXTURE_VARIANT_ADD(clock, monotonic_abs) {
	.clockid = CLOCK_MONOTONIC,
	.abstime = true,
};

FIXTURE_VARIANT_ADD(clock, realtime_abs) {
	.clockid = CLOCK_REALTIME,
	.abstime = true,
};

FIXTURE_VARIANT_ADD(clock, boottime_abs) {
	.clockid = CLOCK_BOOTTIME,
	.abstime = true,
};

FIXTURE_SETUP(clock)
{
	ASSERT_EQ(0, td_open(&self->ctx, TD_NONBLOCK));
}

FIXTURE_TEARDOWN(clock)
{
	td_close(self->ctx);
}

/* A one-shot timer fires once, never early, and is then gone. */
TEST_F(clock, oneshot_fires_once)
{
	struct td_timer_spec spec = {
		.clockid = variant->clockid,
		.expires_ns = 20 * NSEC_PER_MSEC,
		.cookie = 0xc0ffee,
	};
	struct qtimer_record rec[2];
	int64_t start, due, now;
	uint64_t id;

	start = td_now(variant->clockid);
	due = start + spec.expires_ns;
	if (variant->abstime) {
		spec.flags = TD_TIMER_ABSTIME;
		spec.expires_ns = due;
	}
	ASSERT_EQ(0, td_arm(self->ctx, &spec, &id));
	ASSERT_NE(0, id);
	ASSERT_EQ(1, td_wait(self->ctx, rec, 2, PATIENCE));
	now = td_now(variant->clockid);
	ASSERT_EQ(id, rec[0].id);
	ASSERT_EQ(0xc0ffee, rec[0].cookie);
	ASSERT_EQ(1, rec[0].count);
	ASSERT_EQ(QTIMER_REC_LAST, rec[0].flags);
	ASSERT_GE(rec[0].expires_ns, due);
	ASSERT_LE(rec[0].expires_ns, now);
	if (variant->abstime)
		ASSERT_EQ(due, rec[0].expires_ns);
	/* Gone: no second record, and the id is dead. */
	ASSERT_EQ(-ETIME, td_wait(self->ctx, rec, 2, 50 * NSEC_PER_MSEC));
	ASSERT_EQ(-ENOENT, td_cancel(self->ctx, id));
}

TEST_F(qt, arm_id_optional)
{
	struct td_timer_spec spec = mono(NSEC_PER_MSEC, 5);
	struct qtimer_record rec;

	ASSERT_EQ(0, td_arm(self->ctx, &spec, NULL));
	ASSERT_EQ(1, td_wait(self->ctx, &rec, 1, PATIENCE));
	ASSERT_EQ(5, rec.cookie);
}

TEST_F(qt, arm_on_cpu)
{
	struct td_timer_spec spec = mono(NSEC_PER_MSEC, 7);
	struct qtimer_record rec;
	long cpu, nr = sysconf(_SC_NPROCESSORS_ONLN);

	spec.flags = TD_TIMER_CPU;
	for (cpu = 0; cpu < nr; cpu++) {
		spec.cpu = cpu;
		ASSERT_EQ(0, td_arm(self->ctx, &spec, NULL));
		ASSERT_EQ(1, td_wait(self->ctx, &rec, 1, PATIENCE));
		ASSERT_EQ(7, rec.cookie);
	}
}

TEST_F(qt, arm_offline_cpu)
{
	struct td_timer_spec spec = mono(FAR, 0);

	spec.flags = TD_TIMER_CPU;
	spec.cpu = sysconf(_SC_NPROCESSORS_CONF) + 1;
	ASSERT_EQ(-EINVAL, td_arm(self->ctx, &spec, NULL));
}

TEST_F(qt, arm_bad_clock)
{
	struct td_timer_spec spec = mono(FAR, 0);

	spec.clockid = CLOCK_PROCESS_CPUTIME_ID;
	ASSERT_EQ(-EINVAL, td_arm(self->ctx, &spec, NULL));
}

TEST_F(qt, arm_negative_relative)
{
	struct td_timer_spec spec = mono(-1, 0);

	ASSERT_EQ(-EINVAL, td_arm(self->ctx, &spec, NULL));
}

TEST_F(qt, arm_slack_above_limit)
{
	struct td_timer_spec spec = mono(FAR, 0);

	spec.slack_ns = QTIMER_SLACK_MAX_NS + 1;
	ASSERT_EQ(-EINVAL, td_arm(self->ctx, &spec, NULL));
}

TEST_F(qt, arm_slack_at_limit)
{
	struct td_timer_spec spec = mono(FAR, 0);
	uint64_t id;

	spec.slack_ns = QTIMER_SLACK_MAX_NS;
	ASSERT_EQ(0, td_arm(self->ctx, &spec, &id));
	ASSERT_EQ(QTIMER_CANCEL_ARMED, td_cancel(self->ctx, id));
}

TEST_F(qt, arm_cancel_on_set_needs_realtime_abs)
{
	struct td_timer_spec spec = mono(FAR, 0);

	spec.flags = TD_TIMER_CANCEL_ON_SET;
	ASSERT_EQ(-EINVAL, td_arm(self->ctx, &spec, NULL));
	spec.flags |= TD_TIMER_ABSTIME;
	spec.expires_ns += td_now(CLOCK_MONOTONIC);
	ASSERT_EQ(-EINVAL, td_arm(self->ctx, &spec, NULL));
	spec.clockid = CLOCK_REALTIME;
	spec.flags = TD_TIMER_CANCEL_ON_SET;	/* relative */
	ASSERT_EQ(-EINVAL, td_arm(self->ctx, &spec, NULL));
}

TEST_F(qt, arm_overflow)
{
	struct td_timer_spec spec = mono(INT64_MAX, 0);

	ASSERT_EQ(-EOVERFLOW, td_arm(self->ctx, &spec, NULL));
}

TEST_F(qt, arm_library_checks)
{
	struct td_timer_spec spec = mono(FAR, 0);

	spec.cpu = -2;
	ASSERT_EQ(-EINVAL, td_arm(self->ctx, &spec, NULL));
	/* A CPU without TD_TIMER_CPU, and TD_TIMER_CPU without a CPU. */
	spec.cpu = 1;
	ASSERT_EQ(-EINVAL, td_arm(self->ctx, &spec, NULL));
	spec.cpu = TD_CPU_ANY;
	spec.flags = TD_TIMER_CPU;
	ASSERT_EQ(-EINVAL, td_arm(self->ctx, &spec, NULL));
	ASSERT_EQ(-EINVAL, td_arm(self->ctx, NULL, NULL));
}

/* A realtime CANCEL_ON_SET timer reports a clock set, like timerfd. */
TEST_F(qt, cancel_on_set)
{
	struct td_timer_spec spec = {
		.clockid = CLOCK_REALTIME,
		.flags = TD_TIMER_ABSTIME | TD_TIMER_CANCEL_ON_SET,
		.cookie = 77,
	};
	struct qtimer_version v;
	struct qtimer_record rec;
	struct timespec ts;
	uint64_t id;

	ASSERT_EQ(0, td_version(self->ctx, &v));
	if (!(v.features & QTIMER_FEAT_CANCEL_ON_SET))
		SKIP(return, "no QTIMER_FEAT_CANCEL_ON_SET");
	spec.expires_ns = td_now(CLOCK_REALTIME) + FAR;
	ASSERT_EQ(0, td_arm(self->ctx, &spec, &id));
	ASSERT_EQ(-EAGAIN, td_read(self->ctx, &rec, 1));
	/* Set the clock to what it is: still a set. */
	ASSERT_EQ(0, clock_gettime(CLOCK_REALTIME, &ts));
	ASSERT_EQ(0, clock_settime(CLOCK_REALTIME, &ts));
	ASSERT_EQ(1, td_wait(self->ctx, &rec, 1, PATIENCE));
	ASSERT_EQ(id, rec.id);
	ASSERT_EQ(77, rec.cookie);
	ASSERT_EQ(0, rec.count);
	ASSERT_EQ(QTIMER_REC_CANCELED | QTIMER_REC_LAST, rec.flags);
	ASSERT_EQ(-ENOENT, td_cancel(self->ctx, id));
}

/* ---- td_get ---- */

/*
 * The schedule comes back as armed, and the spec arms its twin; a fired
 * one-shot is pending until read, then gone.
 */
TEST_F(qt, get_reads_the_schedule_back)
{
	struct td_timer_spec spec = mono(FAR, 0), got, again;
	struct qtimer_version v;
	struct qtimer_record rec;
	int64_t before = td_now(CLOCK_MONOTONIC);
	uint64_t id, twin;

	ASSERT_EQ(0, td_version(self->ctx, &v));
	if (!(v.features & QTIMER_FEAT_GET))
		SKIP(return, "the module has no GET");
	spec.slack_ns = 1000;
	spec.cookie = 42;
	ASSERT_EQ(0, td_arm(self->ctx, &spec, &id));
	ASSERT_EQ(TD_TIMER_ARMED, td_get(self->ctx, id, &got));
	EXPECT_EQ(CLOCK_MONOTONIC, got.clockid);
	EXPECT_EQ(TD_TIMER_ABSTIME | TD_TIMER_CPU, got.flags);
	EXPECT_LE(before + FAR, got.expires_ns);
	EXPECT_GE(td_now(CLOCK_MONOTONIC) + FAR, got.expires_ns);
	EXPECT_EQ(1000, got.slack_ns);
	EXPECT_EQ(42, got.cookie);

	ASSERT_EQ(0, td_arm(self->ctx, &got, &twin));
	ASSERT_EQ(TD_TIMER_ARMED, td_get(self->ctx, twin, &again));
	EXPECT_EQ(0, memcmp(&got, &again, sizeof(got)));
	ASSERT_EQ(QTIMER_CANCEL_ARMED, td_cancel(self->ctx, twin));
	ASSERT_EQ(QTIMER_CANCEL_ARMED, td_cancel(self->ctx, id));
	ASSERT_EQ(-ENOENT, td_get(self->ctx, id, &got));

	spec = mono(NSEC_PER_MSEC, 0);
	ASSERT_EQ(0, td_arm(self->ctx, &spec, &id));
	ASSERT_EQ(1, t_wait_readable(td_fd(self->ctx), PATIENCE_MS));
	ASSERT_EQ(TD_TIMER_PENDING, td_get(self->ctx, id, &got));
	ASSERT_EQ(1, td_read(self->ctx, &rec, 1));
	EXPECT_EQ(id, rec.id);
	EXPECT_EQ(got.expires_ns, rec.expires_ns);
	ASSERT_EQ(-ENOENT, td_get(self->ctx, id, &got));
}

/* ---- periodic timers and counts ---- */

/*
 * A periodic timer read slowly: one record per read whatever the backlog,
 * expiries on the grid first + k * period, and counts that add up to the
 * number of grid points passed.
 */
TEST_F(qt, periodic_counts_add_up)
{
	const int64_t period = 10 * NSEC_PER_MSEC;
	struct td_timer_spec spec = mono(0, 0);
	struct qtimer_record rec[4];
	int64_t first, last = 0;
	uint64_t id, total = 0;
	int i, j, nr;

	first = td_now(CLOCK_MONOTONIC) + period;
	spec.expires_ns = first;
	spec.flags = TD_TIMER_ABSTIME;
	spec.period_ns = period;
	ASSERT_EQ(0, td_arm(self->ctx, &spec, &id));
	for (i = 0; i < 5; i++) {
		usleep(60000);
		/*
		 * Usually one record; two when the ticker, re-armed by this
		 * read, fired again before the read returned (a slow guest).
		 * Either way the counts must add up.
		 */
		nr = td_wait(self->ctx, rec, 4, PATIENCE);
		ASSERT_LE(1, nr);
		for (j = 0; j < nr; j++) {
			ASSERT_EQ(id, rec[j].id);
			ASSERT_EQ(0, rec[j].flags);
			ASSERT_GE(rec[j].count, 1);
			ASSERT_EQ(0, (rec[j].expires_ns - first) % period);
			ASSERT_GT(rec[j].expires_ns, last);
			ASSERT_LE(rec[j].expires_ns, td_now(CLOCK_MONOTONIC));
			last = rec[j].expires_ns;
			total += rec[j].count;
		}
	}
	ASSERT_EQ((uint64_t)((last - first) / period + 1), total);
	/*
	 * Armed, or fired again since the read, or (taken from the record
	 * ring, whose tail the kernel has not reaped yet) neither: 0.  Either
	 * way it existed: not -ENOENT.
	 */
	ASSERT_GE(td_cancel(self->ctx, id), 0);
}

TEST_HARNESS_MAIN
