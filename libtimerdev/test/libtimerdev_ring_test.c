// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * libtimerdev against the real module, the record ring: td_open and
 * td_open2 setting it up and mapping it (or not), records taken from the
 * mapping with no read(2), td_ring_peek and td_ring_advance, CANCEL of a
 * record in the ring or already taken, an edge-triggered epoll loop, and
 * read(2) beside the mapping (see device_harness.h for what every
 * libtimerdev_*_test shares; libtimerdev_ring_load_test loads the ring).
 */
#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/syscall.h>

#include "device_harness.h"

/*
 * read(2), counted on one descriptor.  The executable's definition
 * interposes on libc's for the whole process, libtimerdev.so's calls
 * included, so a test can tell that the library took records from the
 * mapped ring and not from the file.
 */
static int counted_fd = -1;
static unsigned int read_calls;

ssize_t read(int fd, void *buf, size_t len)
{
	if (fd >= 0 && fd == __atomic_load_n(&counted_fd, __ATOMIC_RELAXED))
		__atomic_fetch_add(&read_calls, 1, __ATOMIC_RELAXED);
	return syscall(SYS_read, fd, buf, len);
}

static void count_reads(struct td_ctx *ctx)
{
	__atomic_store_n(&read_calls, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&counted_fd, td_fd(ctx), __ATOMIC_RELAXED);
}

/*
 * Arm nr one-shots due in a millisecond, cookies 0 .. nr - 1, and wait
 * until all their records are pending (t_wait_pending(), which neither
 * reads nor polls the file): 0, a td_arm() error, or -ETIMEDOUT.
 */
static int arm_pending(struct td_ctx *ctx, int nr)
{
	struct td_timer_spec spec = mono(NSEC_PER_MSEC, 0);
	int i, ret;

	for (i = 0; i < nr; i++) {
		spec.cookie = i;
		ret = td_arm(ctx, &spec, NULL);
		if (ret)
			return ret;
	}
	return t_wait_pending(td_fd(ctx), nr, PATIENCE_MS) ? 0 : -ETIMEDOUT;
}

/* Mappings of the device's ring (the table, which td_open maps too, is beyond). */
static int qtimer_mappings(void)
{
	return t_mappings_of(TD_DEVICE_PATH, true);
}

/* td_open sets up a ring of 4096 records and maps it; td_close unmaps. */
TEST(ring_set_up_and_mapped)
{
	struct td_ctx *ctx;

	ASSERT_EQ(0, td_open(&ctx, TD_NONBLOCK));
	if (!t_ring_offered()) {
		td_close(ctx);
		SKIP(return, "the module has no QTIMER_FEAT_RING");
	}
	ASSERT_EQ(4096, t_fdinfo_named(td_fd(ctx), "ring_entries"));
	ASSERT_EQ(1, qtimer_mappings());
	td_close(ctx);
	ASSERT_EQ(0, qtimer_mappings());
}

/*
 * td_open2 sets up a ring of the size asked for; one smaller than a burst
 * still delivers every record once (the rest wait in the kernel).
 */
TEST(open2_ring_sized)
{
	struct td_open_params params = {
		.flags = TD_NONBLOCK,
		.ring_entries = 64,
	};
	const int nr = 200;
	struct qtimer_record rec;
	bool seen[200] = { false };
	struct td_ctx *ctx;
	int got = 0;

	ASSERT_EQ(0, td_open2(&ctx, &params));
	if (!t_ring_offered()) {
		ASSERT_EQ(0, td_ring_entries(ctx));
		td_close(ctx);
		SKIP(return, "the module has no QTIMER_FEAT_RING");
	}
	ASSERT_EQ(64, td_ring_entries(ctx));
	ASSERT_EQ(64, t_fdinfo_named(td_fd(ctx), "ring_entries"));
	ASSERT_EQ(1, qtimer_mappings());
	ASSERT_EQ(0, arm_pending(ctx, nr));
	while (got < nr) {
		ASSERT_EQ(1, td_wait(ctx, &rec, 1, PATIENCE));
		ASSERT_LT(rec.cookie, nr);
		ASSERT_FALSE(seen[rec.cookie]);
		seen[rec.cookie] = true;
		got++;
	}
	ASSERT_EQ(-EAGAIN, td_read(ctx, &rec, 1));
	td_close(ctx);
	ASSERT_EQ(0, qtimer_mappings());
}

