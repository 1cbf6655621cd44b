// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * The basic contract of /dev/qtimer: the VERSION handshake matches the uapi
 * header, and a one-shot timer on each clock fires exactly once, never
 * before its expiry, with a record that names it (id, cookie, scheduled
 * expiry, count 1, QTIMER_REC_LAST); timers of one CPU come back in expiry
 * order; an expiry of 0 or in the past fires at once; and in a time
 * namespace, absolute expiries and records use the namespace's clock.
 * Lateness is only bounded loosely (QEMU TCG); earliness never.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <sys/wait.h>

#include "clock_harness.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

TEST(version_handshake)
{
	struct qtimer_version v;
	unsigned long long cap;
	int fd = t_open(0);

	ASSERT_LE(0, fd);
	/* Pre-fill with garbage: the kernel must write every field. */
	memset(&v, 0xa5, sizeof(v));
	ASSERT_EQ(0, t_ioctl(fd, QTIMER_IOC_VERSION, &v));
	EXPECT_EQ(QTIMER_API_VERSION, v.api_version);
	EXPECT_EQ(sizeof(struct qtimer_record), v.record_size);
	EXPECT_EQ(sizeof(struct qtimer_op), v.op_size);
	EXPECT_EQ(QTIMER_SUBMIT_MAX, v.submit_max);
	EXPECT_EQ(QTIMER_COUNT_MAX, v.count_max);
	EXPECT_EQ(QTIMER_SLACK_MAX_NS, v.max_slack_ns);
	EXPECT_EQ(QT_CLOCKS_SPEC, v.clocks);
	EXPECT_EQ(0, v.reserved[0]);
	EXPECT_EQ(0, v.reserved[1]);
	EXPECT_EQ(0, v.reserved[2]);

	/* Everything this module is specified to do is advertised... */
	EXPECT_EQ(QTIMER_FEAT_SUBMIT | QTIMER_FEAT_PERIODIC |
		  QTIMER_FEAT_SLACK | QTIMER_FEAT_CPU |
		  QTIMER_FEAT_CANCEL_ON_SET,
		  v.features & (QTIMER_FEAT_SUBMIT | QTIMER_FEAT_PERIODIC |
				QTIMER_FEAT_SLACK | QTIMER_FEAT_CPU |
				QTIMER_FEAT_CANCEL_ON_SET));
	/* ... and nothing unknown. */
	EXPECT_EQ(0, v.features & ~(QTIMER_FEAT_TABLE * 2 - 1));
	/* A ring that keeps itself going comes with a ring. */
	if (v.features & QTIMER_FEAT_RING_DRAIN)
		EXPECT_TRUE(v.features & QTIMER_FEAT_RING);

	/* The caps are the module parameters' current values. */
	if (!t_sysfs_read(QT_PARAMS "max_timers_per_fd", &cap))
		EXPECT_EQ(cap, v.max_timers_per_fd);
	if (!t_sysfs_read(QT_PARAMS "max_timers_per_user", &cap))
		EXPECT_EQ(cap, v.max_timers_per_user);
	EXPECT_LT(0, v.max_timers_per_fd);
	EXPECT_LT(0, v.max_timers_per_user);
	close(fd);
}

TEST(version_is_stable_and_needs_no_state)
{
	struct qtimer_version a, b;
	int fd = t_open(O_NONBLOCK);
	__u64 id;

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, t_version(fd, &a));
	ASSERT_EQ(0, t_arm(fd, CLOCK_MONOTONIC, 0, 10 * NSEC_PER_SEC, 0, 1, &id));
	ASSERT_EQ(0, t_version(fd, &b));
	EXPECT_EQ(0, memcmp(&a, &b, sizeof(a)));
	close(fd);
}

T_CLOCK_FIXTURE(clock)

/* The one record of a one-shot names it: id, cookie, count 1, the last. */
#define EXPECT_ONESHOT_RECORD(rec, timer_id, timer_cookie) do {	\
	EXPECT_EQ(timer_id, (rec).id);					\
	EXPECT_EQ(timer_cookie, (rec).cookie);				\
	EXPECT_EQ(1, (rec).count);					\
	EXPECT_EQ(QTIMER_REC_LAST, (rec).flags);			\
} while (0)

/*
 * After the one record of a one-shot, nothing more ever comes and the id is
 * dead.  200 ms is enough to catch a double fire from the same expiry.
 */
#define ASSERT_ONESHOT_GONE(fd, id) do {				\
	t_sleep_ms(200);						\
	EXPECT_EQ(0, t_nothing_pending(fd));				\
	EXPECT_EQ(-ENOENT, t_cancel(fd, id));				\
	EXPECT_EQ(-ENOENT, t_modify(fd, id, 0, NSEC_PER_SEC, 0, 0));	\
} while (0)

