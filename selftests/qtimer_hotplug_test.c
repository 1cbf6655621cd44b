// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * CPU hotplug: when a CPU goes offline, the timers in its heap move on and
 * every one still fires exactly once and never early; a ticker keeps its
 * schedule; arming on an offline CPU is -EINVAL; and the CPU's heap works
 * again once it is back.  Needs root and a hot-pluggable cpu1 (or the
 * highest CPU); skipped otherwise.
 */
#define _GNU_SOURCE
#include "kselftest_harness.h"
#include "helpers.h"

FIXTURE(hotplug)
{
	int fd;
	int cpu;		/* the CPU taken offline, or -1 */
	char online[128];	/* its sysfs "online" file */
};

static int cpu_set_online(const char *path, int on)
{
	return t_sysfs_write(path, on);
}

FIXTURE_SETUP(hotplug)
{
	unsigned long long v;

	self->fd = t_open(O_NONBLOCK);
	ASSERT_LE(0, self->fd);
	self->cpu = t_nr_cpus() > 1 ? 1 : -1;
	if (self->cpu < 0)
		return;
	snprintf(self->online, sizeof(self->online),
		 "/sys/devices/system/cpu/cpu%d/online", self->cpu);
	if (geteuid() || t_sysfs_read(self->online, &v) || v != 1)
		self->cpu = -1;
	/* Everything of this test runs on CPU 0, away from the victim. */
	ASSERT_EQ(0, t_pin_self(0));
}

FIXTURE_TEARDOWN(hotplug)
{
	unsigned long long v = 1;

	if (self->cpu >= 0) {
		t_sysfs_read(self->online, &v);
		if (v != 1)
			EXPECT_EQ(0, cpu_set_online(self->online, 1));
	}
	close(self->fd);
}

#define REQUIRE_HOTPLUG() do {						\
	if (self->cpu < 0)						\
		SKIP(return, "needs root and an online, hot-pluggable cpu1"); \
} while (0)

/* Take the CPU offline; SKIP if the kernel refuses (not hot-pluggable). */
#define OFFLINE_OR_SKIP() do {						\
	int __r = cpu_set_online(self->online, 0);			\
									\
	if (__r == -EBUSY || __r == -EPERM || __r == -EINVAL ||		\
	    __r == -ENOENT || __r == -EACCES)				\
		SKIP(return, "cpu%d cannot go offline: %s", self->cpu,	\
		     strerror(-__r));					\
	ASSERT_EQ(0, __r);						\
} while (0)

TEST_F_TIMEOUT(hotplug, timers_of_offlined_cpu_fire_once_never_early, 60)
{
	enum { N = 300 };
	static struct qtimer_record recs[N];
	static __s64 when[N], stamp[N];
	static __u64 ids[N];
	static bool seen[N];
	__s64 base;
	int i, k, n;

	REQUIRE_HOTPLUG();
	base = t_now(CLOCK_MONOTONIC) + 300 * NSEC_PER_MSEC;
	for (i = 0; i < N; i++) {
		/* Three clocks; some due before the offline, most after. */
		int clk = i % 3 == 0 ? CLOCK_MONOTONIC :
			  i % 3 == 1 ? CLOCK_BOOTTIME : CLOCK_REALTIME;
		__s64 rel = (i % 100) * 10 * NSEC_PER_MSEC;

		when[i] = (clk == CLOCK_MONOTONIC ? base :
			   t_now(clk) + 300 * NSEC_PER_MSEC) + rel;
		ASSERT_EQ(0, t_arm_cpu(self->fd, clk, QTIMER_F_ABSTIME,
					when[i], 0, i, self->cpu, &ids[i]));
	}
	t_sleep_ms(350);
	OFFLINE_OR_SKIP();

	n = 0;
	while (n < N) {
		int got, j;
		__s64 now[3];

		got = t_collect(self->fd, recs + n, 1, QT_ARRIVE_MS);
		ASSERT_EQ(1, got) {
			TH_LOG("%d of %d records arrived", n, N);
		}
		got = n + 1 < N ? t_read(self->fd, recs + n + 1, N - n - 1) : 0;
		if (got == -EAGAIN)
			got = 0;
		ASSERT_LE(0, got);
		got++;
		now[0] = t_now(CLOCK_MONOTONIC);
		now[1] = t_now(CLOCK_BOOTTIME);
		now[2] = t_now(CLOCK_REALTIME);
		for (j = n; j < n + got; j++) {
			k = recs[j].cookie;
			ASSERT_GT(N, k);
			EXPECT_FALSE(seen[k]);
			seen[k] = true;
			EXPECT_EQ(ids[k], recs[j].id);
			EXPECT_EQ(when[k], recs[j].expires_ns);
			EXPECT_EQ(1, recs[j].count);
			EXPECT_EQ(QTIMER_REC_LAST, recs[j].flags);
			stamp[k] = now[k % 3];
			EXPECT_LE(when[k], stamp[k]);
		}
		n += got;
	}
	t_sleep_ms(100);
	EXPECT_EQ(0, t_nothing_pending(self->fd));
	for (i = 0; i < N; i++)
		EXPECT_EQ(-ENOENT, t_cancel(self->fd, ids[i]));
}

