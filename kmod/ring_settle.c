// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * Settling a file's record ring (ring.c): reaping what the consumer's tail
 * has passed, which frees a one-shot and re-arms a ticker, then moving the
 * records that wait on the ready queue (the overflow) into the room the
 * reap made.  The expirer settles within its budget on each delivery into the
 * file, poll() and read() a few chunks per call, and the drain, a delayed
 * work, for a consumer that makes no system call at all.
 */

#include <linux/math64.h>
#include <linux/poll.h>
#include <linux/sched.h>
#include <linux/workqueue.h>

#include "base.h"
#include "clockset.h"
#include "ctx.h"
#include "deliver.h"
#include "end.h"
#include "ring.h"

/* Records settled per hold of the file's lock outside the expirer. */
#define QT_RING_SETTLE_CHUNK	256
/* Chunks poll() and read() settle per call (qt_ring_settle_all()). */
#define QT_SETTLE_ALL_CHUNKS	64
/* Chunks the drain settles per run; the next run goes on from there. */
#define QT_DRAIN_CHUNKS		16

/*
 * @t is to die: if nothing can reach it any more, onto @dead, for the
 * caller to free once it dropped the file's lock, which the consumer and
 * the expirer both wait for.
 */
static void qt_ring_settle_let_die(struct qt_timer *t, struct qt_base **held,
				   struct qt_timer **dead)
{
	if (qt_end_let_die(t, held)) {
		t->next = *dead;
		*dead = t;
	}
}

/*
 * The consumer is done with @t's record.  A one-shot (or a cancellation)
 * dies; a ticker fires again at once with the periods it missed counted,
 * or goes back into its heap for its next deadline, which needs room there:
 * -EAGAIN with *@need set when there is none, @t untouched.
 */
static int qt_ring_settle_one(struct qt_ctx *ctx, struct qt_timer *t,
			      struct qt_base **held, struct qt_base **need,
			      struct qt_timer **dead)
{
	struct qt_ring *ring = ctx->ring;
	struct qt_base *base;
	ktime_t now, next;

	if (!t->period || (t->flags & QT_TF_CANCELED)) {
		qt_deliver_detach(ring, t);
		qt_end_timer(t, held);
		return 0;
	}
	/*
	 * The clock was set after the consumer claimed it; or it is being
	 * set, and the walk has not reached this timer yet: the set came
	 * first, as for a timer that fires meanwhile (qt_expire_one()), so
	 * the periods it skipped are no catch-up to count.
	 */
	if ((t->flags & QT_TF_SET_WHILE_READ) ||
	    ((t->flags & QT_TF_CANCEL_ON_SET) && qt_clockset_pending(t->ctx))) {
		qt_deliver_detach(ring, t);
		qt_deliver_queue_canceled(ctx, t, 0);
		return 0;
	}
	base = qt_base_relock(*held, t);
	*held = base;
	now = qt_clock_now(qt_timer_clock(t));
	next = qt_deliver_expires_next(t);
	if (now >= next) {
		u64 missed = div64_u64(now - t->expires, t->period);

		qt_deliver_detach(ring, t);
		t->expires += missed * t->period;
		t->count = min_t(u64, missed, QTIMER_COUNT_MAX);
		qt_deliver_ring_add(ctx, t);
		return 0;
	}
	if (base->heap.nr >= base->heap.cap) {
		*need = base;
		return -EAGAIN;
	}
	qt_deliver_detach(ring, t);
	t->expires = next;
	t->count = 0;
	qt_ctx_timer_armed(t);
	qt_base_push(base, t);
	return 0;
}

/**
 * qt_ring_settle() - Reap what the consumer is done with, then refill.
 * @ctx: a file with a ring, locked.
 * @held: the base the caller carries locked, or NULL (see qt_base_relock()).
 * @budget: records to look at, reaped and refilled together; it takes
 *	what it looked at off *@budget.
 * @need: set to the base whose heap needs room, on -EAGAIN.
 * @dead: where timers that died go, linked by ->next, for the caller to
 *	free with qt_end_ctx() once it dropped the file's lock.
 *
 * Wakes the file's waiters when it wrote records.
 *
 * Return: 0 when done, 1 when the budget ran out first, -EAGAIN when a
 * ticker needs room in *@need's heap before the reap can go on.
 */
int qt_ring_settle(struct qt_ctx *ctx, struct qt_base **held,
		   unsigned int *budget, struct qt_base **need,
		   struct qt_timer **dead)
{
	struct qt_ring *ring = ctx->ring;
	u32 tail = qt_ring_tail(ring), head = ring->head;
	struct qt_timer *t;
	int ret = 0;

	lockdep_assert_held(&ctx->wqh.lock);
	for (; ring->reaped != tail; ring->reaped++) {
		if (!*budget) {
			ret = 1;
			goto out;
		}
		(*budget)--;
		t = ring->owner[qt_ring_types_idx(ring, ring->reaped)];
		if (!t)
			continue;
		ret = qt_ring_settle_one(ctx, t, held, need, dead);
		if (ret)
			goto out;
	}
	while (ctx->ready && ring->head - ring->reaped < ring->entries) {
		if (!*budget) {
			ret = 1;
			goto out;
		}
		(*budget)--;
		t = qt_ctx_ready_pop(ctx);
		if (t->state == QT_GHOST) {
			ctx->nr_ghosts--;
			qt_ring_settle_let_die(t, held, dead);
			continue;
		}
		ctx->nr_ready--;
		qt_deliver_fold(t);
		qt_deliver_ring_write(ctx, ring, t);
	}
	if (!ctx->ready)
		WRITE_ONCE(*ring->flags_p, 0);
out:
	/*
	 * qt_ring_scan()'s cursor never falls behind the reap: a cursor left
	 * 2^32 records behind would look in range again.
	 */
	if (ring->scanned - ring->reaped > ring->head - ring->reaped)
		ring->scanned = ring->reaped;
	if (ring->head != head)
		wake_up_locked_poll(&ctx->wqh, EPOLLIN | EPOLLRDNORM);
	return ret;
}

