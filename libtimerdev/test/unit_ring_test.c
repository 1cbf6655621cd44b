// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * Native unit tests against the fake device (fake_harness.h), records
 * through the mapped ring: taken with no system call, VOID and foreign
 * claims skipped, an overflow delivered once and in order, cancelled
 * records never, a callback that reads, and readers on several threads.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "fake_harness.h"

/* ---- the record ring, against the fake's ---- */

TEST_F(ring, read_takes_from_the_mapping)
{
	struct qtimer_record recs[8];
	unsigned int i;

	for (i = 0; i < 5; i++)
		fake_push_record(i + 1, 10 + i, 1);
	ASSERT_EQ(5, fake_ring_nr_ready());
	errno = 1234;
	ASSERT_EQ(3, td_read(self->ctx, recs, 3));
	ASSERT_EQ(1234, errno);
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(i + 1, recs[i].id);
		ASSERT_EQ(10 + i, recs[i].cookie);
		ASSERT_EQ(1, recs[i].count);
		/* The claim bits are the library's business, not the caller's. */
		ASSERT_EQ(QTIMER_REC_LAST, recs[i].flags);
		ASSERT_EQ(QTIMER_REC_TAKEN, ring_claim(i));
	}
	/* The tail passed what was taken, and no further. */
	ASSERT_EQ(3, ring_tail());
	ASSERT_EQ(QTIMER_REC_READY, ring_claim(3));
	ASSERT_EQ(0, fake.read_calls);
	ASSERT_EQ(0, fake.poll_calls);

	ASSERT_EQ(2, td_read(self->ctx, recs, 8));
	ASSERT_EQ(4, recs[0].id);
	ASSERT_EQ(5, recs[1].id);
	ASSERT_EQ(5, ring_tail());
	ASSERT_EQ(0, fake.read_calls);
	/* Empty: now, and only now, read(2). */
	ASSERT_EQ(-EAGAIN, td_read(self->ctx, recs, 8));
	ASSERT_EQ(1, fake.read_calls);
}


TEST_F(ring, wait_and_dispatch_take_from_the_mapping)
{
	struct order o = { .next = 1 };
	struct qtimer_record recs[8];
	unsigned int i;

	for (i = 0; i < 3; i++)
		fake_push_record(i + 1, 0, 1);
	ASSERT_EQ(3, td_wait(self->ctx, recs, 8, 0));
	ASSERT_EQ(3, recs[2].id);
	ASSERT_EQ(QTIMER_REC_LAST, recs[2].flags);
	/* The take emptied the ring: one poll(2), for the kernel's reap. */
	ASSERT_EQ(1, fake.poll_calls);
	ASSERT_EQ(0, fake.read_calls);

	for (i = 0; i < 200; i++)
		fake_push_record(i + 1, 0, 1);
	ASSERT_EQ(200, td_dispatch(self->ctx, order_cb, &o, 1000));
	ASSERT_EQ(200, o.nr);
	ASSERT_EQ(0, o.bad);
	ASSERT_EQ(203, ring_tail());
	ASSERT_EQ(2, fake.poll_calls);
	ASSERT_EQ(0, fake.read_calls);

	/* Nothing in the ring: td_wait polls the file. */
	ASSERT_EQ(-ETIME, td_wait(self->ctx, recs, 8, 0));
	ASSERT_EQ(3, fake.poll_calls);
	ASSERT_EQ(0, fake.read_calls);
}

/*
 * With QTIMER_FEAT_RING_DRAIN the kernel reaps by itself: a take that
 * empties the ring makes no system call (the poll(2) above was the
 * workaround for a module without it).
 */
