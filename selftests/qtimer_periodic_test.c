// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * Periodic timers: at most one pending record per timer, whose count
 * stands for every expiration since the last read; the schedule never
 * drifts (the expiry of the latest expiration counted is always
 * first + (total - 1) * period, so the sum of counts is pinned to the
 * record's expiry); no expiration is counted before its time (the sum of
 * counts never exceeds what the elapsed time allows); and CANCEL stops it.
 * Lower bounds on counts allow for QEMU TCG's lateness.
 */
#define _GNU_SOURCE
#include "clock_harness.h"

/* How late a TCG guest may deliver, for lower bounds only. */
#define LATE_NS		(400 * NSEC_PER_MSEC)

T_CLOCK_FIXTURE(periodic)

/* Expirations at first + k * period that are due at @now. */
static __s64 due(__s64 first, __s64 period, __s64 now)
{
	return now < first ? 0 : (now - first) / period + 1;
}

/*
 * Reads the ticker's next @n records: each continues the schedule where
 * the one before stopped (*total counts the expirations read so far) and
 * came no earlier than its expiry.
 */
static void expect_schedule_kept(struct __test_metadata *_metadata, int fd,
				 int clockid, __s64 first, __s64 period,
				 __u64 *total, int n)
{
	struct qtimer_record rec;
	__s64 stamp;
	int i;

	for (i = 0; i < n; i++) {
		ASSERT_EQ(1, t_collect_stamped(fd, &rec, 1, QT_ARRIVE_MS,
						clockid, &stamp));
		*total += rec.count;
		EXPECT_EQ(first + ((__s64)*total - 1) * period, rec.expires_ns);
		EXPECT_LE(rec.expires_ns, stamp);
	}
}

TEST_F(periodic, slow_reader_one_record_counts_all)
{
	const __s64 period = 20 * NSEC_PER_MSEC;
	struct qtimer_record recs[16];
	__s64 first, before, after;
	__u64 id;
	int ret;

	first = t_now(variant->clockid) + period;
	ASSERT_EQ(0, t_arm(self->fd, variant->clockid, QTIMER_F_ABSTIME,
			    first, period, 77, &id));
	t_sleep_ms(600);	/* ~30 periods */
	before = t_now(variant->clockid);
	ASSERT_EQ(1, t_read(self->fd, recs, 16));
	after = t_now(variant->clockid);

	EXPECT_EQ(id, recs[0].id);
	EXPECT_EQ(77, recs[0].cookie);
	EXPECT_EQ(0, recs[0].flags);
	/* Never early: no more than the elapsed time allows... */
	EXPECT_GE(due(first, period, after), recs[0].count);
	/* ... and, generously, not far fewer. */
	EXPECT_LE(due(first, period, before - LATE_NS), recs[0].count);
	EXPECT_LE(2, recs[0].count);
	/* Drift-free. */
	EXPECT_EQ(first + ((__s64)recs[0].count - 1) * period,
		  recs[0].expires_ns);
	EXPECT_GE(after, recs[0].expires_ns);
	ret = t_cancel(self->fd, id);
	EXPECT_TRUE(t_mask_ok(ret)) {
		TH_LOG("cancel after read returned %d", ret);
	}
}

/*
 * Read as records come, with uneven pauses: every record continues the
 * schedule exactly where the previous one stopped.
 */
