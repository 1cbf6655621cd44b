// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * Native unit tests against the fake device (fake_harness.h), taking
 * records: td_read, td_wait, td_dispatch and a descriptor in an epoll set.
 */
#include <sys/epoll.h>
#include <unistd.h>

#include "fake_harness.h"

TEST_F(fake, read_records)
{
	struct qtimer_record recs[8];
	unsigned int i;

	ASSERT_EQ(-EAGAIN, td_read(self->ctx, recs, 8));
	ASSERT_EQ(-EINVAL, td_read(self->ctx, recs, 0));
	ASSERT_EQ(-EINVAL, td_read(self->ctx, NULL, 1));
	for (i = 0; i < 5; i++)
		fake_push_record(i + 1, 10 + i, 1);
	ASSERT_EQ(3, td_read(self->ctx, recs, 3));
	ASSERT_EQ(1, recs[0].id);
	ASSERT_EQ(12, recs[2].cookie);
	ASSERT_EQ(2, td_read(self->ctx, recs, 8));
	ASSERT_EQ(4, recs[0].id);
	ASSERT_EQ(-EAGAIN, td_read(self->ctx, recs, 8));
}

TEST_F(fake, wait_times_out)
{
	struct qtimer_record rec;
	int64_t start = td_now(CLOCK_MONOTONIC);

	ASSERT_EQ(-ETIME, td_wait(self->ctx, &rec, 1, 20000000));
	ASSERT_GE(td_now(CLOCK_MONOTONIC) - start, 20000000);
	ASSERT_EQ(-ETIME, td_wait(self->ctx, &rec, 1, 0));
	ASSERT_EQ(-EINVAL, td_wait(self->ctx, &rec, 0, 0));
}

TEST_F(fake, wait_returns_pending)
{
	struct qtimer_record recs[4];

	fake_push_record(9, 99, 3);
	ASSERT_EQ(1, td_wait(self->ctx, recs, 4, 0));
	ASSERT_EQ(9, recs[0].id);
	ASSERT_EQ(3, recs[0].count);
	fake_push_record(10, 100, 1);
	ASSERT_EQ(1, td_wait(self->ctx, recs, 4, -1));	/* no timeout */
	ASSERT_EQ(10, recs[0].id);
}

struct seen {
	unsigned int nr;
	uint64_t ids[512];
};

static void seen_cb(const struct qtimer_record *rec, void *arg)
{
	struct seen *seen = arg;

	seen->ids[seen->nr++ % 512] = rec->id;
}

TEST_F(fake, dispatch)
{
	struct seen seen = { 0 };
	unsigned int i;

	ASSERT_EQ(-EINVAL, td_dispatch(self->ctx, NULL, &seen, 10));
	ASSERT_EQ(-EINVAL, td_dispatch(self->ctx, seen_cb, &seen, 0));
	ASSERT_EQ(-EAGAIN, td_dispatch(self->ctx, seen_cb, &seen, 10));
	for (i = 0; i < 150; i++)
		fake_push_record(i + 1, 0, 1);
	ASSERT_EQ(10, td_dispatch(self->ctx, seen_cb, &seen, 10));
	/* More than one internal read's worth. */
	ASSERT_EQ(140, td_dispatch(self->ctx, seen_cb, &seen, 1000));
	ASSERT_EQ(150, seen.nr);
	for (i = 0; i < 150; i++)
		ASSERT_EQ(i + 1, seen.ids[i]);
	ASSERT_EQ(-EAGAIN, td_dispatch(self->ctx, seen_cb, &seen, 10));
}

TEST_F(fake, epoll_readiness)
{
	struct epoll_event ev = { .events = EPOLLIN };
	struct qtimer_record rec;
	int ep = epoll_create1(EPOLL_CLOEXEC);

	ASSERT_GE(ep, 0);
	ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_ADD, td_fd(self->ctx), &ev));
	ASSERT_EQ(0, epoll_wait(ep, &ev, 1, 0));
	fake_push_record(1, 0, 1);
	ASSERT_EQ(1, epoll_wait(ep, &ev, 1, 0));
	ASSERT_EQ(1, td_read(self->ctx, &rec, 1));
	ASSERT_EQ(0, epoll_wait(ep, &ev, 1, 0));
	close(ep);
}

TEST_HARNESS_MAIN
