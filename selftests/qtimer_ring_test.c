// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * The record ring, as uapi/linux/qtimer.h specifies it ("The record ring"):
 * delivery through the mapping with the header's claim protocol (in
 * deadline order, never early, nothing lost when the ring is full), poll()
 * and read() on a file with a ring, CANCEL and MODIFY against the claim
 * (exactly one side wins, and the result says which), and tickers that
 * fold what they missed into their next record.  The ring's other suites:
 * qtimer_ring_setup_test, qtimer_ring_mmap_test and qtimer_ring_consumer_test
 * (setup, the mapping's validation and life, a hostile consumer),
 * qtimer_ring_race_test (CANCEL racing the consumer), qtimer_ring_clock_test
 * (cancel-on-set, time namespaces).
 *
 * The consumer is selftests/lib/ring.c's, which follows the header to the
 * letter.  Timers whose order matters are armed on one CPU's heap, since
 * only one heap fires in deadline order.  A module without
 * QTIMER_FEAT_RING skips every test.
 */
#define _GNU_SOURCE

#include "kselftest_harness.h"
#include "ring_harness.h"

/* --- a mapped ring ------------------------------------------------------ */

FIXTURE(deliver)
{
	int fd;
	struct t_ring r;
};

FIXTURE_VARIANT(deliver)
{
	__u32 entries;
	int timers;
	__s64 spacing_ns;	/* between neighbouring expiries */
	bool overflow;		/* all fire before the consumer starts */
};

FIXTURE_VARIANT_ADD(deliver, fits)
{
	.entries = 256, .timers = 64, .spacing_ns = NSEC_PER_MSEC,
};

FIXTURE_VARIANT_ADD(deliver, overflows)
{
	.entries = 8, .timers = 100, .spacing_ns = NSEC_PER_USEC,
	.overflow = true,
};

FIXTURE_SETUP(deliver)
{
	t_ring_fixture_open(_metadata, &self->fd, &self->r, variant->entries);
}

FIXTURE_TEARDOWN(deliver)
{
	t_ring_fixture_close(self->fd, &self->r);
}

struct deliver_plan {
	int order[128];		/* op k arms timer order[k] */
	__s64 base, spacing_ns;
};

/* Op k arms timer order[k], at base + order[k] * spacing, on CPU 0. */
static void deliver_fill(struct qtimer_op *op, long k, void *arg)
{
	const struct deliver_plan *plan = arg;
	int t = plan->order[k];

	*op = t_op(CLOCK_MONOTONIC, QTIMER_F_ABSTIME | QTIMER_F_CPU,
		    plan->base + t * plan->spacing_ns, 0, t);
	op->cpu = 0;
}

/*
 * Timers armed in a shuffled order come back through the mapping each
 * exactly once, in deadline order, never early, with their own id and
 * cookie.  In "overflows" all of them fire before the consumer starts:
 * the ring fills, QTIMER_RING_OVERFLOW is set, and the rest wait in the
 * kernel until poll() moves them in, none dropped.
 */
TEST_F(deliver, in_deadline_order_nothing_lost)
{
	const int n = variant->timers;
	struct qtimer_record recs[128];
	struct deliver_plan plan;
	__s64 stamp[128];
	__u64 armed[128], ids[128];
	struct t_rng rng;
	int i, got;

	RETURN_IF_SETUP_SKIPPED();
	ASSERT_GE(128, n);
	t_rng_seed(&rng, (uint64_t)t_now(CLOCK_MONOTONIC));
	for (i = 0; i < n; i++)
		plan.order[i] = i;
	for (i = n - 1; i > 0; i--) {
		int j = t_rand_below(&rng, i + 1), t = plan.order[i];

		plan.order[i] = plan.order[j];
		plan.order[j] = t;
	}
	/*
	 * One SUBMIT, well ahead: no timer may be armed after it is due.
	 * Under TCG on a busy debug kernel 64 ARMs once outlasted 60 ms
	 * (32cf181), so the lead is 400 ms, not 100.
	 */
	plan.spacing_ns = variant->spacing_ns;
	plan.base = t_now(CLOCK_MONOTONIC) + 400 * NSEC_PER_MSEC;
	ASSERT_EQ(0, t_arm_many(self->fd, n, deliver_fill, &plan, armed, n));
	ASSERT_GT(plan.base, t_now(CLOCK_MONOTONIC))
		TH_LOG("arming took longer than its lead: order is not testable");
	for (i = 0; i < n; i++)
		ids[plan.order[i]] = armed[i];

	if (variant->overflow) {
		t_ring_wait_overflow(&self->r, QT_ARRIVE_MS);
		ASSERT_EQ(QTIMER_RING_OVERFLOW,
			  t_ring_flags(&self->r) & QTIMER_RING_OVERFLOW);
		/* Full, and not one record past full. */
		EXPECT_EQ(variant->entries,
			  t_ring_head(&self->r) - t_ring_tail(&self->r));
	}

	got = t_ring_collect(&self->r, recs, n, QT_ARRIVE_MS + n * 50,
			      CLOCK_MONOTONIC, stamp);
	ASSERT_EQ(n, got);
	for (i = 0; i < n; i++) {
		__s64 when = plan.base + i * variant->spacing_ns;

		/* Deadline order: record i is timer i, its cookie. */
		ASSERT_EQ(i, recs[i].cookie) TH_LOG("record %d", i);
		EXPECT_EQ(ids[i], recs[i].id);
		EXPECT_EQ(QTIMER_REC_TAKEN | QTIMER_REC_LAST, recs[i].flags);
		EXPECT_EQ(1, recs[i].count);
		EXPECT_EQ(when, recs[i].expires_ns);
		EXPECT_LE(recs[i].expires_ns, stamp[i]);	/* never early */
	}
	EXPECT_EQ(0, self->r.skipped);
	EXPECT_GE(variant->entries, self->r.max_pending);
	EXPECT_EQ(variant->overflow, self->r.overflow_seen);
	/* Every record moved in: no overflow, nothing left. */
	EXPECT_EQ(0, t_ring_flags(&self->r) & QTIMER_RING_OVERFLOW);
	EXPECT_TRUE(t_ring_stays_empty(&self->r, 100));
	EXPECT_EQ(0, t_revents(self->fd) & POLLIN);
	for (i = 0; i < n; i++)
		EXPECT_EQ(-ENOENT, t_cancel(self->fd, ids[i]));
}

/* --- poll() ------------------------------------------------------------- */

TEST_F(ring, poll_empty_not_readable)
{
	RETURN_IF_SETUP_SKIPPED();
	EXPECT_EQ(0, t_revents(self->fd) & (POLLIN | POLLERR | POLLHUP));
	/* An armed timer that has not fired is not a pending record. */
	ASSERT_EQ(0, t_arm(self->fd, CLOCK_MONOTONIC, 0, 20 * NSEC_PER_SEC,
			    0, 1, NULL));
	EXPECT_EQ(0, t_wait_readable(self->fd, 100));
	EXPECT_EQ(t_ring_head(&self->r), t_ring_tail(&self->r));
}

/* EPOLLIN while a READY record is pending, and not once it is consumed. */
TEST_F(ring, poll_readable_while_record_ready)
{
	struct qtimer_record rec;
	__u64 id;

	RETURN_IF_SETUP_SKIPPED();
	ASSERT_LE(0, t_ring_fire_one(&self->r, 1, &id));
	EXPECT_EQ(POLLIN, t_revents(self->fd) & POLLIN);
	EXPECT_EQ(POLLIN, t_revents(self->fd) & POLLIN);
	ASSERT_EQ(1, t_ring_consume(&self->r, &rec, 1));
	EXPECT_EQ(id, rec.id);
	EXPECT_EQ(0, t_revents(self->fd) & POLLIN);
}

/*
 * What is in [tail, head) but not READY is not pending: a record the
 * consumer claimed but has not passed tail over yet, or one a CANCEL
 * voided.
 */
TEST_F(ring, poll_not_readable_for_taken_or_void)
{
	struct qtimer_record rec;
	long a, b;
	__u64 ida, idb;

	RETURN_IF_SETUP_SKIPPED();
	a = t_ring_fire_one(&self->r, 1, &ida);
	ASSERT_LE(0, a);
	ASSERT_TRUE(t_ring_claim(&self->r, a, &rec));
	EXPECT_EQ(0, t_revents(self->fd) & POLLIN)
		TH_LOG("EPOLLIN for a record the consumer had claimed");
	b = t_ring_fire_one(&self->r, 2, &idb);
	ASSERT_LE(0, b);
	EXPECT_EQ(POLLIN, t_revents(self->fd) & POLLIN);
	ASSERT_EQ(QTIMER_CANCEL_QUEUED, t_cancel(self->fd, idb));
	EXPECT_EQ(0, t_revents(self->fd) & POLLIN)
		TH_LOG("EPOLLIN for a record its CANCEL voided");
	EXPECT_EQ(2, t_ring_head(&self->r) - t_ring_tail(&self->r));
}

/* A poll() that sleeps on an empty ring wakes when a timer fires. */
TEST_F(ring, poll_wakes_when_timer_fires)
{
	struct pollfd pfd = { .fd = self->fd, .events = POLLIN };
	struct qtimer_record rec;
	__s64 when;

	RETURN_IF_SETUP_SKIPPED();
	when = t_now(CLOCK_MONOTONIC) + 100 * NSEC_PER_MSEC;
	ASSERT_EQ(0, t_arm_at_cpu0(self->fd, when, 0x90, NULL));
	ASSERT_EQ(1, poll(&pfd, 1, 10 * QT_ARRIVE_MS));
	EXPECT_EQ(POLLIN, pfd.revents & POLLIN);
	EXPECT_LE(when, t_now(CLOCK_MONOTONIC));
	ASSERT_EQ(1, t_ring_consume(&self->r, &rec, 1));
	EXPECT_EQ(0x90, rec.cookie);
	EXPECT_EQ(when, rec.expires_ns);
}

/*
 * One-shots a mapped consumer took, with poll() called on the empty ring
 * after, free their ids and their places under both caps, in a file where
 * nothing else fires.  poll() reaps them at once today; the wait gives a
 * kernel that defers the reap (as 9a6f563 did, reverted) a while, not
 * for ever.
 */
TEST_F(ring, consumed_oneshots_freed_when_quiet)
{
	struct qtimer_record recs[32];
	long long user_before, timers = -1, pending = -1, user = -1;
	__s64 deadline;
	int i;

	RETURN_IF_SETUP_SKIPPED();
	user_before = t_fdinfo_get(self->fd, QT_FI_USER_TIMERS);
	ASSERT_LE(0, user_before);
	for (i = 0; i < 32; i++)
		ASSERT_EQ(0, t_arm(self->fd, CLOCK_MONOTONIC, 0,
				    NSEC_PER_MSEC, 0, i, NULL));
	ASSERT_EQ(32, t_ring_collect(&self->r, recs, 32, QT_ARRIVE_MS,
				      CLOCK_MONOTONIC, NULL));
	EXPECT_EQ(0, t_revents(self->fd) & POLLIN);
	deadline = t_now(CLOCK_MONOTONIC) + QT_ARRIVE_MS * NSEC_PER_MSEC;
	do {
		timers = t_fdinfo_get(self->fd, QT_FI_TIMERS);
		pending = t_fdinfo_get(self->fd, QT_FI_PENDING);
		user = t_fdinfo_get(self->fd, QT_FI_USER_TIMERS);
		if (!timers && !pending && user == user_before)
			break;
		t_sleep_ms(10);
	} while (t_now(CLOCK_MONOTONIC) < deadline);
	EXPECT_EQ(0, timers);
	EXPECT_EQ(0, pending);
	EXPECT_EQ(user_before, user)
		TH_LOG("consumed one-shots still count against the user's cap");
}

/* --- CANCEL and MODIFY against the claim -------------------------------- */

/*
 * Fires a one-shot of @cookie into the ring and claims its record into
 * *rec ahead of the kernel: the record's index.
 */
static long fire_and_claim(struct __test_metadata *_metadata,
			   struct t_ring *r, __u64 cookie, __u64 *id,
			   struct qtimer_record *rec)
{
	long idx = t_ring_fire_one(r, cookie, id);

	ASSERT_LE(0, idx);
	ASSERT_TRUE(t_ring_claim(r, idx, rec));
	return idx;
}

/* CANCEL wins a READY record: QUEUED, VOID, and the consumer skips it. */
TEST_F(ring, cancel_voids_ready_record)
{
	struct qtimer_record rec;
	long idx;
	__u64 id;

	RETURN_IF_SETUP_SKIPPED();
	idx = t_ring_fire_one(&self->r, 0xc1, &id);
	ASSERT_LE(0, idx);
	ASSERT_EQ(QTIMER_REC_READY, t_ring_claim_of(&self->r, idx));
	EXPECT_EQ(id, t_ring_rec(&self->r, idx)->id);
	ASSERT_EQ(QTIMER_CANCEL_QUEUED, t_cancel(self->fd, id));
	EXPECT_EQ(QTIMER_REC_VOID, t_ring_claim_of(&self->r, idx));
	EXPECT_EQ(0, t_ring_consume(&self->r, &rec, 1));
	EXPECT_EQ(1, self->r.skipped);
	EXPECT_EQ(t_ring_head(&self->r), t_ring_tail(&self->r));
	EXPECT_EQ(-ENOENT, t_cancel(self->fd, id));
	EXPECT_TRUE(t_ring_stays_empty(&self->r, 100));
}

/* The consumer wins a one-shot: its claim consumed it, as a read() does. */
TEST_F(ring, cancel_after_claim_oneshot_enoent)
{
	struct qtimer_record rec;
	long idx;
	__u64 id;

	RETURN_IF_SETUP_SKIPPED();
	idx = fire_and_claim(_metadata, &self->r, 0xc2, &id, &rec);
	EXPECT_EQ(id, rec.id);
	/* Claimed, tail not moved yet. */
	EXPECT_EQ(-ENOENT, t_cancel(self->fd, id));
	EXPECT_EQ(QTIMER_REC_TAKEN, t_ring_claim_of(&self->r, idx));
	EXPECT_EQ(QTIMER_REC_LAST, LOW(t_ring_rec(&self->r, idx)->flags));
}

TEST_F(ring, modify_after_claim_oneshot_enoent)
{
	struct qtimer_record rec;
	long idx;
	__u64 id;

	RETURN_IF_SETUP_SKIPPED();
	idx = fire_and_claim(_metadata, &self->r, 0xc3, &id, &rec);
	EXPECT_EQ(-ENOENT, t_modify(self->fd, id, 0, 0, 0, 0));
	EXPECT_EQ(QTIMER_REC_TAKEN, t_ring_claim_of(&self->r, idx));
	t_ring_set_tail(&self->r, idx + 1);
	EXPECT_TRUE(t_ring_stays_empty(&self->r, 100));
}

/*
 * Arms a ticker due at once and claims its first record from the mapping:
 * false if it did not come or was not the ticker's.
 */
static bool claim_ticker(int fd, struct t_ring *r, __s64 period, __u64 cookie,
			 __u64 *id, __u32 *idx, struct qtimer_record *rec)
{
	*idx = t_ring_head(r);
	return !t_arm(fd, CLOCK_MONOTONIC, 0, 0, period, cookie, id) &&
	       t_ring_wait_pending(r, 1, QT_ARRIVE_MS) == 1 &&
	       t_ring_claim(r, *idx, rec) && rec->id == *id;
}

/*
 * The consumer wins a ticker's record: CANCEL returns 0 (it prevented
 * nothing: the ticker is not armed while its record is unconsumed), and
 * the ticker never comes back once tail passes the record.
 */
TEST_F(ring, cancel_after_claim_periodic_zero)
{
	const __s64 period = 20 * NSEC_PER_MSEC;
	struct qtimer_record rec;
	__u32 idx;
	__u64 id;

	RETURN_IF_SETUP_SKIPPED();
	ASSERT_TRUE(claim_ticker(self->fd, &self->r, period, 0xc4, &id, &idx, &rec));
	EXPECT_EQ(0, LOW(rec.flags));
	EXPECT_EQ(0, t_cancel(self->fd, id));
	EXPECT_EQ(QTIMER_REC_TAKEN, t_ring_claim_of(&self->r, idx));
	t_ring_set_tail(&self->r, idx + 1);
	EXPECT_TRUE(t_ring_stays_empty(&self->r, 10 * period / NSEC_PER_MSEC));
	EXPECT_EQ(-ENOENT, t_cancel(self->fd, id));
}

/*
 * Once the consumer's tail has passed a ticker's claimed record, the ticker
 * is as good as re-armed (the next settle re-arms it), as after a read():
 * CANCEL says QTIMER_CANCEL_ARMED, and nothing of it comes back.
 */
TEST_F(ring, cancel_after_tail_passed_periodic_armed)
{
	const __s64 period = 20 * NSEC_PER_MSEC;
	struct qtimer_record rec;
	__u32 idx;
	__u64 id;

	RETURN_IF_SETUP_SKIPPED();
	ASSERT_TRUE(claim_ticker(self->fd, &self->r, period, 0xc8, &id, &idx, &rec));
	t_ring_set_tail(&self->r, idx + 1);
	EXPECT_EQ(QTIMER_CANCEL_ARMED, t_cancel(self->fd, id));
	EXPECT_TRUE(t_ring_stays_empty(&self->r, 10 * period / NSEC_PER_MSEC));
	EXPECT_EQ(-ENOENT, t_cancel(self->fd, id));
}

/*
 * MODIFY of a timer whose record is READY voids the record
 * (QTIMER_CANCEL_QUEUED: a one-shot that fired is not armed), and the
 * timer fires again on its new schedule, not before.
 */
TEST_F(ring, modify_voids_ready_record_and_reschedules)
{
	struct qtimer_record rec;
	__s64 when, stamp;
	long idx;
	__u64 id;

	RETURN_IF_SETUP_SKIPPED();
	idx = t_ring_fire_one(&self->r, 0xc5, &id);
	ASSERT_LE(0, idx);
	when = t_now(CLOCK_MONOTONIC) + 100 * NSEC_PER_MSEC;
	ASSERT_EQ(QTIMER_CANCEL_QUEUED,
		  t_modify(self->fd, id, QTIMER_F_ABSTIME, when, 0, 0));
	EXPECT_EQ(QTIMER_REC_VOID, t_ring_claim_of(&self->r, idx));
	ASSERT_EQ(1, t_ring_collect(&self->r, &rec, 1, QT_ARRIVE_MS,
				     CLOCK_MONOTONIC, &stamp));
	EXPECT_EQ(1, self->r.skipped);
	EXPECT_EQ(id, rec.id);
	EXPECT_EQ(0xc5, rec.cookie);
	EXPECT_EQ(QTIMER_REC_TAKEN | QTIMER_REC_LAST, rec.flags);
	EXPECT_EQ(1, rec.count);
	EXPECT_EQ(when, rec.expires_ns);
	EXPECT_LE(when, stamp);
}

/* --- tickers ------------------------------------------------------------ */

/*
 * A 1 ms ticker nobody consumes has one record in the ring and no more,
 * and is not re-armed while its record is only claimed.  Once tail passes
 * the record and poll() runs, the ticker comes back, its next record
 * folding in every period it missed: the counts add up to exactly the
 * periods from the first expiry to the latest one counted, and never to
 * more than have passed.
 */
TEST_F(ring, ticker_unconsumed_folds_missed_periods)
{
	const __s64 period = NSEC_PER_MSEC;
	struct qtimer_record rec[2];
	__s64 first, moved, now;
	__u64 id, sum;
	__u32 idx;

	RETURN_IF_SETUP_SKIPPED();
	idx = t_ring_head(&self->r);
	first = t_now(CLOCK_MONOTONIC) + period;
	ASSERT_EQ(0, t_arm(self->fd, CLOCK_MONOTONIC, QTIMER_F_ABSTIME, first,
			    period, 0x71c, &id));
	ASSERT_EQ(1, t_ring_wait_pending(&self->r, 1, QT_ARRIVE_MS));
	t_sleep_ms(100);
	EXPECT_EQ(1, t_ring_head(&self->r) - t_ring_tail(&self->r));
	EXPECT_EQ(0, t_ring_flags(&self->r) & QTIMER_RING_OVERFLOW);
	/* poll() does not add a second record either. */
	EXPECT_EQ(1, t_wait_readable(self->fd, 0));
	t_sleep_ms(20);
	EXPECT_EQ(1, t_ring_head(&self->r) - t_ring_tail(&self->r));

	ASSERT_TRUE(t_ring_claim(&self->r, idx, &rec[0]));
	EXPECT_EQ(id, rec[0].id);
	EXPECT_LE(1, rec[0].count);
	EXPECT_EQ(first + (rec[0].count - 1) * period, rec[0].expires_ns);
	/* Claimed, tail not past it: not re-armed. */
	EXPECT_EQ(0, t_wait_readable(self->fd, 50));
	EXPECT_EQ(idx + 1, t_ring_head(&self->r));

	moved = t_now(CLOCK_MONOTONIC);
	t_ring_set_tail(&self->r, idx + 1);
	ASSERT_EQ(1, t_ring_collect(&self->r, &rec[1], 1, QT_ARRIVE_MS,
				     CLOCK_MONOTONIC, NULL));
	now = t_now(CLOCK_MONOTONIC);
	EXPECT_EQ(id, rec[1].id);
	EXPECT_LT(1, rec[1].count) TH_LOG("the missed periods were not folded in");
	sum = (__u64)rec[0].count + rec[1].count;
	/* Nothing lost: one count per period up to the latest expiry. */
	EXPECT_EQ(0, (rec[1].expires_ns - first) % period);
	EXPECT_EQ((rec[1].expires_ns - first) / period + 1, sum);
	/* Never early: no more than the periods that have passed. */
	EXPECT_LE(rec[1].expires_ns, now);
	EXPECT_GE((now - first) / period + 1, sum);
	/* Re-armed only after tail moved: its expiry comes after that. */
	EXPECT_LE(moved - period, rec[1].expires_ns);
}

/* --- read() ------------------------------------------------------------- */

/*
 * read() takes the ring's records the same way: with their claim bits
 * clear in the copy, TAKEN in the mapping, tail moved past them.
 */
TEST_F(ring, read_takes_ring_records)
{
	struct qtimer_record recs[8];
	__s64 base = t_now(CLOCK_MONOTONIC);
	__u64 ids[3];
	__u32 idx;
	int i;

	RETURN_IF_SETUP_SKIPPED();
	idx = t_ring_head(&self->r);
	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, t_arm_at_cpu0(self->fd, base + i, 0x40 + i, &ids[i]));
	ASSERT_EQ(1, t_ring_wait_pending(&self->r, 3, QT_ARRIVE_MS));
	ASSERT_EQ(3, t_read(self->fd, recs, 8));
	for (i = 0; i < 3; i++) {
		EXPECT_EQ(ids[i], recs[i].id);
		EXPECT_EQ(0x40 + i, recs[i].cookie);
		EXPECT_EQ(0, CLAIM(recs[i].flags));
		EXPECT_EQ(QTIMER_REC_LAST, recs[i].flags);
		EXPECT_EQ(QTIMER_REC_TAKEN, t_ring_claim_of(&self->r, idx + i));
	}
	EXPECT_EQ(idx + 3, t_ring_tail(&self->r));
	EXPECT_EQ(-EAGAIN, t_read(self->fd, recs, 8));
	EXPECT_EQ(0, t_revents(self->fd) & POLLIN);
}

