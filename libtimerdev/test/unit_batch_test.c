// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * Native unit tests against the fake device (fake_harness.h), batches:
 * td_batch_init, automatic flushes, a completion per op, partial and
 * failed SUBMITs, td_batch_free, a callback that tries to re-enter, and a
 * batch without one.
 */
#include <errno.h>
#include <string.h>

#include "fake_harness.h"

/* Completions as a batch callback sees them. */
struct log {
	unsigned int nr;
	struct td_completion c[256];
	struct td_batch *batch;	/* for the re-entrancy test */
	int reentry[2];
};

static void log_cb(const struct td_completion *c, void *arg)
{
	struct log *log = arg;

	if (log->nr < 256)
		log->c[log->nr] = *c;
	log->nr++;
}

TEST_F(fake, batch_init_errors)
{
	struct td_batch batch;

	ASSERT_EQ(-EINVAL, td_batch_init(self->ctx, &batch, 0));
	ASSERT_EQ(-EINVAL, td_batch_init(self->ctx, &batch, QTIMER_SUBMIT_MAX + 1));
	ASSERT_EQ(-EINVAL, td_batch_arm(&batch, NULL, 0));	/* left unusable */
	fake.alloc_fail = 1;
	errno = 1234;
	ASSERT_EQ(-ENOMEM, td_batch_init(self->ctx, &batch, 8));
	ASSERT_EQ(1234, errno);
	ASSERT_EQ(0, td_batch_init(self->ctx, &batch, QTIMER_SUBMIT_MAX));
	td_batch_free(&batch);
	td_batch_free(&batch);	/* a freed batch is inert */
}

/* Room for later fields: a spec that uses it is refused before any ioctl. */
TEST_F(fake, spec_reserved_must_be_zero)
{
	struct td_timer_spec spec = { .clockid = CLOCK_MONOTONIC };
	const unsigned int nr = sizeof(spec.reserved) / sizeof(spec.reserved[0]);
	struct log log = { 0 };
	struct td_batch batch;
	unsigned int i, calls;
	uint64_t id = 99;

	ASSERT_EQ(0, td_batch_init(self->ctx, &batch, 4));
	td_batch_set_callback(&batch, log_cb, &log);
	calls = fake.ioctl_calls;
	for (i = 0; i < nr; i++) {
		spec.reserved[i] = 1U << (i * 7);
		ASSERT_EQ(-EINVAL, td_arm(self->ctx, &spec, &id));
		ASSERT_EQ(-EINVAL, td_batch_arm(&batch, &spec, i));
		spec.reserved[i] = 0;
	}
	ASSERT_EQ(calls, fake.ioctl_calls);
	ASSERT_EQ(99, id);
	ASSERT_EQ(0, batch.nr);
	ASSERT_EQ(0, td_arm(self->ctx, &spec, &id));
	td_batch_free(&batch);
	ASSERT_EQ(0, log.nr);
}

/*
 * td_batch_init sets every field, whatever the caller's storage held: the
 * reserved room is zero, the private state allocated apart.
 */
TEST_F(fake, batch_init_sets_every_field)
{
	const unsigned int nr = sizeof(((struct td_batch *)0)->reserved) /
				sizeof(void *);
	struct log log = { 0 };
	struct td_batch batch;
	unsigned int i;

	memset(&batch, 0xa5, sizeof(batch));
	ASSERT_EQ(0, td_batch_init(self->ctx, &batch, 8));
	ASSERT_EQ(0, batch.nr);
	ASSERT_EQ(8, batch.capacity);
	ASSERT_EQ(0, batch.completed);
	ASSERT_EQ(0, batch.failed);
	ASSERT_NE(NULL, batch.state);
	for (i = 0; i < nr; i++)
		ASSERT_NULL(batch.reserved[i]);
	td_batch_set_callback(&batch, log_cb, &log);
	ASSERT_EQ(0, td_batch_cancel(&batch, 1, 5));
	td_batch_free(&batch);
	ASSERT_EQ(1, log.nr);
	ASSERT_EQ(-ECANCELED, log.c[0].result);
	ASSERT_NULL(batch.state);

	/* A failed init leaves the batch inert, whatever it held before. */
	memset(&batch, 0xa5, sizeof(batch));
	fake.alloc_fail = 1;
	ASSERT_EQ(-ENOMEM, td_batch_init(self->ctx, &batch, 8));
	ASSERT_NULL(batch.state);
	ASSERT_EQ(0, batch.capacity);
	ASSERT_EQ(-EINVAL, td_batch_flush(&batch));
	td_batch_set_callback(&batch, log_cb, &log);
	td_batch_free(&batch);
}

