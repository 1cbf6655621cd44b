// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * The per-file timer context: created by open(), torn down by the last
 * close(), shown in fdinfo; and the end of a timer's life, which its owner
 * reaches through the rules in timer.h.  ops.c arms, cancels and modifies
 * its timers, read.c reads their records, expire.c delivers them.
 */

#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/slab.h>

#include "base.h"
#include "clockset.h"
#include "ctx.h"
#include "ring.h"
#include "user.h"

/*
 * Whether no heap entry points at @t any more, so that only holders of its
 * context lock can reach it (see nr_entries in timer.h).
 */
static bool qt_timer_unreachable(struct qt_timer *t)
{
	lockdep_assert_held(&t->ctx->wqh.lock);
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

/* Take @t's id away: from now on it names nothing. */
void qt_ctx_forget(struct qt_ctx *ctx, struct qt_timer *t)
{
	qt_ids_free(&ctx->ids, t->slot);
	ctx->nr_timers--;
	ctx->nr_per_clock[qt_timer_user_clock(t)]--;
	if (t->flags & QT_TF_CANCEL_ON_SET)
		ctx->nr_cancel_on_set--;
	qt_user_uncharge_n(ctx->user, 1);
}

struct qt_ctx *qt_ctx_create(void)
{
	struct qt_ctx *ctx = kzalloc(sizeof(*ctx), GFP_KERNEL_ACCOUNT);

	if (!ctx)
		return NULL;
	ctx->user = qt_user_get();
	if (!ctx->user) {
		kfree(ctx);
		return NULL;
	}
	init_waitqueue_head(&ctx->wqh);
	ctx->ready_tail = &ctx->ready;
	ctx->ids.free_slot = QT_NO_SLOT;
	INIT_LIST_HEAD(&ctx->cos_node);
	return ctx;
}

/* Timers release() handles per hold of the context lock. */
#define QT_RELEASE_CHUNK	64

/* The last close: every timer dies.  No read() or ioctl() can be running. */
void qt_ctx_release(struct qt_ctx *ctx)
{
	struct qt_ring *ring;
	struct qt_timer *t;
	u32 slot;

	qt_cos_untrack(ctx);

	spin_lock_irq(&ctx->wqh.lock);
	for (slot = 0; slot < ctx->ids.nr_slots; slot++) {
		t = qt_ids_get(&ctx->ids, slot);
		if (t)
			qt_timer_kill(ctx, t, NULL);
		/* Let interrupts in now and then: a file may hold millions. */
		if (!(slot % QT_RELEASE_CHUNK)) {
			spin_unlock_irq(&ctx->wqh.lock);
			cond_resched();
			spin_lock_irq(&ctx->wqh.lock);
		}
	}
	/* No timer stands behind a record now; expirers see no ring. */
	ring = ctx->ring;
	WRITE_ONCE(ctx->ring, NULL);
	spin_unlock_irq(&ctx->wqh.lock);
	qt_ring_destroy(ring);

	/*
	 * The ready queue is GHOSTs now.  Those that nothing else can reach
	 * are freed in bulk, a chunk at a time and with interrupts on: one
	 * by one under the lock, a million unread records held a CPU with
	 * interrupts off for as long as freeing them took.
	 */
	do {
		struct qt_base *base = NULL;
		void *dead[QT_RELEASE_CHUNK];
		unsigned int nr = 0;

		spin_lock_irq(&ctx->wqh.lock);
		while (nr < QT_RELEASE_CHUNK && (t = qt_ready_pop(ctx)))
			if (qt_timer_let_die(t, &base))
				dead[nr++] = t;
		if (base)
			qt_base_unlock_carried(base);
		spin_unlock_irq(&ctx->wqh.lock);
		if (nr)
			qt_timers_free(nr, dead);
		cond_resched();
	} while (t);

	qt_ids_destroy(&ctx->ids);
	qt_user_put(ctx->user);
	/* An expirer may still hold a timer of ours in transit. */
	kfree_rcu(ctx, rcu);
	qt_base_trim();
}

void qt_ctx_show_fdinfo(struct qt_ctx *ctx, struct seq_file *m)
{
	u32 timers, pending, per_clock[QT_NR_CLOCKS], ring_entries = 0;

	spin_lock_irq(&ctx->wqh.lock);
	timers = ctx->nr_timers;
	/* With a ring: records waiting, and those the ring was not reaped of. */
	pending = ctx->nr_ready;
	if (ctx->ring) {
		pending += ctx->ring->nr_owned;
		ring_entries = ctx->ring->entries;
	}
	memcpy(per_clock, ctx->nr_per_clock, sizeof(per_clock));
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

int qt_ctx_init(void)
{
	int ret;

	ret = qt_timer_cache_init();
	if (ret)
		return ret;
	ret = qt_clockset_init();
	if (ret) {
		qt_timer_cache_exit();
		return ret;
	}
	return 0;
}

void qt_ctx_exit(void)
{
	qt_clockset_exit();
	/* kfree_rcu()'d contexts, before the timers' cache goes. */
	rcu_barrier();
	qt_timer_cache_exit();
}