TEST_F(clock, oneshot_relative)
{
	const __s64 rel = 50 * NSEC_PER_MSEC;
	struct qtimer_record rec;
	__s64 t0, t1, stamp;
	__u64 id;

	t0 = t_now(variant->clockid);
	ASSERT_EQ(0, t_arm(self->fd, variant->clockid, 0, rel, 0, 0x1234, &id));
	t1 = t_now(variant->clockid);
	ASSERT_EQ(1, t_collect_stamped(self->fd, &rec, 1, QT_ARRIVE_MS,
					variant->clockid, &stamp));
	EXPECT_ONESHOT_RECORD(rec, id, 0x1234);
	/* The expiry is "now" at arm time plus rel, on the timer's clock. */
	EXPECT_LE(t0 + rel, rec.expires_ns);
	EXPECT_GE(t1 + rel, rec.expires_ns);
	/* Never early. */
	EXPECT_LE(rec.expires_ns, stamp);
	EXPECT_LE(t0 + rel, stamp);
	ASSERT_ONESHOT_GONE(self->fd, id);
}

TEST_F(clock, oneshot_absolute)
{
	struct qtimer_record rec;
	__s64 when, stamp;
	__u64 id;

	when = t_now(variant->clockid) + 50 * NSEC_PER_MSEC;
	ASSERT_EQ(0, t_arm(self->fd, variant->clockid, QTIMER_F_ABSTIME, when,
			    0, ~0ULL, &id));
	ASSERT_EQ(1, t_collect_stamped(self->fd, &rec, 1, QT_ARRIVE_MS,
					variant->clockid, &stamp));
	EXPECT_ONESHOT_RECORD(rec, id, ~0ULL);
	EXPECT_EQ(when, rec.expires_ns);
	EXPECT_LE(when, stamp);
	ASSERT_ONESHOT_GONE(self->fd, id);
}

TEST_F(clock, zero_expiry_fires_promptly)
{
	struct qtimer_record rec;
	__s64 t0, t1, stamp;
	__u64 id;

	t0 = t_now(variant->clockid);
	ASSERT_EQ(0, t_arm(self->fd, variant->clockid, 0, 0, 0, 7, &id));
	t1 = t_now(variant->clockid);
	ASSERT_EQ(1, t_collect_stamped(self->fd, &rec, 1, QT_ARRIVE_MS,
					variant->clockid, &stamp));
	EXPECT_ONESHOT_RECORD(rec, id, 7);
	EXPECT_LE(t0, rec.expires_ns);
	EXPECT_GE(t1, rec.expires_ns);
	EXPECT_LE(rec.expires_ns, stamp);
	ASSERT_ONESHOT_GONE(self->fd, id);
}

TEST_F(clock, absolute_past_fires_promptly)
{
	struct qtimer_record rec;
	__s64 when;
	__u64 id;

	/* A second ago, or the clock's epoch if it has not run that long. */
	when = t_now(variant->clockid) - NSEC_PER_SEC;
	if (when < 0)
		when = 0;
	ASSERT_EQ(0, t_arm(self->fd, variant->clockid, QTIMER_F_ABSTIME, when,
			    0, 8, &id));
	ASSERT_EQ(1, t_collect(self->fd, &rec, 1, QT_ARRIVE_MS));
	EXPECT_ONESHOT_RECORD(rec, id, 8);
	/* The record reports the expiry that was asked for. */
	EXPECT_EQ(when, rec.expires_ns);
	ASSERT_ONESHOT_GONE(self->fd, id);
}

/* Slack lets a timer fire late, never early, and changes no record field. */
TEST_F(clock, slack_never_early)
{
	enum { N = 16 };
	struct qtimer_record recs[N];
	__s64 base, stamp[N];
	int i, idx;

	base = t_now(variant->clockid) + 30 * NSEC_PER_MSEC;
	for (i = 0; i < N; i++) {
		struct qtimer_op op = t_op(variant->clockid, QTIMER_F_ABSTIME,
					    base + i * NSEC_PER_MSEC, 0, i);

		op.slack_ns = (i % 4) * 20 * NSEC_PER_MSEC;
		if (i == N - 1)
			op.slack_ns = QTIMER_SLACK_MAX_NS / 1000;
		ASSERT_EQ(0, t_arm_op(self->fd, &op));
	}
	ASSERT_EQ(N, t_collect_stamped(self->fd, recs, N, QT_ARRIVE_MS,
					variant->clockid, stamp));
	for (i = 0; i < N; i++) {
		idx = recs[i].cookie;
		ASSERT_GT(N, idx);
		EXPECT_EQ(base + idx * NSEC_PER_MSEC, recs[i].expires_ns);
		EXPECT_LE(recs[i].expires_ns, stamp[i]);
		EXPECT_EQ(1, recs[i].count);
		EXPECT_EQ(QTIMER_REC_LAST, recs[i].flags);
	}
	for (i = 0; i < N; i++)
		EXPECT_LE(0, t_find_cookie(recs, N, i));
}