/* A ticker on the offlined CPU keeps its exact schedule. */
TEST_F(hotplug, ticker_survives_offline)
{
	const __s64 period = 20 * NSEC_PER_MSEC;
	struct qtimer_record rec;
	__s64 first, stamp;
	__u64 id, total = 0;
	int i;

	REQUIRE_HOTPLUG();
	first = t_now(CLOCK_MONOTONIC) + period;
	ASSERT_EQ(0, t_arm_cpu(self->fd, CLOCK_MONOTONIC, QTIMER_F_ABSTIME,
				first, period, 1, self->cpu, &id));
	ASSERT_EQ(1, t_collect(self->fd, &rec, 1, QT_ARRIVE_MS));
	total = rec.count;
	OFFLINE_OR_SKIP();
	for (i = 0; i < 5; i++) {
		ASSERT_EQ(1, t_collect_stamped(self->fd, &rec, 1, QT_ARRIVE_MS,
						CLOCK_MONOTONIC, &stamp));
		total += rec.count;
		EXPECT_EQ(first + ((__s64)total - 1) * period, rec.expires_ns);
		EXPECT_LE(rec.expires_ns, stamp);
	}
	/* Still cancellable by its id after the move. */
	EXPECT_TRUE(t_mask_ok(t_cancel(self->fd, id)));
	EXPECT_EQ(0, t_nothing_pending(self->fd));
}

/* Cancel and modify find timers that moved off the offlined CPU. */
TEST_F(hotplug, cancel_and_modify_after_move)
{
	enum { N = 64 };
	struct qtimer_record rec;
	__u64 ids[N];
	__s64 when;
	int i;

	REQUIRE_HOTPLUG();
	for (i = 0; i < N; i++)
		ASSERT_EQ(0, t_arm_cpu(self->fd, CLOCK_MONOTONIC, 0,
					(10 + i) * NSEC_PER_SEC, 0, i,
					self->cpu, &ids[i]));
	OFFLINE_OR_SKIP();
	for (i = 1; i < N; i++)
		EXPECT_EQ(QTIMER_CANCEL_ARMED, t_cancel(self->fd, ids[i]));
	when = t_now(CLOCK_MONOTONIC) + 50 * NSEC_PER_MSEC;
	EXPECT_EQ(QTIMER_CANCEL_ARMED,
		  t_modify(self->fd, ids[0], QTIMER_F_ABSTIME, when, 0, 0));
	ASSERT_EQ(1, t_collect(self->fd, &rec, 1, QT_ARRIVE_MS));
	EXPECT_EQ(ids[0], rec.id);
	EXPECT_EQ(when, rec.expires_ns);
	t_sleep_ms(100);
	EXPECT_EQ(0, t_nothing_pending(self->fd));
}

TEST_F(hotplug, arm_on_offline_cpu_then_back_online)
{
	struct qtimer_record rec;
	__u64 id;

	REQUIRE_HOTPLUG();
	OFFLINE_OR_SKIP();
	EXPECT_EQ(-EINVAL, t_arm_cpu(self->fd, CLOCK_MONOTONIC, 0, 0, 0, 1,
				      self->cpu, NULL));
	/* A batch says so per op. */
	{
		struct qtimer_op op = t_op(CLOCK_MONOTONIC, QTIMER_F_CPU, 0,
					    0, 1);

		op.opcode = QTIMER_OP_ARM;
		op.cpu = self->cpu;
		EXPECT_EQ(1, t_submit(self->fd, &op, 1, 0, NULL));
		EXPECT_EQ(-EINVAL, op.result);
	}
	t_sleep_ms(100);
	EXPECT_EQ(0, t_nothing_pending(self->fd));

	ASSERT_EQ(0, cpu_set_online(self->online, 1));
	ASSERT_EQ(0, t_arm_cpu(self->fd, CLOCK_MONOTONIC, 0,
				30 * NSEC_PER_MSEC, 0, 2, self->cpu, &id));
	ASSERT_EQ(1, t_collect(self->fd, &rec, 1, QT_ARRIVE_MS));
	EXPECT_EQ(id, rec.id);
	EXPECT_EQ(2, rec.cookie);
}

/* Offline and online again, repeatedly, with a busy heap on it. */
TEST_F_TIMEOUT(hotplug, offline_online_cycles, 90)
{
	enum { N = 64, CYCLES = 5 };
	struct qtimer_record recs[N];
	int c, i, n;

	REQUIRE_HOTPLUG();
	for (c = 0; c < CYCLES; c++) {
		__s64 base = t_now(CLOCK_MONOTONIC) + 50 * NSEC_PER_MSEC;

		for (i = 0; i < N; i++)
			ASSERT_EQ(0, t_arm_cpu(self->fd, CLOCK_MONOTONIC,
						QTIMER_F_ABSTIME,
						base + i * NSEC_PER_MSEC, 0, i,
						self->cpu, NULL));
		/*
		 * A skip after the first cycle would hide the failures of
		 * those before it (the 6.1 harness reports the test as
		 * skipped): a CPU that went offline once must again.
		 */
		if (!c)
			OFFLINE_OR_SKIP();
		else
			ASSERT_EQ(0, cpu_set_online(self->online, 0));
		n = t_collect(self->fd, recs, N, QT_ARRIVE_MS);
		ASSERT_EQ(N, n);
		for (i = 0; i < N; i++)
			EXPECT_EQ(base + recs[i].cookie * NSEC_PER_MSEC,
				  recs[i].expires_ns);
		ASSERT_EQ(0, cpu_set_online(self->online, 1));
	}
	t_sleep_ms(50);
	EXPECT_EQ(0, t_nothing_pending(self->fd));
}

TEST_HARNESS_MAIN
