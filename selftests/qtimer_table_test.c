// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * The timer table (uapi "The timer table"): TABLE_SETUP and mmap()'s
 * validation; the kernel's word in each slot at arm, fire, read, MODIFY
 * and CANCEL; a push later that the timer honours (never before the new
 * expiry) and a stop that delivers nothing and frees the id; who wins
 * when a push or a stop races the expiry, learnt from the swap alone and
 * checked against what arrives; and a hostile writer filling slots with
 * garbage while timers fire, which may stop or delay its own timers but
 * never makes one fire early or twice.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include "kselftest_harness.h"
#include "helpers.h"

#define FAR_NS		(100 * NSEC_PER_SEC)

FIXTURE(table)
{
	int fd;
	struct t_table tb;
	__s64 rt0, mono0;	/* realtime = rt0 + (monotonic - mono0) */
	bool stepped;		/* QT_STEP_REALTIME() moved the clock */
};

FIXTURE_SETUP(table)
{
	self->fd = -1;
	self->tb.map = NULL;
	self->stepped = false;
	self->mono0 = t_now(CLOCK_MONOTONIC);
	self->rt0 = t_now(CLOCK_REALTIME);
	if (!t_table_offered())
		SKIP(return, "QTIMER_FEAT_TABLE not advertised");
	self->fd = t_open(O_NONBLOCK);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, t_table_map(&self->tb, self->fd));
}

FIXTURE_TEARDOWN(table)
{
	if (self->stepped)
		EXPECT_EQ(0, t_restore_realtime(self->rt0, self->mono0));
	t_table_unmap(&self->tb);
	if (self->fd >= 0)
		close(self->fd);
}

static __s64 mono_in(__s64 ns)
{
	return t_now(CLOCK_MONOTONIC) + ns;
}

/* Arms a one-shot at absolute CLOCK_MONOTONIC @when on @cpu's heap. */
static int arm_at(int fd, __s64 when, __u64 cookie, int cpu, __u64 *id)
{
	return t_arm_cpu(fd, CLOCK_MONOTONIC, QTIMER_F_ABSTIME, when, 0, cookie,
			 cpu, id);
}

/*
 * Arms @n one-shots, timer k on CPU k % cpus, due at the returned start +
 * k * @step_ns, start being far enough ahead that all are armed before the
 * first comes due however slow the kernel (a debug kernel's ARM is many
 * times a stock one's): they are armed far ahead, then moved to their
 * expiries with MODIFY, which costs about what arming did.  Returns the
 * start, or 0 on failure.
 */
static __s64 arm_spread(int fd, __u64 *ids, __s64 *due, int n, __s64 step_ns)
{
	int cpus = t_nr_cpus(), i;
	__s64 t0 = t_now(CLOCK_MONOTONIC), start;

	for (i = 0; i < n; i++)
		if (arm_at(fd, t0 + FAR_NS, i, i % cpus, &ids[i]))
			return 0;
	start = mono_in(2 * (t_now(CLOCK_MONOTONIC) - t0) + 20 * NSEC_PER_MSEC);
	for (i = 0; i < n; i++) {
		due[i] = start + i * step_ns;
		if (t_modify(fd, ids[i], QTIMER_F_ABSTIME, due[i], 0, 0) !=
		    QTIMER_CANCEL_ARMED)
			return 0;
	}
	return start;
}

/* Waits up to @ms for fdinfo's timers to reach @want: the last value seen. */
static long long timers_become(int fd, long long want, int ms)
{
	long long v = t_fdinfo_get(fd, QT_FI_TIMERS);

	while (v != want && ms-- > 0) {
		usleep(1000);
		v = t_fdinfo_get(fd, QT_FI_TIMERS);
	}
	return v;
}

TEST(setup_validation)
{
	struct qtimer_table_setup s;
	int fd;

	if (!t_table_offered())
		SKIP(return, "QTIMER_FEAT_TABLE not advertised");
	fd = t_open(0);
	ASSERT_LE(0, fd);
	memset(&s, 0, sizeof(s));
	s.flags = 1;
	EXPECT_EQ(-EINVAL, t_ioctl(fd, QTIMER_IOC_TABLE_SETUP, &s));
	memset(&s, 0, sizeof(s));
	s.reserved[1] = 1;
	EXPECT_EQ(-EINVAL, t_ioctl(fd, QTIMER_IOC_TABLE_SETUP, &s));
	memset(&s, 0, sizeof(s));
	s.shard_size = 1;
	EXPECT_EQ(-EINVAL, t_ioctl(fd, QTIMER_IOC_TABLE_SETUP, &s));
	EXPECT_EQ(-EFAULT, t_ioctl(fd, QTIMER_IOC_TABLE_SETUP, t_unmapped_page()));
	/* None of those set a table up. */
	ASSERT_EQ(0, t_table_setup(fd, &s));
	EXPECT_LE(1, s.nr_shards);
	EXPECT_GE(16, s.nr_shards);
	EXPECT_EQ((1ULL << 24) * sizeof(struct qtimer_slot), s.shard_size);
	EXPECT_EQ(0, s.mmap_off % getpagesize());
	EXPECT_EQ(-EBUSY, t_table_setup(fd, &s));
	close(fd);
}

