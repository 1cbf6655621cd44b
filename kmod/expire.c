// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * The expirer: what a base's hrtimer callback and worker do.  A run pops
 * what is due from the base (qt_base_collect()) and delivers it into the
 * files that own it a batch at a time; it does a bounded amount of work and
 * leaves the rest to the worker, so that no number of simultaneous
 * deadlines can hold a CPU in softirq context.  base.c is given these
 * callbacks at init and knows nothing of files.
 */

#include <linux/poll.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/workqueue.h>

#include "base.h"
#include "clockset.h"
#include "ctx.h"
#include "deliver.h"
#include "end.h"
#include "ring.h"
#include "trace.h"

/*
 * Ring records the expirer settles in a file before delivering into it:
 * enough to make room for a batch, bounded like the batch itself.  A run
 * also has an allowance for all such upkeep, records settled and timers
 * ended in every file it visits, of twice its budget of timers to fire
 * (room for the records it fires, and as much again): past it, records go
 * to the overflow, and the file's drain, poll() or read() does the upkeep
 * in process context.  Without it, one visit to each of a few hundred
 * files whose consumers keep passing the records of tickers with a period
 * of 1 ns could be tens of thousands of operations in one softirq,
 * whatever the budget said.
 */
#define QT_RING_SETTLE_EXPIRER	(2 * QT_BATCH)
/* Timers one hrtimer callback may pop before the worker takes over. */
#define QT_IRQ_BUDGET		256
/* Heap entries it may look at (dead ones are cheap but not free). */
#define QT_IRQ_SCAN_BUDGET	1024
/*
 * Timers the worker fires between rescheduling points, where it also leaves
 * its RCU read section and so must have delivered all it popped: larger
 * than the callback's budget, as each such point may wait for a busy file.
 */
#define QT_WORKER_CHUNK		1024
/*
 * How far ahead of now a run re-arms the hrtimer at the least.  A run that
 * ends with the next deadline already past (or about to be) would otherwise
 * be called again at once, one interrupt and softirq round for every
 * handful of timers: dense deadlines (a million a second) do that as soon
 * as a run takes longer than their spacing.  With the gap those deadlines
 * are fired in batches, at most this late, which is the slack a normal
 * task's own timers get by default (timer_slack_ns).
 */
#define QT_REARM_GAP_NS		(50 * NSEC_PER_USEC)

/*
 * Files a run has delivered into and not yet woken.  A consumer that keeps
 * up sleeps again after each wakeup, so waking it once per batch costs it a
 * wakeup (and its CPU an IPI and an idle exit) per QT_BATCH records; once
 * per run, or per worker chunk, is as soon as it matters and far cheaper.
 * Past this many files, a file is woken at once.
 */
#define QT_WAKE_MAX		8

struct qt_wake {
	struct qt_ctx *ctx[QT_WAKE_MAX];
	unsigned int nr;
};

/*
 * @ctx, locked, has new records: wake its waiters now or at the end of the
 * run.  Its memory stays valid until then: the run does not leave its RCU
 * read section before qt_wake_flush().
 */
static void qt_wake_later(struct qt_wake *wake, struct qt_ctx *ctx)
{
	unsigned int i;

	lockdep_assert_held(&ctx->wqh.lock);
	for (i = 0; i < wake->nr; i++)
		if (wake->ctx[i] == ctx)
			return;
	if (wake->nr < QT_WAKE_MAX)
		wake->ctx[wake->nr++] = ctx;
	else
		wake_up_locked_poll(&ctx->wqh, EPOLLIN | EPOLLRDNORM);
}

/* Called with no lock held, before the run leaves its RCU read section. */
static void qt_wake_flush(struct qt_wake *wake)
{
	unsigned int i;

	for (i = 0; i < wake->nr; i++)
		wake_up_poll(&wake->ctx[i]->wqh, EPOLLIN | EPOLLRDNORM);
	wake->nr = 0;
}

/*
 * Settle one popped timer of @ctx: queue its record, or free it if it died
 * in transit.  @base is the timer's base, locked, or NULL when the transit
 * reference is the timer's only one (see nr_entries in timer.h).  Returns true
 * when a record was queued.
 */
