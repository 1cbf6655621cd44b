// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * The hierarchical timing wheel of wheel.h.  Level l has 64 buckets of
 * 8^l ticks; bucket i of level l comes due at every tick t with
 * t % 8^l == 0 and (t >> 3l) % 64 == i.  A timer is placed in "slot"
 * s = ceil(expires / 8^l) of the finest level l where s lies within the 64
 * slots that level has not yet passed, so the bucket comes due at tick
 * s * 8^l, at or after its expiry and before any other tick that would
 * empty the same bucket.  Nothing is moved between levels (the kernel's
 * choice since 4.8): the price is lateness up to the level's granularity,
 * the gain that a timer is touched once when armed, once when cancelled,
 * and once when it fires.  A bitmap per level lets expiry jump over empty
 * ticks in O(levels), as the kernel's next-expiry search does for NOHZ.
 */

#include <linux/bitops.h>
#include <linux/limits.h>
#include <linux/string.h>

#include "wheel.h"

#define QT_WHEEL_LVL_MASK	(QT_WHEEL_LVL_SIZE - 1)

/* The first slot of level @lvl at or after @tick, in units of 8^lvl ticks. */
static inline u64 qt_wheel_slot(u64 tick, unsigned int lvl)
{
	return (tick + QT_WHEEL_LVL_GRAN(lvl) - 1) >> QT_WHEEL_LVL_SHIFT(lvl);
}

/**
 * qt_wheel_init() - Start an empty wheel at tick @clk.
 * @w: the wheel.
 * @clk: the first tick it will expire; timers due before it fire at it.
 */
void qt_wheel_init(struct qt_wheel *w, u64 clk)
{
	memset(w, 0, sizeof(*w));
	w->clk = clk;
}

/**
 * qt_wheel_level() - The level a timer due at @expires goes to at @clk.
 * @clk: the wheel's clock; at most @expires.
 * @expires: at most @clk + QT_WHEEL_MAX_DELTA.
 *
 * The finest level whose 64 unexpired slots reach @expires.  Below 64
 * ticks that is level 0 and the timer fires exactly on time; beyond, level
 * l is taken only when level l - 1 could not hold it, that is when it is
 * more than 63 * 8^(l-1) ticks away, so the lateness (under 8^l) stays
 * under 8/63 of the time to expiry.  Exported for the tests' bound.
 *
 * Return: the level, below QT_WHEEL_DEPTH.
 */
unsigned int qt_wheel_level(u64 clk, u64 expires)
{
	unsigned int lvl;

	for (lvl = 0; lvl < QT_WHEEL_DEPTH - 1; lvl++)
		if (qt_wheel_slot(expires, lvl) - qt_wheel_slot(clk, lvl) < QT_WHEEL_LVL_SIZE)
			break;
	return lvl;
}

/**
 * qt_wheel_add() - Arm a timer that is not pending.
 * @w: the wheel.
 * @t: the timer; qt_wheel_timer_pending(@t) must be false.
 * @expires: the tick at or after which it fires.  One already past fires
 *           at the next tick expired; one beyond QT_WHEEL_MAX_DELTA waits
 *           in the top level and is put back until it is in reach.
 *
 * O(levels) to pick the level, then an O(1) list insertion.
 */
void qt_wheel_add(struct qt_wheel *w, struct qt_wheel_timer *t, u64 expires)
{
	u64 clk = w->clk, slot;
	struct qt_wheel_timer **head;
	unsigned int lvl, idx;

	t->expires = expires;
	if (expires < clk)
		expires = clk;
	if (expires - clk > QT_WHEEL_MAX_DELTA)
		expires = clk + QT_WHEEL_MAX_DELTA;
	lvl = qt_wheel_level(clk, expires);
	slot = qt_wheel_slot(expires, lvl);
	idx = slot & QT_WHEEL_LVL_MASK;

	head = &w->bucket[lvl][idx];
	t->next = *head;
	if (t->next)
		t->next->pprev = &t->next;
	*head = t;
	t->pprev = head;
	w->pending[lvl] |= 1ull << idx;
	w->nr++;
}

/**
 * qt_wheel_del() - Cancel a timer if it is pending.
 * @w: the wheel.
 * @t: the timer.
 *
 * O(1): the timer is unlinked from its bucket.  Which bucket need not be
 * stored: only the first timer of a bucket has its pprev pointing into
 * the bucket array, so that is the only case in which the bucket can have
 * become empty and its pending bit must go.
 *
 * Return: true if it was pending.
 */
