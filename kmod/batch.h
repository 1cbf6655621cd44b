/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * Lock carrying for a SUBMIT chunk: the ops of a chunk share the context
 * lock, a base lock, timers allocated ahead and places under the per-user
 * cap.  An op calls these with the chunk's batch, or with NULL when it is a
 * single ioctl and locks for itself.
 *
 * The vocabulary: an op *locks* and *unlocks* as if it were alone (a chunk
 * then keeps the lock for its next op); it *drops* the lock, with whatever
 * base lock it holds, when it is about to sleep; and it *drops what the
 * chunk carries* when it is about to sleep before taking the lock itself.
 */
#ifndef _QT_BATCH_H
#define _QT_BATCH_H

#include <linux/spinlock.h>

#include "base.h"
#include "ctx.h"

/*
 * What a SUBMIT chunk carries from one op to the next: timers allocated
 * ahead in bulk for its ARMs (one slab call and memcg charge per chunk
 * instead of one per timer), their places under the per-user cap (one
 * atomic op instead of one per timer), the context lock and the last base
 * lock an op took.  Each op takes the context lock if the chunk does not
 * hold it yet and leaves it held for the next op; an op that must sleep (to
 * allocate or grow something) drops it first.  So a chunk pays for one
 * irq-off lock round trip instead of one per op, and holds interrupts off
 * for at most a chunk's worth of ops.  The base lock goes the same way
 * (ARMs from one CPU share its base, and timers armed together share one),
 * but is given up before any other base's is taken, so that a chunk never
 * holds two.  The single ioctls pass no batch: their op locks and unlocks
 * for itself.
 */
#define QT_BATCH_MAX		16

struct qt_batch {
	unsigned int nr;		/* timers[] left */
	unsigned int quota;		/* ARMs counted under the user cap ahead */
	bool locked;			/* holds ctx->wqh.lock */
	struct qt_base *base;		/* locked too, or NULL; only if locked */
	struct qt_timer *timers[QT_BATCH_MAX];
};

void qt_batch_begin(struct qt_ctx *ctx, struct qt_batch *batch,
		    unsigned int nr_arm);
void qt_batch_end(struct qt_ctx *ctx, struct qt_batch *batch);
struct qt_timer *qt_batch_timer(struct qt_ctx *ctx, struct qt_batch *batch);
void qt_batch_timer_unused(struct qt_batch *batch, struct qt_timer *t);
bool qt_batch_charge(struct qt_ctx *ctx, struct qt_batch *batch);
void qt_batch_uncharge(struct qt_ctx *ctx, struct qt_batch *batch);

/*
 * An op's lock: a batch's if it holds it already.  (__acquire() and
 * __release() tell sparse that each op takes and gives up the lock once,
 * as far as the op is concerned.)
 */
static inline void qt_batch_lock(struct qt_ctx *ctx, struct qt_batch *batch)
	__acquires(&ctx->wqh.lock)
{
	if (batch && batch->locked) {
		lockdep_assert_held(&ctx->wqh.lock);
		__acquire(&ctx->wqh.lock);
		return;
	}
	spin_lock_irq(&ctx->wqh.lock);
	if (batch)
		batch->locked = true;
}

/* The op is done with the lock: a batch keeps it for its next op. */
static inline void qt_batch_unlock(struct qt_ctx *ctx, struct qt_batch *batch)
	__releases(&ctx->wqh.lock)
{
	if (!batch)
		spin_unlock_irq(&ctx->wqh.lock);
	else
		__release(&ctx->wqh.lock);
}

/* Before an op takes base locks its own way, or wants none held. */
static inline void qt_batch_drop_base(struct qt_batch *batch)
{
	if (batch && batch->base) {
		qt_base_unlock_carried(batch->base);
		batch->base = NULL;
	}
}

/* The op, holding the lock, is about to sleep. */
static inline void qt_batch_drop(struct qt_ctx *ctx, struct qt_batch *batch)
	__releases(&ctx->wqh.lock)
{
	qt_batch_drop_base(batch);
	spin_unlock_irq(&ctx->wqh.lock);
	if (batch)
		batch->locked = false;
}

/* The op, before taking the lock, is about to sleep. */
static inline void qt_batch_drop_carried(struct qt_ctx *ctx, struct qt_batch *batch)
{
	if (batch && batch->locked) {
		__acquire(&ctx->wqh.lock);
		qt_batch_drop(ctx, batch);
	}
}

/*
 * An op's base lock, taken under the context lock: @base, or with
 * qt_batch_lock_timer() @t's.  A batch keeps it for its next op (see struct
 * qt_batch), giving up the one it held first if that is another;
 * qt_batch_unlock_base() then leaves it held, and qt_batch_drop_base() (also
 * called by qt_batch_drop()) lets it go.
 */
static inline struct qt_base *qt_batch_lock_base(struct qt_batch *batch,
						 struct qt_base *base)
	__acquires(&base->lock)
{
	if (!batch) {
		spin_lock(&base->lock);
		return base;
	}
	if (batch->base == base) {
		__acquire(&base->lock);
		return base;
	}
	qt_batch_drop_base(batch);
	spin_lock(&base->lock);
	batch->base = base;
	return base;
}

static inline struct qt_base *qt_batch_lock_timer(struct qt_batch *batch,
						  struct qt_timer *t)
	__acquires(&qt_base_of(t)->lock)
{
	if (!batch)
		return qt_base_lock_timer(t);
	batch->base = qt_base_relock(batch->base, t);
	__acquire(&batch->base->lock);
	return batch->base;
}

static inline void qt_batch_unlock_base(struct qt_batch *batch,
					struct qt_base *base)
	__releases(&base->lock)
{
	if (!batch)
		spin_unlock(&base->lock);
	else
		__release(&base->lock);
}

#endif /* _QT_BATCH_H */