/* TD_RING_OFF: no ring, no mapping, every record through read(2). */
TEST(open2_ring_off)
{
	struct td_open_params params = {
		.flags = TD_NONBLOCK,
		.ring_entries = TD_RING_OFF,
	};
	struct td_timer_spec spec = mono(NSEC_PER_MSEC, 42);
	struct qtimer_record rec;
	struct td_ctx *ctx;

	ASSERT_EQ(0, td_open2(&ctx, &params));
	ASSERT_EQ(0, td_ring_entries(ctx));
	ASSERT_EQ(QT_FI_MISSING, t_fdinfo_named(td_fd(ctx), "ring_entries"));
	ASSERT_EQ(0, qtimer_mappings());
	ASSERT_EQ(0, td_arm(ctx, &spec, NULL));
	ASSERT_EQ(1, t_wait_readable(td_fd(ctx), PATIENCE_MS));
	count_reads(ctx);
	ASSERT_EQ(1, td_read(ctx, &rec, 1));
	ASSERT_EQ(42, rec.cookie);
	ASSERT_EQ(1, read_calls);
	td_close(ctx);
}

/* Zeroed params are td_open(ctxp, 0): the default ring, when offered. */
TEST(open2_zeroed_params)
{
	struct td_open_params params = { 0 };
	struct td_ctx *ctx;

	ASSERT_EQ(0, td_open2(&ctx, &params));
	ASSERT_EQ(t_ring_offered() ? 4096 : 0, td_ring_entries(ctx));
	ASSERT_EQ(FD_CLOEXEC, fcntl(td_fd(ctx), F_GETFD) & FD_CLOEXEC);
	ASSERT_EQ(0, fcntl(td_fd(ctx), F_GETFL) & O_NONBLOCK);
	td_close(ctx);
}

/*
 * Records in the ring are taken with no read(2) at all, with their claim
 * bits clear; only the empty ring sends the library to the file.
 */
TEST_F(qt, ring_records_need_no_read)
{
	const int nr = 200;
	struct qtimer_record rec;
	bool seen[200] = { false };
	int i;

	NEED_RING();
	ASSERT_EQ(0, arm_pending(self->ctx, nr));
	count_reads(self->ctx);
	for (i = 0; i < nr; i++) {
		ASSERT_EQ(1, td_read(self->ctx, &rec, 1));
		ASSERT_LT(rec.cookie, nr);
		ASSERT_FALSE(seen[rec.cookie]);
		seen[rec.cookie] = true;
		ASSERT_EQ(1, rec.count);
		ASSERT_EQ(QTIMER_REC_LAST, rec.flags);
	}
	ASSERT_EQ(0, read_calls);
	/* Empty: the library reads the file, and the counter sees it do so. */
	ASSERT_EQ(-EAGAIN, td_read(self->ctx, &rec, 1));
	ASSERT_EQ(1, read_calls);
	/*
	 * The tail the library stored let that read(2) reap every record:
	 * the one-shots are gone.
	 */
	ASSERT_EQ(0, t_fdinfo_get(td_fd(self->ctx), QT_FI_PENDING));
	ASSERT_EQ(0, t_fdinfo_get(td_fd(self->ctx), QT_FI_TIMERS));
}

/*
 * td_ring_peek hands out the records in the mapping, claimed, with no
 * system call; td_ring_advance gives their slots back, and the kernel then
 * reaps the one-shots.
 */
TEST_F(qt, ring_peek_and_advance)
{
	const int nr = 200;
	const struct qtimer_record *recs[16];
	bool seen[200] = { false };
	int i, got = 0, n;

	NEED_RING();
	ASSERT_EQ(0, arm_pending(self->ctx, nr));
	count_reads(self->ctx);
	while (got < nr) {
		n = td_ring_peek(self->ctx, recs, 16);
		ASSERT_GT(n, 0);
		for (i = 0; i < n; i++) {
			ASSERT_LT(recs[i]->cookie, nr);
			ASSERT_FALSE(seen[recs[i]->cookie]);
			seen[recs[i]->cookie] = true;
			ASSERT_EQ(1, recs[i]->count);
			ASSERT_EQ(QTIMER_REC_LAST | QTIMER_REC_TAKEN, recs[i]->flags);
		}
		/* The peeking thread's own read would wait for itself. */
		ASSERT_EQ(-EBUSY, td_read(self->ctx, &(struct qtimer_record){ 0 }, 1));
		ASSERT_EQ(0, td_ring_advance(self->ctx, n));
		got += n;
	}
	ASSERT_EQ(0, read_calls);
	ASSERT_EQ(0, td_ring_peek(self->ctx, recs, 16));
	/* Past the tail, the one-shots are gone (a poll reaps on old modules). */
	ASSERT_EQ(0, t_wait_readable(td_fd(self->ctx), 0));
	ASSERT_EQ(0, t_fdinfo_get(td_fd(self->ctx), QT_FI_PENDING));
}

/*
 * The claim is made at the peek, so CANCEL stays exact: a one-shot whose
 * record the caller holds was consumed (-ENOENT); a ticker's, 0 until the
 * advance (the uapi's answer before the tail passes the record); and a
 * record cancelled before the peek is never handed out.
 */