/*
 * Timers on one CPU's heap come back in expiry order, whatever order they
 * were armed in, each exactly at its scheduled expiry.
 *
 * Order is only defined among timers that were all armed before the first
 * of them came due: one armed after its deadline passed fires when armed,
 * after later ones armed earlier.  On a busy debug kernel under TCG even
 * one SUBMIT of 64 ARMs can outlast a 60 ms lead, so the lead doubles
 * until the arming fits before it, and only such a round is judged.
 */
TEST_F(clock, expiry_order_one_cpu)
{
	enum { N = 64 };
	struct qtimer_record recs[N];
	struct qtimer_op ops[N];
	__s64 base, lead, armed_at, stamp[N];
	int perm[N], i, j, t;
	bool seen[N] = { false };

	srand(getpid());
	for (i = 0; i < N; i++)
		perm[i] = i;
	for (i = N - 1; i > 0; i--) {
		j = rand() % (i + 1);
		t = perm[i];
		perm[i] = perm[j];
		perm[j] = t;
	}
	for (lead = 60 * NSEC_PER_MSEC;; lead *= 2) {
		ASSERT_GE(2 * NSEC_PER_SEC, lead) {
			TH_LOG("64 ARMs never fit within %lld ns", (long long)lead / 2);
		}
		base = t_now(variant->clockid) + lead;
		for (i = 0; i < N; i++) {
			ops[i] = t_op(variant->clockid,
				       QTIMER_F_ABSTIME | QTIMER_F_CPU,
				       base + perm[i] * 200 * NSEC_PER_USEC, 0,
				       perm[i]);
			ops[i].opcode = QTIMER_OP_ARM;
			ops[i].cpu = 0;
		}
		ASSERT_EQ(N, t_submit(self->fd, ops, N,
				       QTIMER_SUBMIT_STOP_ON_ERROR, NULL));
		armed_at = t_now(variant->clockid);
		for (i = 0; i < N; i++)
			ASSERT_EQ(0, ops[i].result);
		ASSERT_EQ(N, t_collect_stamped(self->fd, recs, N, QT_ARRIVE_MS,
						variant->clockid, stamp));
		if (armed_at < base)
			break;
		TH_LOG("arming took past the %lld ms lead: again, with twice it",
		       (long long)(lead / NSEC_PER_MSEC));
	}
	for (i = 0; i < N; i++) {
		ASSERT_GT(N, recs[i].cookie);
		EXPECT_FALSE(seen[recs[i].cookie]);
		seen[recs[i].cookie] = true;
		EXPECT_EQ(base + recs[i].cookie * 200 * NSEC_PER_USEC,
			  recs[i].expires_ns);
		EXPECT_LE(recs[i].expires_ns, stamp[i]);
		if (i)
			EXPECT_LT(recs[i - 1].expires_ns, recs[i].expires_ns);
	}
	t_sleep_ms(100);
	EXPECT_EQ(0, t_nothing_pending(self->fd));
}

/* Many timers across the default (arming) CPUs: each fires exactly once. */
TEST_F(clock, many_fire_exactly_once)
{
	enum { N = 512 };
	static struct qtimer_record recs[N + 1];
	static __s64 stamp[N + 1];
	static __u64 ids[N];
	static bool seen[N];
	__s64 base;
	int i;

	base = t_now(variant->clockid) + 20 * NSEC_PER_MSEC;
	for (i = 0; i < N; i++) {
		/* Move between CPUs now and then so several heaps are used. */
		if (i % 64 == 0)
			t_pin_self((i / 64) % t_nr_cpus());
		ASSERT_EQ(0, t_arm(self->fd, variant->clockid,
				    QTIMER_F_ABSTIME,
				    base + (i % 97) * 500 * NSEC_PER_USEC, 0,
				    1000 + i, &ids[i]));
	}
	ASSERT_EQ(N, t_collect_stamped(self->fd, recs, N, QT_ARRIVE_MS,
					variant->clockid, stamp));
	for (i = 0; i < N; i++) {
		int k = recs[i].cookie - 1000;

		ASSERT_LE(0, k);
		ASSERT_GT(N, k);
		EXPECT_FALSE(seen[k]);
		seen[k] = true;
		EXPECT_EQ(ids[k], recs[i].id);
		EXPECT_EQ(base + (k % 97) * 500 * NSEC_PER_USEC,
			  recs[i].expires_ns);
		EXPECT_LE(recs[i].expires_ns, stamp[i]);
		EXPECT_EQ(1, recs[i].count);
		EXPECT_EQ(QTIMER_REC_LAST, recs[i].flags);
	}
	/* Ids of one file are distinct. */
	for (i = 1; i < N; i++)
		EXPECT_NE(ids[i - 1], ids[i]);
	t_sleep_ms(100);
	EXPECT_EQ(0, t_nothing_pending(self->fd));
}

