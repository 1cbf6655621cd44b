// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * Readiness and read(): poll, select and epoll report EPOLLIN exactly when
 * records are pending (not before a timer fires, not after its record was
 * read or its queued record cancelled); an O_NONBLOCK read with nothing
 * pending is -EAGAIN; a blocking read sleeps until the first record and
 * not longer; read returns several whole records per call and never a
 * partial one; and concurrent readers never get the same record twice.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sys/epoll.h>
#include <sys/select.h>

#include "kselftest_harness.h"
#include "helpers.h"

FIXTURE(poll)
{
	int fd;		/* O_NONBLOCK */
	int bfd;	/* blocking */
};

FIXTURE_SETUP(poll)
{
	self->fd = t_open(O_NONBLOCK);
	ASSERT_LE(0, self->fd);
	self->bfd = t_open(0);
	ASSERT_LE(0, self->bfd);
}

FIXTURE_TEARDOWN(poll)
{
	close(self->fd);
	close(self->bfd);
}

TEST_F(poll, idle_file_not_readable)
{
	struct qtimer_record rec;

	EXPECT_EQ(0, t_revents(self->fd) & (POLLIN | POLLERR | POLLHUP));
	EXPECT_EQ(-EAGAIN, t_read(self->fd, &rec, 1));
	/* An armed timer that has not fired is not a pending record. */
	ASSERT_EQ(0, t_arm(self->fd, CLOCK_MONOTONIC, 0, 20 * NSEC_PER_SEC,
			    0, 1, NULL));
	EXPECT_EQ(0, t_revents(self->fd) & POLLIN);
	EXPECT_EQ(0, t_wait_readable(self->fd, 100));
	EXPECT_EQ(-EAGAIN, t_read(self->fd, &rec, 1));
}

TEST_F(poll, readable_once_fired_not_after_read)
{
	struct qtimer_record rec;
	__s64 when;

	when = t_now(CLOCK_MONOTONIC) + 30 * NSEC_PER_MSEC;
	ASSERT_EQ(0, t_arm(self->fd, CLOCK_MONOTONIC, QTIMER_F_ABSTIME, when,
			    0, 1, NULL));
	ASSERT_EQ(1, t_wait_readable(self->fd, QT_ARRIVE_MS));
	/* poll did not report it early. */
	EXPECT_LE(when, t_now(CLOCK_MONOTONIC));
	/* Level-triggered: still readable until read. */
	EXPECT_EQ(POLLIN, t_revents(self->fd) & POLLIN);
	EXPECT_EQ(POLLIN, t_revents(self->fd) & POLLIN);
	ASSERT_EQ(1, t_read(self->fd, &rec, 1));
	EXPECT_EQ(0, t_revents(self->fd) & POLLIN);
	EXPECT_EQ(-EAGAIN, t_read(self->fd, &rec, 1));
}

TEST_F(poll, not_readable_after_queued_record_cancelled)
{
	__u64 a, b;

	ASSERT_EQ(0, t_arm(self->fd, CLOCK_MONOTONIC, 0, 0, 0, 1, &a));
	ASSERT_EQ(0, t_arm(self->fd, CLOCK_MONOTONIC, 0, 0, 0, 2, &b));
	ASSERT_EQ(1, t_wait_pending(self->fd, 2, QT_ARRIVE_MS));
	EXPECT_EQ(QTIMER_CANCEL_QUEUED, t_cancel(self->fd, a));
	/* One record left: still readable. */
	EXPECT_EQ(POLLIN, t_revents(self->fd) & POLLIN);
	EXPECT_EQ(QTIMER_CANCEL_QUEUED, t_cancel(self->fd, b));
	EXPECT_EQ(0, t_nothing_pending(self->fd));
}

TEST_F(poll, readable_while_records_remain)
{
	struct qtimer_record rec;

	ASSERT_EQ(0, t_arm(self->fd, CLOCK_MONOTONIC, 0, 0, 0, 1, NULL));
	ASSERT_EQ(0, t_arm(self->fd, CLOCK_MONOTONIC, 0, 0, 0, 2, NULL));
	ASSERT_EQ(1, t_wait_pending(self->fd, 2, QT_ARRIVE_MS));
	ASSERT_EQ(1, t_read(self->fd, &rec, 1));
	EXPECT_EQ(POLLIN, t_revents(self->fd) & POLLIN);
	ASSERT_EQ(1, t_read(self->fd, &rec, 1));
	EXPECT_EQ(0, t_nothing_pending(self->fd));
}