bool qt_wheel_del(struct qt_wheel *w, struct qt_wheel_timer *t)
{
	uintptr_t first = (uintptr_t)&w->bucket[0][0];
	uintptr_t pprev = (uintptr_t)t->pprev;

	if (!t->pprev)
		return false;
	*t->pprev = t->next;
	if (t->next) {
		t->next->pprev = t->pprev;
	} else if (pprev - first < sizeof(w->bucket) && !*t->pprev) {
		unsigned long i = (pprev - first) / sizeof(w->bucket[0][0]);

		w->pending[i / QT_WHEEL_LVL_SIZE] &= ~(1ull << (i & QT_WHEEL_LVL_MASK));
	}
	t->pprev = NULL;
	w->nr--;
	return true;
}

/**
 * qt_wheel_next_expiry() - The next tick at which a bucket comes due.
 * @w: the wheel.
 *
 * Per level, the first pending bucket at or after the level's next slot,
 * found by rotating the level's bitmap so that slot is bit 0.  Timers in
 * that bucket may be due earlier (by less than the level's granularity):
 * this is when they fire, not when they expire.
 *
 * Return: the tick, at least @w->clk; U64_MAX when nothing is pending.
 */
u64 qt_wheel_next_expiry(const struct qt_wheel *w)
{
	u64 best = U64_MAX;
	unsigned int lvl;

	for (lvl = 0; lvl < QT_WHEEL_DEPTH; lvl++) {
		u64 slot, bits, tick;

		if (!w->pending[lvl])
			continue;
		slot = qt_wheel_slot(w->clk, lvl);
		bits = ror64(w->pending[lvl], slot & QT_WHEEL_LVL_MASK);
		tick = (slot + __ffs64(bits)) << QT_WHEEL_LVL_SHIFT(lvl);
		if (tick < best)
			best = tick;
	}
	return best;
}

/**
 * qt_wheel_expire_next() - Take the timers of the next due tick.
 * @w: the wheel.
 * @now: the current tick; below U64_MAX.
 *
 * Finds the next tick at or before @now at which a bucket comes due,
 * empties every level's bucket due at it and moves the clock past it.
 * Timers not yet due (those beyond QT_WHEEL_MAX_DELTA when armed) are put
 * back; the rest are returned.  When nothing is due by @now the clock
 * moves to @now + 1, so that timers armed next are placed relative to it.
 * Call it until it returns NULL to expire everything due by @now.
 *
 * Return: the expired timers, linked through ->next and no longer
 * pending, in no particular order (all fire at the same tick); NULL when
 * none is due.  The caller may re-arm each one once it has read ->next.
 */
struct qt_wheel_timer *qt_wheel_expire_next(struct qt_wheel *w, u64 now)
{
	struct qt_wheel_timer *due[QT_WHEEL_DEPTH], *out = NULL, **tail = &out;
	unsigned int lvl, nr_lvl;
	u64 tick;

	do {
		tick = qt_wheel_next_expiry(w);
		if (tick > now) {
			if (now >= w->clk)
				w->clk = now + 1;
			break;
		}
		for (lvl = 0; lvl < QT_WHEEL_DEPTH; lvl++) {
			unsigned int idx;

			if (tick & (QT_WHEEL_LVL_GRAN(lvl) - 1))
				break;
			idx = (tick >> QT_WHEEL_LVL_SHIFT(lvl)) & QT_WHEEL_LVL_MASK;
			due[lvl] = w->bucket[lvl][idx];
			w->bucket[lvl][idx] = NULL;
			w->pending[lvl] &= ~(1ull << idx);
		}
		nr_lvl = lvl;
		/* Past the tick before anything is put back, so not into it. */
		w->clk = tick + 1;
		for (lvl = 0; lvl < nr_lvl; lvl++) {
			struct qt_wheel_timer *t, *next;

			for (t = due[lvl]; t; t = next) {
				next = t->next;
				t->pprev = NULL;
				w->nr--;
				if (unlikely(t->expires > tick)) {
					qt_wheel_add(w, t, t->expires);
					continue;
				}
				*tail = t;
				tail = &t->next;
			}
		}
		*tail = NULL;
	} while (!out);
	return out;
}