TEST(mmap_validation)
{
	struct qtimer_table_setup s;
	void *p;
	int fd;

	if (!t_table_offered())
		SKIP(return, "QTIMER_FEAT_TABLE not advertised");
	fd = t_open(0);
	ASSERT_LE(0, fd);
	/* Where TABLE_SETUP will say, before it. */
	p = mmap(NULL, getpagesize(), PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		 1ULL << 32);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(ENODEV, errno);
	ASSERT_EQ(0, t_table_setup(fd, &s));
	ASSERT_EQ(1ULL << 32, s.mmap_off);
	p = mmap(NULL, getpagesize(), PROT_READ | PROT_WRITE, MAP_PRIVATE, fd,
		 s.mmap_off);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EINVAL, errno);
	/* One page past the last shard. */
	p = mmap(NULL, getpagesize(), PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		 s.mmap_off + s.nr_shards * s.shard_size);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EINVAL, errno);
	/* The last page of the last shard is fine (a part of the table). */
	p = mmap(NULL, getpagesize(), PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		 s.mmap_off + s.nr_shards * s.shard_size - getpagesize());
	ASSERT_NE(MAP_FAILED, p);
	munmap(p, getpagesize());
	close(fd);
}

/* The kernel's word: ARMED at arm with the id's generation and expiry. */
TEST_F(table, arm_writes_the_slot)
{
	__s64 when = mono_in(FAR_NS);
	__u64 id, ctl;

	ASSERT_EQ(0, arm_at(self->fd, when, 1, 0, &id));
	ctl = t_table_ctl(&self->tb, id);
	EXPECT_EQ(QTIMER_SLOT_ARMED, QTIMER_SLOT_STATE(ctl));
	EXPECT_EQ(QTIMER_ID_GEN(id), QTIMER_SLOT_GEN(ctl));
	EXPECT_EQ(when, t_table_slot(&self->tb, id)->deadline);
	/* fdinfo counts the page that slot is in. */
	EXPECT_LE(1, t_fdinfo_named(self->fd, "table_pages"));
	/* A relative CLOCK_REALTIME interval is the kernel's alone. */
	ASSERT_EQ(0, t_arm(self->fd, CLOCK_REALTIME, 0, FAR_NS, 0, 2, &id));
	EXPECT_EQ(QTIMER_SLOT_KERNEL, QTIMER_SLOT_STATE(t_table_ctl(&self->tb, id)));
	EXPECT_EQ(T_TABLE_KERNEL, t_table_stop(&self->tb, id));
	EXPECT_EQ(QTIMER_CANCEL_ARMED, t_cancel(self->fd, id));
}

/* Whether @id's slot says ARMED with QTIMER_SLOT_PLAIN. */
static bool armed_plain(const struct t_table *tb, __u64 id)
{
	__u64 ctl = t_table_ctl(tb, id);

	return QTIMER_SLOT_STATE(ctl) == QTIMER_SLOT_ARMED &&
	       (ctl & QTIMER_SLOT_PLAIN);
}

/*
 * PLAIN marks exactly the timers a push re-schedules as MODIFY would (one-
 * shot, no slack, no cancel-on-set); a push keeps it; the id names the clock.
 */
TEST_F(table, plain_and_the_ids_clock)
{
	struct qtimer_op op = {
		.opcode = QTIMER_OP_ARM, .clockid = CLOCK_BOOTTIME,
		.expires_ns = FAR_NS, .slack_ns = 1000,
	};
	__s64 when = mono_in(FAR_NS);
	__u64 id, ctl;

	ASSERT_EQ(0, arm_at(self->fd, when, 1, 0, &id));
	EXPECT_TRUE(armed_plain(&self->tb, id));
	EXPECT_EQ(1, QTIMER_ID_CLOCK(id));	/* CLOCK_MONOTONIC */
	ASSERT_EQ(T_TABLE_DONE, t_table_push(&self->tb, id, when + 1000));
	ctl = t_table_ctl(&self->tb, id);
	EXPECT_EQ(QTIMER_SLOT_LATER, QTIMER_SLOT_STATE(ctl));
	EXPECT_TRUE(ctl & QTIMER_SLOT_PLAIN);
	/* MODIFY to a ticker: no longer plain; back to a one-shot: plain. */
	ASSERT_EQ(QTIMER_CANCEL_ARMED,
		  t_modify(self->fd, id, QTIMER_F_ABSTIME, when, NSEC_PER_SEC, 0));
	EXPECT_FALSE(armed_plain(&self->tb, id));
	EXPECT_EQ(QTIMER_SLOT_ARMED, QTIMER_SLOT_STATE(t_table_ctl(&self->tb, id)));
	ASSERT_EQ(QTIMER_CANCEL_ARMED,
		  t_modify(self->fd, id, QTIMER_F_ABSTIME, when, 0, 100));
	EXPECT_FALSE(armed_plain(&self->tb, id));
	ASSERT_EQ(QTIMER_CANCEL_ARMED,
		  t_modify(self->fd, id, QTIMER_F_ABSTIME, when, 0, 0));
	EXPECT_TRUE(armed_plain(&self->tb, id));

	/* Slack, a period, cancel-on-set: not plain. */
	ASSERT_EQ(0, ioctl(self->fd, QTIMER_IOC_ARM, &op));
	EXPECT_FALSE(armed_plain(&self->tb, op.id));
	EXPECT_EQ(QTIMER_SLOT_ARMED, QTIMER_SLOT_STATE(t_table_ctl(&self->tb, op.id)));
	EXPECT_EQ(2, QTIMER_ID_CLOCK(op.id));	/* CLOCK_BOOTTIME */
	ASSERT_EQ(0, t_arm(self->fd, CLOCK_MONOTONIC, 0, FAR_NS, FAR_NS, 2, &id));
	EXPECT_FALSE(armed_plain(&self->tb, id));
	ASSERT_EQ(0, t_arm(self->fd, CLOCK_REALTIME,
			   QTIMER_F_ABSTIME | QTIMER_F_CANCEL_ON_SET,
			   t_now(CLOCK_REALTIME) + FAR_NS, 0, 3, &id));
	EXPECT_FALSE(armed_plain(&self->tb, id));
	EXPECT_EQ(0, QTIMER_ID_CLOCK(id));	/* CLOCK_REALTIME */
	ASSERT_EQ(0, t_arm(self->fd, CLOCK_REALTIME, QTIMER_F_ABSTIME,
			   t_now(CLOCK_REALTIME) + FAR_NS, 0, 4, &id));
	EXPECT_TRUE(armed_plain(&self->tb, id));
}