static bool qt_expire_one(struct qt_ctx *ctx, struct qt_base *base,
			  struct qt_timer *t, ktime_t now, bool *ended)
{
	lockdep_assert_held(&ctx->wqh.lock);
	if (base)
		lockdep_assert_held(&base->lock);
	t->nr_entries--;	/* the transit reference */
	if (t->state == QT_ARMED && t->heap_key == QT_KEY_NONE) {
		/*
		 * Stopped through the timer table: it ends with no record,
		 * its id freed by qt_end_ctx_atomic() after the delivery.  Its
		 * base, if it has other entries, is the one the caller holds.
		 */
		if (unlikely(ctx->table) && qt_table_stopped(ctx->table, t)) {
			struct qt_base *held = base;

			qt_end_timer(t, &held);
			*ended = true;
			return false;
		}
		t->count = 1;
		/*
		 * A clock set is under way (the work has not run yet): it came
		 * first, even if it is what made this timer due.
		 */
		if ((t->flags & QT_TF_CANCEL_ON_SET) && qt_clockset_pending(t->ctx)) {
			t->flags |= QT_TF_CANCELED;
			t->count = 0;
		}
		/* Still ARMED: its id comes from t->gen, no table miss. */
		if (trace_qtimer_expire_enabled())
			trace_qtimer_expire(qt_ctx_timer_id(t), t->expires,
					    now);
		qt_deliver_queue(ctx, t);
		return true;
	}
	if (t->state == QT_DEAD) {
		if (base)
			qt_base_put_timer(base, t);
		else
			qt_timer_free(t);
	}
	/* Otherwise MODIFY re-armed it, or the clock-set path queued it. */
	return false;
}

/**
 * qt_expire_deliver() - Hand a batch of popped timers to their files.
 * @batch: timers the base's expirer popped while ARMED, each holding its
 *	transit reference.
 * @nr: how many.
 * @now: the clock reading they were found due at.
 * @wait: whether to wait for a file's lock when it is busy.
 * @wake: where the files delivered into are kept for their wakeup.
 * @upkeep: the run's allowance of ring upkeep, which it takes what it did
 *	off (see QT_RING_SETTLE_EXPIRER).
 *
 * Called under rcu_read_lock().  A context may be closing: its memory stays
 * valid for the RCU grace period, and a closing context has made all its
 * timers DEAD under its lock, so nothing is queued on it.
 *
 * The timers of one file are delivered under one hold of its lock, and the
 * file is woken once, later (@wake): a wakeup runs every poll and epoll
 * waiter's callback, which per timer cost more than the delivery itself.
 * Within a file the batch order (deadline order) is kept.  The base lock,
 * which the expirer has just dropped and takes again for the next batch, is
 * needed only for a timer that still has heap entries besides its transit
 * reference (one re-timed or cancelled meanwhile); for the others the
 * context lock is enough (see nr_entries in timer.h), which keeps readers
 * and the expirer from waiting on each other's base lock holds.
 *
 * Without @wait, delivery stops at the first file whose lock is busy, so
 * that the expirer can pop more meanwhile instead of spinning.
 *
 * Return: how many were left undelivered, at the front of @batch in their
 * order (0 with @wait).
 */
static unsigned int qt_expire_deliver(struct qt_timer **batch, unsigned int nr,
				      ktime_t now, bool wait,
				      struct qt_wake *wake,
				      unsigned int *upkeep)
{
	unsigned int i, rest;
	unsigned long flags;

	while (nr) {
		struct qt_ctx *ctx = batch[0]->ctx;
		struct qt_timer *dead = NULL;
		struct qt_base *base = NULL;
		bool woke = false, dead_or_ended = false;

		if (wait)
			spin_lock_irqsave(&ctx->wqh.lock, flags);
		else if (!spin_trylock_irqsave(&ctx->wqh.lock, flags))
			break;
		/*
		 * Reap what the consumer of the file's ring is done with, so
		 * that these land in the ring rather than the overflow.  A
		 * ticker that needs heap room waits for the drain or a
		 * blocking read().
		 */
		if (ctx->ring && *upkeep) {
			unsigned int budget = min_t(unsigned int, *upkeep,
						    QT_RING_SETTLE_EXPIRER);
			struct qt_base *need;

			*upkeep -= budget;
			qt_ring_settle(ctx, &base, &budget, &need, &dead);
			*upkeep += budget;
			dead_or_ended = true;
		}
		/* Deliver ctx's timers and keep the others, in order, for later. */
		for (i = rest = 0; i < nr; i++) {
			struct qt_timer *t = batch[i];

			if (t->ctx != ctx) {
				batch[rest++] = t;
				continue;
			}
			if (READ_ONCE(t->nr_entries) == 1) {
				woke |= qt_expire_one(ctx, NULL, t, now,
						      &dead_or_ended);
				continue;
			}
			/* Its other entries are in its base's heap. */
			base = qt_base_relock(base, t);
			woke |= qt_expire_one(ctx, base, t, now, &dead_or_ended);
		}
		if (base)
			qt_base_unlock_carried(base);
		if (woke)
			qt_wake_later(wake, ctx);
		spin_unlock_irqrestore(&ctx->wqh.lock, flags);
		if (dead_or_ended)
			qt_end_ctx_atomic(ctx, &dead, upkeep);
		nr = rest;
	}
	return nr;
}