TEST(batch_needs_submit_feature)
{
	struct td_batch batch;
	struct td_ctx *ctx;

	fake.version.features &= ~QTIMER_FEAT_SUBMIT;
	ASSERT_EQ(0, td_open_path(&ctx, FAKE_PATH, 0));
	ASSERT_EQ(-ENOTSUP, td_batch_init(ctx, &batch, 8));
	td_close(ctx);
}

TEST_F(fake, batch_auto_flush)
{
	struct td_timer_spec spec = { .clockid = CLOCK_MONOTONIC,
				      .expires_ns = NSEC_PER_SEC };
	struct log log = { 0 };
	struct td_batch batch;
	unsigned int i, j;

	ASSERT_EQ(0, td_batch_init(self->ctx, &batch, 4));
	td_batch_set_callback(&batch, log_cb, &log);
	for (i = 0; i < 10; i++) {
		spec.cookie = i;
		ASSERT_EQ(0, td_batch_arm(&batch, &spec, 100 + i));
		/* Full arrays go out at once; the rest waits. */
		ASSERT_EQ((i + 1) / 4 * 4, log.nr);
		ASSERT_EQ((i + 1) % 4, batch.nr);
		ASSERT_EQ((i + 1) / 4, fake.submit_calls);
	}
	ASSERT_EQ(2, td_batch_flush(&batch));
	ASSERT_EQ(3, fake.submit_calls);
	ASSERT_EQ(0, td_batch_flush(&batch));	/* empty: no call */
	ASSERT_EQ(3, fake.submit_calls);
	ASSERT_EQ(10, log.nr);
	ASSERT_EQ(10, batch.completed);
	ASSERT_EQ(0, batch.failed);
	for (i = 0; i < 10; i++) {
		ASSERT_EQ(100 + i, log.c[i].user_data);
		ASSERT_EQ(QTIMER_OP_ARM, log.c[i].opcode);
		ASSERT_EQ(0, log.c[i].result);
		ASSERT_NE(0, log.c[i].id);
		for (j = 0; j < i; j++)
			ASSERT_NE(log.c[j].id, log.c[i].id);
	}
	ASSERT_EQ(10, fake_nr_live());
	td_batch_free(&batch);
	ASSERT_EQ(10, log.nr);	/* nothing was left to cancel */
}

TEST_F(fake, batch_per_op_results)
{
	struct td_timer_spec spec = { .clockid = CLOCK_MONOTONIC };
	struct log log = { 0 };
	struct td_batch batch;
	uint64_t id;

	ASSERT_EQ(0, td_arm(self->ctx, &spec, &id));
	ASSERT_EQ(0, td_batch_init(self->ctx, &batch, 16));
	td_batch_set_callback(&batch, log_cb, &log);
	ASSERT_EQ(0, td_batch_modify(&batch, id, 10, 0, 0, 0, 1));
	ASSERT_EQ(0, td_batch_cancel(&batch, id + 1000, 2));
	ASSERT_EQ(0, td_batch_cancel(&batch, id, 3));
	ASSERT_EQ(0, td_batch_modify(&batch, id, 10, 0, 0, 0, 4));
	spec.expires_ns = -5;
	ASSERT_EQ(0, td_batch_arm(&batch, &spec, 5));
	/* Rejected by the library: not queued, no completion. */
	ASSERT_EQ(-EINVAL, td_batch_modify(&batch, id, 10, 0, 0, 1U << 30, 6));
	ASSERT_EQ(-EINVAL, td_batch_modify(&batch, id, 10, 0, 0, TD_TIMER_CPU, 6));
	spec.cpu = -7;
	ASSERT_EQ(-EINVAL, td_batch_arm(&batch, &spec, 7));
	spec.cpu = 7;
	ASSERT_EQ(-EINVAL, td_batch_arm(&batch, &spec, 7));
	ASSERT_EQ(5, batch.nr);
	ASSERT_EQ(0, log.nr);

	ASSERT_EQ(5, td_batch_flush(&batch));
	ASSERT_EQ(5, log.nr);
	ASSERT_EQ(1, log.c[0].user_data);
	ASSERT_EQ(QTIMER_OP_MODIFY, log.c[0].opcode);
	ASSERT_EQ(QTIMER_CANCEL_ARMED, log.c[0].result);
	ASSERT_EQ(id, log.c[0].id);
	ASSERT_EQ(-ENOENT, log.c[1].result);
	ASSERT_EQ(id + 1000, log.c[1].id);
	ASSERT_EQ(QTIMER_OP_CANCEL, log.c[2].opcode);
	ASSERT_EQ(QTIMER_CANCEL_ARMED, log.c[2].result);
	ASSERT_EQ(-ENOENT, log.c[3].result);
	ASSERT_EQ(QTIMER_OP_ARM, log.c[4].opcode);
	ASSERT_EQ(-EINVAL, log.c[4].result);
	ASSERT_EQ(0, log.c[4].id);
	ASSERT_EQ(5, batch.completed);
	ASSERT_EQ(3, batch.failed);
	td_batch_free(&batch);
}

