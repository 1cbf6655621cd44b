// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * libtimerdev against the real module, batches: td_batch_init's bounds,
 * automatic flushes, a result per op (a failed op does not stop the
 * others), MODIFY in a batch, and what td_batch_free completes unsubmitted
 * (see device_harness.h for what every libtimerdev_*_test shares).
 */
#include "device_harness.h"

/* ---- batches ---- */

struct results {
	unsigned int nr;
	unsigned int bad_order;
	uint64_t ids[4096];
	int res[4096];
};

static void results_cb(const struct td_completion *c, void *arg)
{
	struct results *r = arg;

	/* user_data is the op's sequence number: completions come in order. */
	if (c->user_data != r->nr || r->nr >= 4096) {
		r->bad_order++;
		return;
	}
	r->ids[r->nr] = c->id;
	r->res[r->nr] = c->result;
	r->nr++;
}

/* *rp: a new struct results, where the ops of a new batch on ctx complete. */
static int results_batch(struct td_ctx *ctx, struct td_batch *batch,
			 unsigned int capacity, struct results **rp)
{
	struct results *r = calloc(1, sizeof(*r));
	int ret;

	if (!r)
		return -ENOMEM;
	ret = td_batch_init(ctx, batch, capacity);
	if (ret) {
		free(r);
		return ret;
	}
	td_batch_set_callback(batch, results_cb, r);
	*rp = r;
	return 0;
}

TEST_F(qt, batch_init_bad_capacity)
{
	struct td_batch batch;

	ASSERT_EQ(-EINVAL, td_batch_init(self->ctx, &batch, 0));
	ASSERT_EQ(-EINVAL, td_batch_init(self->ctx, &batch, QTIMER_SUBMIT_MAX + 1));
}

/* 1000 arms through a 64-op batch: 15 automatic flushes, then one more. */
TEST_F(qt, batch_auto_flush)
{
	struct td_timer_spec spec = mono(FAR, 0);
	struct td_batch batch;
	struct results *r;
	unsigned int i;

	ASSERT_EQ(0, results_batch(self->ctx, &batch, 64, &r));
	for (i = 0; i < 1000; i++) {
		spec.cookie = i;
		ASSERT_EQ(0, td_batch_arm(&batch, &spec, i));
		ASSERT_EQ((i + 1) / 64 * 64, r->nr);
	}
	ASSERT_EQ(1000 % 64, td_batch_flush(&batch));
	ASSERT_EQ(1000, r->nr);
	ASSERT_EQ(0, r->bad_order);
	ASSERT_EQ(1000, batch.completed);
	ASSERT_EQ(0, batch.failed);

	/* Every id works in a single call, and cancelling them in a batch. */
	ASSERT_EQ(QTIMER_CANCEL_ARMED, td_cancel(self->ctx, r->ids[999]));
	for (i = 0; i < 999; i++)
		ASSERT_EQ(0, td_batch_cancel(&batch, r->ids[i], 1000 + i));
	ASSERT_EQ(999 % 64, td_batch_flush(&batch));
	ASSERT_EQ(1999, r->nr);
	for (i = 1000; i < 1999; i++)
		ASSERT_EQ(QTIMER_CANCEL_ARMED, r->res[i]);
	ASSERT_EQ(0, batch.failed);
	td_batch_free(&batch);
	free(r);
}