TEST(ring_with_the_drain_a_take_makes_no_system_call)
{
	struct qtimer_record recs[8];
	struct order o = { .next = 1 };
	struct td_ctx *ctx;
	unsigned int i;

	fake.version.features |= QTIMER_FEAT_RING | QTIMER_FEAT_RING_DRAIN;
	ASSERT_EQ(0, td_open_path(&ctx, FAKE_PATH, 0));
	ASSERT_TRUE(fake.ring.mapped);
	for (i = 0; i < 3; i++)
		fake_push_record(i + 1, 0, 1);
	ASSERT_EQ(3, td_wait(ctx, recs, 8, 0));
	/* Fewer than the ring holds: none waits in the (fake) kernel. */
	for (i = 0; i < 30; i++)
		fake_push_record(i + 1, 0, 1);
	ASSERT_EQ(30, td_dispatch(ctx, order_cb, &o, 1000));
	ASSERT_EQ(0, o.bad);
	/* Every record came from the mapping, and nothing went to the kernel. */
	ASSERT_EQ(0, fake.poll_calls);
	ASSERT_EQ(0, fake.read_calls);
	td_close(ctx);
}

/* VOID records, and any claim not READY, are passed over. */
TEST_F(ring, void_and_foreign_claims_are_skipped)
{
	struct qtimer_record recs[8];
	uint64_t ids[4];

	ASSERT_EQ(0, arm_fired(self->ctx, ids, 4));
	ASSERT_EQ(QTIMER_CANCEL_QUEUED, td_cancel(self->ctx, ids[1]));
	ASSERT_EQ(QTIMER_REC_VOID, ring_claim(1));
	/* As if a read(2) behind the library's back had claimed it. */
	fake.ring.recs[2].flags = (fake.ring.recs[2].flags & ~QTIMER_REC_CLAIM) |
				  QTIMER_REC_TAKEN;
	ASSERT_EQ(QTIMER_REC_TAKEN, ring_claim(2));

	ASSERT_EQ(2, td_read(self->ctx, recs, 8));
	ASSERT_EQ(ids[0], recs[0].id);
	ASSERT_EQ(ids[3], recs[1].id);
	ASSERT_EQ(4, ring_tail());
	ASSERT_EQ(QTIMER_REC_VOID, ring_claim(1));
	ASSERT_EQ(0, fake.read_calls);
	ASSERT_EQ(-EAGAIN, td_read(self->ctx, recs, 8));
}

/*
 * More records than the ring holds: the rest wait in the kernel, flagged,
 * and poll(2) moves them in when the ring is drained (the poll that ends
 * each take that empties it).  Each arrives once, in order, and
 * td_dispatch needs no read(2) for them.
 */
TEST_F(ring, overflow_dispatched_once_in_order)
{
	const unsigned int nr = 4096 + 300;
	struct order o = { .next = 1 };
	unsigned int i;

	for (i = 0; i < nr; i++)
		fake_push_record(i + 1, 0, 1);
	ASSERT_EQ(4096, fake_ring_nr_ready());
	ASSERT_EQ(QTIMER_RING_OVERFLOW, *fake.ring.flags_p);
	ASSERT_EQ(nr, td_dispatch(self->ctx, order_cb, &o, 100000));
	ASSERT_EQ(nr, o.nr);
	ASSERT_EQ(0, o.bad);
	ASSERT_EQ(0, *fake.ring.flags_p);
	ASSERT_EQ(0, fake.read_calls);
	/* Once when the first 4096 were taken, once after the rest. */
	ASSERT_EQ(2, fake.poll_calls);
	ASSERT_EQ(-EAGAIN, td_dispatch(self->ctx, order_cb, &o, 10));
	ASSERT_EQ(nr, o.nr);
}

/*
 * td_read of a ring with records waiting behind it: the poll(2) that ends
 * the take that empties the ring moves them in, for the next td_read.
 */
