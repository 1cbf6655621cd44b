/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * Lock carrying for a SUBMIT chunk: the ops of a chunk share the shard
 * lock, a base lock, timers allocated ahead and places under the per-user
 * cap.  An op calls these with the chunk's batch; a single ioctl runs as a
 * chunk of one.
 *
 * The vocabulary: an op *locks* what it needs (a chunk then keeps it for
 * its next op); it *drops* every lock the chunk carries when it is about
 * to sleep.
 */
#ifndef _QT_BATCH_H
#define _QT_BATCH_H

#include <linux/spinlock.h>

#include "base.h"
#include "ctx.h"

/*
 * What a SUBMIT chunk carries from one op to the next: timers allocated
 * ahead in bulk for its ARMs (one slab call and memcg charge per chunk
 * instead of one per timer), their places under the per-user and per-file
 * caps (one atomic op each instead of one per timer), the places its
 * CANCELs freed, given back together at its end (or first taken by its
 * ARMs), so that threads sharing a file do not pass the cache lines of its
 * counters around once per timer, the shard lock and the last base
 * lock an op took, and the delivery lock if an op needed it.  Each op takes
 * the shard lock it needs if the chunk does not hold it yet and leaves it
 * held for the next op; an op that must sleep (to allocate or grow
 * something) drops it first.  So a chunk pays for one irq-off lock round
 * trip instead of one per op, and holds interrupts off for at most a
 * chunk's worth of ops.  The base lock goes the same way (ARMs from one CPU
 * share its base, and timers armed together share one), but is given up
 * before any other base's is taken, so that a chunk never holds two.  The
 * single ioctls pass no batch: their op locks and unlocks for itself.
 */
#define QT_BATCH_MAX		16

struct qt_batch {
	unsigned int nr;		/* timers[] left */
	unsigned int quota;		/* ARMs counted under the user cap ahead */
	unsigned int fd_quota;		/* the same under the per-file cap */
	unsigned int freed;		/* places under both caps to give back */
	struct qt_shard *shard;		/* locked, or NULL */
	bool delivery;			/* holds ctx->wqh.lock too; only with shard */
	struct qt_base *base;		/* locked too, or NULL; only with shard */
	struct qt_timer *timers[QT_BATCH_MAX];
};

void qt_batch_begin(struct qt_ctx *ctx, struct qt_batch *batch,
		    unsigned int nr_arm);
void qt_batch_end(struct qt_ctx *ctx, struct qt_batch *batch);
struct qt_timer *qt_batch_timer(struct qt_ctx *ctx, struct qt_batch *batch);
void qt_batch_timer_unused(struct qt_batch *batch, struct qt_timer *t);
bool qt_batch_charge(struct qt_ctx *ctx, struct qt_batch *batch);
void qt_batch_uncharge(struct qt_ctx *ctx, struct qt_batch *batch);
bool qt_batch_charge_fd(struct qt_ctx *ctx, struct qt_batch *batch);
void qt_batch_uncharge_fd(struct qt_batch *batch);

/*
 * The locks an op holds are carried in a batch, or for a single ioctl in a
 * batch of the op's own on its stack (qt_ioctl_op_run_alone()), so that
 * the op code has one path.  sparse cannot follow locks carried in a
 * structure: the helpers below keep them out of its count.
 */

/* Before an op takes base locks its own way, or wants none held. */
static inline void qt_batch_drop_base(struct qt_batch *batch)
{
	if (batch->base) {
		qt_base_unlock_carried(batch->base);
		batch->base = NULL;
	}
}

/* An op is done with the delivery lock (and the base lock under it). */
static inline void qt_batch_drop_delivery(struct qt_ctx *ctx,
					  struct qt_batch *batch)
{
	if (batch->delivery) {
		qt_batch_drop_base(batch);
		__acquire(&ctx->wqh.lock);
		spin_unlock(&ctx->wqh.lock);
		batch->delivery = false;
	}
}

/* The op is about to sleep, or is done: every lock goes. */
static inline void qt_batch_drop(struct qt_ctx *ctx, struct qt_batch *batch)
{
	qt_batch_drop_base(batch);
	qt_batch_drop_delivery(ctx, batch);
	if (batch->shard) {
		__acquire(&batch->shard->lock);
		spin_unlock_irq(&batch->shard->lock);
		batch->shard = NULL;
	}
}

/* An op's shard lock: the batch's if it holds it already. */
static inline void qt_batch_lock(struct qt_ctx *ctx, struct qt_batch *batch,
				 struct qt_shard *shard)
{
	if (batch->shard == shard)
		return;
	qt_batch_drop(ctx, batch);
	spin_lock_irq(&shard->lock);
	__release(&shard->lock);	/* carried */
	batch->shard = shard;
}

/*
 * The delivery lock, under the shard lock: a base lock held is given up
 * first, as the delivery lock comes before it.
 */
static inline void qt_batch_lock_delivery(struct qt_ctx *ctx,
					  struct qt_batch *batch)
{
	if (batch->delivery)
		return;
	qt_batch_drop_base(batch);
	spin_lock(&ctx->wqh.lock);
	__release(&ctx->wqh.lock);	/* carried */
	batch->delivery = true;
}

/*
 * An op's base lock, taken under the shard lock: @base, or with
 * qt_batch_lock_timer() @t's.  A batch keeps it for its next op (see struct
 * qt_batch), giving up the one it held first if that is another;
 * qt_batch_drop_base() (also called by qt_batch_drop()) lets it go.
 */
static inline struct qt_base *qt_batch_lock_base(struct qt_batch *batch,
						 struct qt_base *base)
{
	if (batch->base == base)
		return base;
	qt_batch_drop_base(batch);
	spin_lock(&base->lock);
	__release(&base->lock);		/* carried */
	batch->base = base;
	return base;
}

static inline struct qt_base *qt_batch_lock_timer(struct qt_batch *batch,
						  struct qt_timer *t)
{
	batch->base = qt_base_relock(batch->base, t);
	return batch->base;
}

#endif /* _QT_BATCH_H */
