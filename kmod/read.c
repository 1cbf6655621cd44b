// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * Records: read() takes fired timers off the ready queue and copies their
 * records out, several per call.
 *
 * Periodic timers are not re-armed by the expiry path: once fired they wait
 * on the ready queue, and read() counts the periods that passed meanwhile
 * and re-arms them, as timerfd does.  A ticker nobody reads therefore costs
 * one interrupt, however short its period, and has one pending record.
 */

#include <linux/math64.h>
#include <linux/overflow.h>
#include <linux/poll.h>
#include <linux/sched/signal.h>
#include <linux/uio.h>

#include "base.h"
#include "batch.h"
#include "clockset.h"
#include "ctx.h"
#include "deliver.h"
#include "end.h"
#include "ring.h"
#include "trace.h"

/* Records gathered per lock hold in read(), copied out after it. */
#define QT_READ_CHUNK		16

/*
 * Ready-queue entries one sweep step looks at: each may free a timer under
 * the context lock, which costs about 0.2 ms under KASAN and TCG.
 */
#define QT_SWEEP_CHUNK		64

/*
 * Cancelled timers stay on the ready queue until read() reaches them.  Keep
 * them from piling up when a file cancels or modifies fired timers and never
 * reads: once they outnumber the live ones, every op that adds one walks
 * QT_SWEEP_CHUNK more entries of the queue, from where the last step
 * stopped (ctx->sweep_at, which qt_ctx_ready_pop() forgets if it takes it), and
 * frees the GHOSTs on the way.  The walk outpaces the ghosts that ops add,
 * and no step holds the context lock for more than a chunk, however long
 * the queue: amortised O(1), bounded O(1).
 */
void qt_read_sweep(struct qt_ctx *ctx, struct qt_batch *batch)
{
	struct qt_timer **link, *t;
	unsigned int n = 0;

	lockdep_assert_held(&ctx->wqh.lock);
	if (ctx->nr_ghosts <= ctx->nr_ready + 64)
		return;
	qt_batch_drop_base(batch);
	link = ctx->sweep_at ? &ctx->sweep_at->next : &ctx->ready;
	while ((t = *link) && n++ < QT_SWEEP_CHUNK) {
		if (t->state == QT_GHOST) {
			*link = t->next;
			if (ctx->ready_tail == &t->next)
				ctx->ready_tail = link;
			ctx->nr_ghosts--;
			qt_end_free_when_unreferenced(t);
			continue;
		}
		ctx->sweep_at = t;
		link = &t->next;
	}
	/* At the end of the queue: the next step starts at its head. */
	if (!t)
		ctx->sweep_at = NULL;
}

/* Fill @rec from a QUEUED timer and mark it READING. */
static void qt_take_record(struct qt_ctx *ctx, struct qt_timer *t,
			   struct qtimer_record *rec, const ktime_t *ns_offset)
{
	qt_deliver_fold(t);
	t->state = QT_READING;
	ctx->nr_ready--;
	qt_deliver_fill(ctx, t, rec, ns_offset);
	trace_qtimer_read(rec->id, rec->count, rec->flags);
}

/*
 * Settle the timers a read() took: delivered ones die (one-shot) or re-arm
 * (periodic); those whose record could not be copied go back to the front
 * of the queue, so a fault loses nothing.  Returns -EAGAIN with *done set
 * when a periodic timer's heap needs to grow first.
 *
 * The timers are settled under one hold of each base lock they share.
 * Those consumed are ENDED, for qt_end_ctx() to free their ids; those that
 * are now free (DEAD with no heap entry left) are collected on @dead,
 * linked by ->next, for the caller to free once it dropped the delivery
 * lock.
 */
static int qt_read_settle(struct qt_ctx *ctx, struct qt_timer **taken,
			  unsigned int nr, unsigned int copied, unsigned int *done,
			  struct qt_timer **dead)
{
	struct qt_base *base = NULL;
	unsigned int i;
	int ret = 0;

	lockdep_assert_held(&ctx->wqh.lock);
	for (i = *done; i < copied; i++) {
		struct qt_timer *t = taken[i];

		if (t->state == QT_ORPHAN) {
			if (qt_end_let_die(t, &base)) {
				t->next = *dead;
				*dead = t;
			}
			continue;
		}
		if (!t->period || (t->flags & QT_TF_CANCELED)) {
			qt_end_timer(t, &base);
			continue;
		}
		if (t->flags & QT_TF_SET_WHILE_READ) {
			/* The clock was set meanwhile: cancelled, not re-armed. */
			qt_deliver_queue_canceled(ctx, t, 0);
			continue;
		}
		base = qt_base_relock(base, t);
		if (base->heap.nr >= base->heap.cap) {
			ret = -EAGAIN;
			break;
		}
		t->expires = qt_deliver_expires_next(t);
		t->count = 0;
		qt_ctx_timer_armed(t);
		qt_base_push(base, t);
	}
	if (base)
		qt_base_unlock_carried(base);
	*done = i;
	if (ret)
		return ret;
	/* Back to the front in their original order. */
	for (i = nr; i-- > copied; ) {
		struct qt_timer *t = taken[i];

		if (t->state == QT_ORPHAN) {
			qt_end_free_when_unreferenced(t);
			continue;
		}
		/* Its record, back on the queue, becomes the cancellation. */
		if (t->flags & QT_TF_SET_WHILE_READ)
			t->flags = (t->flags & ~QT_TF_SET_WHILE_READ) | QT_TF_CANCELED;
		t->state = QT_QUEUED;
		qt_ctx_ready_prepend(ctx, t);
		ctx->nr_ready++;
	}
	if (nr > copied) {
		/* Set up meanwhile: what went back is the ring's overflow. */
		if (ctx->ring)
			WRITE_ONCE(*ctx->ring->flags_p, QTIMER_RING_OVERFLOW);
		wake_up_locked_poll(&ctx->wqh, EPOLLIN | EPOLLRDNORM);
	}
	return 0;
}

