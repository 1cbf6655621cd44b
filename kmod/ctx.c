// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * The per-file timer context: created by open(), torn down by the last
 * close(), shown in fdinfo.  ops.c arms, cancels and modifies its timers,
 * read.c reads their records, expire.c delivers them, and end.c ends them.
 */

#include <linux/overflow.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/slab.h>

#include "base.h"
#include "clockset.h"
#include "ctx.h"
#include "end.h"
#include "ring.h"
#include "user.h"

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
				qt_ops_kill(ctx, t, &base, NULL);
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
	qt_end_ctx(ctx, &dead);
	spin_lock_irq(&ctx->wqh.lock);
	/* No timer stands behind a record now; expirers see no ring. */
	ring = ctx->ring;
	WRITE_ONCE(ctx->ring, NULL);
	spin_unlock_irq(&ctx->wqh.lock);
	qt_ring_destroy(ring);
	/*
	 * No timer is in a heap or in transit with its id now, so neither
	 * the expirer nor the ops read the table any more.
	 */
	if (ctx->table) {
		qt_base_surface_put();
		qt_table_destroy(ctx->table);
		ctx->table = NULL;
	}

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
		while (popped++ < QT_RELEASE_CHUNK &&
		       (t = qt_ctx_ready_pop(ctx)))
			if (qt_end_let_die(t, &base))
				dead[nr++] = t;
		if (base)
			qt_base_unlock_carried(base);
		spin_unlock_irq(&ctx->wqh.lock);
		if (nr)
			qt_timer_free_bulk(nr, dead);
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
	if (ctx->table) {
		u32 pages = 0;

		for (i = 0; i < ctx->nr_shards; i++)
			pages += READ_ONCE(ctx->table->covered[i]) /
				 QT_TABLE_SLOTS_PER_PAGE;
		/* Its slots' memory: the table's pages are no slab. */
		seq_printf(m, "table_pages:\t%u\n", pages);
	}
}