/*
 * Settle up to @chunks chunks of @ring, dropping the lock between them:
 * tickers with a period of 1 ns re-fire as they are reaped, so a thread
 * that keeps moving the tail to the head would make "all" last as long as
 * it cared to.  A ticker that needs room in a full heap gets it here only
 * if @may_sleep: growing a heap takes the base's resize mutex, which
 * another user's growth may hold, and allocates, so a caller that must not
 * sleep (poll(), O_NONBLOCK read()) leaves that to the drain.  Process
 * context; called and returns with the lock held.  The timers of the last
 * chunk that died are left on @dead (see qt_ring_settle()); the others it
 * frees itself.
 */
static enum qt_settle_end qt_ring_settle_some(struct qt_ctx *ctx,
					      struct qt_ring *ring,
					      unsigned int chunks,
					      bool may_sleep,
					      struct qt_timer **dead)
	__must_hold(&ctx->wqh.lock)
{
	struct qt_base *base, *need;
	unsigned int budget;
	int ret;

	for (;;) {
		base = NULL;
		budget = QT_RING_SETTLE_CHUNK;
		ret = qt_ring_settle(ctx, &base, &budget, &need, dead);
		if (base)
			qt_base_unlock_carried(base);
		if (!ret)
			return QT_SETTLED;
		if (ret == -EAGAIN && !may_sleep)
			return QT_SETTLE_ROOM;
		if (!--chunks)
			return QT_SETTLE_MORE;
		spin_unlock_irq(&ctx->wqh.lock);
		qt_end_ctx(ctx, dead);
		if (ret == -EAGAIN && qt_storage_reserve(need, 1)) {
			spin_lock_irq(&ctx->wqh.lock);
			return QT_SETTLE_STUCK;
		}
		cond_resched();
		spin_lock_irq(&ctx->wqh.lock);
		if (ctx->ring != ring)
			return QT_SETTLE_GONE;
	}
}

/*
 * Settle what poll() or read() can, QT_SETTLE_ALL_CHUNKS chunks at most:
 * the drain, queued at once, goes on from where it stops, and makes room
 * for a ticker when the caller may not sleep.  Called and returns with the
 * lock held.
 *
 * Return: QT_SETTLE_STUCK when a ticker the consumer is done with could
 * not be re-armed for want of memory (it stays behind its record, and the
 * next poll() or read() tries again), QT_SETTLE_ROOM when one waits for the
 * drain to make room, QT_SETTLED otherwise.
 */
enum qt_settle_end qt_ring_settle_all(struct qt_ctx *ctx, bool may_sleep,
				      struct qt_timer **dead)
	__must_hold(&ctx->wqh.lock)
{
	enum qt_settle_end end;

	end = qt_ring_settle_some(ctx, ctx->ring, QT_SETTLE_ALL_CHUNKS,
				  may_sleep, dead);
	if (end == QT_SETTLE_MORE || end == QT_SETTLE_ROOM)
		qt_deliver_drain_arm(ctx->ring, 0);
	return end == QT_SETTLE_MORE ? QT_SETTLED : end;
}

/*
 * After a run of the drain: run again while a ticker stands behind a
 * record (its period after the shortest one's) or records wait for room
 * (soon), backing off while the tail stays where it was.
 */
static void qt_ring_settle_drain_again(struct qt_ctx *ctx,
				       struct qt_ring *ring)
{
	u32 tail = qt_ring_tail(ring);
	u64 ns = 0;

	lockdep_assert_held(&ctx->wqh.lock);
	ring->drain_armed = false;
	if (!ring->nr_owned)
		ring->drain_period = 0;
	if (ring->drain_period)
		ns = max_t(u64, ring->drain_period, QT_DRAIN_MIN_NS);
	if (ctx->ready)
		ns = QT_DRAIN_MIN_NS;
	if (!ns) {
		ring->drain_idle = 0;
		return;
	}
	if (tail != ring->drain_tail)
		ring->drain_idle = 0;
	else if (ring->drain_idle < QT_DRAIN_BACKOFF)
		ring->drain_idle++;
	ring->drain_tail = tail;
	qt_deliver_drain_arm(ring, min_t(u64, ns << ring->drain_idle,
					 max_t(u64, ns, QT_DRAIN_MAX_NS)));
}

/*
 * The drain: reap what the consumer passed and move waiting records in, as
 * poll() does, for consumers that never call it.  An edge-triggered epoll
 * or an io_uring multishot poll calls ->poll() only after a wakeup, and a
 * mapped consumer that advances the tail makes none: without this, a
 * ticker whose record it took would never fire again and records waiting
 * for room would never arrive.  It runs in process context, a chunk per
 * hold of the file's lock, at most QT_DRAIN_CHUNKS chunks a run.
 */
void qt_ring_settle_drain_work(struct work_struct *work)
{
	struct qt_ring *ring = container_of(to_delayed_work(work),
					    struct qt_ring, drain);
	struct qt_ctx *ctx = ring->ctx;
	struct qt_timer *dead = NULL;

	spin_lock_irq(&ctx->wqh.lock);
	/* The file is being released: its timers are all dying. */
	if (ctx->ring == ring &&
	    qt_ring_settle_some(ctx, ring, QT_DRAIN_CHUNKS, true,
				&dead) != QT_SETTLE_GONE)
		qt_ring_settle_drain_again(ctx, ring);
	spin_unlock_irq(&ctx->wqh.lock);
	qt_end_ctx(ctx, &dead);
}
