// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * Time namespaces (monotonic +100 s, boottime +200 s, set before any
 * process enters; a forked child lives in it).  In the namespace, absolute
 * CLOCK_MONOTONIC and CLOCK_BOOTTIME expiries are in its view: timers armed
 * at namespace-now + 200 ms fire about 200 ms later (not 100 s early or
 * late), and records carry the armed value.  Many timers, tickers (their
 * records are first + k * period in the namespace's view), MODIFY with an
 * absolute expiry, CLOCK_REALTIME (which namespaces do not offset), and an
 * absolute expiry before the namespace's epoch (already past: fires now).
 * A record's expires_ns is in the view of the task that reads it: a file
 * shared with the host namespace shows the host the host's view.
 * Skipped without CONFIG_TIME_NS or the privilege to unshare.
 */
#define _GNU_SOURCE
#include <sched.h>

#include "kselftest_harness.h"
#include "helpers.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME	0x00000080
#endif

#define OFF_MONO	(100 * NSEC_PER_SEC)
#define OFF_BOOT	(200 * NSEC_PER_SEC)

static int fork_into_timens(void)
{
	return t_fork_into_timens("monotonic 100 0\nboottime 200 0\n");
}

#define CHECK(cond) QT_CHILD_CHECK(cond)

#define RUN_IN_TIMENS(body) RUN_IN_TIMENS_OFFSETS(fork_into_timens(), body)

#define RUN_IN_TIMENS_OFFSETS(fork_expr, body) do {			\
	int __pid = (fork_expr);					\
	if (__pid == QT_NO_TIMENS)					\
		SKIP(return, "no time namespaces (CONFIG_TIME_NS) or no privilege"); \
	ASSERT_LE(0, __pid);						\
	if (!__pid) {							\
		body;							\
		_exit(0);						\
	}								\
	ASSERT_EQ(0, t_wait_child(__pid));				\
} while (0)

/* The namespace has these offsets in seconds ("%-10s %10lld %9ld" lines). */
static void child_sees_offsets_of(long long mono, long long boot)
{
	char line[128];
	long long sec;
	long nsec;
	int seen = 0;
	FILE *f = fopen("/proc/self/timens_offsets", "re");

	CHECK(f);
	while (fgets(line, sizeof(line), f)) {
		char name[16];

		CHECK(sscanf(line, "%15s %lld %ld", name, &sec, &nsec) == 3);
		if (!strcmp(name, "monotonic"))
			seen |= (sec == mono && !nsec) << 0;
		else if (!strcmp(name, "boottime"))
			seen |= (sec == boot && !nsec) << 1;
	}
	fclose(f);
	CHECK(seen == 3);
}

static void child_sees_offsets(void)
{
	child_sees_offsets_of(100, 200);
}

static void child_many_absolute(void)
{
	enum { N = 200 };
	static __s64 when[N];
	static int clk[N];
	struct qtimer_record recs[N];
	__s64 stamp[N], t0[2];
	int fd = t_open(O_NONBLOCK), i, n;
	struct t_rng rng;

	child_sees_offsets();
	CHECK(fd >= 0);
	t_rng_seed(&rng, t_now(CLOCK_MONOTONIC));
	t0[0] = t_now(CLOCK_MONOTONIC);
	t0[1] = t_now(CLOCK_BOOTTIME);
	/* The namespace's clocks really are ahead of the machine's uptime. */
	CHECK(t0[0] >= OFF_MONO && t0[1] >= OFF_BOOT);
	for (i = 0; i < N; i++) {
		int c = i & 1;

		clk[i] = c ? CLOCK_BOOTTIME : CLOCK_MONOTONIC;
		/* The first two exactly 200 ms out, the rest 0-300 ms. */
		when[i] = t0[c] + (i < 2 ? 200 * NSEC_PER_MSEC :
				   (__s64)t_rand_below(&rng, 300 * NSEC_PER_MSEC));
		CHECK(!t_arm(fd, clk[i], QTIMER_F_ABSTIME, when[i], 0, i, NULL));
	}
	n = 0;
	while (n < N) {
		int got = t_collect(fd, recs, N - n, 2 * QT_ARRIVE_MS);

		CHECK(got > 0);
		for (i = 0; i < got; i++) {
			const struct qtimer_record *r = &recs[i];
			__s64 now = t_now(clk[r->cookie]);

			CHECK(r->cookie < N);
			/* In the namespace's view, and never early in it. */
			CHECK(r->expires_ns == when[r->cookie]);
			CHECK(now >= r->expires_ns);
			stamp[r->cookie] = now;
		}
		n += got;
	}
	/* ~200 ms after arming, by the namespace's own clocks. */
	for (i = 0; i < 2; i++) {
		__s64 took = stamp[i] - t0[i];

		CHECK(took >= 200 * NSEC_PER_MSEC);
		CHECK(took < 200 * NSEC_PER_MSEC + 2 * QT_ARRIVE_MS * NSEC_PER_MSEC);
	}
	CHECK(!t_nothing_pending(fd));
	close(fd);
}