/* A timer armed before the table: KERNEL, the ioctls only, until re-armed. */
TEST(armed_before_setup)
{
	struct t_table tb;
	__u64 id;
	int fd;

	if (!t_table_offered())
		SKIP(return, "QTIMER_FEAT_TABLE not advertised");
	fd = t_open(O_NONBLOCK);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, arm_at(fd, mono_in(FAR_NS), 1, 0, &id));
	ASSERT_EQ(0, t_table_map(&tb, fd));
	EXPECT_EQ(QTIMER_SLOT_KERNEL, QTIMER_SLOT_STATE(t_table_ctl(&tb, id)));
	EXPECT_EQ(T_TABLE_KERNEL, t_table_stop(&tb, id));
	/* MODIFY re-arms it, and from then on the table serves it. */
	EXPECT_EQ(QTIMER_CANCEL_ARMED,
		  t_modify(fd, id, QTIMER_F_ABSTIME, mono_in(FAR_NS), 0, 0));
	EXPECT_EQ(QTIMER_SLOT_ARMED, QTIMER_SLOT_STATE(t_table_ctl(&tb, id)));
	EXPECT_EQ(T_TABLE_DONE, t_table_stop(&tb, id));
	EXPECT_EQ(-ENOENT, t_cancel(fd, id));
	t_table_unmap(&tb);
	close(fd);
}

/*
 * Stopped timers deliver nothing, their ids are gone for every ioctl, and
 * their places come back when their entries surface.
 */
TEST_F(table, stop_delivers_nothing)
{
	enum { N = 64 };
	struct qtimer_record others[N + 1];
	__s64 when = mono_in(NSEC_PER_SEC);
	struct qtimer_op op;
	__u64 ids[N], sentinel;
	int i, n;

	for (i = 0; i < N; i++)
		ASSERT_EQ(0, arm_at(self->fd, when + i * NSEC_PER_USEC, i, 0, &ids[i]));
	ASSERT_EQ(0, arm_at(self->fd, when + 200 * NSEC_PER_MSEC, 1000, 0, &sentinel));
	for (i = 0; i < N; i += 2)
		ASSERT_EQ(T_TABLE_DONE, t_table_stop(&self->tb, ids[i]));
	/* Stopped: -ENOENT everywhere, and a second stop fails. */
	EXPECT_EQ(-ENOENT, t_get(self->fd, ids[0], &op));
	EXPECT_EQ(-ENOENT, t_modify(self->fd, ids[2], QTIMER_F_ABSTIME, when, 0, 0));
	EXPECT_EQ(QTIMER_SLOT_STOPPED, QTIMER_SLOT_STATE(t_table_ctl(&self->tb, ids[2])));
	EXPECT_EQ(T_TABLE_KERNEL, t_table_stop(&self->tb, ids[4]));
	n = t_read_to_sentinel(self->fd, 1000, others, N + 1);
	ASSERT_EQ(N / 2, n);
	for (i = 0; i < n; i++)
		EXPECT_EQ(1, others[i].cookie % 2);
	for (i = 0; i < N; i += 2)
		EXPECT_EQ(-ENOENT, t_cancel(self->fd, ids[i]));
	EXPECT_EQ(0, timers_become(self->fd, 0, 2000));
	EXPECT_EQ(0, t_nothing_pending(self->fd));
}

