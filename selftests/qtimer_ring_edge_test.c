// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * Edge-triggered consumers of a mapped ring: an epoll with EPOLLET, or an
 * io_uring multishot POLL_ADD, calls ->poll() only after a wakeup, and a
 * consumer that takes records from the mapping and advances the tail
 * makes no system call on the file.  So the kernel must see by itself
 * that the tail moved: a ticker whose record was taken must fire again,
 * and records that waited in the kernel for room must move into the ring,
 * each with a new wakeup.  Each test here consumes only through the
 * mapping (t_ring_consume(), no poll() or read() of its own on the file)
 * and checks counts, cookies and never-early exactly; timing only with
 * generous bounds, and the ticker's count against a timerfd's beside it.
 */
#define _GNU_SOURCE
#include <liburing.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>

#include "kselftest_harness.h"
#include "helpers.h"

#define PERIOD_NS	(10 * NSEC_PER_MSEC)
#define RUN_NS		(NSEC_PER_SEC)
#define WAVES		10
#define PER_WAVE	20
#define WAVE_NS		(20 * NSEC_PER_MSEC)
#define RECS_MAX	64

/* Takes what the ring holds; checks each record against @now. */
static int take(struct __test_metadata *_metadata, struct t_ring *r,
		struct qtimer_record *recs)
{
	int n = t_ring_consume(r, recs, RECS_MAX), i;
	__s64 now = t_now(CLOCK_MONOTONIC);

	EXPECT_LE(0, n);
	for (i = 0; i < n; i++)
		EXPECT_LE((__s64)recs[i].expires_ns, now)
			TH_LOG("record %d delivered before its expiry", i);
	return n;
}

/*
 * A 10 ms ticker on a ringed file and a 10 ms timerfd side by side in one
 * EPOLLET epoll, for a second.  The ticker's expirations (its records'
 * counts) must keep up with the timerfd's: before the ring had a drain,
 * the ticker gave its first record and then nothing, its consumer never
 * calling poll() again.
 */
TEST(epollet_ticker_beside_timerfd)
{
	struct itimerspec its = { .it_interval.tv_nsec = PERIOD_NS,
				  .it_value.tv_nsec = PERIOD_NS };
	struct epoll_event ev = { .events = EPOLLIN | EPOLLET }, evs[2];
	struct qtimer_record recs[RECS_MAX];
	long qt_count = 0, qt_recs = 0, tfd_count = 0;
	struct t_ring r;
	int fd, tfd, ep, n, i, got;
	__s64 end;

	if (!t_ring_offered())
		SKIP(return, "no record ring: QTIMER_FEAT_RING not offered");
	fd = t_open(O_NONBLOCK);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, t_ring_map(&r, fd, 8));
	tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK);
	ASSERT_LE(0, tfd);
	ep = epoll_create1(0);
	ASSERT_LE(0, ep);
	ev.data.fd = fd;
	ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev));
	ev.data.fd = tfd;
	ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_ADD, tfd, &ev));

	ASSERT_EQ(0, t_arm(fd, CLOCK_MONOTONIC, 0, PERIOD_NS, PERIOD_NS, 7, NULL));
	ASSERT_EQ(0, timerfd_settime(tfd, 0, &its, NULL));
	end = t_now(CLOCK_MONOTONIC) + RUN_NS;
	while (t_now(CLOCK_MONOTONIC) < end) {
		n = epoll_wait(ep, evs, 2, 100);
		ASSERT_LE(0, n);
		for (i = 0; i < n; i++) {
			if (evs[i].data.fd == tfd) {
				__u64 c;

				if (read(tfd, &c, sizeof(c)) == sizeof(c))
					tfd_count += c;
				continue;
			}
			/* Edge-triggered: take everything there is. */
			while ((got = take(_metadata, &r, recs)) > 0) {
				int k;

				for (k = 0; k < got; k++) {
					EXPECT_EQ(7, recs[k].cookie);
					qt_count += recs[k].count;
				}
				qt_recs += got;
			}
		}
	}
	TH_LOG("qtimer: %ld records, %ld expirations; timerfd: %ld expirations",
	       qt_recs, qt_count, tfd_count);
	ASSERT_LT(10, tfd_count) TH_LOG("the timerfd itself hardly ran");
	/* Both are behind by what was due and not yet taken at the end. */
	EXPECT_LE(tfd_count / 2, qt_count)
		TH_LOG("the ticker fell behind a timerfd of the same period");
	EXPECT_LT(5, qt_recs) TH_LOG("the ticker stopped after its first records");
	t_ring_unmap(&r);
	close(ep);
	close(tfd);
	close(fd);
}

/*
 * 200 one-shots, due 20 at a time every 20 ms, into an 8-record ring
 * consumed under EPOLLET: most wait in the kernel for room.  Every one
 * must arrive, once, never early, with no poll() or read() by the
 * consumer; before the drain, 80 did and the rest never.
 */