/* Records the mapping took are not read again, and read() takes the rest. */
TEST_F(ring, read_after_mapping_consumer)
{
	struct qtimer_record recs[8];
	__s64 base = t_now(CLOCK_MONOTONIC);
	int i;

	RETURN_IF_SETUP_SKIPPED();
	for (i = 0; i < 5; i++)
		ASSERT_EQ(0, t_arm_at_cpu0(self->fd, base + i, i, NULL));
	ASSERT_EQ(1, t_ring_wait_pending(&self->r, 5, QT_ARRIVE_MS));
	ASSERT_EQ(2, t_ring_consume(&self->r, recs, 2));
	ASSERT_EQ(3, t_read(self->fd, recs + 2, 6));
	for (i = 0; i < 5; i++)
		EXPECT_EQ(i, recs[i].cookie);
}

/* O_NONBLOCK with nothing pending, or only a voided record: -EAGAIN. */
TEST_F(ring, read_nonblock_nothing_pending_eagain)
{
	struct qtimer_record rec;
	__u64 id;

	RETURN_IF_SETUP_SKIPPED();
	EXPECT_EQ(-EAGAIN, t_read(self->fd, &rec, 1));
	ASSERT_LE(0, t_ring_fire_one(&self->r, 0x4a, &id));
	ASSERT_EQ(QTIMER_CANCEL_QUEUED, t_cancel(self->fd, id));
	EXPECT_EQ(-EAGAIN, t_read(self->fd, &rec, 1));
}

/* A blocking read() on a file with a ring sleeps until a timer fires. */
TEST_F(ring, read_blocking_wakes)
{
	struct qtimer_record rec;
	__s64 when;

	RETURN_IF_SETUP_SKIPPED();
	ASSERT_EQ(0, fcntl(self->fd, F_SETFL, 0));
	when = t_now(CLOCK_MONOTONIC) + 50 * NSEC_PER_MSEC;
	ASSERT_EQ(0, t_arm_at_cpu0(self->fd, when, 0x4b, NULL));
	ASSERT_EQ(1, t_read(self->fd, &rec, 1));
	EXPECT_LE(when, t_now(CLOCK_MONOTONIC));
	EXPECT_EQ(0x4b, rec.cookie);
	EXPECT_EQ(when, rec.expires_ns);
	EXPECT_EQ(QTIMER_REC_LAST, rec.flags);
}

TEST_HARNESS_MAIN