/* A pushed timer fires at its new expiry, never before. */
TEST_F(table, push_fires_at_the_new_expiry)
{
	enum { N = 32 };
	struct qtimer_record recs[N];
	__s64 stamp[N], when = mono_in(NSEC_PER_SEC), later[N];
	__u64 ids[N];
	int i, n, k;

	for (i = 0; i < N; i++) {
		ASSERT_EQ(0, arm_at(self->fd, when, i, i % t_nr_cpus(), &ids[i]));
		later[i] = when + (300 + i) * NSEC_PER_MSEC;
	}
	for (i = 0; i < N; i++) {
		ASSERT_EQ(T_TABLE_DONE, t_table_push(&self->tb, ids[i], later[i]));
		/* Not later than what it says: refused by the protocol. */
		EXPECT_EQ(T_TABLE_EARLIER, t_table_push(&self->tb, ids[i], when));
	}
	/* Pushed again, later still, for half. */
	for (i = 0; i < N; i += 2) {
		later[i] += 100 * NSEC_PER_MSEC;
		ASSERT_EQ(T_TABLE_DONE, t_table_push(&self->tb, ids[i], later[i]));
	}
	n = t_collect_stamped(self->fd, recs, N, 2 * QT_ARRIVE_MS, CLOCK_MONOTONIC, stamp);
	ASSERT_EQ(N, n);
	for (i = 0; i < n; i++) {
		k = recs[i].cookie;
		ASSERT_LT(k, N);
		EXPECT_EQ(later[k], recs[i].expires_ns);
		EXPECT_LE(later[k], stamp[i]);
	}
	EXPECT_EQ(0, t_nothing_pending(self->fd));
}

/* GET sees a push and a stop. */
TEST_F(table, get_sees_the_table)
{
	__s64 when = mono_in(FAR_NS);
	struct qtimer_op op;
	__u64 id;

	ASSERT_EQ(0, arm_at(self->fd, when, 7, 0, &id));
	ASSERT_EQ(T_TABLE_DONE, t_table_push(&self->tb, id, when + NSEC_PER_SEC));
	ASSERT_EQ(QTIMER_CANCEL_ARMED, t_get(self->fd, id, &op));
	EXPECT_EQ(when + NSEC_PER_SEC, op.expires_ns);
	ASSERT_EQ(T_TABLE_DONE, t_table_stop(&self->tb, id));
	EXPECT_EQ(-ENOENT, t_get(self->fd, id, &op));
}

/* Once fired, the slot is the kernel's: a stop or a push fails. */
TEST_F(table, fired_is_the_kernels)
{
	struct qtimer_record rec;
	__u64 id;

	ASSERT_EQ(0, arm_at(self->fd, mono_in(NSEC_PER_MSEC), 3, 0, &id));
	ASSERT_EQ(1, t_wait_readable(self->fd, QT_ARRIVE_MS));
	EXPECT_EQ(QTIMER_SLOT_KERNEL, QTIMER_SLOT_STATE(t_table_ctl(&self->tb, id)));
	EXPECT_EQ(T_TABLE_KERNEL, t_table_stop(&self->tb, id));
	EXPECT_EQ(T_TABLE_KERNEL, t_table_push(&self->tb, id, mono_in(FAR_NS)));
	/* The record the failed stop promised. */
	ASSERT_EQ(1, t_read(self->fd, &rec, 1));
	EXPECT_EQ(id, rec.id);
	EXPECT_EQ(-ENOENT, t_cancel(self->fd, id));
}

/* A ticker's slot is ARMED again once read() re-arms it. */
TEST_F(table, ticker_rearmed_by_read)
{
	__s64 period = 20 * NSEC_PER_MSEC;
	struct qtimer_record rec;
	__u64 id, ctl;

	ASSERT_EQ(0, t_arm_cpu(self->fd, CLOCK_MONOTONIC, 0, period, period, 4,
			       0, &id));
	ASSERT_EQ(1, t_wait_readable(self->fd, QT_ARRIVE_MS));
	ASSERT_EQ(1, t_read(self->fd, &rec, 1));
	ctl = t_table_ctl(&self->tb, id);
	ASSERT_EQ(QTIMER_SLOT_ARMED, QTIMER_SLOT_STATE(ctl));
	EXPECT_EQ(QTIMER_ID_GEN(id), QTIMER_SLOT_GEN(ctl));
	EXPECT_LT(rec.expires_ns, t_table_slot(&self->tb, id)->deadline);
	/* Stopped: nothing more, however long we wait. */
	if (t_table_stop(&self->tb, id) == T_TABLE_KERNEL) {
		/* It fired again first: its record is here. */
		ASSERT_EQ(1, t_wait_readable(self->fd, QT_ARRIVE_MS));
		ASSERT_EQ(1, t_read(self->fd, &rec, 1));
		ASSERT_EQ(T_TABLE_DONE, t_table_stop(&self->tb, id));
	}
	usleep(5 * period / NSEC_PER_USEC);
	EXPECT_EQ(0, t_nothing_pending(self->fd));
	EXPECT_EQ(-ENOENT, t_cancel(self->fd, id));
}

