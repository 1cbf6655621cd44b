// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * The end of a timer's life, which its owner reaches through the rules in
 * timer.h: letting it die or freeing it once no heap entry points at it,
 * taking its id away and giving its places under the caps back, and the
 * ended lists that read(), ring reaps and the expirer leave for
 * qt_end_ctx().  Below every file that ends timers (ops, read, ring,
 * expire, the SUBMIT batch and release), so that none of them calls up.
 */

#include <linux/sched.h>

#include "base.h"
#include "ctx.h"
#include "end.h"
#include "user.h"

/*
 * Whether no heap entry points at @t any more, so that only its owner, the
 * caller, can reach it (see nr_entries in timer.h).
 */
static bool qt_end_unreachable(struct qt_timer *t)
{
	/* Pairs with the release in qt_base_drop(), its last touch of @t. */
	return !smp_load_acquire(&t->nr_entries);
}

/*
 * Make @t DEAD: its owner is done with it.  *@held is the base the caller
 * holds locked, or NULL, and is swapped for @t's base if need be (see
 * qt_base_relock()); the caller unlocks it.  Returns true when nothing can
 * reach @t any more, for the caller to free it, which may wait until the
 * locks are dropped; otherwise the last stale heap entry dropped frees it.
 */
bool qt_end_let_die(struct qt_timer *t, struct qt_base **held)
{
	if (qt_end_unreachable(t))
		return true;
	*held = qt_base_relock(*held, t);
	t->state = QT_DEAD;
	return !t->nr_entries;
}

/* Free a GHOST or ORPHAN, now or once its last heap entry is dropped. */
void qt_end_free_when_unreferenced(struct qt_timer *t)
{
	struct qt_base *base = NULL;
	bool free = qt_end_let_die(t, &base);

	if (base)
		qt_base_unlock_carried(base);
	if (free)
		qt_timer_free(t);
}

/*
 * Count @nr more timers against the per-file cap, all or none; exact,
 * whatever the shards.
 */
bool qt_end_charge_n(struct qt_ctx *ctx, unsigned int nr)
{
	int n = atomic_read(&ctx->nr_timers);

	do {
		if ((unsigned long)n + nr > READ_ONCE(qt_max_timers_per_fd))
			return false;
	} while (!atomic_try_cmpxchg(&ctx->nr_timers, &n, n + nr));
	return true;
}

/* @nr timers gone: their places under the per-file and per-user caps. */
void qt_end_give_back(struct qt_ctx *ctx, unsigned int nr)
{
	atomic_sub(nr, &ctx->nr_timers);
	qt_user_uncharge_n(ctx->user, nr);
}

/*
 * Take @t's id away: from now on it names nothing.  Under its shard's
 * lock.  Its places under the caps go back now, or with @freed, counted
 * there for the caller to give back before it returns to user space (a
 * SUBMIT chunk does so once for all its CANCELs: qt_batch_end()).
 */
void qt_end_forget(struct qt_ctx *ctx, struct qt_timer *t, unsigned int *freed)
{
	struct qt_shard *shard = qt_ctx_shard_of(t);
	struct qt_table *table = qt_ctx_table(ctx);

	lockdep_assert_held(&shard->lock);
	/* Before the generation moves on: the slot still speaks of @t. */
	if (table)
		qt_table_forget(table, t, *qt_ids_gen(&shard->ids, t->slot) &
					  QT_ID_GEN_MASK);
	qt_ids_free(&shard->ids, t->slot);
	shard->nr_per_clock[qt_timer_user_clock(t)]--;
	if (t->flags & QT_TF_CANCEL_ON_SET)
		shard->nr_cancel_on_set--;
	if (freed)
		(*freed)++;
	else
		qt_end_give_back(ctx, 1);
}

/*
 * A read() or a ring reap, holding the delivery lock, consumed @t, a
 * one-shot or a cancellation: it is ENDED and waits on its shard's ended
 * list for qt_end_ctx() to free its id, which needs the shard's lock, which
 * comes before the delivery lock.  *@held is as for qt_end_let_die().
 */
void qt_end_timer(struct qt_timer *t, struct qt_base **held)
{
	struct qt_shard *shard = qt_ctx_shard_of(t);

	lockdep_assert_held(&t->ctx->wqh.lock);
	/* With a stale heap entry left, the heap side reads the state. */
	if (!qt_end_unreachable(t))
		*held = qt_base_relock(*held, t);
	t->state = QT_ENDED;
	t->next = shard->ended;
	WRITE_ONCE(shard->ended, t);
}

