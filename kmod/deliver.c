// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * Delivery: a fired or cancelled timer's record is built here and goes
 * where its file takes records from, the ring (written at head, or the
 * overflow behind it when the ring is full or records already wait) or the
 * ready queue; and a ring record is taken back here, by the claim CANCEL,
 * MODIFY and a clock set make.  Below read.c, ring.c, expire.c, ops.c and
 * clockset.c, which all deliver or take back, so that none of them calls
 * another to do it.
 */

#include <linux/math64.h>
#include <linux/overflow.h>
#include <linux/poll.h>

#include "clockset.h"
#include "ctx.h"
#include "deliver.h"

/* @when one @period on, saturated at QT_EXPIRES_MAX. */
ktime_t qt_deliver_add_period(ktime_t when, u64 period)
{
	if (when > QT_EXPIRES_MAX - (s64)min_t(u64, period, QT_EXPIRES_MAX))
		return QT_EXPIRES_MAX;
	return when + period;
}

ktime_t qt_deliver_expires_next(const struct qt_timer *t)
{
	return qt_deliver_add_period(t->expires, t->period);
}

/*
 * Whole periods of the ticker @t that have passed by @now since its
 * expires; @t->expires plus that many periods is at most @now, so it never
 * overflows.
 */
u64 qt_deliver_missed(const struct qt_timer *t, ktime_t now)
{
	if (now <= t->expires)
		return 0;
	return div64_u64(now - t->expires, t->period);
}

/*
 * Bring a fired timer's count up to date before its record is taken: a
 * periodic timer's count takes in every period that passed since it fired,
 * and its expires becomes the latest of those: the next deadline is one
 * period after it, Go's when + period * (1 + late / period), so the ticker
 * never drifts.
 */
void qt_deliver_fold(struct qt_timer *t)
{
	unsigned int clock = qt_timer_clock(t);
	u64 count;

	/*
	 * The clock was set and the work that cancels cancel-on-set timers has
	 * not run yet: a read right after clock_settime() returns must see the
	 * cancellation as timerfd's does (ECANCELED), not a plain record.
	 */
	if ((t->flags & QT_TF_CANCEL_ON_SET) && qt_clockset_pending(t->ctx))
		t->flags |= QT_TF_CANCELED;
	count = t->count;
	if (t->period && !(t->flags & QT_TF_CANCELED)) {
		u64 missed = qt_deliver_missed(t, qt_clock_now(clock));

		count += missed;
		t->expires += missed * t->period;
	}
	t->count = min_t(u64, count, QTIMER_COUNT_MAX);
}

/*
 * @when, a host time on @t's clock, as @t's user sees it: wall time now for
 * a relative CLOCK_REALTIME timer, else shifted by the @ns_offset of a time
 * namespace, saturated: another namespace may see beyond ktime_t.
 */
s64 qt_deliver_user_expires(const struct qt_timer *t, ktime_t when,
			    ktime_t ns_offset)
{
	s64 ns;

	if (t->flags & QT_TF_RELATIVE_REAL)
		return ktime_mono_to_real(when);
	if (check_add_overflow(when, ns_offset, &ns))
		return ns_offset > 0 ? KTIME_MAX : KTIME_MIN;
	return ns;
}

/* @t's record, its expiry seen from the namespace of @ns_offset. */
void qt_deliver_fill(struct qt_ctx *ctx, struct qt_timer *t,
		     struct qtimer_record *rec, const ktime_t *ns_offset)
{
	rec->id = qt_ctx_timer_id(t);
	rec->cookie = t->cookie;
	rec->expires_ns = qt_deliver_user_expires(t, t->expires,
						  ns_offset[qt_timer_clock(t)]);
	rec->count = t->count;
	rec->flags = 0;
	if (!t->period || (t->flags & QT_TF_CANCELED))
		rec->flags |= QTIMER_REC_LAST;
	if (t->flags & QT_TF_CANCELED)
		rec->flags |= QTIMER_REC_CANCELED;
}

/* Queue @t's record: into the file's ring if it has one. */
void qt_deliver_queue(struct qt_ctx *ctx, struct qt_timer *t)
{
	lockdep_assert_held(&ctx->wqh.lock);
	if (ctx->ring)
		qt_deliver_ring_add(ctx, t);
	else
		qt_ctx_ready_queue(ctx, t);
}

/*
 * Queue the cancellation record of a cancel-on-set timer that is not armed
 * (any more) when the clock is set, with @count expirations pending.  The
 * caller wakes the file's waiters: once for all it queued, as each wakeup
 * calls every waiter, and their number is the file owner's choice.
 */
void __qt_deliver_queue_canceled(struct qt_ctx *ctx, struct qt_timer *t,
				 u32 count)
{
	lockdep_assert_held(&ctx->wqh.lock);
	t->flags = (t->flags & ~QT_TF_SET_WHILE_READ) | QT_TF_CANCELED;
	t->count = count;
	qt_deliver_queue(ctx, t);
}

/* The same, and wake the file's waiters. */
void qt_deliver_queue_canceled(struct qt_ctx *ctx, struct qt_timer *t,
			       u32 count)
{
	__qt_deliver_queue_canceled(ctx, t, count);
	wake_up_locked_poll(&ctx->wqh, EPOLLIN | EPOLLRDNORM);
}

/*
 * Have the drain run @ns from now, unless it runs sooner anyway.  Rounded
 * up to whole jiffies: a ticker's drain never comes before it is due.
 */