/* MODIFY and CANCEL take the slot; a stop that came first stands. */
TEST_F(table, ioctls_take_the_slot)
{
	__s64 when = mono_in(FAR_NS);
	__u64 id, ctl;

	ASSERT_EQ(0, arm_at(self->fd, when, 5, 0, &id));
	ASSERT_EQ(T_TABLE_DONE, t_table_push(&self->tb, id, when + NSEC_PER_SEC));
	ctl = t_table_ctl(&self->tb, id);
	EXPECT_EQ(QTIMER_SLOT_LATER, QTIMER_SLOT_STATE(ctl));
	/* MODIFY's schedule replaces the push, earlier or not. */
	ASSERT_EQ(QTIMER_CANCEL_ARMED,
		  t_modify(self->fd, id, QTIMER_F_ABSTIME, when - NSEC_PER_SEC, 0, 0));
	EXPECT_EQ(QTIMER_SLOT_ARMED, QTIMER_SLOT_STATE(t_table_ctl(&self->tb, id)));
	EXPECT_LT(QTIMER_SLOT_SEQ(ctl), QTIMER_SLOT_SEQ(t_table_ctl(&self->tb, id)));
	EXPECT_EQ(when - NSEC_PER_SEC, t_table_slot(&self->tb, id)->deadline);
	/* CANCEL: KERNEL, and a stop with the old id fails. */
	ASSERT_EQ(QTIMER_CANCEL_ARMED, t_cancel(self->fd, id));
	EXPECT_EQ(T_TABLE_KERNEL, t_table_stop(&self->tb, id));
	EXPECT_EQ(0, t_fdinfo_get(self->fd, QT_FI_TIMERS));

	/* Stopped, then MODIFY: -ENOENT, and it stays stopped. */
	ASSERT_EQ(0, arm_at(self->fd, mono_in(50 * NSEC_PER_MSEC), 6, 0, &id));
	ASSERT_EQ(T_TABLE_DONE, t_table_stop(&self->tb, id));
	EXPECT_EQ(-ENOENT, t_modify(self->fd, id, QTIMER_F_ABSTIME, mono_in(NSEC_PER_MSEC), 0, 0));
	EXPECT_EQ(QTIMER_SLOT_STOPPED, QTIMER_SLOT_STATE(t_table_ctl(&self->tb, id)));
	EXPECT_EQ(0, t_wait_readable(self->fd, 300));
	EXPECT_EQ(0, timers_become(self->fd, 0, 2000));

	/* Stopped far ahead: CANCEL gives its place back at once. */
	ASSERT_EQ(0, arm_at(self->fd, mono_in(FAR_NS), 8, 0, &id));
	ASSERT_EQ(T_TABLE_DONE, t_table_stop(&self->tb, id));
	EXPECT_EQ(1, t_fdinfo_get(self->fd, QT_FI_TIMERS));
	EXPECT_EQ(-ENOENT, t_cancel(self->fd, id));
	EXPECT_EQ(0, t_fdinfo_get(self->fd, QT_FI_TIMERS));
}

/*
 * Races of the swap with the expiry: each stop or push says who won, and
 * what arrives agrees exactly.  Timer k comes due 100 us after timer k - 1,
 * on CPU k % cpus, and is stopped or pushed around its expiry, from 1 ms
 * before it to 1 ms after, so that both sides win some.
 */
static void race(struct __test_metadata *_metadata, int fd,
		 const struct t_table *tb, bool push)
{
	enum { N = 2048 };
	static struct qtimer_record recs[N];
	static __s64 stamp[N], later[N], due[N];
	static enum t_table_result won[N];
	static __u64 ids[N];
	static char seen[N];
	int i, n, want = 0;
	struct t_rng rng;

	t_rng_seed(&rng, t_now(CLOCK_MONOTONIC));
	ASSERT_NE(0, arm_spread(fd, ids, due, N, 100 * NSEC_PER_USEC));
	for (i = 0; i < N; i++) {
		__s64 at = due[i] - NSEC_PER_MSEC +
			   t_rand_below(&rng, 2 * NSEC_PER_MSEC);

		while (t_now(CLOCK_MONOTONIC) < at)
			;
		later[i] = mono_in(100 * NSEC_PER_MSEC);
		won[i] = push ? t_table_push(tb, ids[i], later[i]) :
				t_table_stop(tb, ids[i]);
		ASSERT_NE(T_TABLE_EARLIER, won[i]);
		if (push || won[i] == T_TABLE_KERNEL)
			want++;
	}
	n = t_collect_stamped(fd, recs, want, 4 * QT_ARRIVE_MS, CLOCK_MONOTONIC, stamp);
	ASSERT_EQ(want, n);
	memset(seen, 0, sizeof(seen));
	for (i = 0; i < n; i++) {
		__u64 k = recs[i].cookie;

		ASSERT_LT(k, N);
		ASSERT_EQ(0, seen[k]);
		seen[k] = 1;
		/* A won stop delivers nothing. */
		EXPECT_EQ(T_TABLE_KERNEL, push ? T_TABLE_KERNEL : won[k]);
		if (push && won[k] == T_TABLE_DONE) {
			EXPECT_EQ(later[k], recs[i].expires_ns);
			EXPECT_LE(later[k], stamp[i]);
		} else {
			EXPECT_EQ(due[k], recs[i].expires_ns);
			EXPECT_LE(due[k], stamp[i]);
		}
	}
	usleep(100 * 1000);
	EXPECT_EQ(0, t_nothing_pending(fd));
	EXPECT_EQ(0, timers_become(fd, 0, 2000));
	n = 0;
	for (i = 0; i < N; i++)
		n += won[i] == T_TABLE_DONE;
	TH_LOG("%s: %d of %d won by user space", push ? "push" : "stop", n, N);
}

