// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * The per-file timer context: created by open(), torn down by the last
 * close(), shown in fdinfo; and the end of a timer's life, which its owner
 * reaches through the rules in timer.h.  ops.c arms, cancels and modifies
 * its timers, read.c reads their records, expire.c delivers them.
 */

#include <linux/overflow.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/slab.h>

#include "base.h"
#include "clockset.h"
#include "ctx.h"
#include "ring.h"
#include "user.h"

/*
 * Whether no heap entry points at @t any more, so that only its owner, the
 * caller, can reach it (see nr_entries in timer.h).
 */
static bool qt_timer_unreachable(struct qt_timer *t)
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
bool qt_timer_let_die(struct qt_timer *t, struct qt_base **held)
{
	if (qt_timer_unreachable(t))
		return true;
	*held = qt_base_relock(*held, t);
	t->state = QT_DEAD;
	return !t->nr_entries;
}

/* Free a GHOST or ORPHAN, now or once its last heap entry is dropped. */
void qt_timer_free_when_unreferenced(struct qt_timer *t)
{
	struct qt_base *base = NULL;
	bool free = qt_timer_let_die(t, &base);

	if (base)
		qt_base_unlock_carried(base);
	if (free)
		qt_timer_free(t);
}

/*
 * Count @nr more timers against the per-file cap, all or none; exact,
 * whatever the shards.
 */
bool qt_ctx_charge_n(struct qt_ctx *ctx, unsigned int nr)
{
	int n = atomic_read(&ctx->nr_timers);

	do {
		if ((unsigned long)n + nr > READ_ONCE(qt_max_timers_per_fd))
			return false;
	} while (!atomic_try_cmpxchg(&ctx->nr_timers, &n, n + nr));
	return true;
}

/* @nr timers gone: their places under the per-file and per-user caps. */
void qt_ctx_give_back(struct qt_ctx *ctx, unsigned int nr)
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
void qt_ctx_forget(struct qt_ctx *ctx, struct qt_timer *t, unsigned int *freed)
{
	struct qt_shard *shard = qt_shard_of(t);

	lockdep_assert_held(&shard->lock);
	qt_ids_free(&shard->ids, t->slot);
	shard->nr_per_clock[qt_timer_user_clock(t)]--;
	if (t->flags & QT_TF_CANCEL_ON_SET)
		shard->nr_cancel_on_set--;
	if (freed)
		(*freed)++;
	else
		qt_ctx_give_back(ctx, 1);
}

/*
 * A read() or a ring reap, holding the delivery lock, consumed @t, a
 * one-shot or a cancellation: it is ENDED and waits on its shard's ended
 * list for qt_ctx_end() to free its id, which needs the shard's lock, which
 * comes before the delivery lock.  *@held is as for qt_timer_let_die().
 */
void qt_timer_end(struct qt_timer *t, struct qt_base **held)
{
	struct qt_shard *shard = qt_shard_of(t);

	lockdep_assert_held(&t->ctx->wqh.lock);
	/* With a stale heap entry left, the heap side reads the state. */
	if (!qt_timer_unreachable(t))
		*held = qt_base_relock(*held, t);
	t->state = QT_ENDED;
	t->next = shard->ended;
	WRITE_ONCE(shard->ended, t);
}

/* ENDED timers qt_shard_end_locked() handles per hold of the two locks. */
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
static bool qt_shard_end_locked(struct qt_ctx *ctx, struct qt_shard *shard,
				struct qt_timer **dead, unsigned int *budget)
{
	struct qt_base *base = NULL;
	struct qt_timer *t, *ended = shard->ended;
	unsigned int freed = 0, n = min_t(unsigned int, *budget, QT_END_CHUNK);