TEST(absolute_timers_in_namespace_view)
{
	RUN_IN_TIMENS(child_many_absolute());
}

static void child_relative_and_realtime(void)
{
	struct qtimer_record recs[3];
	__s64 m0 = t_now(CLOCK_MONOTONIC), r0 = t_now(CLOCK_REALTIME), m1;
	__s64 rwhen = r0 + 150 * NSEC_PER_MSEC;
	int fd = t_open(O_NONBLOCK), i;

	CHECK(fd >= 0);
	CHECK(!t_arm(fd, CLOCK_MONOTONIC, 0, 150 * NSEC_PER_MSEC, 0, 0, NULL));
	CHECK(!t_arm(fd, CLOCK_BOOTTIME, 0, 150 * NSEC_PER_MSEC, 0, 1, NULL));
	/* Realtime is the same in every time namespace. */
	CHECK(!t_arm(fd, CLOCK_REALTIME, QTIMER_F_ABSTIME, rwhen, 0, 2, NULL));
	m1 = t_now(CLOCK_MONOTONIC);
	CHECK(t_collect(fd, recs, 3, 2 * QT_ARRIVE_MS) == 3);
	for (i = 0; i < 3; i++) {
		if (recs[i].cookie == 2) {
			CHECK(recs[i].expires_ns == rwhen);
			CHECK(t_now(CLOCK_REALTIME) >= rwhen);
		} else if (recs[i].cookie == 0) {
			/* Relative: now (namespace view) + 150 ms. */
			CHECK(recs[i].expires_ns >= m0 + 150 * NSEC_PER_MSEC);
			CHECK(recs[i].expires_ns <= m1 + 150 * NSEC_PER_MSEC);
		} else {
			CHECK(recs[i].cookie == 1);
			CHECK(recs[i].expires_ns >= OFF_BOOT);
			CHECK(recs[i].expires_ns <= t_now(CLOCK_BOOTTIME));
		}
	}
	close(fd);
}

TEST(relative_and_realtime_timers_in_namespace)
{
	RUN_IN_TIMENS(child_relative_and_realtime());
}

static void child_ticker_and_modify(void)
{
	const __s64 period = 20 * NSEC_PER_MSEC;
	struct qtimer_record rec;
	__s64 first = t_now(CLOCK_BOOTTIME) + 30 * NSEC_PER_MSEC, when;
	int fd = t_open(O_NONBLOCK), i, ret;
	__u64 id, sum = 0;

	CHECK(fd >= 0);
	CHECK(!t_arm(fd, CLOCK_BOOTTIME, QTIMER_F_ABSTIME, first, period, 5, &id));
	for (i = 0; i < 5; i++) {
		CHECK(t_collect(fd, &rec, 1, QT_ARRIVE_MS) == 1);
		CHECK(rec.id == id && !rec.flags);
		sum += rec.count;
		/* first + k * period, namespace view, counting every period. */
		CHECK(rec.expires_ns == first + (__s64)(sum - 1) * period);
		CHECK(t_now(CLOCK_BOOTTIME) >= rec.expires_ns);
	}
	/* MODIFY to an absolute one-shot in the namespace's view. */
	when = t_now(CLOCK_BOOTTIME) + 100 * NSEC_PER_MSEC;
	ret = t_modify(fd, id, QTIMER_F_ABSTIME, when, 0, 0);
	CHECK(ret > 0);
	/* A record of the old schedule may have been discarded, not read. */
	CHECK(t_collect(fd, &rec, 1, QT_ARRIVE_MS) == 1);
	CHECK(rec.id == id && rec.expires_ns == when);
	CHECK(rec.flags == QTIMER_REC_LAST);
	CHECK(t_now(CLOCK_BOOTTIME) >= when);
	close(fd);
}

TEST(ticker_and_modify_in_namespace_view)
{
	RUN_IN_TIMENS(child_ticker_and_modify());
}

/*
 * Absolute CLOCK_MONOTONIC 1 s in a namespace whose monotonic clock began
 * at 100 s: long past, so it fires at once; the record is never in the
 * reader's future.
 */
static void child_before_epoch(void)
{
	struct qtimer_record rec;
	__s64 t0 = t_now(CLOCK_MONOTONIC);
	int fd = t_open(O_NONBLOCK);

	CHECK(fd >= 0);
	CHECK(!t_arm(fd, CLOCK_MONOTONIC, QTIMER_F_ABSTIME, NSEC_PER_SEC, 0, 9, NULL));
	CHECK(t_collect(fd, &rec, 1, QT_ARRIVE_MS) == 1);
	CHECK(t_now(CLOCK_MONOTONIC) - t0 < QT_ARRIVE_MS * NSEC_PER_MSEC);
	CHECK(rec.expires_ns <= t_now(CLOCK_MONOTONIC));
	CHECK(rec.flags == QTIMER_REC_LAST);
	close(fd);
}