TEST_F(poll, select_agrees)
{
	struct timeval tv = { .tv_sec = QT_ARRIVE_MS / 1000 };
	struct qtimer_record rec;
	fd_set rfds;

	FD_ZERO(&rfds);
	FD_SET(self->fd, &rfds);
	ASSERT_EQ(0, select(self->fd + 1, &rfds, NULL, NULL,
			    &(struct timeval){ 0 }));
	ASSERT_EQ(0, t_arm(self->fd, CLOCK_MONOTONIC, 0, 20 * NSEC_PER_MSEC,
			    0, 1, NULL));
	FD_ZERO(&rfds);
	FD_SET(self->fd, &rfds);
	ASSERT_EQ(1, select(self->fd + 1, &rfds, NULL, NULL, &tv));
	EXPECT_TRUE(FD_ISSET(self->fd, &rfds));
	ASSERT_EQ(1, t_read(self->fd, &rec, 1));
	FD_ZERO(&rfds);
	FD_SET(self->fd, &rfds);
	EXPECT_EQ(0, select(self->fd + 1, &rfds, NULL, NULL,
			    &(struct timeval){ 0 }));
}

TEST_F(poll, epoll_level_triggered)
{
	struct epoll_event ev = { .events = EPOLLIN };
	struct qtimer_record rec;
	__u64 id;
	int ep;

	ep = epoll_create1(EPOLL_CLOEXEC);
	ASSERT_LE(0, ep);
	ev.data.u64 = 0x77;
	ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_ADD, self->fd, &ev));
	EXPECT_EQ(0, epoll_wait(ep, &ev, 1, 0));

	ASSERT_EQ(0, t_arm(self->fd, CLOCK_MONOTONIC, 0, 30 * NSEC_PER_MSEC,
			    0, 1, NULL));
	EXPECT_EQ(0, epoll_wait(ep, &ev, 1, 0));
	ASSERT_EQ(1, epoll_wait(ep, &ev, 1, QT_ARRIVE_MS));
	EXPECT_EQ(EPOLLIN, ev.events & EPOLLIN);
	EXPECT_EQ(0x77, ev.data.u64);
	ASSERT_EQ(1, epoll_wait(ep, &ev, 1, 0));	/* still pending */
	ASSERT_EQ(1, t_read(self->fd, &rec, 1));
	EXPECT_EQ(0, epoll_wait(ep, &ev, 1, 0));

	/* Readiness also goes when the queued record is cancelled. */
	ASSERT_EQ(0, t_arm(self->fd, CLOCK_MONOTONIC, 0, 0, 0, 2, &id));
	ASSERT_EQ(1, epoll_wait(ep, &ev, 1, QT_ARRIVE_MS));
	EXPECT_EQ(QTIMER_CANCEL_QUEUED, t_cancel(self->fd, id));
	EXPECT_EQ(0, epoll_wait(ep, &ev, 1, 0));
	close(ep);
}

/* Each new record is a new edge: nothing is missed with EPOLLET. */
TEST_F(poll, epoll_edge_triggered)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLET };
	struct qtimer_record recs[4];
	int ep, i;

	ep = epoll_create1(EPOLL_CLOEXEC);
	ASSERT_LE(0, ep);
	ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_ADD, self->fd, &ev));
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, t_arm(self->fd, CLOCK_MONOTONIC, 0,
				    20 * NSEC_PER_MSEC, 0, i, NULL));
		ASSERT_EQ(1, epoll_wait(ep, &ev, 1, QT_ARRIVE_MS));
		EXPECT_EQ(EPOLLIN, ev.events & EPOLLIN);
		ASSERT_EQ(1, t_read(self->fd, recs, 4));
		EXPECT_EQ(i, recs[0].cookie);
		EXPECT_EQ(0, epoll_wait(ep, &ev, 1, 0));
	}
	close(ep);
}

