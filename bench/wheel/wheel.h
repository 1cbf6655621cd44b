/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * A hierarchical timing wheel after the kernel's timer wheel
 * (kernel/time/timer.c since 4.8): levels of 64 buckets, each level's
 * buckets 8 times as coarse as the one below, and no cascading.  A timer
 * goes into the finest level whose 64 buckets reach its expiry, in the
 * bucket that ends at or after it, and fires when that bucket comes due:
 * never early, late by less than the granularity of its level, which is
 * under 8/63 of the time it was armed for (exact to the tick below 64
 * ticks).  Adding and deleting are O(1) list operations; expiry walks only
 * buckets that are due.  It exists to be measured against the 4-ary heap
 * (kmod/heap.c) in bench/wheel/; qtimer keeps the heap (see
 * Documentation/benchmarks.rst).  Like the heap it neither allocates nor
 * locks, and it builds unchanged in the kernel or, over selftests/shim, in
 * user space.  Times are in ticks, whatever the caller makes a tick.
 */
#ifndef _QT_WHEEL_H
#define _QT_WHEEL_H

#include <linux/limits.h>
#include <linux/types.h>

#define QT_WHEEL_LVL_BITS	6
#define QT_WHEEL_LVL_SIZE	(1u << QT_WHEEL_LVL_BITS)
#define QT_WHEEL_CLK_SHIFT	3	/* each level 8x coarser */
/*
 * Nine levels reach 63 * 8^8 ticks ahead (12 days at 1 ms a tick, as the
 * kernel's with HZ=1000).  A timer further out waits in the top level's
 * last bucket and is put back when that comes due, so it is late by no
 * more than any other; the kernel instead fires it early.
 */
#define QT_WHEEL_DEPTH		9
#define QT_WHEEL_LVL_SHIFT(lvl)	((lvl) * QT_WHEEL_CLK_SHIFT)
#define QT_WHEEL_LVL_GRAN(lvl)	(1ull << QT_WHEEL_LVL_SHIFT(lvl))
#define QT_WHEEL_MAX_DELTA \
	((u64)(QT_WHEEL_LVL_SIZE - 1) << QT_WHEEL_LVL_SHIFT(QT_WHEEL_DEPTH - 1))

/* An hlist node, as in the kernel: pprev is NULL while not pending. */
struct qt_wheel_timer {
	struct qt_wheel_timer *next;
	struct qt_wheel_timer **pprev;
	u64 expires;	/* tick at or after which it fires */
};

/* Zero it, or qt_wheel_init() it, before use. */
struct qt_wheel {
	u64 clk;			/* the next tick not yet expired */
	u64 nr;				/* timers pending */
	u64 pending[QT_WHEEL_DEPTH];	/* bit i: bucket i of the level has timers */
	struct qt_wheel_timer *bucket[QT_WHEEL_DEPTH][QT_WHEEL_LVL_SIZE];
};

static inline bool qt_wheel_timer_pending(const struct qt_wheel_timer *t)
{
	return t->pprev;
}

void qt_wheel_init(struct qt_wheel *w, u64 clk);
void qt_wheel_add(struct qt_wheel *w, struct qt_wheel_timer *t, u64 expires);
bool qt_wheel_del(struct qt_wheel *w, struct qt_wheel_timer *t);
u64 qt_wheel_next_expiry(const struct qt_wheel *w);
struct qt_wheel_timer *qt_wheel_expire_next(struct qt_wheel *w, u64 now);
unsigned int qt_wheel_level(u64 clk, u64 expires);

#endif /* _QT_WHEEL_H */
