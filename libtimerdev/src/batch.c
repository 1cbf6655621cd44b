// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * Batches: ops queue in an array of struct qtimer_op that QTIMER_IOC_SUBMIT
 * runs in one call, when the array fills up or on td_batch_flush().  Since a
 * flush can happen inside any td_batch_arm/cancel/modify call, the caller
 * learns each op's outcome through the completion callback, keyed by the
 * user_data it gave; every queued op is completed exactly once, whether the
 * kernel ran it, rejected it, or it was never submitted (-ECANCELED).
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/*
 * What struct td_batch keeps private, behind its state pointer: it may
 * grow without changing the size of the struct the caller allocates.
 */
struct td_batch_state {
	struct td_ctx *ctx;
	struct qtimer_op *ops;		/* capacity of them */
	uint64_t *user_data;		/* one per op */
	td_completion_cb cb;
	void *cb_arg;
	bool flushing;			/* submitting, or completing in free */
};

static void td_batch_state_free(struct td_batch_state *st)
{
	if (!st)
		return;
	free(st->ops);
	free(st->user_data);
	free(st);
}

TD_EXPORT int td_batch_init(struct td_ctx *ctx, struct td_batch *batch,
			    unsigned int capacity)
{
	struct td_batch_state *st;
	int saved = errno;

	if (!batch)
		return -EINVAL;
	memset(batch, 0, sizeof(*batch));
	if (!ctx)
		return -EINVAL;
	if (!(ctx->version.features & QTIMER_FEAT_SUBMIT))
		return -ENOTSUP;
	if (!capacity || capacity > ctx->version.submit_max)
		return -EINVAL;

	st = calloc(1, sizeof(*st));
	if (st) {
		st->ops = calloc(capacity, sizeof(*st->ops));
		st->user_data = calloc(capacity, sizeof(*st->user_data));
	}
	if (!st || !st->ops || !st->user_data) {
		td_batch_state_free(st);
		errno = saved;
		return -ENOMEM;
	}
	st->ctx = ctx;
	batch->state = st;
	batch->capacity = capacity;
	return 0;
}

TD_EXPORT void td_batch_set_callback(struct td_batch *batch,
				     td_completion_cb cb, void *arg)
{
	if (!batch || !batch->state)
		return;
	batch->state->cb = cb;
	batch->state->cb_arg = arg;
}

static void td_batch_complete(struct td_batch *batch, unsigned int idx,
			      int result)
{
	struct td_batch_state *st = batch->state;
	const struct qtimer_op *op = &st->ops[idx];
	struct td_completion completion = {
		.user_data = st->user_data[idx],
		.id = result < 0 && op->opcode == QTIMER_OP_ARM ? 0 : op->id,
		.opcode = op->opcode,
		.result = result,
	};

	batch->completed++;
	if (result < 0)
		batch->failed++;
	if (st->cb)
		st->cb(&completion, st->cb_arg);
}

/*
 * After ops [start, end) ran: note the ids their arms got, for the timer
 * table, and arm again, one by one, those that failed for a cap, if
 * cancelling the timers the context stopped through the table freed places
 * (see table.c).
 */
static void td_batch_rearm(struct td_batch_state *st, unsigned int start,
			   unsigned int end)
{
	bool reclaimed = false, tried = false;
	unsigned int i;

	for (i = start; i < end; i++) {
		struct qtimer_op *op = &st->ops[i];
		int ret;

		if (op->opcode != QTIMER_OP_ARM)
			continue;
		if (td_table_cap_error(st->ctx, op->result)) {
			if (!tried) {
				reclaimed = td_table_reclaim(st->ctx);
				tried = true;
			}
			if (reclaimed) {
				ret = td_sys_ioctl(st->ctx->fd, QTIMER_IOC_ARM, op);
				op->result = ret < 0 ? ret : 0;
			}
		}
		if (!op->result)
			td_table_note(st->ctx, op->id);
	}
}