	lockdep_assert_held(&shard->lock);
	lockdep_assert_held(&ctx->wqh.lock);
	for (; (t = ended) && n; n--, (*budget)--) {
		ended = t->next;
		qt_ctx_forget(ctx, t, &freed);
		if (qt_timer_let_die(t, &base)) {
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
		qt_ctx_give_back(ctx, freed);
	return ended;
}

/*
 * End what waits on @ctx's shards: all of it, a chunk per hold with a
 * rescheduling point between (@resched), or at most QT_END_CHUNK in all.
 */
static void __qt_ctx_end(struct qt_ctx *ctx, struct qt_timer **dead,
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
			more = qt_shard_end_locked(ctx, shard, dead, &budget);
			spin_unlock(&ctx->wqh.lock);
			spin_unlock_irqrestore(&shard->lock, flags);
			/* Left over only when the budget ran out. */
			if (!more || !resched)
				break;
			/* Freed a chunk at a time too. */
			qt_timers_free_list(*dead);
			*dead = NULL;
			cond_resched();
		}
	}
	qt_timers_free_list(*dead);
	*dead = NULL;
	if (left)
		*left -= given - budget;
}

/*
 * End what read() or a ring reap consumed (qt_timer_end()), and free the
 * timers it let die on *@dead (qt_timer_let_die()), which it empties:
 * called by the ender once it dropped the delivery lock, before returning
 * to user space, so that a consumed one-shot's id and place under the caps
 * are free when its record is.  Process context: the ended list may be
 * long (see qt_shard_end_locked()), so it lets others run between chunks.
 */
void qt_ctx_end(struct qt_ctx *ctx, struct qt_timer **dead)
{
	__qt_ctx_end(ctx, dead, true, NULL);
}

/*
 * The same for an expirer, within its RCU read section, in any context, but
 * at most QT_END_CHUNK in all, and no more than *@budget, which it takes
 * what it ended off: it may run in softirq, where nothing can preempt it,
 * and a shard's ended list may be long (parked read()s of a file that then
 * set up a ring).  What is left waits for the next delivery or for the
 * file's drain, poll(), read() or release (qt_ctx_end()).
 */
void qt_ctx_end_atomic(struct qt_ctx *ctx, struct qt_timer **dead,
		       unsigned int *budget)
{
	__qt_ctx_end(ctx, dead, false, budget);
}

struct qt_ctx *qt_ctx_create(void)
{
	unsigned int i, nr_shards = min_t(unsigned int, nr_cpu_ids, QT_MAX_SHARDS);
	struct qt_ctx *ctx;

	ctx = kzalloc(struct_size(ctx, shards, nr_shards), GFP_KERNEL_ACCOUNT);
	if (!ctx)
		return NULL;
	ctx->user = qt_user_get();
	if (!ctx->user) {
		kfree(ctx);
		return NULL;
	}
	init_waitqueue_head(&ctx->wqh);
	ctx->ready_tail = &ctx->ready;
	ctx->nr_shards = nr_shards;
	for (i = 0; i < nr_shards; i++) {
		spin_lock_init(&ctx->shards[i].lock);
		qt_ids_init(&ctx->shards[i].ids, get_random_u32());
	}
	INIT_LIST_HEAD(&ctx->cos_node);
	mutex_init(&ctx->cos_walk);
	return ctx;
}

/* Timers release() handles per hold of the context lock. */
#define QT_RELEASE_CHUNK	64

