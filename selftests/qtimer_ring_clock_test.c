// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * The record ring against the clocks (uapi/linux/qtimer.h, "The record
 * ring"): cancel-on-set through the mapping (a READY record of a
 * cancel-on-set timer becomes its cancellation once poll() returns after
 * the clock was set, an armed one's cancellation comes through the ring,
 * and a record the consumer claimed stays its), and records in the time
 * namespace of the thread that set the ring up.
 *
 * The clock steps need CAP_SYS_TIME and put the clock back in their
 * teardown; the namespace tests need CONFIG_TIME_NS.  Each skips without,
 * and every test skips on a module without QTIMER_FEAT_RING.
 */
#define _GNU_SOURCE

#include "kselftest_harness.h"
#include "ring_harness.h"

/* --- cancel-on-set ------------------------------------------------------ */

FIXTURE(clockset)
{
	int fd;
	struct t_ring r;
	__s64 rt0, mono0;	/* realtime = rt0 + (monotonic - mono0) */
	bool stepped;
};

FIXTURE_SETUP(clockset)
{
	self->mono0 = t_now(CLOCK_MONOTONIC);
	self->rt0 = t_now(CLOCK_REALTIME);
	t_ring_fixture_open(_metadata, &self->fd, &self->r, 16);
}

FIXTURE_TEARDOWN(clockset)
{
	if (self->stepped)
		EXPECT_EQ(0, t_restore_realtime(self->rt0, self->mono0));
	t_ring_fixture_close(self->fd, &self->r);
}

static int arm_cos(int fd, __s64 when, __u64 cookie, __u64 *id)
{
	return t_arm(fd, CLOCK_REALTIME,
		      QTIMER_F_ABSTIME | QTIMER_F_CANCEL_ON_SET, when, 0,
		      cookie, id);
}

/*
 * Arms a cancel-on-set one-shot that fires in 10 ms and waits until its
 * record is READY in the ring: the record's index, or -1.
 */
static long fire_cos(struct t_ring *r, __u64 cookie, __u64 *id)
{
	__u32 idx = t_ring_head(r);

	if (arm_cos(r->fd, t_now(CLOCK_REALTIME) + 10 * NSEC_PER_MSEC, cookie,
		    id) ||
	    !t_ring_wait_pending(r, 1, QT_ARRIVE_MS) ||
	    t_ring_claim_of(r, idx) != QTIMER_REC_READY)
		return -1;
	return idx;
}

/*
 * A mapped consumer makes no system call the kernel could catch it in, and
 * the module learns of a clock set only after clock_settime() returned, so
 * the header promises the cancellation to a consumer that polls first:
 * once poll() returns after clock_settime() did, the READY record of a
 * fired cancel-on-set timer is VOID.  (Without that wait, on stock-6.12
 * the record was still READY here every time.)  The step is backwards so
 * that it makes nothing due.
 */
TEST_F(clockset, ready_record_void_once_poll_returns)
{
	struct pollfd pfd = { .fd = self->r.fd, .events = POLLIN };
	long idx;
	__u64 id;

	RETURN_IF_SETUP_SKIPPED();
	idx = fire_cos(&self->r, 0xc04, &id);
	ASSERT_LE(0, idx);
	QT_STEP_REALTIME(-NSEC_PER_SEC);
	ASSERT_LE(0, poll(&pfd, 1, 0));
	EXPECT_EQ(QTIMER_REC_VOID, t_ring_claim_of(&self->r, idx))
		TH_LOG("the record is still claimable after poll() returned");
}

/*
 * The record of a fired cancel-on-set timer READY when the clock is set
 * becomes the cancellation: voided (waited for here, so that this test
 * does not also fail for the timing the one above checks), and followed by
 * a CANCELED | LAST record that stands for the expiration it had pending.
 */