/*
 * Time namespaces: a task whose CLOCK_MONOTONIC/BOOTTIME are offset arms
 * absolute timers and reads records in its own view of the clock.  A
 * positive offset catches an engine that ignores the namespace by firing
 * far too late (the collect times out); a negative one by firing early.
 */
FIXTURE(timens)
{
	int fd;
};

FIXTURE_VARIANT(timens)
{
	int clockid;
	const char *name;
	long offset_sec;
};

FIXTURE_VARIANT_ADD(timens, monotonic_ahead)
{
	.clockid = CLOCK_MONOTONIC, .name = "monotonic", .offset_sec = 1000,
};

FIXTURE_VARIANT_ADD(timens, monotonic_behind)
{
	.clockid = CLOCK_MONOTONIC, .name = "monotonic", .offset_sec = -2,
};

FIXTURE_VARIANT_ADD(timens, boottime_ahead)
{
	.clockid = CLOCK_BOOTTIME, .name = "boottime", .offset_sec = 1000,
};

FIXTURE_SETUP(timens)
{
	self->fd = -1;
}

FIXTURE_TEARDOWN(timens)
{
	if (self->fd >= 0)
		close(self->fd);
}

TEST_F(timens, absolute_and_records_in_namespace_view)
{
	const __s64 rel = 80 * NSEC_PER_MSEC;
	struct qtimer_record recs[2];
	struct qtimer_version v;
	__s64 before, after, t0, t1, when, stamp[2];
	__u64 abs_id, rel_id;
	char buf[64];
	int fd, nsfd, i, len;

	fd = t_open(O_NONBLOCK);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, t_version(fd, &v));
	close(fd);
	if (!(v.features & QTIMER_FEAT_TIME_NS))
		SKIP(return, "QTIMER_FEAT_TIME_NS not advertised");
	if (variant->offset_sec < 0 &&
	    t_now(variant->clockid) < -variant->offset_sec * 2 * NSEC_PER_SEC)
		SKIP(return, "clock too young for a negative offset");
	before = t_now(variant->clockid);
	if (unshare(CLONE_NEWTIME))
		SKIP(return, "no time namespaces: %s", strerror(errno));

	fd = open("/proc/self/timens_offsets", O_WRONLY);
	ASSERT_LE(0, fd);
	len = snprintf(buf, sizeof(buf), "%s %ld 0\n", variant->name,
		       variant->offset_sec);
	ASSERT_EQ(len, write(fd, buf, len));
	close(fd);
	nsfd = open("/proc/self/ns/time_for_children", O_RDONLY);
	ASSERT_LE(0, nsfd);
	ASSERT_EQ(0, setns(nsfd, CLONE_NEWTIME));
	close(nsfd);

	/* Now in the namespace: check the offset took. */
	after = t_now(variant->clockid) - variant->offset_sec * NSEC_PER_SEC;
	ASSERT_LE(before, after);
	ASSERT_GT(before + 5 * NSEC_PER_SEC, after);

	self->fd = t_open(O_NONBLOCK);
	ASSERT_LE(0, self->fd);
	t0 = t_now(variant->clockid);
	when = t0 + rel;
	ASSERT_EQ(0, t_arm(self->fd, variant->clockid, QTIMER_F_ABSTIME, when,
			    0, 1, &abs_id));
	ASSERT_EQ(0, t_arm(self->fd, variant->clockid, 0, rel, 0, 2, &rel_id));
	t1 = t_now(variant->clockid);

	ASSERT_EQ(2, t_collect_stamped(self->fd, recs, 2, QT_ARRIVE_MS,
					variant->clockid, stamp));
	for (i = 0; i < 2; i++) {
		EXPECT_LE(recs[i].expires_ns, stamp[i]);
		EXPECT_EQ(1, recs[i].count);
		if (recs[i].cookie == 1) {
			EXPECT_EQ(abs_id, recs[i].id);
			EXPECT_EQ(when, recs[i].expires_ns);
		} else {
			EXPECT_EQ(2, recs[i].cookie);
			EXPECT_EQ(rel_id, recs[i].id);
			EXPECT_LE(t0 + rel, recs[i].expires_ns);
			EXPECT_GE(t1 + rel, recs[i].expires_ns);
		}
	}
	/* Both fired after their expiry in the namespace's view. */
	EXPECT_LE(when, stamp[0]);
	EXPECT_LE(when, stamp[1]);
}

TEST_HARNESS_MAIN