TEST(epollet_overflow_drains)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLET }, out;
	struct qtimer_record recs[RECS_MAX];
	unsigned char seen[WAVES * PER_WAVE] = { 0 };
	int fd, ep, got = 0, n, i, waits = 0;
	struct t_ring r;
	__s64 start, end;

	if (!t_ring_offered())
		SKIP(return, "no record ring: QTIMER_FEAT_RING not offered");
	fd = t_open(O_NONBLOCK);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, t_ring_map(&r, fd, 8));
	ep = epoll_create1(0);
	ASSERT_LE(0, ep);
	ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev));

	start = t_now(CLOCK_MONOTONIC) + WAVE_NS;
	for (i = 0; i < WAVES * PER_WAVE; i++)
		ASSERT_EQ(0, t_arm(fd, CLOCK_MONOTONIC, QTIMER_F_ABSTIME,
				    start + (i / PER_WAVE) * WAVE_NS, 0, i, NULL));
	end = t_now(CLOCK_MONOTONIC) + 10 * NSEC_PER_SEC;
	while (got < WAVES * PER_WAVE && t_now(CLOCK_MONOTONIC) < end) {
		n = epoll_wait(ep, &out, 1, 200);
		ASSERT_LE(0, n);
		waits++;
		while ((n = take(_metadata, &r, recs)) > 0) {
			for (i = 0; i < n; i++) {
				ASSERT_GT(WAVES * PER_WAVE, recs[i].cookie);
				EXPECT_EQ(0, seen[recs[i].cookie]++)
					TH_LOG("cookie %llu twice",
					       (unsigned long long)recs[i].cookie);
				EXPECT_EQ(QTIMER_REC_LAST, recs[i].flags & ~QTIMER_REC_CLAIM);
			}
			got += n;
		}
	}
	TH_LOG("%d of %d records in %d waits", got, WAVES * PER_WAVE, waits);
	EXPECT_EQ(WAVES * PER_WAVE, got) TH_LOG("records stayed in the kernel");
	EXPECT_EQ(0, t_ring_flags(&r) & QTIMER_RING_OVERFLOW);
	t_ring_unmap(&r);
	close(ep);
	close(fd);
}

/*
 * The same ticker under io_uring's multishot POLL_ADD: every record that
 * becomes claimable is a new completion.  Before the drain: one.
 */
TEST(uring_multishot_ticker)
{
	struct qtimer_record recs[RECS_MAX];
	long qt_count = 0, cqes = 0;
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	struct io_uring ring;
	struct t_ring r;
	__s64 start, end;
	int fd, ret, n;

	if (!t_ring_offered())
		SKIP(return, "no record ring: QTIMER_FEAT_RING not offered");
	ret = io_uring_queue_init(8, &ring, 0);
	if (ret == -ENOSYS || ret == -EPERM)
		SKIP(return, "io_uring is not available: %s", strerror(-ret));
	ASSERT_EQ(0, ret);
	fd = t_open(O_NONBLOCK);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, t_ring_map(&r, fd, 8));

	ASSERT_EQ(0, t_arm(fd, CLOCK_MONOTONIC, 0, PERIOD_NS, PERIOD_NS, 9, NULL));
	start = t_now(CLOCK_MONOTONIC);
	end = start + RUN_NS;
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_poll_multishot(sqe, fd, POLLIN);
	ASSERT_EQ(1, io_uring_submit(&ring));
	while (t_now(CLOCK_MONOTONIC) < end) {
		struct __kernel_timespec ts = { .tv_nsec = 100 * NSEC_PER_MSEC };
		bool more;

		ret = io_uring_wait_cqe_timeout(&ring, &cqe, &ts);
		if (ret == -ETIME)
			continue;
		ASSERT_EQ(0, ret);
		ASSERT_LE(0, cqe->res) TH_LOG("poll: %s", strerror(-cqe->res));
		more = cqe->flags & IORING_CQE_F_MORE;
		io_uring_cqe_seen(&ring, cqe);
		cqes++;
		while ((n = take(_metadata, &r, recs)) > 0) {
			int k;

			for (k = 0; k < n; k++) {
				EXPECT_EQ(9, recs[k].cookie);
				qt_count += recs[k].count;
			}
		}
		/* The kernel may end a multishot poll: ask again then. */
		if (!more) {
			sqe = io_uring_get_sqe(&ring);
			io_uring_prep_poll_multishot(sqe, fd, POLLIN);
			ASSERT_EQ(1, io_uring_submit(&ring));
		}
	}
	TH_LOG("%ld completions, %ld expirations in %lld ms", cqes, qt_count,
	       (t_now(CLOCK_MONOTONIC) - start) / NSEC_PER_MSEC);
	/* 100 periods: a generous half of them, for a slow guest. */
	EXPECT_LE(RUN_NS / PERIOD_NS / 2, qt_count)
		TH_LOG("the ticker fell behind its period");
	EXPECT_LT(5, cqes) TH_LOG("no new completion after the first records");
	t_ring_unmap(&r);
	close(fd);
	io_uring_queue_exit(&ring);
}

TEST_HARNESS_MAIN
