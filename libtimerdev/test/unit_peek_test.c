// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * Native unit tests against the fake device (fake_harness.h), zero-copy:
 * td_ring_peek and td_ring_advance, the claim made at the peek, the
 * consumer held until the advance, a small ring that wraps, and a context
 * without a ring.
 */
#include <errno.h>
#include <pthread.h>
#include <unistd.h>

#include "fake_harness.h"

/* ---- zero-copy: td_ring_peek and td_ring_advance ---- */

TEST_F(ring, peek_points_into_the_mapping)
{
	const struct qtimer_record *recs[8];
	struct qtimer_record rec;
	unsigned int i;

	for (i = 0; i < 5; i++)
		fake_push_record(i + 1, 10 + i, 1);
	errno = 1234;
	ASSERT_EQ(3, td_ring_peek(self->ctx, recs, 3));
	ASSERT_EQ(1234, errno);
	for (i = 0; i < 3; i++) {
		/* The kernel's slot itself, not a copy. */
		ASSERT_EQ(&fake.ring.recs[i], recs[i]);
		ASSERT_EQ(i + 1, recs[i]->id);
		ASSERT_EQ(10 + i, recs[i]->cookie);
		ASSERT_EQ(QTIMER_REC_LAST | QTIMER_REC_TAKEN, recs[i]->flags);
	}
	/* Claimed, but the slots stay ours until the advance. */
	ASSERT_EQ(0, ring_tail());
	ASSERT_EQ(QTIMER_REC_READY, ring_claim(3));
	ASSERT_EQ(0, td_ring_advance(self->ctx, 3));
	ASSERT_EQ(3, ring_tail());
	ASSERT_EQ(2, td_ring_peek(self->ctx, recs, 8));
	ASSERT_EQ(4, recs[0]->id);
	ASSERT_EQ(5, recs[1]->id);
	ASSERT_EQ(0, td_ring_advance(self->ctx, 2));
	ASSERT_EQ(5, ring_tail());
	ASSERT_EQ(0, fake.read_calls);
	/* Empty: 0, no system call, no lock held, nothing to advance. */
	ASSERT_EQ(0, td_ring_peek(self->ctx, recs, 8));
	ASSERT_EQ(0, fake.read_calls);
	ASSERT_EQ(-EINVAL, td_ring_advance(self->ctx, 0));
	ASSERT_EQ(-EAGAIN, td_read(self->ctx, &rec, 1));
}

/* A record voided before the peek is passed over, and so is its slot. */
TEST_F(ring, peek_skips_voided_records)
{
	const struct qtimer_record *recs[8];
	uint64_t ids[3];

	ASSERT_EQ(0, arm_fired(self->ctx, ids, 3));
	ASSERT_EQ(QTIMER_CANCEL_QUEUED, td_cancel(self->ctx, ids[1]));
	ASSERT_EQ(2, td_ring_peek(self->ctx, recs, 8));
	ASSERT_EQ(ids[0], recs[0]->id);
	ASSERT_EQ(ids[2], recs[1]->id);
	ASSERT_EQ(0, td_ring_advance(self->ctx, 2));
	ASSERT_EQ(3, ring_tail());

	/* Only voided records: the tail passes them, and nothing is held. */
	ASSERT_EQ(0, arm_fired(self->ctx, ids, 1));
	ASSERT_EQ(QTIMER_CANCEL_QUEUED, td_cancel(self->ctx, ids[0]));
	ASSERT_EQ(0, td_ring_peek(self->ctx, recs, 8));
	ASSERT_EQ(4, ring_tail());
	ASSERT_EQ(-EINVAL, td_ring_advance(self->ctx, 0));
}

/*
 * The claim is made at the peek: a CANCEL meanwhile finds the record
 * consumed (it cannot void it), and the record the caller holds is intact.
 */
TEST_F(ring, cancel_after_peek_finds_it_consumed)
{
	const struct qtimer_record *recs[1];
	struct td_timer_spec spec = { .clockid = CLOCK_MONOTONIC };
	uint64_t id;

	ASSERT_EQ(0, td_arm(self->ctx, &spec, &id));
	fake_push_record(id, 77, 1);
	ASSERT_EQ(1, td_ring_peek(self->ctx, recs, 1));
	/* The fake's answer for a record it cannot void: only "armed". */
	ASSERT_EQ(QTIMER_CANCEL_ARMED, td_cancel(self->ctx, id));
	ASSERT_EQ(QTIMER_REC_TAKEN, ring_claim(0));
	ASSERT_EQ(id, recs[0]->id);
	ASSERT_EQ(77, recs[0]->cookie);
	ASSERT_EQ(0, td_ring_advance(self->ctx, 1));
}

