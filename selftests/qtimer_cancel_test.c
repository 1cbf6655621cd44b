// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * CANCEL and MODIFY: after either returns, no record of the old schedule is
 * ever read, whether the timer was armed or had a record queued, and the
 * returned mask says which of the two it prevented.  Ids are checked hard:
 * stale (even when the timer's slot is reused), forged and other files'
 * ids are -ENOENT and touch nothing.
 *
 * "Nothing is ever read" is checked without long sleeps: a sentinel timer
 * on the same CPU heap and clock expires after the timer under test, and
 * heaps fire in expiry order, so once the sentinel's record is in, a record
 * of the timer under test would have been too.
 */
#define _GNU_SOURCE
#include "clock_harness.h"

#define SENTINEL_COOKIE	0x5e5e5e5eULL

T_FILE_FIXTURE(cancel)

/* Arms a one-shot on CPU 0 at absolute CLOCK_MONOTONIC @when. */
static int arm_cpu0(int fd, __s64 when, __u64 cookie, __u64 *id)
{
	return t_arm_cpu(fd, CLOCK_MONOTONIC, QTIMER_F_ABSTIME, when, 0,
			  cookie, 0, id);
}

TEST_F(cancel, before_fire)
{
	struct qtimer_record recs[4];
	__s64 now = t_now(CLOCK_MONOTONIC);
	__u64 id;

	ASSERT_EQ(0, arm_cpu0(self->fd, now + 500 * NSEC_PER_MSEC, 1, &id));
	ASSERT_EQ(0, arm_cpu0(self->fd, now + 600 * NSEC_PER_MSEC,
			      SENTINEL_COOKIE, NULL));
	EXPECT_EQ(QTIMER_CANCEL_ARMED, t_cancel(self->fd, id));
	EXPECT_EQ(0, t_read_to_sentinel(self->fd, SENTINEL_COOKIE, recs, 4));
	EXPECT_EQ(0, t_nothing_pending(self->fd));
	EXPECT_EQ(-ENOENT, t_cancel(self->fd, id));
}

TEST_F(cancel, after_fire_before_read)
{
	struct qtimer_record rec;
	__u64 id;

	ASSERT_EQ(0, t_arm(self->fd, CLOCK_MONOTONIC, 0, 10 * NSEC_PER_MSEC,
			    0, 1, &id));
	ASSERT_EQ(1, t_wait_readable(self->fd, QT_ARRIVE_MS));
	EXPECT_EQ(QTIMER_CANCEL_QUEUED, t_cancel(self->fd, id));
	/* The queued record is gone: poll and read agree at once. */
	EXPECT_EQ(0, t_revents(self->fd) & POLLIN);
	EXPECT_EQ(-EAGAIN, t_read(self->fd, &rec, 1));
	t_sleep_ms(100);
	EXPECT_EQ(0, t_nothing_pending(self->fd));
	EXPECT_EQ(-ENOENT, t_cancel(self->fd, id));
}

/* Only the cancelled timer's record is discarded, not its neighbours'. */
TEST_F(cancel, queued_discards_only_its_record)
{
	struct qtimer_record recs[4];
	__s64 now = t_now(CLOCK_MONOTONIC);
	__u64 a, b, c;

	ASSERT_EQ(0, arm_cpu0(self->fd, now + 10 * NSEC_PER_MSEC, 1, &a));
	ASSERT_EQ(0, arm_cpu0(self->fd, now + 11 * NSEC_PER_MSEC, 2, &b));
	ASSERT_EQ(0, arm_cpu0(self->fd, now + 12 * NSEC_PER_MSEC, 3, &c));
	/* Wait until all three are queued, without reading. */
	ASSERT_EQ(1, t_wait_pending(self->fd, 3, QT_ARRIVE_MS));
	EXPECT_EQ(QTIMER_CANCEL_QUEUED, t_cancel(self->fd, b));
	ASSERT_EQ(2, t_collect(self->fd, recs, 2, QT_ARRIVE_MS));
	EXPECT_EQ(a, recs[0].id);
	EXPECT_EQ(c, recs[1].id);
	EXPECT_EQ(0, t_nothing_pending(self->fd));
}

TEST_F(cancel, periodic_fired_unread)
{
	__u64 id;

	ASSERT_EQ(0, t_arm(self->fd, CLOCK_MONOTONIC, 0, 10 * NSEC_PER_MSEC,
			    10 * NSEC_PER_MSEC, 1, &id));
	int ret;

	ASSERT_EQ(1, t_wait_readable(self->fd, QT_ARRIVE_MS));
	/*
	 * One record queued; whether the ticker also counts as armed for its
	 * next period (ARMED | QUEUED, as "and/or" in the header suggests) or
	 * not (QUEUED: "ARMED: the timer had not fired") is left open.
	 */
	ret = t_cancel(self->fd, id);
	EXPECT_EQ(QTIMER_CANCEL_QUEUED, ret & QTIMER_CANCEL_QUEUED);
	EXPECT_TRUE(t_mask_ok(ret));
	TH_LOG("cancel of a ticker with a queued record returned %d", ret);
	EXPECT_EQ(0, t_nothing_pending(self->fd));
	t_sleep_ms(100);
	EXPECT_EQ(0, t_nothing_pending(self->fd));
	EXPECT_EQ(-ENOENT, t_cancel(self->fd, id));
}

TEST_F(cancel, periodic_after_read_still_armed)
{
	struct qtimer_record rec;
	__u64 id;

	ASSERT_EQ(0, t_arm(self->fd, CLOCK_MONOTONIC, 0, 10 * NSEC_PER_MSEC,
			    NSEC_PER_SEC, 1, &id));
	ASSERT_EQ(1, t_collect(self->fd, &rec, 1, QT_ARRIVE_MS));
	EXPECT_EQ(0, rec.flags & QTIMER_REC_LAST);
	/* The next expiry is a second away: armed, nothing queued. */
	EXPECT_EQ(QTIMER_CANCEL_ARMED, t_cancel(self->fd, id));
	EXPECT_EQ(-ENOENT, t_cancel(self->fd, id));
}

TEST_F(cancel, after_read_of_oneshot)
{
	struct qtimer_record rec;
	__u64 id;

	ASSERT_EQ(0, t_arm(self->fd, CLOCK_MONOTONIC, 0, 0, 0, 1, &id));
	ASSERT_EQ(1, t_collect(self->fd, &rec, 1, QT_ARRIVE_MS));
	EXPECT_EQ(id, rec.id);
	EXPECT_EQ(-ENOENT, t_cancel(self->fd, id));
}

TEST_F(cancel, double_cancel)
{
	__u64 id;

	ASSERT_EQ(0, t_arm(self->fd, CLOCK_MONOTONIC, 0, 10 * NSEC_PER_SEC,
			    0, 1, &id));
	EXPECT_EQ(QTIMER_CANCEL_ARMED, t_cancel(self->fd, id));
	EXPECT_EQ(-ENOENT, t_cancel(self->fd, id));
	EXPECT_EQ(-ENOENT, t_modify(self->fd, id, 0, NSEC_PER_SEC, 0, 0));
}

/*
 * Arm and cancel many times so that every internal slot is freed and
 * reused: old ids stay dead, new ids never repeat old ones, and cancelling
 * an old id leaves the new timer in its slot alone.
 */
TEST_F(cancel, stale_id_after_slot_reuse)
{
	enum { ROUNDS = 256, LIVE = 64 };
	static __u64 stale[ROUNDS * 2], live[LIVE];
	int i, j, nstale = 0;

	for (i = 0; i < ROUNDS; i++) {
		__u64 a, b;

		ASSERT_EQ(0, t_arm(self->fd, CLOCK_MONOTONIC, 0,
				    10 * NSEC_PER_SEC, 0, i, &a));
		ASSERT_EQ(0, t_arm(self->fd, CLOCK_MONOTONIC, 0,
				    10 * NSEC_PER_SEC, 0, i, &b));
		ASSERT_EQ(QTIMER_CANCEL_ARMED, t_cancel(self->fd, b));
		ASSERT_EQ(QTIMER_CANCEL_ARMED, t_cancel(self->fd, a));
		stale[nstale++] = a;
		stale[nstale++] = b;
	}
	for (i = 0; i < LIVE; i++) {
		ASSERT_EQ(0, t_arm(self->fd, CLOCK_MONOTONIC, 0,
				    10 * NSEC_PER_SEC, 0, i, &live[i]));
		for (j = 0; j < nstale; j++)
			ASSERT_NE(stale[j], live[i]);
	}
	for (j = 0; j < nstale; j++) {
		ASSERT_EQ(-ENOENT, t_cancel(self->fd, stale[j]));
		ASSERT_EQ(-ENOENT, t_modify(self->fd, stale[j], 0,
					     NSEC_PER_MSEC, 0, 0));
	}
	/* The stale MODIFYs above must not have re-armed a live timer. */
	t_sleep_ms(50);
	EXPECT_EQ(0, t_nothing_pending(self->fd));
	for (i = 0; i < LIVE; i++)
		EXPECT_EQ(QTIMER_CANCEL_ARMED, t_cancel(self->fd, live[i]));
}

/* A fired-and-read one-shot's id is dead even after its slot is reused. */
TEST_F(cancel, stale_id_after_fire_and_reuse)
{
	struct qtimer_record rec;
	__u64 old, fresh;

	ASSERT_EQ(0, t_arm(self->fd, CLOCK_MONOTONIC, 0, 0, 0, 1, &old));
	ASSERT_EQ(1, t_collect(self->fd, &rec, 1, QT_ARRIVE_MS));
	ASSERT_EQ(0, t_arm(self->fd, CLOCK_MONOTONIC, 0, 10 * NSEC_PER_SEC,
			    0, 2, &fresh));
	EXPECT_NE(old, fresh);
	EXPECT_EQ(-ENOENT, t_cancel(self->fd, old));
	EXPECT_EQ(QTIMER_CANCEL_ARMED, t_cancel(self->fd, fresh));
}

static bool is_live(const __u64 *live, int n, __u64 id)
{
	int i;

	for (i = 0; i < n; i++)
		if (live[i] == id)
			return true;
	return false;
}

TEST_F(cancel, forged_ids)
{
	enum { LIVE = 16 };
	__u64 live[LIVE], cand;
	int i, k, tried = 0;

	for (i = 0; i < LIVE; i++)
		ASSERT_EQ(0, t_arm(self->fd, CLOCK_MONOTONIC, 0,
				    10 * NSEC_PER_SEC, 0, i, &live[i]));
	srand(getpid());
	for (i = 0; i < 64 + 3 + 64; i++) {
		if (i == 0)
			cand = 0;
		else if (i == 1)
			cand = ~0ULL;
		else if (i == 2)
			cand = 1ULL << 63;
		else if (i < 67)
			/* Every single-bit corruption of a live id. */
			cand = live[i % LIVE] ^ (1ULL << (i - 3));
		else
			cand = ((__u64)rand() << 42) ^ ((__u64)rand() << 21) ^
			       rand();
		if (is_live(live, LIVE, cand))
			continue;
		tried++;
		EXPECT_EQ(-ENOENT, t_cancel(self->fd, cand)) {
			TH_LOG("forged id %#llx", (unsigned long long)cand);
		}
		EXPECT_EQ(-ENOENT, t_modify(self->fd, cand, 0, 0, 0, 0));
	}
	EXPECT_LT(100, tried);
	/* Nothing live was touched (the forged MODIFYs had expiry 0). */
	t_sleep_ms(50);
	EXPECT_EQ(0, t_nothing_pending(self->fd));
	for (k = 0; k < LIVE; k++)
		EXPECT_EQ(QTIMER_CANCEL_ARMED, t_cancel(self->fd, live[k]));
}

TEST_F(cancel, other_files_id)
{
	struct qtimer_record rec;
	int other = t_open(O_NONBLOCK);
	__u64 id;

	ASSERT_LE(0, other);
	ASSERT_EQ(0, t_arm(self->fd, CLOCK_MONOTONIC, 0, 100 * NSEC_PER_MSEC,
			    0, 42, &id));
	/* other holds no timers, so no id can be live there. */
	EXPECT_EQ(-ENOENT, t_cancel(other, id));
	EXPECT_EQ(-ENOENT, t_modify(other, id, 0, 10 * NSEC_PER_SEC, 0, 0));
	/* The timer still fires once, at its own time, in its own file. */
	ASSERT_EQ(1, t_collect(self->fd, &rec, 1, QT_ARRIVE_MS));
	EXPECT_EQ(id, rec.id);
	EXPECT_EQ(42, rec.cookie);
	EXPECT_EQ(0, t_nothing_pending(other));
	close(other);
}

/*
 * The same, with the other file holding timers of its own, armed in the
 * same order from the same CPU: ids must not repeat from file to file,
 * or another file's id would cancel or move one of this file's timers.
 */
TEST_F(cancel, other_files_id_when_both_hold_timers)
{
	enum { N = 16 };
	__u64 mine[N], theirs[N];
	int other = t_open(O_NONBLOCK), i;

	ASSERT_LE(0, other);
	ASSERT_EQ(0, t_pin_self(0));
	for (i = 0; i < N; i++) {
		ASSERT_EQ(0, t_arm(self->fd, CLOCK_MONOTONIC, 0,
				    20 * NSEC_PER_SEC, 0, i, &mine[i]));
		ASSERT_EQ(0, t_arm(other, CLOCK_MONOTONIC, 0,
				    20 * NSEC_PER_SEC, 0, i, &theirs[i]));
	}
	for (i = 0; i < N; i++) {
		EXPECT_EQ(-ENOENT, t_cancel(other, mine[i]))
			TH_LOG("id %#llx", (unsigned long long)mine[i]);
		EXPECT_EQ(-ENOENT, t_modify(other, mine[i], 0,
					     NSEC_PER_MSEC, 0, 0));
	}
	/* Each file's timers are all still armed, and only there. */
	for (i = 0; i < N; i++) {
		EXPECT_EQ(QTIMER_CANCEL_ARMED, t_cancel(other, theirs[i]));
		EXPECT_EQ(QTIMER_CANCEL_ARMED, t_cancel(self->fd, mine[i]));
	}
	EXPECT_EQ(0, t_nothing_pending(other));
	close(other);
}

TEST_F(cancel, cancel_half_of_many)
{
	enum { N = 256 };
	static struct qtimer_record recs[N];
	static __u64 ids[N];
	__s64 base = t_now(CLOCK_MONOTONIC) + 300 * NSEC_PER_MSEC;
	int i, k;

	srand(getpid());
	for (i = 0; i < N; i++)
		ASSERT_EQ(0, t_arm_cpu(self->fd, CLOCK_MONOTONIC,
					QTIMER_F_ABSTIME,
					base + (rand() % 100) * NSEC_PER_MSEC,
					0, i, i % t_nr_cpus(), &ids[i]));
	/* Cancel the odd ones: removals from the middle of the heaps. */
	for (i = 1; i < N; i += 2)
		EXPECT_EQ(QTIMER_CANCEL_ARMED, t_cancel(self->fd, ids[i]));
	ASSERT_EQ(N / 2, t_collect(self->fd, recs, N / 2, QT_ARRIVE_MS));
	for (i = 0; i < N / 2; i++) {
		k = recs[i].cookie;
		EXPECT_EQ(0, k % 2);
		EXPECT_EQ(ids[k], recs[i].id);
	}
	t_sleep_ms(100);
	EXPECT_EQ(0, t_nothing_pending(self->fd));
}

TEST_F(cancel, modify_earlier)
{
	struct qtimer_record rec;
	__s64 now = t_now(CLOCK_MONOTONIC), when, stamp;
	__u64 id;

	ASSERT_EQ(0, arm_cpu0(self->fd, now + 20 * NSEC_PER_SEC, 9, &id));
	when = now + 50 * NSEC_PER_MSEC;
	EXPECT_EQ(QTIMER_CANCEL_ARMED,
		  t_modify(self->fd, id, QTIMER_F_ABSTIME, when, 0, 0));
	ASSERT_EQ(1, t_collect_stamped(self->fd, &rec, 1, QT_ARRIVE_MS,
					CLOCK_MONOTONIC, &stamp));
	EXPECT_EQ(id, rec.id);
	EXPECT_EQ(9, rec.cookie);	/* MODIFY keeps the cookie */
	EXPECT_EQ(when, rec.expires_ns);
	EXPECT_EQ(1, rec.count);
	EXPECT_EQ(QTIMER_REC_LAST, rec.flags);
	EXPECT_LE(when, stamp);
	/* Gone, so the old 20 s schedule cannot fire either. */
	EXPECT_EQ(-ENOENT, t_cancel(self->fd, id));
}

TEST_F(cancel, modify_later)
{
	struct qtimer_record recs[4];
	__s64 now = t_now(CLOCK_MONOTONIC), when, stamp;
	__u64 id;
	int ret;

	ASSERT_EQ(0, arm_cpu0(self->fd, now + 300 * NSEC_PER_MSEC, 9, &id));
	ASSERT_EQ(0, arm_cpu0(self->fd, now + 500 * NSEC_PER_MSEC,
			      SENTINEL_COOKIE, NULL));
	when = now + 700 * NSEC_PER_MSEC;
	ret = t_modify(self->fd, id, QTIMER_F_ABSTIME, when, 0, 0);
	/* QUEUED only if this task stalled for 300 ms after arming. */
	EXPECT_TRUE(ret == QTIMER_CANCEL_ARMED || ret == QTIMER_CANCEL_QUEUED) {
		TH_LOG("modify returned %d", ret);
	}
	/* Nothing at the old time, which is before the sentinel's. */
	EXPECT_EQ(0, t_read_to_sentinel(self->fd, SENTINEL_COOKIE, recs, 4));
	ASSERT_EQ(1, t_collect_stamped(self->fd, recs, 1, QT_ARRIVE_MS,
					CLOCK_MONOTONIC, &stamp));
	EXPECT_EQ(id, recs[0].id);
	EXPECT_EQ(when, recs[0].expires_ns);
	EXPECT_EQ(1, recs[0].count);
	EXPECT_EQ(QTIMER_REC_LAST, recs[0].flags);
	EXPECT_LE(when, stamp);
	EXPECT_EQ(-ENOENT, t_cancel(self->fd, id));
}

/* MODIFY of a fired, unread one-shot drops the record and re-arms it. */
TEST_F(cancel, modify_fired_unread)
{
	const __s64 rel = 100 * NSEC_PER_MSEC;
	struct qtimer_record rec;
	__s64 t0, t1, stamp;
	__u64 id;

	ASSERT_EQ(0, t_arm(self->fd, CLOCK_MONOTONIC, 0, 0, 0, 5, &id));
	ASSERT_EQ(1, t_wait_readable(self->fd, QT_ARRIVE_MS));
	t0 = t_now(CLOCK_MONOTONIC);
	EXPECT_EQ(QTIMER_CANCEL_QUEUED, t_modify(self->fd, id, 0, rel, 0, 0));
	t1 = t_now(CLOCK_MONOTONIC);
	EXPECT_EQ(0, t_nothing_pending(self->fd));
	ASSERT_EQ(1, t_collect_stamped(self->fd, &rec, 1, QT_ARRIVE_MS,
					CLOCK_MONOTONIC, &stamp));
	EXPECT_EQ(id, rec.id);
	EXPECT_EQ(5, rec.cookie);
	EXPECT_LE(t0 + rel, rec.expires_ns);
	EXPECT_GE(t1 + rel, rec.expires_ns);
	EXPECT_LE(rec.expires_ns, stamp);
	EXPECT_EQ(1, rec.count);
	EXPECT_EQ(QTIMER_REC_LAST, rec.flags);
	t_sleep_ms(100);
	EXPECT_EQ(0, t_nothing_pending(self->fd));
}

TEST_F(cancel, modify_after_read_of_oneshot)
{
	struct qtimer_record rec;
	__u64 id;

	ASSERT_EQ(0, t_arm(self->fd, CLOCK_MONOTONIC, 0, 0, 0, 1, &id));
	ASSERT_EQ(1, t_collect(self->fd, &rec, 1, QT_ARRIVE_MS));
	EXPECT_EQ(-ENOENT, t_modify(self->fd, id, 0, NSEC_PER_MSEC, 0, 0));
	t_sleep_ms(50);
	EXPECT_EQ(0, t_nothing_pending(self->fd));
}

TEST_F(cancel, modify_periodic_to_oneshot)
{
	const __s64 period = 20 * NSEC_PER_MSEC;
	struct qtimer_record recs[8];
	__s64 when, stamp;
	__u64 id;
	int ret;

	ASSERT_EQ(0, t_arm_cpu(self->fd, CLOCK_MONOTONIC, 0, period, period,
				3, 0, &id));
	ASSERT_EQ(1, t_collect(self->fd, recs, 1, QT_ARRIVE_MS));
	EXPECT_EQ(0, recs[0].flags & QTIMER_REC_LAST);
	when = t_now(CLOCK_MONOTONIC) + 100 * NSEC_PER_MSEC;
	ret = t_modify(self->fd, id, QTIMER_F_ABSTIME, when, 0, 0);
	/* Armed for its next period, or that one is queued by now. */
	EXPECT_TRUE(t_mask_ok(ret));
	ASSERT_EQ(1, t_collect_stamped(self->fd, recs, 1, QT_ARRIVE_MS,
					CLOCK_MONOTONIC, &stamp));
	EXPECT_EQ(id, recs[0].id);
	EXPECT_EQ(when, recs[0].expires_ns);
	EXPECT_EQ(1, recs[0].count);
	EXPECT_EQ(QTIMER_REC_LAST, recs[0].flags);
	EXPECT_LE(when, stamp);
	t_sleep_ms(3 * period / NSEC_PER_MSEC);
	EXPECT_EQ(0, t_nothing_pending(self->fd));
	EXPECT_EQ(-ENOENT, t_cancel(self->fd, id));
}

TEST_F(cancel, modify_oneshot_to_periodic)
{
	const __s64 period = 20 * NSEC_PER_MSEC;
	struct qtimer_record rec;
	__s64 first, stamp;
	__u64 id, total = 0;
	int n = 0, ret;

	ASSERT_EQ(0, arm_cpu0(self->fd, t_now(CLOCK_MONOTONIC) +
			      20 * NSEC_PER_SEC, 4, &id));
	first = t_now(CLOCK_MONOTONIC) + 30 * NSEC_PER_MSEC;
	EXPECT_EQ(QTIMER_CANCEL_ARMED,
		  t_modify(self->fd, id, QTIMER_F_ABSTIME, first, period, 0));
	while (n < 5) {
		ASSERT_EQ(1, t_collect_stamped(self->fd, &rec, 1, QT_ARRIVE_MS,
						CLOCK_MONOTONIC, &stamp));
		n++;
		EXPECT_EQ(id, rec.id);
		EXPECT_EQ(4, rec.cookie);
		EXPECT_EQ(0, rec.flags);
		EXPECT_LE(1, rec.count);
		total += rec.count;
		/* Drift-free: the latest counted expiry of the new schedule. */
		EXPECT_EQ(first + (__s64)(total - 1) * period, rec.expires_ns);
		EXPECT_LE(rec.expires_ns, stamp);
	}
	ret = t_cancel(self->fd, id);
	EXPECT_TRUE(t_mask_ok(ret));
	EXPECT_EQ(0, t_nothing_pending(self->fd));
}

TEST_HARNESS_MAIN
