/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * Timers and the per-file context that owns them: ids, the ready queue of
 * fired timers, reading records, and the rules that say who may free a
 * timer.  base.c owns the heaps that armed timers sit in.
 */
#ifndef _QT_CTX_H
#define _QT_CTX_H

#include <linux/ktime.h>
#include <linux/list.h>
#include <linux/rcupdate.h>
#include <linux/types.h>
#include <linux/wait.h>
#include <linux/qtimer.h>

struct qt_base;
struct qt_user;

/*
 * The life of a timer, by t->state:
 *
 *   ARMED    live in its base's heap (heap_key is its entry's key), or
 *            popped by the base's expirer and not yet delivered ("in
 *            transit", heap_key == QT_KEY_NONE).  The base owns it.
 *   QUEUED   fired, on ctx->ready, a record pending.  The context owns it.
 *   READING  taken off the ready queue by a read() that is copying its
 *            record out.  That reader owns it until it finishes.
 *   GHOST    cancelled while QUEUED: still linked on ctx->ready, which
 *            frees it when it gets there.
 *   ORPHAN   cancelled while READING: the reader frees it.
 *   DEAD     no id, no owner but heap entries: the last entry dropped
 *            frees it (nr_entries == 0).
 *
 * A timer may also have stale heap entries (left by modify-earlier or by a
 * cancel) whatever its state; they are counted in nr_entries and in the
 * base's nr_dead, and the timer is freed only when the last one is dropped.
 *
 * Locking: fields marked (C) are protected by ctx->wqh.lock, (B) by the lock
 * of the base the timer belongs to (t->base), which nests inside (C).
 * state is written under (C) and, while any heap entry points at the timer,
 * also under (B), so the heap side may read it with (B) alone.
 *
 * nr_entries only grows under both locks (a push), so under (C) alone it
 * can only shrink, by the heap side dropping a stale entry under (B).  Two
 * cases therefore need no (B): an owner that sees it at 0 (acquire, paired
 * with the release in qt_base_drop()) knows that nothing but (C) holders can
 * reach the timer any more, and may free it; the expirer that sees it at 1
 * for a timer it popped knows that its transit reference is the only one, so
 * no heap entry points at the timer and the heap side cannot touch it.
 */
enum qt_timer_state {
	QT_ARMED = 1,
	QT_QUEUED,
	QT_READING,
	QT_GHOST,
	QT_ORPHAN,
	QT_DEAD,
};

#define QT_KEY_NONE		S64_MIN

/* t->flags */
#define QT_TF_CANCEL_ON_SET	(1U << 0)	/* (C) */
#define QT_TF_CANCELED		(1U << 1)	/* (C) clock was set */
/* (C) the clock was set while a read() copied a ticker's record out */
#define QT_TF_SET_WHILE_READ	(1U << 2)
/*
 * (C) CLOCK_REALTIME to its user but armed relative, so an interval on
 * CLOCK_MONOTONIC, in a monotonic heap: as timerfd and POSIX timers do (the
 * hrtimer core turns a relative CLOCK_REALTIME timer into a monotonic one),
 * setting the clock does not move it.  Its id and records say REALTIME.
 */
#define QT_TF_RELATIVE_REAL	(1U << 3)

/* 64 bytes: with its 16-byte heap entry and id slot, under 96 per timer. */
struct qt_timer {
	struct qt_ctx *ctx;		/* constant */
	u64 cookie;			/* constant */
	ktime_t expires;		/* (C) soft deadline, or last fired */
	u64 period;			/* (C) 0: one-shot */
	s64 heap_key;			/* (B) key of the live entry, or NONE */
	struct qt_timer *next;		/* (C) ready queue link */
	u32 slot : 24;			/* (C) index in the id table */
	u32 flags : 8;			/* (C) QT_TF_* */
	u32 count;			/* (C) expirations pending */
	u32 slack;			/* (C) ns */
	u16 base_idx;			/* (B) see qt_base_of() */
	u8 state;			/* see above */
	u8 nr_entries;			/* (B) heap entries pointing here; see above */
};