TEST_F(qt, ring_cancel_and_peek)
{
	struct td_timer_spec ticker = mono(NSEC_PER_MSEC, 2);
	struct td_timer_spec once = mono(NSEC_PER_MSEC, 1);
	const struct qtimer_record *recs[4];
	uint64_t once_id, tick_id;

	NEED_RING();
	ticker.period_ns = FAR;
	ASSERT_EQ(0, td_arm(self->ctx, &once, &once_id));
	ASSERT_EQ(0, td_arm(self->ctx, &ticker, &tick_id));
	ASSERT_TRUE(t_wait_pending(td_fd(self->ctx), 2, PATIENCE_MS));
	ASSERT_EQ(2, td_ring_peek(self->ctx, recs, 4));
	ASSERT_EQ(-ENOENT, td_cancel(self->ctx, once_id));
	ASSERT_EQ(0, td_cancel(self->ctx, tick_id));
	/* What the caller holds is unchanged by the cancels. */
	ASSERT_EQ(QTIMER_REC_TAKEN, recs[0]->flags & QTIMER_REC_CLAIM);
	ASSERT_EQ(QTIMER_REC_TAKEN, recs[1]->flags & QTIMER_REC_CLAIM);
	ASSERT_EQ(3, recs[0]->cookie + recs[1]->cookie);
	ASSERT_EQ(0, td_ring_advance(self->ctx, 2));

	ASSERT_EQ(0, td_arm(self->ctx, &once, &once_id));
	ASSERT_TRUE(t_wait_pending(td_fd(self->ctx), 1, PATIENCE_MS));
	ASSERT_EQ(QTIMER_CANCEL_QUEUED, td_cancel(self->ctx, once_id));
	ASSERT_EQ(0, td_ring_peek(self->ctx, recs, 4));
	ASSERT_EQ(-EINVAL, td_ring_advance(self->ctx, 0));
}

/* A context without a ring has nothing to peek. */
TEST(ring_peek_needs_a_ring)
{
	struct td_open_params params = { .ring_entries = TD_RING_OFF };
	const struct qtimer_record *recs[1];
	struct td_ctx *ctx;

	ASSERT_EQ(0, td_open2(&ctx, &params));
	ASSERT_EQ(-ENODEV, td_ring_peek(ctx, recs, 1));
	ASSERT_EQ(-EINVAL, td_ring_advance(ctx, 1));
	td_close(ctx);
}

/* A blocking context takes what the ring holds without blocking or reading. */
TEST(ring_blocking_context_needs_no_read)
{
	struct td_timer_spec spec = mono(NSEC_PER_MSEC, 0);
	struct qtimer_record rec;
	struct td_ctx *ctx;
	int i;

	ASSERT_EQ(0, td_open(&ctx, 0));
	if (!t_ring_offered()) {
		td_close(ctx);
		SKIP(return, "the module has no QTIMER_FEAT_RING");
	}
	for (i = 0; i < 5; i++)
		ASSERT_EQ(0, td_arm(ctx, &spec, NULL));
	ASSERT_TRUE(t_wait_pending(td_fd(ctx), 5, PATIENCE_MS));
	count_reads(ctx);
	for (i = 0; i < 5; i++)
		ASSERT_EQ(1, td_read(ctx, &rec, 1));
	ASSERT_EQ(0, read_calls);
	ASSERT_EQ(-ETIME, td_wait(ctx, &rec, 1, 20 * NSEC_PER_MSEC));
	td_close(ctx);
}

TEST_F(qt, ring_wait_and_dispatch_need_no_read)
{
	struct qtimer_record recs[10];
	struct tally t = { 0 };
	int i;

	NEED_RING();
	ASSERT_EQ(0, arm_pending(self->ctx, 100));
	count_reads(self->ctx);
	ASSERT_EQ(10, td_wait(self->ctx, recs, 10, 0));
	for (i = 0; i < 10; i++)
		tally_cb(&recs[i], &t);
	ASSERT_EQ(90, td_dispatch(self->ctx, tally_cb, &t, 1000));
	ASSERT_EQ(0, read_calls);
	ASSERT_EQ(0, t.bad);
	for (i = 0; i < 100; i++)
		ASSERT_EQ(1, t.per_cookie[i]);
	ASSERT_EQ(-EAGAIN, td_dispatch(self->ctx, tally_cb, &t, 10));
	ASSERT_EQ(1, read_calls);
}

/*
 * CANCEL voids a record in the ring: the library skips it.  A record the
 * library took from the mapping was claimed, so the kernel says the
 * one-shot is gone, as after a read(2).
 */