TEST_F(periodic, sum_of_counts_tracks_elapsed_time)
{
	const __s64 period = 10 * NSEC_PER_MSEC;
	struct qtimer_record rec;
	__s64 first, stamp, end, now;
	__u64 id, total = 0;
	int reads = 0;

	srand(getpid());
	first = t_now(variant->clockid) + 15 * NSEC_PER_MSEC;
	ASSERT_EQ(0, t_arm(self->fd, variant->clockid, QTIMER_F_ABSTIME,
			    first, period, 78, &id));
	end = t_now(CLOCK_MONOTONIC) + 600 * NSEC_PER_MSEC;
	while (t_now(CLOCK_MONOTONIC) < end) {
		ASSERT_EQ(1, t_collect_stamped(self->fd, &rec, 1, QT_ARRIVE_MS,
						variant->clockid, &stamp));
		reads++;
		ASSERT_EQ(id, rec.id);
		EXPECT_EQ(0, rec.flags);
		ASSERT_LE(1, rec.count);
		total += rec.count;
		ASSERT_EQ(first + ((__s64)total - 1) * period, rec.expires_ns) {
			TH_LOG("read %d: count %u total %llu", reads, rec.count,
			       (unsigned long long)total);
		}
		ASSERT_LE(rec.expires_ns, stamp);
		ASSERT_GE(due(first, period, stamp), (__s64)total);
		t_sleep_ms(rand() % 35);
	}
	now = t_now(variant->clockid);
	EXPECT_GE(due(first, period, now), (__s64)total);
	EXPECT_LE(due(first, period, now - LATE_NS), (__s64)total);
	EXPECT_LE(3, reads);
}

TEST_F(periodic, relative_first_expiry_then_period)
{
	const __s64 rel = 50 * NSEC_PER_MSEC, period = 30 * NSEC_PER_MSEC;
	struct qtimer_record rec;
	__s64 t0, t1, first, stamp;
	__u64 id, total = 0;

	t0 = t_now(variant->clockid);
	ASSERT_EQ(0, t_arm(self->fd, variant->clockid, 0, rel, period, 1, &id));
	t1 = t_now(variant->clockid);
	ASSERT_EQ(1, t_collect_stamped(self->fd, &rec, 1, QT_ARRIVE_MS,
					variant->clockid, &stamp));
	total = rec.count;
	first = rec.expires_ns - ((__s64)total - 1) * period;
	EXPECT_LE(t0 + rel, first);
	EXPECT_GE(t1 + rel, first);
	EXPECT_LE(rec.expires_ns, stamp);
	expect_schedule_kept(_metadata, self->fd, variant->clockid, first,
			     period, &total, 4);
}

/* An absolute first expiry in the past counts every period already due. */
TEST_F(periodic, absolute_past_start_counts_missed_periods)
{
	const __s64 period = 10 * NSEC_PER_MSEC;
	struct qtimer_record rec;
	__s64 first, before, stamp;
	__u64 id;

	before = t_now(variant->clockid);
	first = before - 105 * NSEC_PER_MSEC;
	ASSERT_EQ(0, t_arm(self->fd, variant->clockid, QTIMER_F_ABSTIME,
			    first, period, 2, &id));
	ASSERT_EQ(1, t_collect_stamped(self->fd, &rec, 1, QT_ARRIVE_MS,
					variant->clockid, &stamp));
	EXPECT_EQ(0, rec.flags);
	EXPECT_LE(due(first, period, before), rec.count);
	EXPECT_GE(due(first, period, stamp), rec.count);
	EXPECT_EQ(first + ((__s64)rec.count - 1) * period, rec.expires_ns);
}

TEST_F(periodic, slack_keeps_schedule)
{
	const __s64 period = 20 * NSEC_PER_MSEC;
	struct qtimer_op op;
	__s64 first;
	__u64 total = 0;

	first = t_now(variant->clockid) + period;
	op = t_op(variant->clockid, QTIMER_F_ABSTIME, first, period, 3);
	op.slack_ns = 15 * NSEC_PER_MSEC;
	ASSERT_EQ(0, t_arm_op(self->fd, &op));
	expect_schedule_kept(_metadata, self->fd, variant->clockid, first,
			     period, &total, 5);
}