TEST_F(clockset, ready_record_becomes_cancellation)
{
	struct qtimer_record rec;
	__s64 deadline;
	long idx;
	__u64 id;

	RETURN_IF_SETUP_SKIPPED();
	idx = fire_cos(&self->r, 0xc05, &id);
	ASSERT_LE(0, idx);
	QT_STEP_REALTIME(-NSEC_PER_SEC);
	deadline = t_now(CLOCK_MONOTONIC) + QT_ARRIVE_MS * NSEC_PER_MSEC;
	while (t_ring_claim_of(&self->r, idx) == QTIMER_REC_READY &&
	       t_now(CLOCK_MONOTONIC) < deadline)
		t_sleep_ms(1);
	ASSERT_EQ(QTIMER_REC_VOID, t_ring_claim_of(&self->r, idx));
	ASSERT_EQ(1, t_ring_collect(&self->r, &rec, 1, QT_ARRIVE_MS,
				     CLOCK_MONOTONIC, NULL));
	EXPECT_EQ(1, self->r.skipped);
	EXPECT_EQ(id, rec.id);
	EXPECT_EQ(0xc05, rec.cookie);
	EXPECT_EQ(QTIMER_REC_CANCELED | QTIMER_REC_LAST, LOW(rec.flags));
	EXPECT_EQ(1, rec.count);
	EXPECT_EQ(-ENOENT, t_cancel(self->fd, id));
	EXPECT_TRUE(t_ring_stays_empty(&self->r, 100));
}

/* Armed, not fired: the cancellation (count 0) comes through the ring. */
TEST_F(clockset, armed_timer_cancellation_in_ring)
{
	struct qtimer_record rec;
	__u64 id;

	RETURN_IF_SETUP_SKIPPED();
	ASSERT_EQ(0, arm_cos(self->fd, t_now(CLOCK_REALTIME) + 20 * NSEC_PER_SEC,
			     0xc06, &id));
	QT_STEP_REALTIME(NSEC_PER_SEC);
	ASSERT_EQ(1, t_ring_collect(&self->r, &rec, 1, QT_ARRIVE_MS,
				     CLOCK_MONOTONIC, NULL));
	EXPECT_EQ(id, rec.id);
	EXPECT_EQ(QTIMER_REC_TAKEN | QTIMER_REC_CANCELED | QTIMER_REC_LAST,
		  rec.flags);
	EXPECT_EQ(0, rec.count);
	EXPECT_EQ(-ENOENT, t_cancel(self->fd, id));
}

/* A record the consumer claimed before the set is its: no cancellation. */
TEST_F(clockset, claimed_record_stays_taken)
{
	struct qtimer_record rec;
	long idx;
	__u64 id;

	RETURN_IF_SETUP_SKIPPED();
	idx = fire_cos(&self->r, 0xc07, &id);
	ASSERT_LE(0, idx);
	ASSERT_TRUE(t_ring_claim(&self->r, idx, &rec));
	EXPECT_EQ(QTIMER_REC_TAKEN | QTIMER_REC_LAST, rec.flags);
	QT_STEP_REALTIME(-NSEC_PER_SEC);
	EXPECT_EQ(QTIMER_REC_TAKEN, t_ring_claim_of(&self->r, idx));
	t_ring_set_tail(&self->r, idx + 1);
	EXPECT_TRUE(t_ring_stays_empty(&self->r, 200));
}

/*
 * A cancel-on-set ticker whose record the consumer took and passed, when
 * the clock is set forward over a hundred of its periods.  If the ring is
 * reaped before the set's work has run (here by the expirer delivering
 * another timer of the file on another CPU, while this thread keeps the
 * work's CPU busy), the set came first, as for a timer that fires then:
 * the ticker's next record is the cancellation with count 0, not a
 * catch-up over the periods the step skipped, which the cancellation
 * would then inherit.
 */
