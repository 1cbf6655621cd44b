/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * The per-file context: the timers one open file of /dev/qtimer owns, by
 * id in its shards, and the ready queue of those that fired.  Below it sit the timers
 * (timer.h) and the heaps they are armed in (base.h); above it the files
 * that act on it, each declared here under its name.
 */
#ifndef _QT_CTX_H
#define _QT_CTX_H

#include <linux/hrtimer.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/prefetch.h>
#include <linux/rcupdate.h>
#include <linux/smp.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

#include "clock.h"
#include "ids.h"
#include "table.h"
#include "timer.h"

struct qt_base;
struct qt_batch;
struct qt_ring;
struct qt_user;
struct seq_file;

/*
 * At most this many shards per file (t->shard is 4 bits): CPU k uses shard
 * k % nr_shards.
 */
#define QT_MAX_SHARDS		16

/*
 * A shard of a file: the ids of the timers armed on its CPUs, under its own
 * lock, so that threads sharing a file and arming, cancelling and modifying
 * on different CPUs do not share a lock or a cache line (design.rst).
 */
struct qt_shard {
	spinlock_t lock;		/* S */
	struct qt_ids ids;		/* (S) */
	u32 nr_cancel_on_set;		/* (S) */
	u32 nr_per_clock[QT_NR_CLOCKS];	/* (S) live ids per clock, for fdinfo */
	/* (D) ENDED timers, by ->next, whose ids qt_end_ctx() frees */
	struct qt_timer *ended;
} ____cacheline_aligned_in_smp;

struct qt_ctx {
	/*
	 * wqh.lock is the delivery lock (D), as the context lock of eventfd
	 * and timerfd: the ready queue, the ring and fired timers.
	 */
	wait_queue_head_t wqh;
	struct qt_timer *ready;		/* (D) FIFO of QUEUED and GHOST timers */
	struct qt_timer **ready_tail;	/* (D) */
	/* (D) where qt_read_sweep() goes on from: a QUEUED timer, or NULL */
	struct qt_timer *sweep_at;
	unsigned int nr_ready;		/* (D) QUEUED timers on it */
	unsigned int nr_ghosts;		/* (D) GHOST timers on it */

	/*
	 * The record ring, once RING_SETUP made one: set under (D), and read
	 * without it by read(), poll() and mmap() with acquire.  With a ring,
	 * the ready queue is its overflow (ring.c).
	 */
	struct qt_ring *ring;
	/*
	 * The timer table, once TABLE_SETUP made one (table.h): set under
	 * (D) with release, read without it with acquire; constant after.
	 */
	struct qt_table *table;

	/* live ids and places SUBMIT chunks hold, against the per-file cap */
	atomic_t nr_timers;
	struct qt_user *user;
	struct list_head cos_node;	/* on qt_clockset_list, qt_clockset_mutex */
	/*
	 * The clock sets applied to this file's cancel-on-set timers
	 * (clockset.c): written under cos_walk, which one walk of the file
	 * holds, and read without it by the expirer and the reap.
	 */
	struct mutex cos_walk;
	int cos_applied;
	struct rcu_head rcu;
	unsigned int nr_shards;
	struct qt_shard shards[];
};

/* The shard an op on this CPU arms in. */
static inline struct qt_shard *qt_ctx_shard_here(struct qt_ctx *ctx)
{
	return &ctx->shards[raw_smp_processor_id() % ctx->nr_shards];
}

/* The shard @id names, or NULL for a forged one. */
static inline struct qt_shard *qt_ctx_shard_of_id(struct qt_ctx *ctx, u64 id)
{
	unsigned int shard = qt_ids_shard(id);

	return shard < ctx->nr_shards ? &ctx->shards[shard] : NULL;
}

static inline struct qt_shard *qt_ctx_shard_of(const struct qt_timer *t)
{
	return &t->ctx->shards[t->shard];
}

/* Whether timers wait for qt_end_ctx(); under the delivery lock. */
static inline bool qt_ctx_ending(const struct qt_ctx *ctx)
{
	unsigned int i;

	lockdep_assert_held(&ctx->wqh.lock);
	for (i = 0; i < ctx->nr_shards; i++)
		if (ctx->shards[i].ended)
			return true;
	return false;
}

