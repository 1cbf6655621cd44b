// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * A SUBMIT chunk's timers and places under the per-user cap, taken ahead in
 * bulk and handed to its ARMs one by one.
 */

#include <linux/string.h>

#include "batch.h"
#include "user.h"

/*
 * Start a SUBMIT chunk with timers for its @nr_arm ARMs, zeroed (which
 * init_on_alloc does anyway, so an ARM need not clear its timer again), and
 * with their places under the per-user cap taken in one atomic op rather
 * than one per ARM.  Best effort: with the bulk allocation failed, each ARM
 * allocates its own timer, so that only an ARM whose own allocation fails
 * gets -ENOMEM; and a chunk that would cross the cap leaves each ARM to
 * count itself, so that exactly those beyond it get -EDQUOT.
 */
void qt_batch_begin(struct qt_ctx *ctx, struct qt_batch *batch,
		    unsigned int nr_arm)
{
	nr_arm = min_t(unsigned int, nr_arm, QT_BATCH_MAX);
	batch->nr = 0;
	batch->quota = 0;
	batch->shard = NULL;
	batch->delivery = false;
	batch->base = NULL;
	if (nr_arm < 2)
		return;
	batch->nr = qt_timers_alloc(nr_arm, batch->timers);
	if (qt_user_charge_n(ctx->user, nr_arm))
		batch->quota = nr_arm;
}

/*
 * End a chunk: let the lock go, free the timers no ARM took and give back
 * the places under the cap no ARM used.
 */
void qt_batch_end(struct qt_ctx *ctx, struct qt_batch *batch)
{
	qt_batch_drop(ctx, batch);
	if (batch->nr)
		qt_timers_free(batch->nr, (void **)batch->timers);
	batch->nr = 0;
	if (batch->quota)
		qt_user_uncharge_n(ctx->user, batch->quota);
	batch->quota = 0;
}

/* A zeroed timer. */
struct qt_timer *qt_batch_timer(struct qt_ctx *ctx, struct qt_batch *batch)
{
	if (batch->nr)
		return batch->timers[--batch->nr];
	qt_batch_drop(ctx, batch);
	return qt_timer_alloc(GFP_KERNEL | __GFP_ZERO);
}

/* A timer that an ARM did not use goes back where it came from. */
void qt_batch_timer_unused(struct qt_batch *batch, struct qt_timer *t)
{
	if (batch->nr < QT_BATCH_MAX) {
		memset(t, 0, sizeof(*t));
		batch->timers[batch->nr++] = t;
	} else {
		qt_timer_free(t);
	}
}

/* Count an ARM against the per-user cap, from the chunk's share if it has one. */
bool qt_batch_charge(struct qt_ctx *ctx, struct qt_batch *batch)
{
	if (batch->quota) {
		batch->quota--;
		return true;
	}
	return qt_user_charge_n(ctx->user, 1);
}

/*
 * An ARM that failed gives its place back, to the chunk's share, which the
 * next ARM may take (the place is within the cap, as it was counted) and
 * qt_batch_end() gives back otherwise.
 */
void qt_batch_uncharge(struct qt_ctx *ctx, struct qt_batch *batch)
{
	batch->quota++;
}
