/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * A timer: its fields and which lock guards each, its state machine, and
 * the rules that say who may free it.  Read this first: every other file
 * keeps to them.  The other files own the timer in turn: a base's heap
 * while it is armed (base.c), its file's ready queue once it fired
 * (read.c), its id in its shard's slot table throughout (ids.c).
 */
#ifndef _QT_TIMER_H
#define _QT_TIMER_H

#include <linux/bits.h>
#include <linux/ktime.h>
#include <linux/types.h>
#include <linux/qtimer.h>

#include "clock.h"

struct qt_ctx;

/*
 * The life of a timer, by t->state:
 *
 *   ARMED    live in its base's heap (heap_key is its entry's key), or
 *            popped by the base's expirer and not yet delivered ("in
 *            transit", heap_key == QT_KEY_NONE).  The base owns it.  It
 *            carries its id slot's generation (gen), so that the expirer
 *            can write its record without a miss in the id table.
 *   QUEUED   fired, on ctx->ready, a record pending.  The context owns it.
 *   RINGED   fired, its record in the file's mapped ring at ring_pos
 *            (ring.c), until the consumer's tail passes it and the ring is
 *            reaped, or CANCEL or MODIFY voids it.  The context owns it.
 *   READING  taken off the ready queue by a read() that is copying its
 *            record out.  That reader owns it until it finishes.
 *   GHOST    cancelled while QUEUED: still linked on ctx->ready, which
 *            frees it when it gets there.
 *   ORPHAN   cancelled while READING: the reader frees it.
 *   ENDED    consumed by a read() or a ring reap, which holds only the
 *            file's delivery lock and so cannot free its id yet: it still
 *            has its id, and the ender frees id and timer once it has
 *            dropped that lock and taken the shard's (qt_end_ctx()).
 *            CANCEL and MODIFY say -ENOENT for it.
 *   DEAD     no id, no owner but heap entries: the last entry dropped
 *            frees it (nr_entries == 0).
 *
 * A timer may also have stale heap entries (left by modify-earlier or by a
 * cancel) whatever its state; they are counted in nr_entries and in the
 * base's nr_dead, and the timer is freed only when the last one is dropped.
 *
 * Locking.  A file has three kinds of lock, always taken in this order:
 * (S) the lock of one of its shards (ctx.h), which covers that shard's ids;
 * (D) its delivery lock, ctx->wqh.lock, which covers its ready queue and
 * ring and every fired timer; (B) the lock of the base the timer belongs
 * to (t->base), which covers the heaps.  Fields marked (C), the schedule
 * and flags, are written by their owner: under (S) and (B) while the timer
 * is in a heap (heap_key != QT_KEY_NONE), under (D) otherwise.  The rule
 * that makes the two halves meet:
 *
 *   heap_key goes from QT_KEY_NONE to a key only under (B) and (D), or
 *   for a timer nobody else can reach yet (ARM); and a timer in transit
 *   never gets a key again (MODIFY moves its id to a fresh object).
 *
 * So an op that holds (S) and (B) and sees a key knows that the timer is
 * ARMED, that no expirer holds it and that nothing on the delivery side
 * can touch it while (B) is held: it acts with no (D).  Seeing none, it
 * drops (B) and takes (D) and (B) in turn.
 *
 * state is written under (D), or under (S) and (B) by an op that saw a
 * key; while any heap entry points at the timer also under (B), so the
 * heap side may read it with (B) alone.
 *
 * nr_entries only grows under (B) and (S) or (D) (a push), so for a timer
 * not in any heap it can only shrink, by the heap side dropping a stale
 * entry under (B).  Two cases therefore need no (B): an owner that sees it
 * at 0 (acquire, paired with the release in qt_base_drop()) knows that
 * nothing but itself can reach the timer any more, and may free it; the
 * expirer that sees it at 1 for a timer it popped knows that its transit
 * reference is the only one, so no heap entry points at the timer and the
 * heap side cannot touch it.
 */
enum qt_timer_state {
	QT_ARMED = 1,
	QT_QUEUED,
	QT_READING,
	QT_GHOST,
	QT_ORPHAN,
	QT_DEAD,
	QT_RINGED,
	QT_ENDED,
};

#define QT_KEY_NONE		S64_MIN

