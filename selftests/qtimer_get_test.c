// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * GET (QTIMER_IOC_GET): a timer's schedule read back as its user armed it,
 * in every state: armed (a modify-later counts at once), fired with its
 * record pending (a ticker's next expiry counted as read() would count it),
 * gone once its last record is read or it is cancelled, in the ring too,
 * and in a time namespace's view.  Bad input is -EINVAL or -EFAULT and
 * changes nothing; GET itself changes nothing.
 */
#define _GNU_SOURCE
#include <sched.h>
#include "kselftest_harness.h"
#include "helpers.h"

#define COOKIE	0xc0ffee0123ULL
#define FAR_NS	(100 * NSEC_PER_SEC)

FIXTURE(get)
{
	int fd;
};

FIXTURE_SETUP(get)
{
	struct qtimer_version v;

	self->fd = t_open(O_NONBLOCK);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, t_version(self->fd, &v));
	if (!(v.features & QTIMER_FEAT_GET))
		SKIP(return, "QTIMER_FEAT_GET not advertised");
}

FIXTURE_TEARDOWN(get)
{
	if (self->fd >= 0)
		close(self->fd);
}

/* Arms a one-shot at absolute CLOCK_MONOTONIC @when with slack @slack. */
static int arm_at(int fd, __s64 when, __u64 period, __u64 slack, __u64 *id)
{
	struct qtimer_op op = t_op(CLOCK_MONOTONIC, QTIMER_F_ABSTIME, when,
				    period, COOKIE);
	int ret;

	op.slack_ns = slack;
	ret = t_arm_op(fd, &op);
	if (!ret)
		*id = op.id;
	return ret;
}

TEST_F(get, armed_timer_reads_back_as_armed)
{
	__s64 when = t_now(CLOCK_MONOTONIC) + FAR_NS;
	struct qtimer_op op = t_op(CLOCK_MONOTONIC, QTIMER_F_ABSTIME, when,
				    3 * NSEC_PER_SEC, COOKIE);
	int cpus[8], nr;

	nr = t_allowed_cpus(cpus, 8);
	ASSERT_LT(0, nr);
	op.flags |= QTIMER_F_CPU;
	op.cpu = cpus[nr - 1];
	op.slack_ns = 12345;
	ASSERT_EQ(0, t_arm_op(self->fd, &op));

	ASSERT_EQ(QTIMER_CANCEL_ARMED, t_get(self->fd, op.id, &op));
	EXPECT_EQ(0, op.opcode);
	EXPECT_EQ(CLOCK_MONOTONIC, op.clockid);
	EXPECT_EQ(QTIMER_F_ABSTIME, op.flags);
	EXPECT_EQ(when, op.expires_ns);
	EXPECT_EQ(3 * NSEC_PER_SEC, op.period_ns);
	EXPECT_EQ(12345, op.slack_ns);
	EXPECT_EQ(COOKIE, op.cookie);
	EXPECT_EQ(cpus[nr - 1], op.cpu);
	EXPECT_EQ(QTIMER_CANCEL_ARMED, op.result);
	EXPECT_EQ(0, op.reserved);
	/* GET took nothing away: the timer is still there to cancel. */
	EXPECT_EQ(QTIMER_CANCEL_ARMED, t_cancel(self->fd, op.id));
	EXPECT_EQ(-ENOENT, t_get(self->fd, op.id, &op));
}

