/* SPDX-License-Identifier: LGPL-2.1 OR MIT */
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * The harness side of the native unit tests (unit_*_test.c, one feature
 * each, run by make check), which drive the library against the fake
 * device of fake_qtimer.c: what they share that has to expand inside a
 * kselftest_harness suite.  The `fake` fixture opens a non-blocking
 * context on the fake, once through read(2) and once through the record
 * ring; the `ring` fixture opens one with the ring, blocking and not;
 * and the ring's tail, a slot's claim, timers fired at once and a check
 * of record order are made the same way by every ring test.  A suite
 * that has no test of a fixture registers it and runs nothing of it.
 * The harness forks each test, so every one starts from the fake's
 * initial state.  The kernel's side is the libtimerdev_*_test suites', in
 * the VM.
 */
#ifndef _TD_FAKE_HARNESS_H
#define _TD_FAKE_HARNESS_H

#include "kselftest_harness.h"
#include "timerdev.h"
#include "fake_qtimer.h"

#define NSEC_PER_SEC 1000000000LL

FIXTURE(fake) {
	struct td_ctx *ctx;
};

/* Every test of the fixture, through read(2) and through the record ring. */
FIXTURE_VARIANT(fake) {
	bool ring;
};

FIXTURE_VARIANT_ADD(fake, read) {
	.ring = false,
};

FIXTURE_VARIANT_ADD(fake, ring) {
	.ring = true,
};

FIXTURE_SETUP(fake)
{
	if (variant->ring)
		fake.version.features |= QTIMER_FEAT_RING;
	ASSERT_EQ(0, td_open_path(&self->ctx, FAKE_PATH, TD_NONBLOCK));
	ASSERT_NE(NULL, self->ctx);
	ASSERT_EQ(variant->ring, fake.ring.mapped);
}

FIXTURE_TEARDOWN(fake)
{
	td_close(self->ctx);
}

FIXTURE(ring) {
	struct td_ctx *ctx;
};

/*
 * Blocking or not, a context takes what the ring holds without a system
 * call.  (The fake's read() never blocks, so an empty ring ends in -EAGAIN
 * on both; the kernel's would block on the first.)
 */
FIXTURE_VARIANT(ring) {
	int flags;
};

FIXTURE_VARIANT_ADD(ring, nonblocking) {
	.flags = TD_NONBLOCK,
};

FIXTURE_VARIANT_ADD(ring, blocking) {
	.flags = 0,
};

FIXTURE_SETUP(ring)
{
	fake.version.features |= QTIMER_FEAT_RING;
	ASSERT_EQ(0, td_open_path(&self->ctx, FAKE_PATH, variant->flags));
	ASSERT_TRUE(fake.ring.mapped);
}

FIXTURE_TEARDOWN(ring)
{
	td_close(self->ctx);
}

/* The consumer's tail in the fake's ring, and the claim bits of slot @pos. */
static inline uint32_t ring_tail(void)
{
	return *fake.ring.tail_p;
}

static inline uint32_t ring_claim(uint32_t pos)
{
	return fake.ring.recs[pos & (fake.ring.entries - 1)].flags &
	       QTIMER_REC_CLAIM;
}

/*
 * nr one-shots armed on ctx (ids), each then given a record in the fake
 * at once, as if it had fired: ids[i]'s with cookie i.  0, or td_arm()'s
 * error.
 */
static inline int arm_fired(struct td_ctx *ctx, uint64_t *ids, unsigned int nr)
{
	struct td_timer_spec spec = { .clockid = CLOCK_MONOTONIC };
	unsigned int i;
	int ret;

	for (i = 0; i < nr; i++) {
		ret = td_arm(ctx, &spec, &ids[i]);
		if (ret)
			return ret;
		fake_push_record(ids[i], i, 1);
	}
	return 0;
}

/*
 * A td_dispatch() callback that counts records, and as bad those out of
 * order: ids must come 1, 2, ..., less every skip_every-th.
 */
struct order {
	uint64_t next;		/* the id expected next */
	unsigned int nr, bad;
	unsigned int skip_every;	/* ids that are not expected: every nth */
};

static inline void order_cb(const struct qtimer_record *rec, void *arg)
{
	struct order *o = arg;

	if (o->skip_every && o->next % o->skip_every == 0)
		o->next++;
	if (rec->id != o->next++ || rec->flags != QTIMER_REC_LAST)
		o->bad++;
	o->nr++;
}

#endif /* _TD_FAKE_HARNESS_H */