TEST_F(clockset, ticker_reaped_while_set_pending_is_cancelled)
{
	const __s64 period = 100 * NSEC_PER_MSEC;
	struct sched_param sp = { .sched_priority = 10 };
	struct qtimer_record rec[2], *tick = NULL;
	int cpus[2], here, other, got, i;
	__u64 id, other_id;
	__s64 deadline;
	__u32 idx, head;

	RETURN_IF_SETUP_SKIPPED();
	if (t_allowed_cpus(cpus, 2) < 2)
		SKIP(return, "needs two CPUs");
	here = cpus[0];
	other = cpus[1];
	ASSERT_EQ(0, t_pin_self(here));
	idx = t_ring_head(&self->r);
	ASSERT_EQ(0, t_arm(self->fd, CLOCK_REALTIME,
			    QTIMER_F_ABSTIME | QTIMER_F_CANCEL_ON_SET,
			    t_now(CLOCK_REALTIME) + 10 * NSEC_PER_MSEC, period,
			    0xc08, &id));
	ASSERT_TRUE(t_ring_wait_pending(&self->r, 1, QT_ARRIVE_MS));
	ASSERT_TRUE(t_ring_claim(&self->r, idx, &rec[0]));
	ASSERT_EQ(id, rec[0].id);
	t_ring_set_tail(&self->r, idx + 1);
	/*
	 * Armed from its own CPU: an hrtimer started from here could fire
	 * here, and on PREEMPT_RT its softirq thread would wait for this one.
	 */
	ASSERT_EQ(0, t_pin_self(other));
	ASSERT_EQ(0, t_arm_cpu(self->fd, CLOCK_MONOTONIC, 0, 50 * NSEC_PER_MSEC,
				0, 0xc09, other, &other_id));
	ASSERT_EQ(0, t_pin_self(here));
	if (sched_setscheduler(0, SCHED_FIFO, &sp))
		SKIP(return, "cannot use SCHED_FIFO: %s", strerror(errno));
	QT_STEP_REALTIME(10 * NSEC_PER_SEC);
	/* No sleep: the set's work waits for this CPU. */
	deadline = t_now(CLOCK_MONOTONIC) + 500 * NSEC_PER_MSEC;
	while (t_ring_head(&self->r) == idx + 1 &&
	       t_now(CLOCK_MONOTONIC) < deadline)
		;
	head = t_ring_head(&self->r);
	sp.sched_priority = 0;
	ASSERT_EQ(0, sched_setscheduler(0, SCHED_OTHER, &sp));
	/* Else the reap came after the work, which this does not test. */
	ASSERT_NE(idx + 1, head)
		TH_LOG("the other timer's record took over 500 ms");
	got = t_ring_collect(&self->r, rec, 2, QT_ARRIVE_MS, CLOCK_MONOTONIC,
			      NULL);
	ASSERT_EQ(2, got);
	for (i = 0; i < got; i++)
		if (rec[i].id == id)
			tick = &rec[i];
	ASSERT_NE(NULL, tick);
	EXPECT_EQ(QTIMER_REC_TAKEN | QTIMER_REC_CANCELED | QTIMER_REC_LAST,
		  tick->flags);
	EXPECT_EQ(0, tick->count)
		TH_LOG("the cancellation counts %u periods of the step",
		       tick->count);
}

/* --- time namespaces ---------------------------------------------------- */

FIXTURE(timens)
{
	int fd;
};

FIXTURE_VARIANT(timens)
{
	bool opened_outside;	/* the file, opened before the namespace */
};

FIXTURE_VARIANT_ADD(timens, opened_inside)	{ .opened_outside = false };
FIXTURE_VARIANT_ADD(timens, opened_outside)	{ .opened_outside = true };

FIXTURE_SETUP(timens)
{
	self->fd = t_open(O_NONBLOCK);
	ASSERT_LE(0, self->fd);
	SKIP_WITHOUT_RING();
}

FIXTURE_TEARDOWN(timens)
{
	close(self->fd);
}

#define TIMENS_OFFSET_SEC	1000

/*
 * In a namespace whose CLOCK_MONOTONIC is 1000 s ahead: the ring's
 * expires_ns is in the view of the thread that set the ring up, whoever
 * opened the file.  0 or the check that failed.
 */
static int timens_child(int fd)
{
	const __s64 rel = 20 * NSEC_PER_MSEC;
	struct qtimer_record rec;
	__s64 t0, stamp;
	struct t_ring r;

	if (fd < 0)
		return 10;
	if (t_ring_map(&r, fd, 8))
		return 11;
	t0 = t_now(CLOCK_MONOTONIC);
	if (t_arm(fd, CLOCK_MONOTONIC, 0, rel, 0, 0x7e, NULL))
		return 12;
	if (t_ring_collect(&r, &rec, 1, QT_ARRIVE_MS, CLOCK_MONOTONIC,
			    &stamp) != 1)
		return 13;
	if (rec.expires_ns < t0 + rel || rec.expires_ns > stamp) {
		t_diag("expires_ns %lld, namespace now %lld (armed at %lld + %lld)",
			(long long)rec.expires_ns, (long long)stamp,
			(long long)t0, (long long)rel);
		return 14;
	}
	return 0;
}

TEST_F(timens, records_in_setup_thread_view)
{
	char offs[64];
	int pid;

	RETURN_IF_SETUP_SKIPPED();
	snprintf(offs, sizeof(offs), "monotonic %d 0\n", TIMENS_OFFSET_SEC);
	pid = t_fork_into_timens(offs);
	if (pid == QT_NO_TIMENS)
		SKIP(return, "no time namespaces");
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(timens_child(variant->opened_outside ? self->fd :
				   t_open(O_NONBLOCK)));
	EXPECT_EQ(0, t_wait_child(pid));
}

TEST_HARNESS_MAIN