/* The clock it was armed on, each as its records speak of it. */
TEST_F(get, each_clock_in_its_own_time)
{
	static const int clocks[] = { CLOCK_REALTIME, CLOCK_MONOTONIC, CLOCK_BOOTTIME };
	struct qtimer_op op;
	__s64 before, after;
	__u64 id;
	int i;

	for (i = 0; i < 3; i++) {
		before = t_now(clocks[i]);
		ASSERT_EQ(0, t_arm(self->fd, clocks[i], 0, FAR_NS, 0, i, &id));
		after = t_now(clocks[i]);
		ASSERT_EQ(QTIMER_CANCEL_ARMED, t_get(self->fd, id, &op));
		EXPECT_EQ(clocks[i], op.clockid);
		EXPECT_EQ(QTIMER_F_ABSTIME, op.flags);
		/* Relative CLOCK_REALTIME is an interval, said in wall time. */
		EXPECT_LE(before + FAR_NS, op.expires_ns) TH_LOG("clock %d", clocks[i]);
		EXPECT_GE(after + FAR_NS + (i ? 0 : NSEC_PER_SEC), op.expires_ns)
			TH_LOG("clock %d", clocks[i]);
		EXPECT_EQ(i, op.cookie);
	}
}

TEST_F(get, cancel_on_set_is_in_its_flags)
{
	__s64 when = t_now(CLOCK_REALTIME) + FAR_NS;
	struct qtimer_op op;
	__u64 id;

	ASSERT_EQ(0, t_arm(self->fd, CLOCK_REALTIME,
			    QTIMER_F_ABSTIME | QTIMER_F_CANCEL_ON_SET, when, 0, 1, &id));
	ASSERT_EQ(QTIMER_CANCEL_ARMED, t_get(self->fd, id, &op));
	EXPECT_EQ(QTIMER_F_ABSTIME | QTIMER_F_CANCEL_ON_SET, op.flags);
	EXPECT_EQ(when, op.expires_ns);
}

/* A MODIFY later or earlier shows at once, lazy in the heap or not. */
TEST_F(get, modify_shows_at_once)
{
	__s64 now = t_now(CLOCK_MONOTONIC);
	struct qtimer_op op;
	__u64 id;

	ASSERT_EQ(0, arm_at(self->fd, now + FAR_NS, 0, 0, &id));
	ASSERT_EQ(QTIMER_CANCEL_ARMED,
		  t_modify(self->fd, id, QTIMER_F_ABSTIME, now + 2 * FAR_NS,
			    NSEC_PER_SEC, 77));
	ASSERT_EQ(QTIMER_CANCEL_ARMED, t_get(self->fd, id, &op));
	EXPECT_EQ(now + 2 * FAR_NS, op.expires_ns);
	EXPECT_EQ(NSEC_PER_SEC, op.period_ns);
	EXPECT_EQ(77, op.slack_ns);
	EXPECT_EQ(COOKIE, op.cookie);

	ASSERT_EQ(QTIMER_CANCEL_ARMED,
		  t_modify(self->fd, id, QTIMER_F_ABSTIME, now + FAR_NS / 2, 0, 0));
	ASSERT_EQ(QTIMER_CANCEL_ARMED, t_get(self->fd, id, &op));
	EXPECT_EQ(now + FAR_NS / 2, op.expires_ns);
	EXPECT_EQ(0, op.period_ns);
	EXPECT_EQ(0, op.slack_ns);
}

/* Fired and unread: pending, at the expiry it fired at; read: gone. */
TEST_F(get, fired_oneshot_is_pending_then_gone)
{
	__s64 when = t_now(CLOCK_MONOTONIC);
	struct qtimer_record rec;
	struct qtimer_op op;
	__u64 id;

	ASSERT_EQ(0, arm_at(self->fd, when, 0, 0, &id));
	ASSERT_EQ(1, t_wait_readable(self->fd, QT_ARRIVE_MS));
	ASSERT_EQ(QTIMER_CANCEL_QUEUED, t_get(self->fd, id, &op));
	EXPECT_EQ(when, op.expires_ns);
	EXPECT_EQ(COOKIE, op.cookie);
	/* GET left the record where it was. */
	ASSERT_EQ(1, t_read(self->fd, &rec, 1));
	EXPECT_EQ(id, rec.id);
	EXPECT_EQ(-ENOENT, t_get(self->fd, id, &op));
	EXPECT_EQ(-ENOENT, t_cancel(self->fd, id));
}