TEST_F(fake, batch_partial_submit_is_resumed)
{
	struct log log = { 0 };
	struct td_batch batch;
	unsigned int i;

	fake.submit_limit = 3;
	ASSERT_EQ(0, td_batch_init(self->ctx, &batch, 8));
	td_batch_set_callback(&batch, log_cb, &log);
	for (i = 0; i < 8; i++)
		ASSERT_EQ(0, td_batch_cancel(&batch, 5000 + i, i));
	/* 3 + 3 + 2 */
	ASSERT_EQ(3, fake.submit_calls);
	ASSERT_EQ(8, log.nr);
	for (i = 0; i < 8; i++) {
		ASSERT_EQ(i, log.c[i].user_data);
		ASSERT_EQ(-ENOENT, log.c[i].result);
	}
	td_batch_free(&batch);
}

TEST_F(fake, batch_failed_submit_completes_every_op)
{
	struct log log = { 0 };
	struct td_batch batch;
	unsigned int i;

	fake.submit_errno = EIO;
	ASSERT_EQ(0, td_batch_init(self->ctx, &batch, 4));
	td_batch_set_callback(&batch, log_cb, &log);
	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, td_batch_cancel(&batch, 1, i));
	errno = 1234;
	ASSERT_EQ(-EIO, td_batch_cancel(&batch, 1, 3));
	ASSERT_EQ(1234, errno);
	ASSERT_EQ(0, batch.nr);
	ASSERT_EQ(4, log.nr);
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(i, log.c[i].user_data);
		ASSERT_EQ(-EIO, log.c[i].result);
	}
	ASSERT_EQ(4, batch.failed);
	/* The batch stays usable. */
	fake.submit_errno = 0;
	ASSERT_EQ(0, td_batch_cancel(&batch, 1, 4));
	ASSERT_EQ(1, td_batch_flush(&batch));
	ASSERT_EQ(-ENOENT, log.c[4].result);
	td_batch_free(&batch);
}

TEST_F(fake, batch_free_cancels_queued_ops)
{
	struct log log = { 0 };
	struct td_batch batch;

	ASSERT_EQ(0, td_batch_init(self->ctx, &batch, 4));
	td_batch_set_callback(&batch, log_cb, &log);
	ASSERT_EQ(0, td_batch_cancel(&batch, 1, 7));
	ASSERT_EQ(0, td_batch_modify(&batch, 1, 0, 0, 0, 0, 8));
	td_batch_free(&batch);
	ASSERT_EQ(0, fake.submit_calls);
	ASSERT_EQ(2, log.nr);
	ASSERT_EQ(7, log.c[0].user_data);
	ASSERT_EQ(-ECANCELED, log.c[0].result);
	ASSERT_EQ(8, log.c[1].user_data);
	ASSERT_EQ(-ECANCELED, log.c[1].result);
}

static void reentrant_cb(const struct td_completion *c, void *arg)
{
	struct log *log = arg;

	log_cb(c, arg);
	log->reentry[0] = td_batch_cancel(log->batch, 1, 0);
	log->reentry[1] = td_batch_flush(log->batch);
}

TEST_F(fake, batch_callback_cannot_reenter)
{
	struct log log = { 0 };
	struct td_batch batch;

	ASSERT_EQ(0, td_batch_init(self->ctx, &batch, 2));
	log.batch = &batch;
	td_batch_set_callback(&batch, reentrant_cb, &log);
	ASSERT_EQ(0, td_batch_cancel(&batch, 1, 0));
	ASSERT_EQ(0, td_batch_cancel(&batch, 1, 1));
	ASSERT_EQ(2, log.nr);
	ASSERT_EQ(-EBUSY, log.reentry[0]);
	ASSERT_EQ(-EBUSY, log.reentry[1]);
	ASSERT_EQ(0, batch.nr);
	td_batch_free(&batch);
}

TEST_F(fake, batch_without_callback_counts)
{
	struct td_batch batch;
	unsigned int i;

	ASSERT_EQ(0, td_batch_init(self->ctx, &batch, 3));
	for (i = 0; i < 7; i++)
		ASSERT_EQ(0, td_batch_cancel(&batch, 1, i));
	ASSERT_EQ(1, td_batch_flush(&batch));
	ASSERT_EQ(7, batch.completed);
	ASSERT_EQ(7, batch.failed);
	td_batch_free(&batch);
}

TEST_HARNESS_MAIN