/*
 * Submit ops [0, nr) and complete each of them.  The kernel may process
 * fewer than asked (it stops at a fault); the rest are submitted again, so
 * only a failing call leaves ops unrun, and those complete with its error.
 */
static int td_batch_submit(struct td_batch *batch)
{
	struct td_batch_state *st = batch->state;
	unsigned int nr = batch->nr, start = 0, i;
	int ret = 0;

	st->flushing = true;
	while (start < nr) {
		struct qtimer_submit submit = {
			.ops = (uintptr_t)&st->ops[start],
			.nr = nr - start,
		};

		ret = td_sys_ioctl(st->ctx->fd, QTIMER_IOC_SUBMIT, &submit);
		if (ret == 0 || ret > (int)(nr - start))
			ret = -EPROTO;	/* the kernel broke its own contract */
		if (ret < 0)
			break;
		td_batch_rearm(st, start, start + (unsigned int)ret);
		for (i = start; i < start + (unsigned int)ret; i++)
			td_batch_complete(batch, i, st->ops[i].result);
		start += ret;
	}
	for (i = start; i < nr; i++)
		td_batch_complete(batch, i, ret);
	batch->nr = 0;
	st->flushing = false;
	return ret < 0 ? ret : (int)nr;
}

TD_EXPORT int td_batch_flush(struct td_batch *batch)
{
	if (!batch || !batch->state)
		return -EINVAL;
	if (batch->state->flushing)
		return -EBUSY;
	if (!batch->nr)
		return 0;
	return td_batch_submit(batch);
}

/* 0 when batch may take an op: set up, and not in the middle of a flush. */
static int td_batch_usable(const struct td_batch *batch)
{
	if (!batch || !batch->state)
		return -EINVAL;
	return batch->state->flushing ? -EBUSY : 0;
}

/* Queue op; a full array is submitted at once. */
static int td_batch_queue(struct td_batch *batch, const struct qtimer_op *op,
			  uint64_t user_data)
{
	struct td_batch_state *st = batch->state;
	int ret;

	st->ops[batch->nr] = *op;
	st->user_data[batch->nr++] = user_data;
	if (batch->nr < batch->capacity)
		return 0;
	ret = td_batch_submit(batch);
	return ret < 0 ? ret : 0;
}

/*
 * The ops are built as the single calls build theirs (timer.c), once the
 * batch is known to take them: a batch busy flushing says -EBUSY before
 * anything is said about the op.
 */
TD_EXPORT int td_batch_arm(struct td_batch *batch,
			   const struct td_timer_spec *spec, uint64_t user_data)
{
	struct qtimer_op op;
	int ret = td_batch_usable(batch);

	if (!ret)
		ret = td_op_from_spec(&op, spec);
	return ret ? ret : td_batch_queue(batch, &op, user_data);
}

TD_EXPORT int td_batch_cancel(struct td_batch *batch, uint64_t id,
			      uint64_t user_data)
{
	struct qtimer_op op = { .opcode = QTIMER_OP_CANCEL, .id = id };
	int ret = td_batch_usable(batch);

	return ret ? ret : td_batch_queue(batch, &op, user_data);
}

TD_EXPORT int td_batch_modify(struct td_batch *batch, uint64_t id,
			      int64_t expires_ns, uint64_t period_ns,
			      uint64_t slack_ns, unsigned int flags,
			      uint64_t user_data)
{
	struct qtimer_op op;
	int ret = td_batch_usable(batch);

	if (!ret)
		ret = td_op_modify(&op, id, expires_ns, period_ns, slack_ns,
				   flags);
	return ret ? ret : td_batch_queue(batch, &op, user_data);
}

TD_EXPORT void td_batch_free(struct td_batch *batch)
{
	unsigned int i;

	if (!batch || !batch->state)
		return;
	/* Not submitted: say so rather than drop them silently. */
	batch->state->flushing = true;
	for (i = 0; i < batch->nr; i++)
		td_batch_complete(batch, i, -ECANCELED);
	td_batch_state_free(batch->state);
	memset(batch, 0, sizeof(*batch));
}