TEST_F(qt, ring_cancel_voids_pending_record)
{
	struct td_timer_spec spec = mono(NSEC_PER_MSEC, 0);
	struct qtimer_record recs[8];
	uint64_t ids[3];
	int i;

	NEED_RING();
	for (i = 0; i < 3; i++) {
		spec.cookie = i;
		ASSERT_EQ(0, td_arm(self->ctx, &spec, &ids[i]));
	}
	ASSERT_TRUE(t_wait_pending(td_fd(self->ctx), 3, PATIENCE_MS));
	ASSERT_EQ(QTIMER_CANCEL_QUEUED, td_cancel(self->ctx, ids[1]));
	count_reads(self->ctx);
	ASSERT_EQ(2, td_read(self->ctx, recs, 8));
	ASSERT_EQ(0, read_calls);
	ASSERT_EQ(0, recs[0].cookie);
	ASSERT_EQ(2, recs[1].cookie);
	ASSERT_EQ(-ENOENT, td_cancel(self->ctx, ids[0]));
	ASSERT_EQ(-ENOENT, td_cancel(self->ctx, ids[1]));
	ASSERT_EQ(-ENOENT, td_modify(self->ctx, ids[2], NSEC_PER_MSEC, 0, 0, 0));
	ASSERT_EQ(-ETIME, td_wait(self->ctx, recs, 8, 50 * NSEC_PER_MSEC));
}

/*
 * A ticker whose record the library took from the mapping waits for the
 * kernel to reap the ring before it is re-armed, but the library moved the
 * tail past its record, so it is as good as re-armed: a CANCEL meanwhile
 * says QTIMER_CANCEL_ARMED, as after a read(), not 0 and not -ENOENT.
 */
TEST_F(qt, ring_cancel_ticker_after_take)
{
	struct td_timer_spec spec = mono(NSEC_PER_MSEC, 0);
	struct qtimer_record rec;
	uint64_t id;

	NEED_RING();
	spec.period_ns = 100 * NSEC_PER_SEC;
	ASSERT_EQ(0, td_arm(self->ctx, &spec, &id));
	ASSERT_TRUE(t_wait_pending(td_fd(self->ctx), 1, PATIENCE_MS));
	count_reads(self->ctx);
	ASSERT_EQ(1, td_read(self->ctx, &rec, 1));
	ASSERT_EQ(0, read_calls);
	ASSERT_EQ(id, rec.id);
	ASSERT_EQ(0, rec.flags);
	ASSERT_EQ(QTIMER_CANCEL_ARMED, td_cancel(self->ctx, id));
	ASSERT_EQ(-ENOENT, td_cancel(self->ctx, id));
	ASSERT_EQ(-EAGAIN, td_read(self->ctx, &rec, 1));
}

static void count_cb(const struct qtimer_record *rec, void *arg)
{
	(void)rec;
	++*(unsigned int *)arg;
}

/*
 * An edge-triggered epoll loop that takes each tick with td_dispatch()
 * and makes no other system call on the file: the ticker goes on ticking.
 * (It used to stop after its first record: taking it from the mapping
 * never let the kernel re-arm it, so no second edge ever came.)
 */
TEST_F(qt, ring_ticker_edge_triggered)
{
	struct td_timer_spec spec = mono(20 * NSEC_PER_MSEC, 0);
	struct epoll_event ev = { .events = EPOLLIN | EPOLLET };
	unsigned int n = 0;
	int ep, i;

	NEED_RING();
	ep = epoll_create1(EPOLL_CLOEXEC);
	ASSERT_LE(0, ep);
	ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_ADD, td_fd(self->ctx), &ev));
	spec.period_ns = 20 * NSEC_PER_MSEC;
	ASSERT_EQ(0, td_arm(self->ctx, &spec, NULL));
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(1, epoll_wait(ep, &ev, 1, PATIENCE_MS))
			TH_LOG("no edge for tick %d", i + 1);
		ASSERT_LT(0, td_dispatch(self->ctx, count_cb, &n, 64));
	}
	ASSERT_LE(3, n);
	close(ep);
}

/* read(2) on the descriptor still works with the ring mapped. */
TEST_F(qt, ring_plain_read_still_works)
{
	struct qtimer_record recs[4];
	ssize_t len;
	int i;

	NEED_RING();
	ASSERT_EQ(0, arm_pending(self->ctx, 3));
	len = read(td_fd(self->ctx), recs, sizeof(recs));
	ASSERT_EQ(3 * sizeof(recs[0]), len);
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(i, recs[i].cookie);
		/* The kernel's read clears the claim as the library does. */
		ASSERT_EQ(QTIMER_REC_LAST, recs[i].flags);
	}
	ASSERT_EQ(-EAGAIN, td_read(self->ctx, recs, 4));
}

TEST_HARNESS_MAIN
