// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * A SUBMIT chunk's timers and places under the per-user and per-file caps,
 * taken ahead in bulk and handed to its ARMs one by one, and the places its
 * CANCELs freed, given back in bulk.
 */

#include <linux/string.h>

#include "batch.h"
#include "end.h"
#include "user.h"

/*
 * Start a SUBMIT chunk with timers for its @nr_arm ARMs, zeroed (which
 * init_on_alloc does anyway, so an ARM need not clear its timer again), and
 * with their places under the per-user and per-file caps taken in one
 * atomic op each rather than one per ARM.  Best effort: with the bulk
 * allocation failed, each ARM allocates its own timer, so that only an ARM
 * whose own allocation fails gets -ENOMEM; and a chunk that would cross a
 * cap leaves each ARM to count itself, so that exactly those beyond it get
 * -EDQUOT or -ENOSPC.
 */
void qt_batch_begin(struct qt_ctx *ctx, struct qt_batch *batch,
		    unsigned int nr_arm)
{
	nr_arm = min_t(unsigned int, nr_arm, QT_BATCH_MAX);
	batch->nr = 0;
	batch->quota = 0;
	batch->fd_quota = 0;
	batch->freed = 0;
	batch->shard = NULL;
	batch->delivery = false;
	batch->base = NULL;
	if (nr_arm < 2)
		return;
	batch->nr = qt_timer_alloc_bulk(nr_arm, batch->timers);
	if (qt_user_charge_n(ctx->user, nr_arm))
		batch->quota = nr_arm;
	if (qt_end_charge_n(ctx, nr_arm))
		batch->fd_quota = nr_arm;
}

/*
 * End a chunk: let the lock go, free the timers no ARM took and give back
 * the places under the caps no ARM used and those its CANCELs freed.
 */
void qt_batch_end(struct qt_ctx *ctx, struct qt_batch *batch)
{
	qt_batch_drop(ctx, batch);
	if (batch->nr)
		qt_timer_free_bulk(batch->nr, (void **)batch->timers);
	batch->nr = 0;
	if (batch->quota)
		qt_user_uncharge_n(ctx->user, batch->quota);
	batch->quota = 0;
	if (batch->fd_quota)
		atomic_sub(batch->fd_quota, &ctx->nr_timers);
	batch->fd_quota = 0;
	if (batch->freed)
		qt_end_give_back(ctx, batch->freed);
	batch->freed = 0;
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

/*
 * Take one place under a cap from the chunk's share of it, @share, or from
 * a place an earlier CANCEL of the chunk freed: that one holds a place under
 * the other cap too, which moves to that cap's share, @other.
 */
static bool qt_batch_take(struct qt_batch *batch, unsigned int *share,
			  unsigned int *other)
{
	if (*share) {
		(*share)--;
		return true;
	}
	if (batch->freed) {
		batch->freed--;
		(*other)++;
		return true;
	}
	return false;
}

/* Count an ARM against the per-user cap, from the chunk first. */
bool qt_batch_charge(struct qt_ctx *ctx, struct qt_batch *batch)
{
	return qt_batch_take(batch, &batch->quota, &batch->fd_quota) ||
	       qt_user_charge_n(ctx->user, 1);
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

/* The same against the per-file cap. */
bool qt_batch_charge_fd(struct qt_ctx *ctx, struct qt_batch *batch)
{
	return qt_batch_take(batch, &batch->fd_quota, &batch->quota) ||
	       qt_end_charge_n(ctx, 1);
}

/* An ARM that failed gives its place under the per-file cap back, as above. */
void qt_batch_uncharge_fd(struct qt_batch *batch)
{
	batch->fd_quota++;
}