TEST_F(ring, overflow_read_once_in_order)
{
	const unsigned int nr = 4096 + 10;
	struct qtimer_record *recs = calloc(nr, sizeof(*recs));
	unsigned int i;

	ASSERT_NE(NULL, recs);
	for (i = 0; i < nr; i++)
		fake_push_record(i + 1, 0, 1);
	ASSERT_EQ(4096, td_read(self->ctx, recs, nr));
	ASSERT_EQ(0, fake.read_calls);
	for (i = 0; i < 4096; i++)
		ASSERT_EQ(i + 1, recs[i].id);
	ASSERT_EQ(1, fake.poll_calls);
	ASSERT_EQ(10, td_read(self->ctx, recs, nr));
	ASSERT_EQ(0, fake.read_calls);
	for (i = 0; i < 10; i++) {
		ASSERT_EQ(4096 + i + 1, recs[i].id);
		ASSERT_EQ(QTIMER_REC_LAST, recs[i].flags);
	}
	ASSERT_EQ(-EAGAIN, td_read(self->ctx, recs, nr));
	free(recs);
}

/* A cancelled record is never delivered, from the ring or the overflow. */
TEST_F(ring, cancelled_records_never_delivered)
{
	struct td_timer_spec spec = { .clockid = CLOCK_MONOTONIC };
	const unsigned int nr = 4096 + 100;
	struct order o = { .next = 1, .skip_every = 7 };
	uint64_t id;
	unsigned int i;

	/* The fake hands out ids 1, 2, ...: record i + 1 is timer i + 1's. */
	for (i = 0; i < nr; i++) {
		ASSERT_EQ(0, td_arm(self->ctx, &spec, &id));
		ASSERT_EQ(i + 1, id);
		fake_push_record(id, 0, 1);
	}
	for (id = 7; id <= nr; id += 7)
		ASSERT_EQ(QTIMER_CANCEL_QUEUED, td_cancel(self->ctx, id));
	ASSERT_EQ(nr - nr / 7, td_dispatch(self->ctx, order_cb, &o, 100000));
	ASSERT_EQ(0, o.bad);
	ASSERT_EQ(nr - nr / 7, o.nr);
	ASSERT_EQ(-EAGAIN, td_dispatch(self->ctx, order_cb, &o, 10));
}

struct reader {
	struct td_ctx *ctx;
	int ret;
};

static void rereading_cb(const struct qtimer_record *rec, void *arg)
{
	struct reader *r = arg;
	struct qtimer_record more;

	(void)rec;
	/* The callback may read from its own context: no lock is held. */
	r->ret = td_read(r->ctx, &more, 1);
}

TEST_F(ring, dispatch_callback_may_read)
{
	struct reader r = { .ctx = self->ctx, .ret = 1 };

	fake_push_record(1, 0, 1);
	ASSERT_EQ(1, td_dispatch(self->ctx, rereading_cb, &r, 10));
	ASSERT_EQ(-EAGAIN, r.ret);
}

#define READER_THREADS	4

static unsigned int times_seen[4097];

static void *reader_thread(void *arg)
{
	struct reader *r = arg;
	struct qtimer_record recs[7];
	int i;

	while ((r->ret = td_read(r->ctx, recs, 7)) > 0)
		for (i = 0; i < r->ret; i++)
			__atomic_fetch_add(&times_seen[recs[i].id % 4097], 1,
					   __ATOMIC_RELAXED);
	return NULL;
}

/* Readers on several threads share the ring: each record reaches one. */
TEST_F(ring, threads_take_each_record_once)
{
	struct reader r[READER_THREADS];
	pthread_t th[READER_THREADS];
	unsigned int i;

	for (i = 0; i < 4096; i++)
		fake_push_record(i + 1, 0, 1);
	for (i = 0; i < READER_THREADS; i++) {
		r[i].ctx = self->ctx;
		ASSERT_EQ(0, pthread_create(&th[i], NULL, reader_thread, &r[i]));
	}
	for (i = 0; i < READER_THREADS; i++) {
		ASSERT_EQ(0, pthread_join(th[i], NULL));
		ASSERT_EQ(-EAGAIN, r[i].ret);
	}
	for (i = 1; i <= 4096; i++)
		ASSERT_EQ(1, times_seen[i]);
	ASSERT_EQ(4096, ring_tail());
}

TEST_HARNESS_MAIN