void qt_deliver_drain_arm(struct qt_ring *ring, u64 ns)
{
	unsigned long delay = nsecs_to_jiffies(ns) + 1;

	if (ring->drain_armed && time_before_eq(ring->drain_at, jiffies + delay))
		return;
	ring->drain_armed = true;
	ring->drain_at = jiffies + delay;
	mod_delayed_work(system_wq, &ring->drain, delay);
}

/* Write @t's record at head and publish it; @t becomes RINGED. */
void qt_deliver_ring_write(struct qt_ctx *ctx, struct qt_ring *ring,
			   struct qt_timer *t)
{
	u32 idx = qt_ring_types_idx(ring, ring->head);
	struct qtimer_record rec, *slot = &ring->recs[idx];

	qt_deliver_fill(ctx, t, &rec, ring->ns_offset);
	WRITE_ONCE(slot->id, rec.id);
	WRITE_ONCE(slot->cookie, rec.cookie);
	WRITE_ONCE(slot->expires_ns, rec.expires_ns);
	WRITE_ONCE(slot->count, rec.count);
	WRITE_ONCE(slot->flags, rec.flags | QTIMER_REC_READY);
	ring->owner[idx] = t;
	ring->nr_owned++;
	t->ring_pos = ring->head;
	t->state = QT_RINGED;
	ring->head++;
	/* The record before the head that shows it (the consumer acquires). */
	smp_store_release(ring->head_p, ring->head);
	/*
	 * A ticker is due again a period from now: the drain looks then
	 * whether the consumer passed its record, as nothing else may.
	 */
	if (t->period && !(t->flags & QT_TF_CANCELED)) {
		if (!ring->drain_period || t->period < ring->drain_period)
			ring->drain_period = t->period;
		qt_deliver_drain_arm(ring,
				     max_t(u64, t->period, QT_DRAIN_MIN_NS));
	}
}

/*
 * @t fired (count set) or was cancelled by a clock set: its record goes into
 * the ring, or behind the records already waiting when there are any or the
 * ring is full, so that the ring's order stays the delivery order.
 */
void qt_deliver_ring_add(struct qt_ctx *ctx, struct qt_timer *t)
{
	struct qt_ring *ring = ctx->ring;

	lockdep_assert_held(&ctx->wqh.lock);
	if (!ctx->ready && ring->head - ring->reaped < ring->entries) {
		qt_deliver_ring_write(ctx, ring, t);
		return;
	}
	qt_ctx_ready_queue(ctx, t);
	WRITE_ONCE(*ring->flags_p, QTIMER_RING_OVERFLOW);
	/* It moves in once the tail frees room: the drain looks for that. */
	qt_deliver_drain_arm(ring, QT_DRAIN_MIN_NS);
}

/*
 * Void @t's record, as CANCEL and MODIFY must, unless the consumer claimed
 * it first: one atomic operation decides.  Returns true if the record is
 * void (also when the consumer voided it itself), false if it was claimed.
 * An honest consumer writes the word once, by its claim; one that keeps
 * changing its other bits could make every compare-and-swap fail, so after
 * a few the kernel takes the word by exchange: what it held decides, and a
 * claim it finds is put back.  Either way the answer is final: a record
 * said void is VOID in the ring, and read() no longer stands behind it.
 * A record the kernel's read() claimed is claimed, whatever the shared
 * word says by now: it is being copied out.
 */
/* Whether the kernel's read() claimed the record at @pos (ring->taken). */
static bool qt_deliver_taken_by_read(const struct qt_ring *ring, u32 pos)
{
	unsigned int i;

	for (i = 0; i < ring->nr_taken; i++)
		if (ring->taken[i] == pos)
			return true;
	return false;
}

bool qt_deliver_void(struct qt_ring *ring, struct qt_timer *t)
{
	u32 *flags = &ring->recs[qt_ring_types_idx(ring, t->ring_pos)].flags;
	u32 old = READ_ONCE(*flags), was;
	int tries;

	if (qt_deliver_taken_by_read(ring, t->ring_pos))
		return false;
	for (tries = 0; tries < 8; tries++) {
		if ((old & QTIMER_REC_CLAIM) == QTIMER_REC_VOID)
			return true;
		if ((old & QTIMER_REC_CLAIM) != QTIMER_REC_READY)
			return false;
		was = cmpxchg(flags, old, (old & ~QTIMER_REC_CLAIM) | QTIMER_REC_VOID);
		if (was == old)
			return true;
		old = was;
	}
	was = xchg(flags, QTIMER_REC_VOID);
	if ((was & QTIMER_REC_CLAIM) == QTIMER_REC_READY ||
	    (was & QTIMER_REC_CLAIM) == QTIMER_REC_VOID)
		return true;
	cmpxchg(flags, QTIMER_REC_VOID, was);
	return false;
}

/*
 * Whether @t's record still waits for its consumer: READY in the shared
 * word and not claimed by the kernel's read().  A look, not a claim: the
 * answer holds for the moment it was read, as any claim's does.
 */
bool qt_deliver_unclaimed(struct qt_ring *ring, struct qt_timer *t)
{
	u32 idx = qt_ring_types_idx(ring, t->ring_pos);
	u32 flags = READ_ONCE(ring->recs[idx].flags);

	return !qt_deliver_taken_by_read(ring, t->ring_pos) &&
	       (flags & QTIMER_REC_CLAIM) == QTIMER_REC_READY;
}

/* @t no longer stands behind its record: the reap passes it by. */
void qt_deliver_detach(struct qt_ring *ring, struct qt_timer *t)
{
	ring->owner[qt_ring_types_idx(ring, t->ring_pos)] = NULL;
	ring->nr_owned--;
}