/* --- the ready queue, in delivery order ------------------------------- */

static inline void qt_ctx_ready_append(struct qt_ctx *ctx, struct qt_timer *t)
{
	lockdep_assert_held(&ctx->wqh.lock);
	t->next = NULL;
	*ctx->ready_tail = t;
	ctx->ready_tail = &t->next;
}

/* @t fired (or was cancelled by a clock set): its record is pending. */
static inline void qt_ctx_ready_queue(struct qt_ctx *ctx, struct qt_timer *t)
{
	t->state = QT_QUEUED;
	qt_ctx_ready_append(ctx, t);
	ctx->nr_ready++;
}

static inline void qt_ctx_ready_prepend(struct qt_ctx *ctx, struct qt_timer *t)
{
	lockdep_assert_held(&ctx->wqh.lock);
	t->next = ctx->ready;
	if (!ctx->ready)
		ctx->ready_tail = &t->next;
	ctx->ready = t;
}

static inline struct qt_timer *qt_ctx_ready_pop(struct qt_ctx *ctx)
{
	struct qt_timer *t = ctx->ready;

	lockdep_assert_held(&ctx->wqh.lock);
	if (t) {
		if (t == ctx->sweep_at)
			ctx->sweep_at = NULL;
		ctx->ready = t->next;
		if (!ctx->ready)
			ctx->ready_tail = &ctx->ready;
		else
			/* Timers are scattered: start on the next one's miss. */
			prefetchw(ctx->ready);
	}
	return t;
}

/* @ctx's timer table, or NULL: set once, then constant. */
static inline struct qt_table *qt_ctx_table(struct qt_ctx *ctx)
{
	/* Pairs with qt_table_setup()'s release: the table is set up. */
	return smp_load_acquire(&ctx->table);
}

/*
 * @t goes (back) into a heap under its id: it carries the slot's generation
 * while armed.  A slot's generation changes only when it is freed, which
 * ends the timer's ARMED life first.
 */
static inline void qt_ctx_timer_armed(struct qt_timer *t)
{
	struct qt_table *table = qt_ctx_table(t->ctx);

	t->state = QT_ARMED;
	t->gen = *qt_ids_gen(&qt_ctx_shard_of(t)->ids, t->slot);
	if (table)
		qt_table_arm(table, t);
}

/* @t's id; its caller holds @t (see qt_ids_gen()). */
static inline u64 qt_ctx_timer_id(const struct qt_timer *t)
{
	if (t->state == QT_ARMED)
		return qt_ids_make(t, t->gen);
	return qt_ids_id(&qt_ctx_shard_of(t)->ids, t);
}

/* ctx.c: contexts (end.h: the end of a timer's life) */
struct qt_ctx *qt_ctx_create(void);
void qt_ctx_release(struct qt_ctx *ctx);
void qt_ctx_show_fdinfo(struct qt_ctx *ctx, struct seq_file *m);

/* ops.c: arm, cancel, modify, get */
int qt_ops_arm(struct qt_ctx *ctx, const struct qt_arm_args *args,
	       struct qt_batch *batch, u64 *id);
int qt_ops_cancel(struct qt_ctx *ctx, u64 id, struct qt_batch *batch);
int qt_ops_get(struct qt_ctx *ctx, u64 id, struct qt_batch *batch,
	       struct qtimer_op *op);
int qt_ops_modify(struct qt_ctx *ctx, u64 id, const struct qt_arm_args *args,
		  struct qt_batch *batch);
int qt_ops_kill(struct qt_ctx *ctx, struct qt_timer *t,
		struct qt_base **held, unsigned int *freed);

/* read.c: records and read() */
struct iov_iter;
ssize_t qt_read_records(struct qt_ctx *ctx, struct iov_iter *to, bool nonblock);
void qt_read_sweep(struct qt_ctx *ctx, struct qt_batch *batch);

/* expire.c: the bases' expirer, which delivers into files */
enum hrtimer_restart qt_expire_hrtimer(struct hrtimer *hrtimer);
void qt_expire_work(struct work_struct *work);

#endif /* _QT_CTX_H */