/* Of several files in one epoll set, only the one with a record is ready. */
TEST_F(poll, epoll_only_the_ready_file)
{
	struct epoll_event ev, evs[4];
	int ep, i, fds[4];

	ep = epoll_create1(EPOLL_CLOEXEC);
	ASSERT_LE(0, ep);
	for (i = 0; i < 4; i++) {
		fds[i] = t_open(O_NONBLOCK);
		ASSERT_LE(0, fds[i]);
		ev.events = EPOLLIN;
		ev.data.u32 = i;
		ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_ADD, fds[i], &ev));
		ASSERT_EQ(0, t_arm(fds[i], CLOCK_MONOTONIC, 0,
				    i == 2 ? 0 : 20 * NSEC_PER_SEC, 0, i, NULL));
	}
	ASSERT_EQ(1, epoll_wait(ep, evs, 4, QT_ARRIVE_MS));
	EXPECT_EQ(2, evs[0].data.u32);
	t_sleep_ms(100);
	ASSERT_EQ(1, epoll_wait(ep, evs, 4, 0));
	EXPECT_EQ(2, evs[0].data.u32);
	for (i = 0; i < 4; i++)
		close(fds[i]);
	close(ep);
}

TEST_F(poll, blocking_read_wakes_when_timer_fires)
{
	struct qtimer_record rec;
	__s64 when, t;
	ssize_t n;

	when = t_now(CLOCK_MONOTONIC) + 100 * NSEC_PER_MSEC;
	ASSERT_EQ(0, t_arm(self->bfd, CLOCK_MONOTONIC, QTIMER_F_ABSTIME, when,
			    0, 3, NULL));
	n = read(self->bfd, &rec, sizeof(rec));
	t = t_now(CLOCK_MONOTONIC);
	ASSERT_EQ(sizeof(rec), n);
	EXPECT_EQ(3, rec.cookie);
	EXPECT_EQ(when, rec.expires_ns);
	EXPECT_LE(when, t);
	EXPECT_GT(when + QT_ARRIVE_MS * NSEC_PER_MSEC, t);
}

struct reader {
	int fd;
	int nrec;		/* records per read */
	ssize_t ret;
	struct qtimer_record recs[4];
	__s64 woke;
};

static void *reader_thread(void *arg)
{
	struct reader *r = arg;

	r->ret = read(r->fd, r->recs, r->nrec * sizeof(r->recs[0]));
	r->woke = t_now(CLOCK_MONOTONIC);
	return NULL;
}

/* A reader already asleep is woken by a timer armed after it slept. */
TEST_F(poll, blocked_reader_woken_by_later_arm)
{
	struct reader r = { .fd = self->bfd, .nrec = 1 };
	pthread_t th;
	__s64 when;

	ASSERT_EQ(0, pthread_create(&th, NULL, reader_thread, &r));
	t_sleep_ms(100);
	when = t_now(CLOCK_MONOTONIC) + 20 * NSEC_PER_MSEC;
	ASSERT_EQ(0, t_arm(self->bfd, CLOCK_MONOTONIC, QTIMER_F_ABSTIME, when,
			    0, 4, NULL));
	ASSERT_EQ(0, pthread_join(th, NULL));
	ASSERT_EQ(sizeof(struct qtimer_record), r.ret);
	EXPECT_EQ(4, r.recs[0].cookie);
	EXPECT_LE(when, r.woke);
}