TEST_F(table, stop_races_expiry)
{
	race(_metadata, self->fd, &self->tb, false);
}

TEST_F(table, push_races_expiry)
{
	race(_metadata, self->fd, &self->tb, true);
}

/* Garbage in every word while timers fire: never early, never twice. */
struct garbage {
	const struct t_table *tb;
	const __u64 *ids;
	int n;
	_Atomic bool stop;
	long writes;
	uint64_t seed;
};

static void *garbage_writer(void *arg)
{
	struct garbage *g = arg;
	struct t_rng rng;

	t_rng_seed(&rng, g->seed);
	while (!atomic_load(&g->stop)) {
		__u64 id = g->ids[t_rand_below(&rng, g->n)];
		struct qtimer_slot *slot = t_table_slot(g->tb, id);
		__u64 ctl = __atomic_load_n(&slot->ctl, __ATOMIC_RELAXED);
		__u32 state = t_rand_below(&rng, 4);

		switch (t_rand_below(&rng, 6)) {
		case 0:		/* anything */
			__atomic_store_n(&slot->ctl, t_rand(&rng), __ATOMIC_RELAXED);
			break;
		case 1:		/* the right generation, any state, any sequence */
			__atomic_store_n(&slot->ctl,
					 QTIMER_SLOT_CTL(state, QTIMER_ID_GEN(id),
							 t_rand(&rng)),
					 __ATOMIC_RELAXED);
			break;
		case 2:		/* an earlier expiry, and LATER */
			__atomic_store_n(&slot->deadline, slot->deadline -
					 t_rand_below(&rng, NSEC_PER_SEC), __ATOMIC_RELAXED);
			__atomic_store_n(&slot->ctl,
					 QTIMER_SLOT_CTL(QTIMER_SLOT_LATER, QTIMER_ID_GEN(id),
							 QTIMER_SLOT_SEQ(ctl) + 1),
					 __ATOMIC_RELAXED);
			break;
		case 3:		/* extremes */
			__atomic_store_n(&slot->deadline,
					 t_chance(&rng, 50) ? INT64_MIN : INT64_MAX,
					 __ATOMIC_RELAXED);
			break;
		case 4:		/* a deadline 1 ns later, as the attack on the budget */
			__atomic_store_n(&slot->deadline, t_now(CLOCK_MONOTONIC) + 1,
					 __ATOMIC_RELAXED);
			__atomic_store_n(&slot->ctl,
					 QTIMER_SLOT_CTL(QTIMER_SLOT_LATER, QTIMER_ID_GEN(id),
							 QTIMER_SLOT_SEQ(ctl) + 1),
					 __ATOMIC_RELAXED);
			break;
		default:	/* the word the kernel just wrote, back */
			__atomic_store_n(&slot->ctl, ctl, __ATOMIC_RELAXED);
			break;
		}
		g->writes++;
	}
	return NULL;
}

TEST_F(table, garbage_while_timers_fire)
{
	enum { N = 4096 };
	static struct qtimer_record recs[N];
	static __s64 stamp[N], armed[N];
	static __u64 ids[N];
	static char seen[N];
	struct garbage g = { .tb = &self->tb, .ids = ids, .n = N };
	int i, n, got = 0, gone = 0, cancelled = 0;
	__s64 start, end;
	pthread_t thr;

	/* Timer k due at start + k * 60 us: over about 250 ms. */
	start = arm_spread(self->fd, ids, armed, N, 60 * NSEC_PER_USEC);
	ASSERT_NE(0, start);
	g.seed = t_now(CLOCK_MONOTONIC);
	TH_LOG("seed %llu", (unsigned long long)g.seed);
	ASSERT_EQ(0, pthread_create(&thr, NULL, garbage_writer, &g));
	end = start + 600 * NSEC_PER_MSEC;
	memset(seen, 0, sizeof(seen));
	while (t_now(CLOCK_MONOTONIC) < end && got < N) {
		n = t_collect_stamped(self->fd, recs + got, N - got, 50,
				      CLOCK_MONOTONIC, stamp + got);
		ASSERT_LE(0, n);
		got += n;
	}
	atomic_store(&g.stop, true);
	pthread_join(thr, NULL);
	for (i = 0; i < got; i++) {
		__u64 k = recs[i].cookie;

		ASSERT_LT(k, N);
		ASSERT_EQ(0, seen[k]);
		seen[k] = 1;
		EXPECT_EQ(ids[k], recs[i].id);
		/* Later, maybe (garbage may push); earlier, never. */
		EXPECT_LE(armed[k], recs[i].expires_ns);
		EXPECT_LE(recs[i].expires_ns, stamp[i]);
	}
	/* What did not fire: stopped by garbage, or pushed away; either ends. */
	for (i = 0; i < N; i++) {
		int ret;

		if (seen[i])
			continue;
		ret = t_cancel(self->fd, ids[i]);
		if (ret == -ENOENT)
			gone++;
		else if (ret > 0)
			cancelled++;
		else
			EXPECT_EQ(0, ret);
	}
	/* After CANCEL, nothing of those ever arrives. */
	EXPECT_EQ(0, t_collect(self->fd, recs, N, 200));
	EXPECT_EQ(0, timers_become(self->fd, 0, 2000));
	TH_LOG("%ld garbage writes; %d fired, %d stopped, %d cancelled",
	       g.writes, got, gone, cancelled);
}

