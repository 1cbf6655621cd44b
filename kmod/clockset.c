// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * Cancel-on-set: when CLOCK_REALTIME is set, every timer armed with
 * QTIMER_F_CANCEL_ON_SET is cancelled with a record saying so, as timerfd's
 * TFD_TIMER_CANCEL_ON_SET does.  The files that hold such timers are on a
 * list; the notifier, an irq_work and a work item bring the set to them.
 */

#include <linux/irq_work.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/pvclock_gtod.h>
#include <linux/sched.h>
#include <linux/timekeeper_internal.h>
#include <linux/workqueue.h>

#include "base.h"
#include "clockset.h"
#include "ctx.h"
#include "deliver.h"
#include "end.h"
#include "ring.h"

static LIST_HEAD(qt_clockset_list);
static DEFINE_MUTEX(qt_clockset_mutex);

/*
 * Clock sets announced by the notifier; each file counts those applied to
 * it (ctx->cos_applied).
 */
atomic_t qt_clock_sets = ATOMIC_INIT(0);

/*
 * @ctx is about to arm a cancel-on-set timer: files with such timers are
 * walked when the clock is set.  A file new to the list has seen every set
 * announced so far (it had no such timer); one on it takes the sets it
 * was not brought yet first, so that none cancels the timer armed after it.
 */
void qt_clockset_track(struct qt_ctx *ctx)
{
	if (list_empty_careful(&ctx->cos_node)) {
		mutex_lock(&qt_clockset_mutex);
		if (list_empty(&ctx->cos_node)) {
			mutex_lock(&ctx->cos_walk);
			WRITE_ONCE(ctx->cos_applied, atomic_read(&qt_clock_sets));
			mutex_unlock(&ctx->cos_walk);
			list_add_tail(&ctx->cos_node, &qt_clockset_list);
		}
		mutex_unlock(&qt_clockset_mutex);
	}
	qt_clockset_sync(ctx);
}

/*
 * Cancel @t, a cancel-on-set timer of @ctx, for a clock set: its record
 * says so.  Returns true when it queued a record, for the walk to wake the
 * file's waiters once per hold.
 */
static bool qt_clockset_cancel(struct qt_ctx *ctx, struct qt_timer *t)
{
	struct qt_base *base;

	lockdep_assert_held(&ctx->wqh.lock);
	/*
	 * In the ring: a record nobody claimed yet is voided and followed by
	 * the cancellation; one the consumer claimed is its, and a ticker's
	 * reap then queues the cancellation (qt_ring_settle()).  If the
	 * consumer is the kernel's read() and its copy fails, the record it
	 * puts back is the cancellation, a one-shot's too (qt_ring_read()).
	 */
	if (t->state == QT_RINGED) {
		if (qt_deliver_void(ctx->ring, t)) {
			qt_deliver_detach(ctx->ring, t);
			__qt_deliver_queue_canceled(ctx, t, t->count);
			return true;
		}
		if (!(t->flags & QT_TF_CANCELED))
			t->flags |= QT_TF_SET_WHILE_READ;
		return false;
	}
	/*
	 * Its pending record becomes the cancellation record, a one-shot's
	 * too: as timerfd's read says ECANCELED for an expiry not yet read
	 * when the clock was set.
	 */
	if (t->state == QT_QUEUED) {
		t->flags |= QT_TF_CANCELED;
		return false;
	}
	/*
	 * A read() has its record, taken before the set: if it delivers it,
	 * a ticker becomes a cancellation record instead of re-arming; if
	 * the copy fails, the record it puts back is the cancellation, a
	 * one-shot's too, since nobody read it (qt_read_settle()).
	 */
	if (t->state == QT_READING && !(t->flags & QT_TF_CANCELED)) {
		t->flags |= QT_TF_SET_WHILE_READ;
		return false;
	}
	if (t->state != QT_ARMED)
		return false;
	base = qt_base_lock_timer(t);
	if (t->heap_key != QT_KEY_NONE)
		qt_base_unlink(base, t);
	spin_unlock(&base->lock);
	/*
	 * User space stopped it through the timer table first: no record,
	 * the id goes now (the walk holds its shard's lock).  Otherwise the
	 * slot is the kernel's from here, and a stop after fails.
	 */
	if (ctx->table && qt_table_claim(ctx->table, t)) {
		qt_end_forget(ctx, t, NULL);
		qt_end_free_when_unreferenced(t);
		return false;
	}
	__qt_deliver_queue_canceled(ctx, t, 0);
	return true;
}

/*
 * Slots and timers one hold of a file's lock covers in a clock set's walk:
 * a file may hold millions of timers, so interrupts get in now and then.
 */
#define QT_WALK_SLOTS		(64 * QT_SLOTS_PER_BLOCK)
#define QT_WALK_TIMERS		1024

/*
 * When CLOCK_REALTIME is set, cancel-on-set timers are cancelled with a
 * record saying so.  The timekeeping core announces clock sets only through
 * the pvclock notifier chain, called under the timekeeper lock, so hop to an
 * irq_work and then to process context, as KVM does.
 *
 * Each file's walk visits only the slots it marked (its cancel-on-set
 * timers, see qt_ids_mark()), a bitmap word per 64 slots, so a file of a
 * million timers with a few cancel-on-set ones costs a clock set a few
 * thousand words.  An ARM or MODIFY of a cancel-on-set timer waits for
 * the walk (qt_clockset_track()), so one that lands behind it while the lock
 * is dropped is not missed.
 */