/* Two sleeping readers, two records: each gets one, none is duplicated. */
TEST_F(poll, concurrent_readers_share_records)
{
	struct reader r[2] = {
		{ .fd = self->bfd, .nrec = 1 }, { .fd = self->bfd, .nrec = 1 },
	};
	pthread_t th[2];
	int i;

	for (i = 0; i < 2; i++)
		ASSERT_EQ(0, pthread_create(&th[i], NULL, reader_thread, &r[i]));
	t_sleep_ms(100);
	ASSERT_EQ(0, t_arm(self->bfd, CLOCK_MONOTONIC, 0, 20 * NSEC_PER_MSEC,
			    0, 10, NULL));
	ASSERT_EQ(0, t_arm(self->bfd, CLOCK_MONOTONIC, 0, 40 * NSEC_PER_MSEC,
			    0, 11, NULL));
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, pthread_join(th[i], NULL));
		ASSERT_EQ(sizeof(struct qtimer_record), r[i].ret);
	}
	EXPECT_NE(r[0].recs[0].cookie, r[1].recs[0].cookie);
	EXPECT_EQ(21, r[0].recs[0].cookie + r[1].recs[0].cookie);
	EXPECT_EQ(0, t_nothing_pending(self->bfd));
}

TEST_F(poll, read_returns_many_records_per_call)
{
	enum { N = 8 };
	struct qtimer_record recs[N + 2];
	int i;

	for (i = 0; i < N; i++)
		ASSERT_EQ(0, t_arm_cpu(self->fd, CLOCK_MONOTONIC, 0, 0, 0, i, 0,
					NULL));
	ASSERT_EQ(1, t_wait_pending(self->fd, N, QT_ARRIVE_MS));
	EXPECT_EQ(N, t_read(self->fd, recs, N + 2));
	for (i = 0; i < N; i++)
		EXPECT_LE(0, t_find_cookie(recs, N, i));
	EXPECT_EQ(0, t_nothing_pending(self->fd));
}

TEST_F(poll, read_whole_records_only)
{
	const size_t rs = sizeof(struct qtimer_record);
	struct qtimer_record recs[3];
	int i;

	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, t_arm_cpu(self->fd, CLOCK_MONOTONIC, 0, 0, 0, i, 0,
					NULL));
	ASSERT_EQ(1, t_wait_pending(self->fd, 3, QT_ARRIVE_MS));
	/* Room for 2.5 records: two whole ones. */
	memset(recs, 0xcc, sizeof(recs));
	EXPECT_EQ((ssize_t)(2 * rs), read(self->fd, recs, 2 * rs + rs / 2));
	/* Nothing written past the two records. */
	EXPECT_EQ(0xccccccccccccccccULL, recs[2].id);
	/* Room for 1.5: one. */
	EXPECT_EQ((ssize_t)rs, read(self->fd, recs, rs + rs / 2));
	EXPECT_EQ(0, t_nothing_pending(self->fd));
}

/* With room for four, a blocking read returns after the first record. */
TEST_F(poll, blocking_read_waits_for_first_record_only)
{
	struct reader r = { .fd = self->bfd, .nrec = 4 };
	__s64 t0 = t_now(CLOCK_MONOTONIC);

	ASSERT_EQ(0, t_arm(self->bfd, CLOCK_MONOTONIC, 0, 50 * NSEC_PER_MSEC,
			    0, 1, NULL));
	ASSERT_EQ(0, t_arm(self->bfd, CLOCK_MONOTONIC, 0, 20 * NSEC_PER_SEC,
			    0, 2, NULL));
	reader_thread(&r);
	ASSERT_EQ(sizeof(struct qtimer_record), r.ret);
	EXPECT_EQ(1, r.recs[0].cookie);
	EXPECT_GT(t0 + QT_ARRIVE_MS * NSEC_PER_MSEC, r.woke);
}

/* O_NONBLOCK set and cleared with fcntl() is honoured per read. */
TEST_F(poll, nonblock_toggled_with_fcntl)
{
	struct qtimer_record rec;
	int fl = fcntl(self->bfd, F_GETFL);

	ASSERT_EQ(0, fcntl(self->bfd, F_SETFL, fl | O_NONBLOCK));
	EXPECT_EQ(-EAGAIN, t_read(self->bfd, &rec, 1));
	ASSERT_EQ(0, fcntl(self->bfd, F_SETFL, fl));
	ASSERT_EQ(0, t_arm(self->bfd, CLOCK_MONOTONIC, 0, 20 * NSEC_PER_MSEC,
			    0, 5, NULL));
	EXPECT_EQ(1, t_read(self->bfd, &rec, 1));
	EXPECT_EQ(5, rec.cookie);
}

TEST_HARNESS_MAIN