/* The peeking thread cannot read, wait, dispatch or peek until it advances. */
TEST_F(ring, peek_holds_the_consumer_until_advance)
{
	const struct qtimer_record *recs[4];
	struct qtimer_record rec;
	struct order o = { .next = 2 };

	fake_push_record(1, 0, 1);
	fake_push_record(2, 0, 1);
	ASSERT_EQ(1, td_ring_peek(self->ctx, recs, 1));
	ASSERT_EQ(-EBUSY, td_read(self->ctx, &rec, 1));
	ASSERT_EQ(-EBUSY, td_wait(self->ctx, &rec, 1, 0));
	ASSERT_EQ(-EBUSY, td_dispatch(self->ctx, order_cb, &o, 8));
	ASSERT_EQ(-EBUSY, td_ring_peek(self->ctx, recs, 4));
	/* Not what the peek returned: refused, and the peek stands. */
	ASSERT_EQ(-EINVAL, td_ring_advance(self->ctx, 2));
	ASSERT_EQ(-EINVAL, td_ring_advance(self->ctx, 0));
	ASSERT_EQ(0, ring_tail());
	ASSERT_EQ(0, td_ring_advance(self->ctx, 1));
	ASSERT_EQ(1, td_dispatch(self->ctx, order_cb, &o, 8));
	ASSERT_EQ(0, o.bad);
	ASSERT_EQ(2, ring_tail());
}

struct peek_reader {
	struct td_ctx *ctx;
	struct qtimer_record rec;
	int ret;
	bool done;
};

static void *peek_reader(void *arg)
{
	struct peek_reader *r = arg;

	r->ret = td_read(r->ctx, &r->rec, 1);
	__atomic_store_n(&r->done, true, __ATOMIC_RELEASE);
	return NULL;
}

/* Another thread's read waits for the advance, then takes what is next. */
TEST_F(ring, peek_makes_other_readers_wait)
{
	struct peek_reader r = { .ctx = self->ctx };
	const struct qtimer_record *recs[1];
	pthread_t thread;

	fake_push_record(1, 0, 1);
	fake_push_record(2, 0, 1);
	ASSERT_EQ(1, td_ring_peek(self->ctx, recs, 1));
	ASSERT_EQ(0, pthread_create(&thread, NULL, peek_reader, &r));
	usleep(100000);
	ASSERT_FALSE(__atomic_load_n(&r.done, __ATOMIC_ACQUIRE));
	ASSERT_EQ(1, recs[0]->id);
	ASSERT_EQ(0, td_ring_advance(self->ctx, 1));
	ASSERT_EQ(0, pthread_join(thread, NULL));
	ASSERT_EQ(1, r.ret);
	ASSERT_EQ(2, r.rec.id);
}

/* A small ring wraps: the peek follows the mask of the size asked for. */
TEST(peek_wraps_a_small_ring)
{
	struct td_open_params params = {
		.path = FAKE_PATH,
		.flags = TD_NONBLOCK,
		.ring_entries = QTIMER_RING_MIN,
	};
	const struct qtimer_record *recs[QTIMER_RING_MIN];
	struct td_ctx *ctx;
	unsigned int round, i;
	int nr;

	fake.version.features |= QTIMER_FEAT_RING;
	ASSERT_EQ(0, td_open2(&ctx, &params));
	for (round = 0; round < 3; round++) {
		for (i = 0; i < 6; i++)
			fake_push_record(round * 6 + i + 1, 0, 1);
		nr = td_ring_peek(ctx, recs, QTIMER_RING_MIN);
		ASSERT_EQ(6, nr);
		for (i = 0; i < 6; i++)
			ASSERT_EQ(round * 6 + i + 1, recs[i]->id);
		ASSERT_EQ(0, td_ring_advance(ctx, nr));
	}
	ASSERT_EQ(18, ring_tail());
	td_close(ctx);
}

TEST(peek_needs_a_ring)
{
	struct td_open_params params = {
		.path = FAKE_PATH,
		.ring_entries = TD_RING_OFF,
	};
	const struct qtimer_record *recs[1];
	struct td_ctx *ctx;

	ASSERT_EQ(-EINVAL, td_ring_peek(NULL, recs, 1));
	ASSERT_EQ(-EINVAL, td_ring_advance(NULL, 1));
	fake.version.features |= QTIMER_FEAT_RING;
	ASSERT_EQ(0, td_open2(&ctx, &params));
	ASSERT_EQ(-EINVAL, td_ring_peek(ctx, NULL, 1));
	ASSERT_EQ(-EINVAL, td_ring_peek(ctx, recs, 0));
	ASSERT_EQ(-ENODEV, td_ring_peek(ctx, recs, 1));
	ASSERT_EQ(-EINVAL, td_ring_advance(ctx, 0));
	td_close(ctx);
}

TEST_HARNESS_MAIN