static void qt_clockset_file(struct qt_ctx *ctx, int sets)
{
	u32 slot, end, done;
	unsigned int i;

	mutex_lock(&ctx->cos_walk);
	/* Another walk (the work's, or a poll()'s) brought it this far. */
	if (sets - ctx->cos_applied <= 0) {
		mutex_unlock(&ctx->cos_walk);
		return;
	}
	for (i = 0; i < ctx->nr_shards; i++) {
		struct qt_shard *shard = &ctx->shards[i];
		struct qt_ids *ids = &shard->ids;

		spin_lock_irq(&shard->lock);
		spin_lock(&ctx->wqh.lock);
		slot = 0;
		while (shard->nr_cancel_on_set && slot < ids->nr_slots) {
			bool queued = false;

			end = min(slot + QT_WALK_SLOTS, ids->nr_slots);
			done = 0;
			while (done < QT_WALK_TIMERS &&
			       (slot = qt_ids_next_marked(ids, slot, end)) < end) {
				struct qt_timer *t = qt_ids_get(ids, slot);

				/* Only a live cancel-on-set timer's slot is marked. */
				if (!WARN_ON_ONCE(!t || !(t->flags & QT_TF_CANCEL_ON_SET)))
					queued |= qt_clockset_cancel(ctx, t);
				slot++;
				done++;
			}
			if (queued)
				wake_up_locked_poll(&ctx->wqh, EPOLLIN | EPOLLRDNORM);
			spin_unlock(&ctx->wqh.lock);
			spin_unlock_irq(&shard->lock);
			cond_resched();
			spin_lock_irq(&shard->lock);
			spin_lock(&ctx->wqh.lock);
		}
		spin_unlock(&ctx->wqh.lock);
		spin_unlock_irq(&shard->lock);
	}
	WRITE_ONCE(ctx->cos_applied, sets);
	mutex_unlock(&ctx->cos_walk);
}

static void qt_clockset_workfn(struct work_struct *work)
{
	int sets = atomic_read(&qt_clock_sets);
	struct qt_ctx *ctx;

	mutex_lock(&qt_clockset_mutex);
	list_for_each_entry(ctx, &qt_clockset_list, cos_node) {
		qt_clockset_file(ctx, sets);
		/*
		 * A file stays on the list until it is closed, with or
		 * without cancel-on-set timers left, and a user may have as
		 * many files as it may open.
		 */
		cond_resched();
	}
	mutex_unlock(&qt_clockset_mutex);
}

static DECLARE_WORK(qt_clockset_work, qt_clockset_workfn);

static void qt_clockset_irq_work(struct irq_work *work)
{
	schedule_work(&qt_clockset_work);
}

static DEFINE_IRQ_WORK(qt_clockset_iw, qt_clockset_irq_work);

/*
 * Bring the clock sets announced so far to @ctx's cancel-on-set timers, if
 * the work has not yet: ARM and MODIFY of a cancel-on-set timer, and a
 * mapped ring's poll() and read(), which must see a set that
 * clock_settime() returned from.  The caller walks its own file (or waits
 * for the walk under way on it), never the other files on the list: a
 * zero-timeout poll() must not wait for other users' files.
 */
void qt_clockset_sync(struct qt_ctx *ctx)
{
	int sets = atomic_read(&qt_clock_sets);

	if (sets == READ_ONCE(ctx->cos_applied) || list_empty_careful(&ctx->cos_node))
		return;
	qt_clockset_file(ctx, sets);
}

/*
 * CLOCK_MONOTONIC -> CLOCK_REALTIME offset at the last set counted; written
 * only by the notifier, which the timekeeper lock serialises.
 */
static ktime_t qt_offs_real;
static bool qt_offs_real_known;

/*
 * The timekeeper says "clock was set" for more than a set of the wall
 * clock: a new clocksource, a new TAI offset, and once when the notifier
 * is registered.  A set is what moves CLOCK_REALTIME against
 * CLOCK_MONOTONIC (clock_settime(), settimeofday(), adjtimex()'s
 * ADJ_SETOFFSET, a leap second, the time slept across a suspend), so only
 * that counts, as for timerfd, which compares the same offset.  It is read
 * from @priv, the timekeeper being updated: ktime_mono_to_real() would
 * wait for the update we are called from.
 */
static int qt_clockset_notify(struct notifier_block *nb, unsigned long was_set,
			      void *priv)
{
	bool known = qt_offs_real_known;
	ktime_t offs;

	if (!was_set)
		return NOTIFY_OK;
	offs = ((struct timekeeper *)priv)->offs_real;
	if (known && offs == qt_offs_real)
		return NOTIFY_OK;
	qt_offs_real = offs;
	qt_offs_real_known = true;
	/* Registration's call: the offset armed timers have seen. */
	if (!known)
		return NOTIFY_OK;
	atomic_inc(&qt_clock_sets);
	irq_work_queue(&qt_clockset_iw);
	return NOTIFY_OK;
}

static struct notifier_block qt_clock_nb = {
	.notifier_call = qt_clockset_notify,
};

/* @ctx is closing: no clock set walks it from now on. */
void qt_clockset_untrack(struct qt_ctx *ctx)
{
	if (!list_empty(&ctx->cos_node)) {
		mutex_lock(&qt_clockset_mutex);
		list_del(&ctx->cos_node);
		mutex_unlock(&qt_clockset_mutex);
	}
}

int qt_clockset_init(void)
{
	return pvclock_gtod_register_notifier(&qt_clock_nb);
}

void qt_clockset_exit(void)
{
	pvclock_gtod_unregister_notifier(&qt_clock_nb);
	irq_work_sync(&qt_clockset_iw);
	flush_work(&qt_clockset_work);
}
