/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * Timer bases: one 4-ary heap per CPU per clock, each driven by an hrtimer
 * programmed to its earliest deadline.  A base holds timers and knows
 * nothing of the files that own them.
 */
#ifndef _QT_BASE_H
#define _QT_BASE_H

#include <linux/hrtimer.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>

#include "clock.h"
#include "heap.h"
#include "timer.h"

/*
 * Histogram of expiry lateness (expirer's now - t->expires, slack included):
 * bucket 0 counts under 2^QT_LATENESS_SHIFT ns, bucket i (i >= 1) from
 * 2^(QT_LATENESS_SHIFT + i - 1) ns, the last one everything above (16.8 ms).
 */
#define QT_LATENESS_BUCKETS	16
#define QT_LATENESS_SHIFT	10

static inline unsigned int qt_base_lateness_bucket(u64 late_ns)
{
	return min_t(unsigned int, fls64(late_ns >> QT_LATENESS_SHIFT),
		     QT_LATENESS_BUCKETS - 1);
}

static inline void qt_base_lateness_add(u64 *sum, const u64 *add)
{
	unsigned int i;

	for (i = 0; i < QT_LATENESS_BUCKETS; i++)
		sum[i] += add[i];
}

/*
 * Timers an expirer pops per base-lock hold, delivered after the lock is
 * dropped with one context-lock hold and one wakeup per file
 * (qt_expire_deliver()).
 */
#define QT_BATCH		64

struct qt_base_stats {
	u64 armed;
	u64 fired;
	u64 cancelled;
	u64 modified;
	u64 coalesced;		/* fired by a run that fired another first */
	u64 deferred_runs;	/* runs handed to the worker by the budget */
	u64 max_run_ns;		/* longest hrtimer callback */
	/* timers fired, by lateness: see qt_base_lateness_bucket() */
	u64 lateness[QT_LATENESS_BUCKETS];
};

struct qt_base {
	spinlock_t lock;	/* protects all below, and (B) timer fields */
	struct qt_heap heap;
	/* The heap array's pages (see qt_storage_remap()), under resize. */
	struct page **pages;
	unsigned long nr_pages;
	struct mutex resize;	/* serialises heap array changes */
	u32 nr_dead;		/* entries that are stale or whose timer is dead */
	u16 idx;		/* cpu * QT_NR_CLOCKS + clock */
	u8 clock;		/* QT_CLOCK_* */
	bool online;		/* false while its CPU is offline */
	bool expiring;		/* an expirer (hrtimer or worker) is running */
	bool deferred;		/* the worker owns the next run */
	struct hrtimer hrtimer;
	struct work_struct work;
	/* Compaction and shrinking, a chunk per lock hold (qt_base_compact_fn()). */
	struct work_struct compact_work;
	/*
	 * The expirer's timers in transit (popped, not yet delivered), here
	 * rather than 1 KiB on the softirq stack: only the one expirer that
	 * holds base->expiring uses it.
	 */
	struct qt_timer *transit[2 * QT_BATCH];
	struct qt_base_stats stats;
} ____cacheline_aligned_in_smp;

extern struct qt_base *qt_bases;

static inline struct qt_base *qt_base_get(unsigned int cpu, unsigned int clock)
{
	return &qt_bases[cpu * QT_NR_CLOCKS + clock];
}

/* The base @t was last pushed on: a racy read unless its lock is held. */
static inline struct qt_base *qt_base_of(const struct qt_timer *t)
{
	return &qt_bases[READ_ONCE(t->base_idx)];
}

int qt_base_init(enum hrtimer_restart (*expire)(struct hrtimer *),
		 work_func_t expire_work, s64 (*surface)(struct qt_timer *, ktime_t));
void qt_base_exit(void);

/* storage.c: the heap arrays' memory */
int qt_storage_reserve(struct qt_base *base, u32 extra);
void qt_storage_shrink(struct qt_base *base);
void qt_storage_free(struct qt_base *base);

struct qt_base *qt_base_lock_timer(struct qt_timer *t)
	__acquires(&qt_base_of(t)->lock);

/*
 * A base lock carried from one timer to the next (or, in a SUBMIT chunk,
 * from one op to the next) is held across code that sparse checks a piece
 * at a time, so it is left out of sparse's lock count: qt_base_relock()
 * hands one on, and qt_base_unlock_carried() lets the last one go.
 */
static inline void qt_base_unlock_carried(struct qt_base *base)
{
	__acquire(&base->lock);
	spin_unlock(&base->lock);
}

/*
 * Lock @t's base, keeping @held (the base locked for the previous timer, or
 * NULL) when it is the same one: timers handled together mostly share one.
 */
static inline struct qt_base *qt_base_relock(struct qt_base *held,
					     struct qt_timer *t)
{
	if (held) {
		if (likely(READ_ONCE(t->base_idx) == held->idx))
			return held;
		qt_base_unlock_carried(held);
	}
	held = qt_base_lock_timer(t);
	__release(&held->lock);		/* carried from here on */
	return held;
}

void qt_base_program(struct qt_base *base, ktime_t not_before);
void qt_base_surface_get(void);
void qt_base_surface_put(void);
bool qt_base_collect(struct qt_base *base, ktime_t now,
		     struct qt_timer **batch, unsigned int *nr,
		     unsigned int max, unsigned int *scan);
void qt_base_push(struct qt_base *base, struct qt_timer *t);
void qt_base_unlink(struct qt_base *base, struct qt_timer *t);
void qt_base_put_timer(struct qt_base *base, struct qt_timer *t);
void qt_base_trim(void);
void qt_base_stats_sum(unsigned int cpu, struct qt_base_stats *sum,
		       u32 *nr_entries, u32 *nr_dead);

#endif /* _QT_BASE_H */