TEST_F(periodic, at_most_one_pending_record_per_timer)
{
	enum { N = 8 };
	struct qtimer_record recs[N];
	__u64 ids[N];
	int i, n, k;

	for (i = 0; i < N; i++)
		ASSERT_EQ(0, t_arm_cpu(self->fd, variant->clockid, 0,
					(3 + i) * NSEC_PER_MSEC,
					(3 + i) * NSEC_PER_MSEC, i,
					i % t_nr_cpus(), &ids[i]));
	t_sleep_ms(100);
	ASSERT_EQ(1, t_wait_pending(self->fd, N, QT_ARRIVE_MS));
	/*
	 * Room for exactly N: had any ticker queued a record per expiration,
	 * the early ones would fill the buffer and some timer would be
	 * missing.  (A bigger buffer may legitimately also get a second
	 * record of a short ticker that fired again during the read.)
	 */
	n = t_read(self->fd, recs, N);
	ASSERT_EQ(N, n);
	for (i = 0; i < N; i++) {
		k = t_find_cookie(recs, n, i);
		ASSERT_LE(0, k);
		EXPECT_EQ(ids[i], recs[k].id);
		EXPECT_LE(2, recs[k].count);
		EXPECT_EQ(0, recs[k].flags);
	}
	for (i = 0; i < N; i++) {
		int ret = t_cancel(self->fd, ids[i]);

		EXPECT_TRUE(t_mask_ok(ret)) {
			TH_LOG("cancel of ticker %d after read returned %d",
			       i, ret);
		}
	}
}

TEST_F(periodic, cancel_stops_it)
{
	const __s64 period = 10 * NSEC_PER_MSEC;
	struct qtimer_record rec;
	__u64 id;
	int ret;

	ASSERT_EQ(0, t_arm(self->fd, variant->clockid, 0, period, period, 5,
			    &id));
	ASSERT_EQ(1, t_collect(self->fd, &rec, 1, QT_ARRIVE_MS));
	ASSERT_EQ(1, t_collect(self->fd, &rec, 1, QT_ARRIVE_MS));
	ret = t_cancel(self->fd, id);
	EXPECT_TRUE(t_mask_ok(ret));
	EXPECT_EQ(0, t_nothing_pending(self->fd));
	t_sleep_ms(10 * period / NSEC_PER_MSEC);
	EXPECT_EQ(0, t_nothing_pending(self->fd));
	EXPECT_EQ(-ENOENT, t_cancel(self->fd, id));
}

/* Many short periodic timers over all CPUs keep their schedules. */
TEST_F(periodic, many_tickers)
{
	enum { N = 64 };
	static struct qtimer_record recs[N];
	static __u64 total[N];
	static __s64 first[N], period[N];
	__s64 end, stamp, after;
	int i, n, k;

	for (i = 0; i < N; i++) {
		period[i] = (5 + i % 7) * NSEC_PER_MSEC;
		first[i] = t_now(variant->clockid) + period[i];
		ASSERT_EQ(0, t_arm_cpu(self->fd, variant->clockid,
					QTIMER_F_ABSTIME, first[i], period[i],
					i, i % t_nr_cpus(), NULL));
	}
	end = t_now(CLOCK_MONOTONIC) + 400 * NSEC_PER_MSEC;
	while (t_now(CLOCK_MONOTONIC) < end) {
		ASSERT_EQ(1, t_collect_stamped(self->fd, recs, 1, QT_ARRIVE_MS,
						variant->clockid, &stamp));
		n = t_read(self->fd, recs + 1, N - 1);
		after = t_now(variant->clockid);	/* after both reads */
		if (n == -EAGAIN)
			n = 0;
		ASSERT_LE(0, n);
		n++;
		for (i = 0; i < n; i++) {
			k = recs[i].cookie;
			ASSERT_GT(N, k);
			ASSERT_LE(1, recs[i].count);
			total[k] += recs[i].count;
			ASSERT_EQ(first[k] + ((__s64)total[k] - 1) * period[k],
				  recs[i].expires_ns);
			ASSERT_LE(recs[i].expires_ns, i ? after : stamp);
		}
		for (k = 0; k < N; k++)
			ASSERT_GE(due(first[k], period[k], after),
				  (__s64)total[k]);
		t_sleep_ms(20);
	}
	for (k = 0; k < N; k++)
		EXPECT_LT(0, total[k]);
}

TEST_HARNESS_MAIN