/*
 * A ticker with a record pending is not armed: GET gives the expiry that a
 * read() now would re-arm it at, on its grid, after now; after the read it
 * is armed at least that late.
 */
TEST_F(get, ticker_pending_gives_its_next_expiry)
{
	const __s64 period = 20 * NSEC_PER_MSEC;
	__s64 first = t_now(CLOCK_MONOTONIC) + NSEC_PER_MSEC, t0, t1, next;
	struct qtimer_record rec;
	struct qtimer_op op;
	__u64 id;
	int i;

	ASSERT_EQ(0, arm_at(self->fd, first, period, 0, &id));
	ASSERT_EQ(1, t_wait_readable(self->fd, QT_ARRIVE_MS));
	t_sleep_ns(3 * period);
	t0 = t_now(CLOCK_MONOTONIC);
	ASSERT_EQ(QTIMER_CANCEL_QUEUED, t_get(self->fd, id, &op));
	t1 = t_now(CLOCK_MONOTONIC);
	next = op.expires_ns;
	EXPECT_EQ(period, op.period_ns);
	EXPECT_EQ(0, (next - first) % period);
	EXPECT_LT(t0, next);
	EXPECT_GE(t1 + period, next);

	ASSERT_EQ(1, t_read(self->fd, &rec, 1));
	EXPECT_LE(3, rec.count);
	/* Re-armed by the read, or fired again since: on its grid either way. */
	i = t_get(self->fd, id, &op);
	EXPECT_TRUE(i == QTIMER_CANCEL_ARMED || i == QTIMER_CANCEL_QUEUED) TH_LOG("%d", i);
	EXPECT_LE(next, op.expires_ns);
	EXPECT_EQ(0, (op.expires_ns - first) % period);
}

/*
 * In the ring: pending while READY; once the consumer claims a one-shot's
 * record it is consumed, as CANCEL would find, before any reap; a claimed
 * ticker is being read (0) until the reap re-arms it.
 */
TEST_F(get, ringed_record_is_pending_until_claimed)
{
	const __s64 period = 50 * NSEC_PER_MSEC;
	struct qtimer_record rec;
	struct t_ring r;
	struct qtimer_op op;
	__u64 id;
	long idx;

	if (!t_ring_offered())
		SKIP(return, "no ring");
	ASSERT_EQ(0, t_ring_map(&r, self->fd, 8));
	idx = t_ring_fire_one(&r, COOKIE, &id);
	ASSERT_LE(0, idx);
	EXPECT_EQ(QTIMER_CANCEL_QUEUED, t_get(self->fd, id, &op));
	EXPECT_EQ(COOKIE, op.cookie);
	ASSERT_TRUE(t_ring_claim(&r, idx, &rec));
	EXPECT_EQ(id, rec.id);
	EXPECT_EQ(-ENOENT, t_get(self->fd, id, &op));
	EXPECT_EQ(-ENOENT, t_cancel(self->fd, id));
	t_ring_set_tail(&r, idx + 1);

	ASSERT_EQ(0, t_arm(self->fd, CLOCK_MONOTONIC, 0, period, period, 7, &id));
	ASSERT_EQ(1, t_ring_wait_pending(&r, 1, QT_ARRIVE_MS));
	idx = t_ring_tail(&r);
	ASSERT_TRUE(t_ring_claim(&r, idx, &rec));
	EXPECT_EQ(id, rec.id);
	EXPECT_EQ(0, t_get(self->fd, id, &op));
	EXPECT_EQ(period, op.period_ns);
	t_ring_set_tail(&r, idx + 1);
	/* poll() reaps what tail passed and re-arms the ticker. */
	t_revents(self->fd);
	idx = t_get(self->fd, id, &op);
	EXPECT_TRUE(idx == QTIMER_CANCEL_ARMED || idx == QTIMER_CANCEL_QUEUED) TH_LOG("%ld", idx);
	t_ring_unmap(&r);
}