/*
 * A clock set cancels cancel-on-set timers with a record; one stopped
 * through the table first gets none, and its id goes.
 */
TEST_F(table, clock_set_spares_a_stopped_timer)
{
	__s64 when = t_now(CLOCK_REALTIME) + FAR_NS;
	struct qtimer_record rec;
	__u64 stopped, live;

	ASSERT_EQ(0, t_arm(self->fd, CLOCK_REALTIME,
			   QTIMER_F_ABSTIME | QTIMER_F_CANCEL_ON_SET, when, 0, 1,
			   &stopped));
	ASSERT_EQ(0, t_arm(self->fd, CLOCK_REALTIME,
			   QTIMER_F_ABSTIME | QTIMER_F_CANCEL_ON_SET, when, 0, 2,
			   &live));
	ASSERT_EQ(T_TABLE_DONE, t_table_stop(&self->tb, stopped));
	QT_STEP_REALTIME(NSEC_PER_SEC);
	ASSERT_EQ(1, t_wait_readable(self->fd, QT_ARRIVE_MS));
	ASSERT_EQ(1, t_read(self->fd, &rec, 1));
	EXPECT_EQ(live, rec.id);
	EXPECT_TRUE(rec.flags & QTIMER_REC_CANCELED);
	/* The live one's slot is the kernel's: its stop fails. */
	EXPECT_EQ(T_TABLE_KERNEL, t_table_stop(&self->tb, live));
	EXPECT_EQ(0, t_wait_readable(self->fd, 200));
	EXPECT_EQ(-ENOENT, t_cancel(self->fd, stopped));
	EXPECT_EQ(0, timers_become(self->fd, 0, 2000));
}

/* In a ringed file, a ticker's reap re-arms its slot, and a stop holds. */
TEST_F(table, ring_ticker_rearmed_by_reap)
{
	__s64 period = 20 * NSEC_PER_MSEC;
	struct qtimer_record rec;
	struct t_ring r;
	int tries, ms;
	__u64 id;

	if (!t_ring_offered())
		SKIP(return, "QTIMER_FEAT_RING not advertised");
	ASSERT_EQ(0, t_ring_map(&r, self->fd, 64));
	ASSERT_EQ(0, t_arm_cpu(self->fd, CLOCK_MONOTONIC, 0, period, period, 4,
			       0, &id));
	for (tries = 0; tries < 10; tries++) {
		/* Its record, claimed and passed: the reap re-arms it. */
		ASSERT_EQ(1, t_ring_collect(&r, &rec, 1, QT_ARRIVE_MS,
					    CLOCK_MONOTONIC, NULL));
		EXPECT_EQ(id, rec.id);
		for (ms = 0; ms < QT_ARRIVE_MS &&
		     QTIMER_SLOT_STATE(t_table_ctl(&self->tb, id)) != QTIMER_SLOT_ARMED; ms++) {
			t_revents(self->fd);
			usleep(1000);
		}
		/* It may have fired again meanwhile: then once more. */
		if (t_table_stop(&self->tb, id) == T_TABLE_DONE)
			break;
	}
	ASSERT_LT(tries, 10);
	EXPECT_TRUE(t_ring_stays_empty(&r, 5 * period / NSEC_PER_MSEC));
	EXPECT_EQ(-ENOENT, t_cancel(self->fd, id));
	t_ring_unmap(&r);
}

/*
 * Pushes and stops while the CPU whose heap holds the timers is offline:
 * its heap goes on from another CPU, and honours them.
 */