struct qt_ctx {
	/* wqh.lock is the context lock, as in eventfd and timerfd. */
	wait_queue_head_t wqh;
	struct qt_timer *ready;		/* (C) FIFO of QUEUED and GHOST timers */
	struct qt_timer **ready_tail;	/* (C) */
	/* (C) where qt_ready_sweep() goes on from: a QUEUED timer, or NULL */
	struct qt_timer *sweep_at;
	unsigned int nr_ready;		/* (C) QUEUED timers on it */
	unsigned int nr_ghosts;		/* (C) GHOST timers on it */

	/*
	 * (C) Timer ids: slot index + 1 in the low half, the slot's
	 * generation in the high half.  A used slot holds the timer pointer; a
	 * free one holds (next free index << 1) | 1.  Slots come in page-sized
	 * blocks (see struct qt_slot_block in ctx.c) that are never moved, so
	 * the table grows by a page with no copying and wastes at most one.
	 */
	struct qt_slot_block **slot_blocks;
	u32 nr_slot_blocks;		/* (C) slot_blocks[] allocated */
	u32 nr_slots;			/* (C) in the blocks attached */
	u32 free_slot;			/* (C) head of the free list, or ~0 */
	u32 nr_timers;			/* (C) live ids */
	u32 nr_cancel_on_set;		/* (C) */
	u32 nr_per_clock[3];		/* (C) live ids per clock, for fdinfo */

	struct qt_user *user;
	struct list_head cos_node;	/* on qt_cos_list, qt_cos_mutex */
	struct rcu_head rcu;
};

/*
 * A timer id: slot + 1 in bits 0-31 (so 0 is never an id), the clock in
 * bits 32-33, the slot's generation in bits 34-63.  A stale id fails the
 * generation check, a forged one the slot, clock or generation check.
 */
#define QT_ID_CLOCK_SHIFT	32
#define QT_ID_GEN_SHIFT		34
#define QT_ID_GEN_MASK		((1U << 30) - 1)

static inline unsigned int qt_id_clock(u64 id)
{
	return (id >> QT_ID_CLOCK_SHIFT) & 3;
}

/* Latest deadline accepted: hard deadlines (+ slack) still fit ktime_t. */
#define QT_EXPIRES_MAX		(KTIME_MAX - (s64)QTIMER_SLACK_MAX_NS)

/* qt_arm_args.flags, beside QTIMER_F_*: the timer gets QT_TF_RELATIVE_REAL */
#define QT_ARM_RELATIVE_REAL	(1U << 31)

struct qt_arm_args {
	u32 clock;			/* QT_CLOCK_* of the heap it goes to */
	u32 flags;			/* QTIMER_F_*, QT_ARM_RELATIVE_REAL */
	ktime_t expires;		/* absolute host time */
	u64 period;
	u32 slack;
	u32 cpu;			/* with QTIMER_F_CPU */
	u64 cookie;
};

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

int qt_ctx_init(void);
void qt_ctx_exit(void);
struct qt_ctx *qt_ctx_create(void);
void qt_ctx_release(struct qt_ctx *ctx);
int qt_ctx_arm(struct qt_ctx *ctx, const struct qt_arm_args *args,
	       struct qt_batch *batch, u64 *id);
int qt_ctx_cancel(struct qt_ctx *ctx, u64 id, struct qt_batch *batch);
int qt_ctx_modify(struct qt_ctx *ctx, u64 id, const struct qt_arm_args *args,
		  struct qt_batch *batch);
ssize_t qt_ctx_read(struct qt_ctx *ctx, char __user *buf, size_t len,
		    bool nonblock);
void qt_timer_free(struct qt_timer *t);
void qt_timers_free(unsigned int nr, void **timers);
struct seq_file;
void qt_ctx_show_fdinfo(struct qt_ctx *ctx, struct seq_file *m);

/* Called by base.c for timers it popped while ARMED. */
unsigned int qt_ctx_deliver(struct qt_timer **batch, unsigned int nr,
			    ktime_t now, bool wait);

/* Per-user timer accounting, for max_timers_per_user. */
struct qt_user *qt_user_get(void);
void qt_user_put(struct qt_user *user);
void qt_users_exit(void);

extern unsigned long qt_max_timers_per_fd;
extern unsigned long qt_max_timers_per_user;

#endif /* _QT_CTX_H */