/* The last close: every timer dies.  No read() or ioctl() can be running. */
void qt_ctx_release(struct qt_ctx *ctx)
{
	struct qt_timer *t, *dead = NULL;
	struct qt_ring *ring;
	unsigned int i;
	u32 slot;

	qt_clockset_untrack(ctx);

	for (i = 0; i < ctx->nr_shards; i++) {
		struct qt_shard *shard = &ctx->shards[i];
		struct qt_base *base = NULL;

		spin_lock_irq(&shard->lock);
		spin_lock(&ctx->wqh.lock);
		for (slot = 0; slot < shard->ids.nr_slots; slot++) {
			t = qt_ids_get(&shard->ids, slot);
			/* An ENDED one is on the ended list, emptied below. */
			if (t && t->state != QT_ENDED)
				qt_timer_kill(ctx, t, &base, NULL);
			/*
			 * Let interrupts in now and then: a file may hold
			 * millions.
			 */
			if (!(slot % QT_RELEASE_CHUNK)) {
				if (base)
					qt_base_unlock_carried(base);
				base = NULL;
				spin_unlock(&ctx->wqh.lock);
				spin_unlock_irq(&shard->lock);
				cond_resched();
				spin_lock_irq(&shard->lock);
				spin_lock(&ctx->wqh.lock);
			}
		}
		if (base)
			qt_base_unlock_carried(base);
		spin_unlock(&ctx->wqh.lock);
		spin_unlock_irq(&shard->lock);
	}
	/*
	 * The ENDED ones the walk left, with those an expirer's reap ended
	 * while we let go: no more can come, as no timer has a record left.
	 */
	qt_ctx_end(ctx, &dead);
	spin_lock_irq(&ctx->wqh.lock);
	/* No timer stands behind a record now; expirers see no ring. */
	ring = ctx->ring;
	WRITE_ONCE(ctx->ring, NULL);
	spin_unlock_irq(&ctx->wqh.lock);
	qt_ring_destroy(ring);

	/*
	 * The ready queue is GHOSTs now.  Those that nothing else can reach
	 * are freed in bulk, a chunk at a time and with interrupts on: one
	 * by one under the lock, a million unread records held a CPU with
	 * interrupts off for as long as freeing them took.  The chunk counts
	 * those left to their heaps' expirer too (a stale entry of a MODIFY
	 * to earlier keeps a fired timer in its heap), and so does the base
	 * lock carried from one to the next.
	 */
	do {
		struct qt_base *base = NULL;
		void *dead[QT_RELEASE_CHUNK];
		unsigned int nr = 0, popped = 0;

		spin_lock_irq(&ctx->wqh.lock);
		while (popped++ < QT_RELEASE_CHUNK && (t = qt_ready_pop(ctx)))
			if (qt_timer_let_die(t, &base))
				dead[nr++] = t;
		if (base)
			qt_base_unlock_carried(base);
		spin_unlock_irq(&ctx->wqh.lock);
		if (nr)
			qt_timers_free(nr, dead);
		cond_resched();
	} while (t);

	for (i = 0; i < ctx->nr_shards; i++)
		qt_ids_destroy(&ctx->shards[i].ids);
	qt_user_put(ctx->user);
	/* An expirer may still hold a timer of ours in transit. */
	kfree_rcu(ctx, rcu);
	qt_base_trim();
}

void qt_ctx_show_fdinfo(struct qt_ctx *ctx, struct seq_file *m)
{
	u32 timers = 0, pending, per_clock[QT_NR_CLOCKS] = {}, ring_entries = 0;
	unsigned int i, clock;

	for (i = 0; i < ctx->nr_shards; i++) {
		struct qt_shard *shard = &ctx->shards[i];

		spin_lock_irq(&shard->lock);
		for (clock = 0; clock < QT_NR_CLOCKS; clock++)
			per_clock[clock] += shard->nr_per_clock[clock];
		spin_unlock_irq(&shard->lock);
	}
	/* Live ids: nr_timers also counts places SUBMIT chunks hold. */
	for (clock = 0; clock < QT_NR_CLOCKS; clock++)
		timers += per_clock[clock];
	spin_lock_irq(&ctx->wqh.lock);
	/* With a ring: records waiting, and those the ring was not reaped of. */
	pending = ctx->nr_ready;
	if (ctx->ring) {
		pending += ctx->ring->nr_owned;
		ring_entries = ctx->ring->entries;
	}
	spin_unlock_irq(&ctx->wqh.lock);

	seq_printf(m, "timers:\t%u\n", timers);
	seq_printf(m, "pending:\t%u\n", pending);
	seq_printf(m, "realtime:\t%u\n", per_clock[QT_CLOCK_REALTIME]);
	seq_printf(m, "monotonic:\t%u\n", per_clock[QT_CLOCK_MONOTONIC]);
	seq_printf(m, "boottime:\t%u\n", per_clock[QT_CLOCK_BOOTTIME]);
	seq_printf(m, "user_timers:\t%ld\n",
		   atomic_long_read(&ctx->user->nr_timers));
	seq_printf(m, "max_timers_per_fd:\t%lu\n", READ_ONCE(qt_max_timers_per_fd));
	seq_printf(m, "max_timers_per_user:\t%lu\n",
		   READ_ONCE(qt_max_timers_per_user));
	if (ring_entries)
		seq_printf(m, "ring_entries:\t%u\n", ring_entries);
}