/* ENDED timers qt_end_shard_locked() handles per hold of the two locks. */
#define QT_END_CHUNK	256

/*
 * Free the ids of up to *@budget (at most QT_END_CHUNK) of @shard's ENDED
 * timers, taking them off *@budget, and the timers, now or at their last
 * heap entry: those nothing reaches any more go on @dead, linked by ->next,
 * for the caller to free.  Under the shard's and the delivery lock.  The
 * list is the shard's, not one ender's: a read() ends what it consumed only
 * every QT_READ_END_EVERY records and before it sleeps or returns, so each
 * read() parked mid-copy (by a page fault) leaves up to that many on it,
 * and all of them in one hold, interrupts off, was a length the file's
 * owner chose.
 *
 * Return: true when ENDED timers are left for another hold.
 */
static bool qt_end_shard_locked(struct qt_ctx *ctx, struct qt_shard *shard,
				struct qt_timer **dead, unsigned int *budget)
{
	struct qt_base *base = NULL;
	struct qt_timer *t, *ended = shard->ended;
	unsigned int freed = 0, n = min_t(unsigned int, *budget, QT_END_CHUNK);

	lockdep_assert_held(&shard->lock);
	lockdep_assert_held(&ctx->wqh.lock);
	for (; (t = ended) && n; n--, (*budget)--) {
		ended = t->next;
		qt_end_forget(ctx, t, &freed);
		if (qt_end_let_die(t, &base)) {
			t->next = *dead;
			*dead = t;
		}
	}
	WRITE_ONCE(shard->ended, ended);
	if (base)
		qt_base_unlock_carried(base);
	/*
	 * In one go, but under the lock: an expirer may end timers of a file
	 * being released, which drops its hold on ctx->user only after it
	 * had this lock.
	 */
	if (freed)
		qt_end_give_back(ctx, freed);
	return ended;
}

/*
 * End what waits on @ctx's shards: all of it, a chunk per hold with a
 * rescheduling point between (@resched), or at most QT_END_CHUNK in all.
 */
static void __qt_end_ctx(struct qt_ctx *ctx, struct qt_timer **dead,
			 bool resched, unsigned int *left)
{
	unsigned int i, budget = left ? min_t(unsigned int, *left, QT_END_CHUNK) :
					QT_END_CHUNK, given = budget;
	unsigned long flags;
	bool more;

	/* The ended that die join @dead, freed in bulk. */
	for (i = 0; i < ctx->nr_shards && (resched || budget); i++) {
		struct qt_shard *shard = &ctx->shards[i];

		/* Racy peek: another ender may have taken them meanwhile. */
		if (!READ_ONCE(shard->ended))
			continue;
		for (;;) {
			if (resched)
				budget = QT_END_CHUNK;
			spin_lock_irqsave(&shard->lock, flags);
			spin_lock(&ctx->wqh.lock);
			more = qt_end_shard_locked(ctx, shard, dead, &budget);
			spin_unlock(&ctx->wqh.lock);
			spin_unlock_irqrestore(&shard->lock, flags);
			/* Left over only when the budget ran out. */
			if (!more || !resched)
				break;
			/* Freed a chunk at a time too. */
			qt_timer_free_list(*dead);
			*dead = NULL;
			cond_resched();
		}
	}
	qt_timer_free_list(*dead);
	*dead = NULL;
	if (left)
		*left -= given - budget;
}

/*
 * End what read() or a ring reap consumed (qt_end_timer()), and free the
 * timers it let die on *@dead (qt_end_let_die()), which it empties:
 * called by the ender once it dropped the delivery lock, before returning
 * to user space, so that a consumed one-shot's id and place under the caps
 * are free when its record is.  Process context: the ended list may be
 * long (see qt_end_shard_locked()), so it lets others run between chunks.
 */
void qt_end_ctx(struct qt_ctx *ctx, struct qt_timer **dead)
{
	__qt_end_ctx(ctx, dead, true, NULL);
}

/*
 * The same for an expirer, within its RCU read section, in any context, but
 * at most QT_END_CHUNK in all, and no more than *@budget, which it takes
 * what it ended off: it may run in softirq, where nothing can preempt it,
 * and a shard's ended list may be long (parked read()s of a file that then
 * set up a ring).  What is left waits for the next delivery or for the
 * file's drain, poll(), read() or release (qt_end_ctx()).
 */
void qt_end_ctx_atomic(struct qt_ctx *ctx, struct qt_timer **dead,
		       unsigned int *budget)
{
	__qt_end_ctx(ctx, dead, false, budget);
}