/*
 * Fire what is due on @base.  Only one expirer runs per base at a time
 * (base->expiring), so a timer is in at most one transit batch.  From the
 * hrtimer, at most QT_IRQ_BUDGET timers are fired; if more are due, the
 * worker is queued and owns the base until it has caught up, and the hrtimer
 * stays idle meanwhile.  The worker fires in chunks of QT_WORKER_CHUNK with
 * rescheduling points in between.
 *
 * A file whose lock is busy (its reader is taking records) does not stall
 * the run: its timers wait in @batch while the next batch is popped, and
 * are delivered with it.  At most one batch waits so, and none past the end
 * of the run or a rescheduling point, so delivery is late by at most one
 * batch's popping, and the RCU read section that keeps their files' memory
 * valid covers all the time they are in @batch.
 */
static void qt_expire_run(struct qt_base *base, bool worker)
{
	struct qt_timer **batch = base->transit;
	unsigned int chunk = worker ? QT_WORKER_CHUNK : QT_IRQ_BUDGET;
	unsigned int budget = chunk, upkeep = 2 * chunk;
	unsigned int scan = chunk / QT_IRQ_BUDGET * QT_IRQ_SCAN_BUDGET;
	unsigned int nr = 0, popped, fired = 0;
	struct qt_wake wake = { .nr = 0 };
	unsigned long flags;
	bool more, stop, defer = false;
	u64 start = ktime_get_ns();
	ktime_t now;

	spin_lock_irqsave(&base->lock, flags);
	if (base->expiring || (base->deferred && !worker)) {
		spin_unlock_irqrestore(&base->lock, flags);
		return;
	}
	base->expiring = true;
	base->deferred = false;
	rcu_read_lock();
	for (;;) {
		now = qt_clock_now(base->clock);
		popped = nr;
		more = qt_base_collect(base, now, batch, &nr, nr + QT_BATCH, &scan);
		spin_unlock_irqrestore(&base->lock, flags);
		fired += nr - popped;

		stop = more && (fired >= budget || !scan);
		nr = qt_expire_deliver(batch, nr, now,
				       !more || stop || nr > QT_BATCH, &wake,
				       &upkeep);
		/* All delivered: the run ends, or leaves RCU, or defers. */
		if (!more || stop)
			qt_wake_flush(&wake);

		if (worker && stop) {
			rcu_read_unlock();
			cond_resched();
			rcu_read_lock();
			budget = fired + chunk;
			upkeep = 2 * chunk;
			scan = chunk / QT_IRQ_BUDGET * QT_IRQ_SCAN_BUDGET;
		}
		spin_lock_irqsave(&base->lock, flags);
		if (!more)
			break;
		if (!worker && stop) {
			defer = true;
			base->stats.deferred_runs++;
			break;
		}
	}
	rcu_read_unlock();
	base->expiring = false;
	base->stats.fired += fired;
	if (fired > 1)
		base->stats.coalesced += fired - 1;
	if (!worker) {
		u64 took = ktime_get_ns() - start;

		if (took > base->stats.max_run_ns)
			base->stats.max_run_ns = took;
	}
	now = qt_clock_now(base->clock);
	/*
	 * The hrtimer core runs expired soft hrtimers against one reading of
	 * the clock, taken before it called us, and runs ours again at once
	 * if it is re-armed at or before that reading.  Normally our now is
	 * past it, but if CLOCK_REALTIME was set back since, re-arming here
	 * would be called again and again until the clock caught up, tens of
	 * seconds in a softirq that never ends.  Our hrtimer's own expiry
	 * being ahead of the clock is the sign (the core's reading was at
	 * least that); the worker re-arms it instead, once the core is done.
	 */
	if (!worker && now < hrtimer_get_softexpires(&base->hrtimer))
		defer = true;
	if (defer) {
		base->deferred = true;
		queue_work(system_highpri_wq, &base->work);
	} else {
		qt_base_program(base, ktime_add_ns(now, QT_REARM_GAP_NS));
	}
	spin_unlock_irqrestore(&base->lock, flags);
}

/* Each base's hrtimer callback (in softirq context, see base.c). */
enum hrtimer_restart qt_expire_hrtimer(struct hrtimer *hrtimer)
{
	qt_expire_run(container_of(hrtimer, struct qt_base, hrtimer), false);
	return HRTIMER_NORESTART;
}

/* Each base's worker, which owns its runs while base->deferred. */
void qt_expire_work(struct work_struct *work)
{
	qt_expire_run(container_of(work, struct qt_base, work), true);
}