TEST_F_TIMEOUT(table, hotplug_keeps_the_table, 60)
{
	enum { N = 64 };
	static const char online[] = "/sys/devices/system/cpu/cpu1/online";
	struct qtimer_record recs[N];
	__s64 stamp[N], later[N], when;
	enum t_table_result won[N];
	unsigned long long v;
	int i, n, want = 0;
	__u64 ids[N];

	if (t_nr_cpus() < 2 || geteuid() || t_sysfs_read(online, &v) || v != 1)
		SKIP(return, "needs root and an online, hot-pluggable cpu1");
	ASSERT_EQ(0, t_pin_self(0));
	when = mono_in(300 * NSEC_PER_MSEC);
	for (i = 0; i < N; i++) {
		ASSERT_EQ(0, arm_at(self->fd, when + i * NSEC_PER_USEC, i, 1, &ids[i]));
		later[i] = when + i * NSEC_PER_USEC;
	}
	n = t_sysfs_write(online, 0);
	if (n == -EBUSY || n == -EPERM || n == -EINVAL || n == -EACCES)
		SKIP(return, "cpu1 cannot go offline: %s", strerror(-n));
	ASSERT_EQ(0, n);
	for (i = 0; i < N; i++) {
		won[i] = T_TABLE_KERNEL;
		if (i % 4 == 0)
			won[i] = t_table_stop(&self->tb, ids[i]);
		else if (i % 4 == 1 &&
			 t_table_push(&self->tb, ids[i], later[i] + 300 * NSEC_PER_MSEC) ==
			 T_TABLE_DONE)
			later[i] += 300 * NSEC_PER_MSEC;
		if (won[i] != T_TABLE_DONE)
			want++;
	}
	EXPECT_EQ(0, t_sysfs_write(online, 1));
	n = t_collect_stamped(self->fd, recs, want, 2 * QT_ARRIVE_MS, CLOCK_MONOTONIC, stamp);
	ASSERT_EQ(want, n);
	for (i = 0; i < n; i++) {
		__u64 k = recs[i].cookie;

		ASSERT_LT(k, N);
		EXPECT_NE(T_TABLE_DONE, won[k]);
		EXPECT_EQ(later[k], recs[i].expires_ns);
		EXPECT_LE(later[k], stamp[i]);
	}
	EXPECT_EQ(0, t_wait_readable(self->fd, 100));
	EXPECT_EQ(0, timers_become(self->fd, 0, 2000));
}

/* The child of a fork() shares the table: its stop is the parent's. */
TEST_F(table, fork_shares_the_table)
{
	__u64 id;
	pid_t pid;
	int status;

	ASSERT_EQ(0, arm_at(self->fd, mono_in(100 * NSEC_PER_MSEC), 9, 0, &id));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(t_table_stop(&self->tb, id) == T_TABLE_DONE ? 0 : 1);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_EQ(0, WEXITSTATUS(status));
	EXPECT_EQ(QTIMER_SLOT_STOPPED, QTIMER_SLOT_STATE(t_table_ctl(&self->tb, id)));
	EXPECT_EQ(0, t_wait_readable(self->fd, 400));
	EXPECT_EQ(-ENOENT, t_cancel(self->fd, id));
}

/* A slot no id has reached has no page: SIGBUS, in a child. */
TEST_F(table, untouched_page_is_sigbus)
{
	pid_t pid;
	int status;

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		volatile __u64 *far = (__u64 *)((char *)self->tb.map +
						self->tb.setup.shard_size - 16);

		(void)*far;
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFSIGNALED(status));
	EXPECT_EQ(SIGBUS, WTERMSIG(status));
}

/*
 * In a time namespace the slot speaks the namespace's time both ways: the
 * kernel's deadline as armed, a push as the namespace means it (1000 s off
 * the host's: a conversion missed either way fires 1000 s early or late).
 */
TEST(time_namespace_view)
{
	int pid;

	if (!t_table_offered())
		SKIP(return, "QTIMER_FEAT_TABLE not advertised");
	pid = t_fork_into_timens("monotonic 1000 0\nboottime 2000 0\n");
	if (pid == QT_NO_TIMENS)
		SKIP(return, "no time namespaces (CONFIG_TIME_NS) or no privilege");
	ASSERT_LE(0, pid);
	if (!pid) {
		static const int clocks[] = { CLOCK_MONOTONIC, CLOCK_BOOTTIME };
		const __s64 push = 300 * NSEC_PER_MSEC;
		struct qtimer_record rec;
		struct qtimer_op op;
		struct t_table tb;
		__s64 when[2];
		__u64 id[2];
		int fd = t_open(O_NONBLOCK), i, got = 0;

		QT_CHILD_CHECK(fd >= 0);
		QT_CHILD_CHECK(!t_table_map(&tb, fd));
		for (i = 0; i < 2; i++) {
			when[i] = t_now(clocks[i]) + 200 * NSEC_PER_MSEC;
			QT_CHILD_CHECK(!t_arm(fd, clocks[i], QTIMER_F_ABSTIME, when[i],
					      0, i, &id[i]));
			QT_CHILD_CHECK(t_table_slot(&tb, id[i])->deadline == when[i]);
			QT_CHILD_CHECK(t_table_push(&tb, id[i], when[i] + push) ==
				       T_TABLE_DONE);
			QT_CHILD_CHECK(t_get(fd, id[i], &op) == QTIMER_CANCEL_ARMED);
			QT_CHILD_CHECK(op.expires_ns == when[i] + push);
		}
		while (got < 2 && t_wait_readable(fd, 10000) == 1) {
			if (read(fd, &rec, sizeof(rec)) != sizeof(rec))
				continue;
			i = (int)rec.cookie;
			QT_CHILD_CHECK(i >= 0 && i < 2);
			/* Fired at the pushed expiry, never before it. */
			QT_CHILD_CHECK(rec.expires_ns == when[i] + push);
			QT_CHILD_CHECK(t_now(clocks[i]) >= when[i] + push);
			got++;
		}
		QT_CHILD_CHECK(got == 2);
		_exit(0);
	}
	ASSERT_EQ(0, t_wait_child(pid));
}

TEST_HARNESS_MAIN