TEST(absolute_before_namespace_epoch_fires_now)
{
	RUN_IN_TIMENS(child_before_epoch());
}

/*
 * One file, two views: the child arms at namespace-now + 300 ms, the host
 * reads and sees the host's view of the same instant (100 s less); the host
 * arms at host-now + 300 ms and the child reads it 100 s later in its view.
 */
TEST(record_is_in_the_readers_view)
{
	struct qtimer_record rec;
	int fd = t_open(O_NONBLOCK), pipefd[2];
	__s64 host_when, ns_when = 0;
	int pid, status;

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, pipe(pipefd));
	pid = fork_into_timens();
	if (pid == QT_NO_TIMENS)
		SKIP(return, "no time namespaces (CONFIG_TIME_NS) or no privilege");
	ASSERT_LE(0, pid);
	if (!pid) {
		__s64 w = t_now(CLOCK_MONOTONIC) + 300 * NSEC_PER_MSEC;

		CHECK(!t_arm(fd, CLOCK_MONOTONIC, QTIMER_F_ABSTIME, w, 0, 1, NULL));
		CHECK(write(pipefd[1], &w, sizeof(w)) == sizeof(w));
		_exit(0);
	}
	ASSERT_EQ(sizeof(ns_when), read(pipefd[0], &ns_when, sizeof(ns_when)));
	ASSERT_EQ(0, t_wait_child(pid));
	ASSERT_EQ(1, t_collect(fd, &rec, 1, QT_ARRIVE_MS));
	EXPECT_EQ(1, rec.cookie);
	EXPECT_EQ(ns_when - OFF_MONO, rec.expires_ns);
	EXPECT_LE(rec.expires_ns, t_now(CLOCK_MONOTONIC));

	host_when = t_now(CLOCK_MONOTONIC) + 300 * NSEC_PER_MSEC;
	ASSERT_EQ(0, t_arm(fd, CLOCK_MONOTONIC, QTIMER_F_ABSTIME, host_when,
			    0, 2, NULL));
	/* A second child in the same namespace reads it. */
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		CHECK(t_now(CLOCK_MONOTONIC) >= OFF_MONO);
		CHECK(t_collect(fd, &rec, 1, QT_ARRIVE_MS) == 1);
		CHECK(rec.cookie == 2);
		CHECK(rec.expires_ns == host_when + OFF_MONO);
		CHECK(rec.expires_ns <= t_now(CLOCK_MONOTONIC));
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
	close(fd);
	close(pipefd[0]);
	close(pipefd[1]);
}

/*
 * A namespace whose clocks are behind the host's (offset -1 s): an
 * absolute expiry near INT64_MAX is later than any host time can say, so
 * ARM and MODIFY refuse it with EOVERFLOW and change nothing.  (Host time is
 * expires - offset, which wrapped to a time long past: the timer fired at
 * once.)  Nothing fires, and a ticker armed before keeps ticking.
 */
static void child_behind_host(void)
{
	static const __s64 huge[] = { INT64_MAX, INT64_MAX - 1000,
				      INT64_MAX - NSEC_PER_SEC + 1 };
	static const int clocks[] = { CLOCK_MONOTONIC, CLOCK_BOOTTIME };
	struct qtimer_record rec;
	struct t_fdinfo fi;
	int fd = t_open(O_NONBLOCK);
	unsigned int i, c;
	__u64 id;

	CHECK(fd >= 0);
	child_sees_offsets_of(-1, -1);
	CHECK(!t_arm(fd, CLOCK_MONOTONIC, 0, 300 * NSEC_PER_MSEC, 0, 7, &id));
	for (c = 0; c < 2; c++) {
		for (i = 0; i < sizeof(huge) / sizeof(huge[0]); i++) {
			CHECK(t_arm(fd, clocks[c], QTIMER_F_ABSTIME, huge[i],
				     0, 1, NULL) == -EOVERFLOW);
		}
	}
	for (i = 0; i < sizeof(huge) / sizeof(huge[0]); i++)
		CHECK(t_modify(fd, id, QTIMER_F_ABSTIME, huge[i], 0, 0) == -EOVERFLOW);
	CHECK(!t_fdinfo(fd, &fi));
	CHECK(fi.timers == 1);
	/* The refused MODIFYs left the timer as it was: it fires on time. */
	CHECK(t_collect(fd, &rec, 1, QT_ARRIVE_MS) == 1);
	CHECK(rec.cookie == 7 && rec.flags == QTIMER_REC_LAST);
	CHECK(t_now(CLOCK_MONOTONIC) >= rec.expires_ns);
	t_sleep_ms(100);
	CHECK(!t_nothing_pending(fd));
	close(fd);
}

TEST(absolute_expiry_overflow_in_namespace_behind_host)
{
	RUN_IN_TIMENS_OFFSETS(
		t_fork_into_timens("monotonic -1 0\nboottime -1 0\n"),
		child_behind_host());
}

TEST_HARNESS_MAIN