/* t->flags */
#define QT_TF_CANCEL_ON_SET	BIT(0)	/* (C) */
#define QT_TF_CANCELED		BIT(1)	/* (C) clock was set */
/* (C) the clock was set while a read() copied a ticker's record out */
#define QT_TF_SET_WHILE_READ	BIT(2)
/*
 * (C) CLOCK_REALTIME to its user but armed relative, so an interval on
 * CLOCK_MONOTONIC, in a monotonic heap: as timerfd and POSIX timers do (the
 * hrtimer core turns a relative CLOCK_REALTIME timer into a monotonic one),
 * setting the clock does not move it.  Its id and records say REALTIME.
 */
#define QT_TF_RELATIVE_REAL	BIT(3)

/* 64 bytes: with its 16-byte heap entry and id slot, under 96 per timer. */
struct qt_timer {
	struct qt_ctx *ctx;		/* constant */
	u64 cookie;			/* constant */
	ktime_t expires;		/* (C) soft deadline, or last fired */
	u64 period;			/* (C) 0: one-shot */
	s64 heap_key;			/* (B) key of the live entry, or NONE */
	union {
		/*
		 * (C) ready queue link, QUEUED/GHOST; once nothing reaches
		 * a dead timer, the link of a list to free in bulk
		 */
		struct qt_timer *next;
		u32 ring_pos;		/* (C) its record's ring index, RINGED */
		u32 gen;		/* (C) its id slot's generation, ARMED */
	};
	u32 slot : 24;			/* (S) index in its shard's id table */
	u32 flags : 4;			/* (C) QT_TF_* */
	u32 shard : 4;			/* (S) its shard in ctx->shards[] */
	u32 count;			/* (C) expirations pending */
	u32 slack;			/* (C) ns */
	u16 base_idx;			/* (B) see qt_base_of() */
	u8 state;			/* see above */
	u8 nr_entries;			/* (B) heap entries pointing here; see above */
};

/* Latest deadline accepted: hard deadlines (+ slack) still fit ktime_t. */
#define QT_EXPIRES_MAX		(KTIME_MAX - (s64)QTIMER_SLACK_MAX_NS)

/* qt_arm_args.flags, beside QTIMER_F_*: the timer gets QT_TF_RELATIVE_REAL */
#define QT_ARM_RELATIVE_REAL	BIT(31)

struct qt_arm_args {
	u32 clock;			/* QT_CLOCK_* of the heap it goes to */
	u32 flags;			/* QTIMER_F_*, QT_ARM_RELATIVE_REAL */
	ktime_t expires;		/* absolute host time */
	u64 period;
	u32 slack;
	u32 cpu;			/* with QTIMER_F_CPU */
	u64 cookie;
};

static inline unsigned int qt_timer_clock(const struct qt_timer *t)
{
	return READ_ONCE(t->base_idx) % QT_NR_CLOCKS;
}

/* The clock its user armed it on, which its id and records speak of. */
static inline unsigned int qt_timer_user_clock(const struct qt_timer *t)
{
	if (t->flags & QT_TF_RELATIVE_REAL)
		return QT_CLOCK_REALTIME;
	return qt_timer_clock(t);
}

/* Give @t the schedule of @args. */
static inline void qt_timer_set(struct qt_timer *t, const struct qt_arm_args *args)
{
	t->expires = args->expires;
	t->period = args->period;
	t->slack = args->slack;
	if (args->flags & QTIMER_F_CANCEL_ON_SET)
		t->flags |= QT_TF_CANCEL_ON_SET;
	else
		t->flags &= ~QT_TF_CANCEL_ON_SET;
	if (args->flags & QT_ARM_RELATIVE_REAL)
		t->flags |= QT_TF_RELATIVE_REAL;
	else
		t->flags &= ~QT_TF_RELATIVE_REAL;
}

/* The slab cache of timers (timer.c). */
int qt_timer_cache_init(void);
void qt_timer_cache_exit(void);
struct qt_timer *qt_timer_alloc(gfp_t gfp);
unsigned int qt_timer_alloc_bulk(unsigned int nr, struct qt_timer **timers);
void qt_timer_free(struct qt_timer *t);
void qt_timer_free_bulk(unsigned int nr, void **timers);
void qt_timer_free_list(struct qt_timer *list);

#endif /* _QT_TIMER_H */