/* Each field but id non-zero, a bad id, a bad pointer: nothing changes. */
TEST_F(get, bad_input_changes_nothing)
{
	__s64 when = t_now(CLOCK_MONOTONIC) + FAR_NS;
	struct qtimer_op op, good;
	void *ro;
	__u64 id;
	int i;

	ASSERT_EQ(0, arm_at(self->fd, when, 0, 5, &id));
	for (i = 0; i < 9; i++) {
		memset(&op, 0, sizeof(op));
		op.id = id;
		switch (i) {
		case 0: op.opcode = QTIMER_OP_CANCEL; break;
		case 1: op.clockid = CLOCK_MONOTONIC; break;
		case 2: op.flags = QTIMER_F_ABSTIME; break;
		case 3: op.expires_ns = 1; break;
		case 4: op.period_ns = 1; break;
		case 5: op.slack_ns = 1; break;
		case 6: op.cookie = 1; break;
		case 7: op.cpu = 1; break;
		case 8: op.reserved = 1; break;
		}
		EXPECT_EQ(-EINVAL, t_ioctl(self->fd, QTIMER_IOC_GET, &op)) TH_LOG("field %d", i);
	}
	memset(&op, 0, sizeof(op));
	op.id = id;
	op.result = -1;
	EXPECT_EQ(-EINVAL, t_ioctl(self->fd, QTIMER_IOC_GET, &op));

	EXPECT_EQ(-ENOENT, t_get(self->fd, 0, &op));
	EXPECT_EQ(-ENOENT, t_get(self->fd, id ^ (1ULL << 40), &op));
	EXPECT_EQ(-ENOENT, t_get(self->fd, ~0ULL, &op));
	EXPECT_EQ(-EFAULT, t_ioctl(self->fd, QTIMER_IOC_GET, t_unmapped_page()));
	memset(&good, 0, sizeof(good));
	good.id = id;
	ro = t_readonly_copy(&good, sizeof(good));
	ASSERT_NE(NULL, ro);
	EXPECT_EQ(-EFAULT, t_ioctl(self->fd, QTIMER_IOC_GET, ro));
	t_readonly_free(ro);

	/* The timer is as armed. */
	ASSERT_EQ(QTIMER_CANCEL_ARMED, t_get(self->fd, id, &op));
	EXPECT_EQ(when, op.expires_ns);
	EXPECT_EQ(5, op.slack_ns);
	EXPECT_EQ(QTIMER_CANCEL_ARMED, t_cancel(self->fd, id));
}

#define CHECK(cond) QT_CHILD_CHECK(cond)

/* An absolute expiry comes back as armed, in the namespace's view. */
TEST_F(get, time_namespace_view)
{
	int pid = t_fork_into_timens("monotonic 1000 0\nboottime 2000 0\n");

	if (pid == QT_NO_TIMENS)
		SKIP(return, "no time namespaces (CONFIG_TIME_NS) or no privilege");
	ASSERT_LE(0, pid);
	if (!pid) {
		static const int clocks[] = { CLOCK_MONOTONIC, CLOCK_BOOTTIME };
		struct qtimer_op op;
		int fd = t_open(O_NONBLOCK), i;
		__u64 id;

		CHECK(fd >= 0);
		for (i = 0; i < 2; i++) {
			__s64 when = t_now(clocks[i]) + FAR_NS;

			CHECK(!t_arm(fd, clocks[i], QTIMER_F_ABSTIME, when, 0, 0, &id));
			CHECK(t_get(fd, id, &op) == QTIMER_CANCEL_ARMED);
			CHECK(op.expires_ns == when);
		}
		_exit(0);
	}
	ASSERT_EQ(0, t_wait_child(pid));
}

TEST_HARNESS_MAIN