/* Each op gets its own result; a failed op does not stop the others. */
TEST_F(qt, batch_per_op_errors)
{
	struct td_timer_spec spec = mono(FAR, 0);
	struct td_batch batch;
	struct results *r;
	uint64_t id;

	ASSERT_EQ(0, td_arm(self->ctx, &spec, &id));
	ASSERT_EQ(0, results_batch(self->ctx, &batch, 16, &r));
	ASSERT_EQ(0, td_batch_cancel(&batch, id + 1, 0));	/* ENOENT */
	spec.clockid = CLOCK_THREAD_CPUTIME_ID;
	ASSERT_EQ(0, td_batch_arm(&batch, &spec, 1));		/* EINVAL */
	ASSERT_EQ(0, td_batch_modify(&batch, id, -5, 0, 0, 0, 2)); /* EINVAL */
	ASSERT_EQ(0, td_batch_modify(&batch, id, FAR, 0, 0, 0, 3));
	ASSERT_EQ(0, td_batch_cancel(&batch, id, 4));
	ASSERT_EQ(0, td_batch_cancel(&batch, id, 5));		/* ENOENT */
	ASSERT_EQ(6, td_batch_flush(&batch));
	ASSERT_EQ(6, r->nr);
	ASSERT_EQ(0, r->bad_order);
	ASSERT_EQ(-ENOENT, r->res[0]);
	ASSERT_EQ(-EINVAL, r->res[1]);
	ASSERT_EQ(0, r->ids[1]);
	ASSERT_EQ(-EINVAL, r->res[2]);
	ASSERT_EQ(QTIMER_CANCEL_ARMED, r->res[3]);
	ASSERT_EQ(QTIMER_CANCEL_ARMED, r->res[4]);
	ASSERT_EQ(-ENOENT, r->res[5]);
	ASSERT_EQ(4, batch.failed);
	td_batch_free(&batch);
	free(r);
}

/*
 * MODIFY through a batch: of 200 far timers, the even ones are pulled in
 * to fire soon; exactly those fire, the odd ones are still armed.
 */
TEST_F(qt, batch_modify_selects_what_fires)
{
	struct td_timer_spec spec = mono(FAR, 0);
	struct qtimer_record rec;
	struct tally t = { 0 };
	struct td_batch batch;
	struct results *r;
	uint64_t ids[200];
	unsigned int i;

	for (i = 0; i < 200; i++) {
		spec.cookie = i;
		ASSERT_EQ(0, td_arm(self->ctx, &spec, &ids[i]));
	}
	ASSERT_EQ(0, results_batch(self->ctx, &batch, 32, &r));
	for (i = 0; i < 200; i += 2)
		ASSERT_EQ(0, td_batch_modify(&batch, ids[i], 10 * NSEC_PER_MSEC, 0, 0, 0,
					     i / 2));
	ASSERT_EQ(100 % 32, td_batch_flush(&batch));
	ASSERT_EQ(100, r->nr);
	ASSERT_EQ(0, batch.failed);
	while (t.nr < 100) {
		ASSERT_EQ(1, t_wait_readable(td_fd(self->ctx), PATIENCE_MS));
		ASSERT_GT(td_dispatch(self->ctx, tally_cb, &t, 1000), 0);
	}
	/* And nothing else fires. */
	ASSERT_EQ(-ETIME, td_wait(self->ctx, &rec, 1, 100 * NSEC_PER_MSEC));
	ASSERT_EQ(0, t.bad);
	for (i = 0; i < 200; i++)
		ASSERT_EQ(!(i & 1), t.per_cookie[i]);
	for (i = 1; i < 200; i += 2)
		ASSERT_EQ(QTIMER_CANCEL_ARMED, td_cancel(self->ctx, ids[i]));
	td_batch_free(&batch);
	free(r);
}

/* Unsubmitted ops are completed with -ECANCELED by td_batch_free. */
TEST_F(qt, batch_free_reports_unsubmitted)
{
	struct td_timer_spec spec = mono(FAR, 0);
	struct qtimer_record rec;
	struct td_batch batch;
	struct results *r;

	ASSERT_EQ(0, results_batch(self->ctx, &batch, 8, &r));
	spec.expires_ns = NSEC_PER_MSEC;
	ASSERT_EQ(0, td_batch_arm(&batch, &spec, 0));
	td_batch_free(&batch);
	ASSERT_EQ(1, r->nr);
	ASSERT_EQ(-ECANCELED, r->res[0]);
	/* It really was never armed. */
	ASSERT_EQ(-ETIME, td_wait(self->ctx, &rec, 1, 50 * NSEC_PER_MSEC));
	free(r);
}

TEST_HARNESS_MAIN