/*
 * A read() settles the chunk it copied out under the same hold of the file's
 * lock as it takes the next, and ends what it consumed (qt_end_ctx(), which
 * takes the lock again) only every this many records, before it sleeps and
 * before it returns: each hold is one the expirer may have to wait for.
 */
#define QT_READ_END_EVERY	256

/* End what a read() consumed, once it dropped the file's lock. */
static void qt_read_end(struct qt_ctx *ctx, struct qt_timer **dead,
			unsigned int *unended)
{
	qt_end_ctx(ctx, dead);
	*unended = 0;
}

ssize_t qt_read_records(struct qt_ctx *ctx, struct iov_iter *to, bool nonblock)
{
	struct qtimer_record recs[QT_READ_CHUNK];
	struct qt_timer *taken[QT_READ_CHUNK], *dead = NULL;
	size_t max = iov_iter_count(to) / sizeof(recs[0]), got = 0;
	unsigned int nr = 0, copied = 0, done, clock, unended = 0, popped;
	ktime_t ns_offset[QT_NR_CLOCKS];
	struct qt_timer *t;
	ssize_t ret = 0;
	int err = -EFAULT;
	bool handoff = false;

	if (!max)
		return -EINVAL;
	/* Pairs with qt_ring_setup()'s release: the ring is set up. */
	if (smp_load_acquire(&ctx->ring))
		return qt_ring_read(ctx, to, nonblock);
	/* The reader's time namespace, looked up once rather than per record. */
	for (clock = 0; clock < QT_NR_CLOCKS; clock++)
		ns_offset[clock] = qt_clock_timens_offset(qt_clock_id(clock));
	spin_lock_irq(&ctx->wqh.lock);
	for (;;) {
		/* Settle what the last round copied out (or could not). */
		done = 0;
		while (nr && qt_read_settle(ctx, taken, nr, copied, &done,
					    &dead) == -EAGAIN) {
			spin_unlock_irq(&ctx->wqh.lock);
			/*
			 * A delivered ticker goes back into its heap, which
			 * needs room.  Without memory for it, neither its
			 * record nor those after it count as delivered: they go
			 * back to the queue, as after a fault, and the read
			 * returns what came before them, or -ENOMEM.  The
			 * ticker's count and deadline are kept, so nothing is
			 * lost and the next read() catches up.
			 */
			if (qt_storage_reserve(qt_base_of(taken[done]), 1)) {
				copied = done;
				err = -ENOMEM;
			}
			spin_lock_irq(&ctx->wqh.lock);
		}
		got += copied;
		unended += copied;
		if (copied < nr) {
			if (!got)
				ret = err;
			break;
		}
		nr = 0;
		copied = 0;
		/* What it has, rather than hold up a signal for the rest. */
		if (got >= max || (got && signal_pending(current)))
			break;
		/*
		 * A ring set up meanwhile takes the file's records from now
		 * on (qt_deliver_ring_add()): what is queued is its overflow,
		 * for qt_ring_read() to move in order.
		 */
		if (ctx->ring) {
			handoff = !got;
			break;
		}
		if (!ctx->nr_ready) {
			if (got || nonblock) {
				if (!got)
					ret = -EAGAIN;
				break;
			}
			/* What it consumed is not kept while it sleeps. */
			if (unended || dead) {
				spin_unlock_irq(&ctx->wqh.lock);
				qt_read_end(ctx, &dead, &unended);
				spin_lock_irq(&ctx->wqh.lock);
				continue;
			}
			ret = wait_event_interruptible_locked_irq(ctx->wqh,
								  ctx->nr_ready ||
								  ctx->ring);
			if (ret)
				break;
			continue;
		}
		/*
		 * GHOSTs count against the hold too: up to as many as there
		 * are live records can lead the queue without a sweep (see
		 * qt_read_sweep()), and each may be freed here.
		 */
		popped = 0;
		while (nr < min_t(size_t, QT_READ_CHUNK, max - got) &&
		       popped++ < QT_SWEEP_CHUNK &&
		       (t = qt_ctx_ready_pop(ctx))) {
			if (t->state == QT_GHOST) {
				ctx->nr_ghosts--;
				qt_end_free_when_unreferenced(t);
				continue;
			}
			qt_take_record(ctx, t, &recs[nr], ns_offset);
			taken[nr++] = t;
		}
		spin_unlock_irq(&ctx->wqh.lock);
		/*
		 * One read() may take a million records.  On a kernel that
		 * preempts only where asked (PREEMPT_VOLUNTARY) nothing else
		 * in this loop is a rescheduling point: copy_to_iter() has
		 * none there, nor has dropping the lock.
		 */
		cond_resched();
		if (unended >= QT_READ_END_EVERY)
			qt_read_end(ctx, &dead, &unended);
		/* A record cut in the middle was not delivered. */
		if (nr)
			copied = copy_to_iter(recs, nr * sizeof(recs[0]), to) /
				 sizeof(recs[0]);
		err = -EFAULT;
		spin_lock_irq(&ctx->wqh.lock);
	}
	spin_unlock_irq(&ctx->wqh.lock);
	qt_read_end(ctx, &dead, &unended);
	if (handoff)
		return qt_ring_read(ctx, to, nonblock);
	return got ? got * sizeof(recs[0]) : ret;
}
