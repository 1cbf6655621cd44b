// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * Arming, cancelling and modifying timers, singly or as the ops of a SUBMIT
 * chunk (batch.h).  Each op takes its file's lock and then the lock of the
 * one base it acts on; two base locks are never held together.
 */

#include <linux/cpumask.h>
#include <linux/smp.h>

#include "base.h"
#include "batch.h"
#include "clockset.h"
#include "ctx.h"
#include "ring.h"
#include "trace.h"
#include "user.h"

/*
 * A read() that took a timer's last record (a one-shot, or one cancelled by
 * a clock set) has consumed the timer: from then on its id names nothing,
 * exactly as after the read returns, and CANCEL and MODIFY say -ENOENT.
 * Having said so, they settle it too: the id goes now and the reader is
 * left with an ORPHAN, so that should its copy to user space fault, the
 * record is dropped rather than queued again.  No record of a timer is
 * ever read after a call was told that the timer does not exist.
 */
static struct qt_timer *qt_lookup_live(struct qt_ctx *ctx, u64 id)
{
	struct qt_timer *t;

	lockdep_assert_held(&ctx->wqh.lock);
	t = qt_ids_lookup(&ctx->ids, id);

	if (t && t->state == QT_READING &&
	    (!t->period || (t->flags & QT_TF_CANCELED))) {
		qt_ctx_forget(ctx, t);
		t->state = QT_ORPHAN;
		return NULL;
	}
	return t;
}

/*
 * Take @t's id away and make it dead, or hand it to whoever holds it now.
 * Returns the QTIMER_CANCEL_* mask of what that prevented.
 */
int qt_timer_kill(struct qt_ctx *ctx, struct qt_timer *t,
		  struct qt_batch *batch)
{
	struct qt_base *base;
	int ret = 0;

	lockdep_assert_held(&ctx->wqh.lock);
	qt_ctx_forget(ctx, t);
	base = qt_batch_lock_timer(batch, t);
	base->stats.cancelled++;
	switch (t->state) {
	case QT_ARMED:
		ret = QTIMER_CANCEL_ARMED;
		if (t->heap_key != QT_KEY_NONE)
			qt_base_unlink(base, t);
		/* In transit, the expirer's reference frees it. */
		t->state = QT_DEAD;
		qt_base_put_timer(base, t);
		break;
	case QT_QUEUED:
		ret = QTIMER_CANCEL_QUEUED;
		t->state = QT_GHOST;
		ctx->nr_ready--;
		ctx->nr_ghosts++;
		break;
	case QT_READING:
		/* Its record is being copied out: read() linearised first. */
		t->state = QT_ORPHAN;
		break;
	case QT_RINGED:
		/* One compare-and-swap with the consumer's decides. */
		ret = qt_ring_cancel(ctx->ring, t);
		qt_ring_detach(ctx->ring, t);
		t->state = QT_DEAD;
		qt_base_put_timer(base, t);
		break;
	}
	qt_batch_unlock_base(batch, base);
	return ret;
}

int qt_ctx_arm(struct qt_ctx *ctx, const struct qt_arm_args *args,
	       struct qt_batch *batch, u64 *id)
{
	bool pinned = args->flags & QTIMER_F_CPU;
	struct qt_base *base;
	struct qt_timer *t;
	unsigned int cpu;
	int ret;

	if (!qt_batch_charge(ctx, batch))
		return -EDQUOT;
	t = qt_batch_timer(ctx, batch);
	if (!t) {
		ret = -ENOMEM;
		goto out_user;
	}
	t->ctx = ctx;
	t->cookie = args->cookie;
	t->heap_key = QT_KEY_NONE;
	qt_timer_set(t, args);
	if (args->flags & QTIMER_F_CANCEL_ON_SET) {
		qt_batch_drop_carried(ctx, batch);
		qt_cos_track(ctx);
	}

	for (;;) {
		/* Held by the batch: room is checked under the locks below. */
		if (!batch || !batch->locked) {
			cpu = pinned ? args->cpu : raw_smp_processor_id();
			ret = qt_base_reserve(qt_base_get(cpu, args->clock), 1);
			if (ret)
				goto out_free;
			ret = qt_ids_reserve(&ctx->ids, &ctx->wqh.lock);
			if (ret)
				goto out_free;
		}

		qt_batch_lock(ctx, batch);
		if (ctx->nr_timers >= READ_ONCE(qt_max_timers_per_fd)) {
			ret = -ENOSPC;
			goto out_unlock;
		}
		if (ctx->ids.free_slot == QT_NO_SLOT) {
			qt_batch_drop(ctx, batch);
			continue;
		}
		cpu = pinned ? args->cpu : smp_processor_id();
		base = qt_batch_lock_base(batch, qt_base_get(cpu, args->clock));
		if (pinned && !base->online) {
			qt_batch_unlock_base(batch, base);
			ret = -EINVAL;
			goto out_unlock;
		}
		if (base->heap.nr >= base->heap.cap) {
			qt_batch_unlock_base(batch, base);
			qt_batch_drop(ctx, batch);
			continue;
		}
		t->slot = qt_ids_alloc(&ctx->ids, t);
		qt_timer_armed(ctx, t);
		qt_base_push(base, t);
		base->stats.armed++;
		qt_batch_unlock_base(batch, base);

		ctx->nr_timers++;
		ctx->nr_per_clock[qt_timer_user_clock(t)]++;
		if (t->flags & QT_TF_CANCEL_ON_SET) {
			ctx->nr_cancel_on_set++;
			qt_ids_mark(&ctx->ids, t->slot, true);
		}
		*id = qt_timer_id(ctx, t);
		trace_qtimer_arm(*id, args, cpu);
		qt_batch_unlock(ctx, batch);
		return 0;
	}

out_unlock:
	qt_batch_unlock(ctx, batch);
out_free:
	qt_batch_timer_unused(batch, t);
out_user:
	qt_batch_uncharge(ctx, batch);
	return ret;
}

int qt_ctx_cancel(struct qt_ctx *ctx, u64 id, struct qt_batch *batch)
{
	struct qt_timer *t;
	int ret;

	qt_batch_lock(ctx, batch);
	t = qt_lookup_live(ctx, id);
	if (t) {
		ret = qt_timer_kill(ctx, t, batch);
		qt_ready_sweep(ctx, batch);
	} else {
		ret = -ENOENT;
	}
	trace_qtimer_cancel(id, ret);
	qt_batch_unlock(ctx, batch);
	return ret;
}

/*
 * Re-time an ARMED timer in place.  Later: only the fields change and the
 * heap catches up when the entry surfaces (Go's lazy modify-later).
 * Earlier: a new entry goes in and the old one turns stale, so the heap never
 * needs to find an entry by timer.  In transit: a new entry, which tells the
 * expirer not to deliver the old deadline.
 */
static bool qt_modify_pushes(const struct qt_timer *t,
			     const struct qt_arm_args *args)
{
	s64 hard = ktime_add_ns(args->expires, args->slack);

	return t->heap_key == QT_KEY_NONE || hard < t->heap_key;
}

/*
 * Heap entries a timer may have before a MODIFY that would push another
 * moves its id to a fresh object instead (qt_modify_replace()): each
 * modify-earlier leaves a stale entry behind, and nr_entries is a u8.
 */
#define QT_TIMER_ENTRIES_MAX	32

static int qt_modify_armed(struct qt_base *base, struct qt_timer *t,
			   const struct qt_arm_args *args)
{
	bool push = qt_modify_pushes(t, args);

	if (push && base->heap.nr >= base->heap.cap)
		return -EAGAIN;
	if (push && t->heap_key != QT_KEY_NONE)
		qt_base_unlink(base, t);
	qt_timer_set(t, args);
	if (push)
		qt_base_push(base, t);
	return QTIMER_CANCEL_ARMED;
}

/*
 * The base a MODIFY moves @t to when it needs a fresh object: the one of
 * the new schedule's clock (a relative CLOCK_REALTIME schedule lives in a
 * monotonic heap, an absolute one in the realtime heap) on @t's CPU, or
 * while that CPU is offline, on this one (where an ARM would put it).
 */
static struct qt_base *qt_modify_target(const struct qt_timer *t,
					const struct qt_arm_args *args)
{
	struct qt_base *base = qt_base_get(READ_ONCE(t->base_idx) / QT_NR_CLOCKS,
					   args->clock);

	/* Racy: a CPU going offline meanwhile still has a working base. */
	if (!READ_ONCE(base->online))
		base = qt_base_get(raw_smp_processor_id(), args->clock);
	return base;
}

/*
 * Arm @fresh on @base (locked, with room) in @t's place: same id, cookie and
 * cancel-on-set, the schedule of @args.  @t no longer has an id; the caller
 * decides what becomes of it.
 */
static void qt_timer_take_over(struct qt_ctx *ctx, struct qt_timer *t,
			       struct qt_timer *fresh, struct qt_base *base,
			       const struct qt_arm_args *args)
{
	lockdep_assert_held(&base->lock);
	memset(fresh, 0, sizeof(*fresh));
	fresh->ctx = ctx;
	fresh->cookie = t->cookie;
	fresh->slot = t->slot;
	fresh->flags = t->flags & QT_TF_CANCEL_ON_SET;
	fresh->heap_key = QT_KEY_NONE;
	fresh->base_idx = base->idx;
	qt_timer_set(fresh, args);
	qt_ids_replace(&ctx->ids, t->slot, fresh);
	qt_timer_armed(ctx, fresh);
	qt_base_push(base, fresh);
}

/*
 * Re-time an ARMED timer that has QT_TIMER_ENTRIES_MAX heap entries and
 * would need one more: the id moves to @fresh and the old object dies, to
 * be freed by its last stale entry (or by the expirer, in transit).
 * Compacting the heap instead to shed its stale entries would cost O(n)
 * under the base lock, at the will of whoever modifies one timer.
 */
static int qt_modify_replace(struct qt_ctx *ctx, struct qt_timer *t,
			     struct qt_timer *fresh, const struct qt_arm_args *args,
			     struct qt_batch *batch, struct qt_base **basep)
{
	struct qt_base *base;

	/* The new base first, so that a full heap leaves @t untouched. */
	base = qt_batch_lock_base(batch, qt_modify_target(t, args));
	*basep = base;
	if (base->heap.nr >= base->heap.cap) {
		qt_batch_unlock_base(batch, base);
		return -EAGAIN;
	}
	qt_timer_take_over(ctx, t, fresh, base, args);
	base->stats.modified++;
	qt_batch_unlock_base(batch, base);

	/* Two base locks are never held together: the old one now. */
	base = qt_batch_lock_timer(batch, t);
	if (t->heap_key != QT_KEY_NONE)
		qt_base_unlink(base, t);
	t->state = QT_DEAD;
	qt_base_put_timer(base, t);
	qt_batch_unlock_base(batch, base);
	return QTIMER_CANCEL_ARMED;
}

/*
 * Re-time a timer whose old record is queued, in the ring or being read.
 * That record must never be read, and the object is still linked where it
 * is, so the id moves to a fresh object and the old one is left to die
 * where it stands.
 * The timer keeps its CPU (MODIFY keeps id, clock, CPU and cookie): the
 * fresh object goes back on the base it fired from, unless that CPU has
 * gone offline since, when it goes where arming it now would put it.
 * *basep is that base (on -EAGAIN, the one whose heap needs room).
 */
static int qt_modify_fired(struct qt_ctx *ctx, struct qt_timer *t,
			   struct qt_timer *fresh, const struct qt_arm_args *args,
			   struct qt_base **basep)
{
	struct qt_base *base = qt_modify_target(t, args);
	int ret = 0;

	spin_lock(&base->lock);
	*basep = base;
	if (base->heap.nr >= base->heap.cap) {
		spin_unlock(&base->lock);
		return -EAGAIN;
	}
	/* Take a ring record back only once nothing can fail. */
	if (t->state == QT_RINGED) {
		ret = qt_ring_cancel(ctx->ring, t);
		if (ret == -ENOENT) {
			spin_unlock(&base->lock);
			qt_ctx_forget(ctx, t);
			qt_ring_detach(ctx->ring, t);
			qt_timer_free_when_unreferenced(t);
			return -ENOENT;
		}
	}
	qt_timer_take_over(ctx, t, fresh, base, args);
	spin_unlock(&base->lock);

	if (t->state == QT_RINGED) {
		qt_ring_detach(ctx->ring, t);
		qt_timer_free_when_unreferenced(t);
	} else if (t->state == QT_QUEUED) {
		ret = QTIMER_CANCEL_QUEUED;
		t->state = QT_GHOST;
		ctx->nr_ready--;
		ctx->nr_ghosts++;
		qt_ready_sweep(ctx, NULL);
	} else {
		t->state = QT_ORPHAN;
	}
	return ret;
}

int qt_ctx_modify(struct qt_ctx *ctx, u64 id, const struct qt_arm_args *args,
		  struct qt_batch *batch)
{
	struct qt_timer *t, *fresh = NULL;
	struct qt_base *base;
	int ret, cpu = -1;
	bool was_cos, need_fresh;
	u32 slot;

	if (args->flags & QTIMER_F_CANCEL_ON_SET) {
		qt_batch_drop_carried(ctx, batch);
		qt_cos_track(ctx);
	}
	for (;;) {
		qt_batch_lock(ctx, batch);
		t = qt_lookup_live(ctx, id);
		if (!t) {
			ret = -ENOENT;
			break;
		}
		was_cos = t->flags & QT_TF_CANCEL_ON_SET;
		slot = t->slot;
		if (t->state == QT_ARMED) {
			bool replace;

			base = qt_batch_lock_timer(batch, t);
			replace = qt_timer_clock(t) != args->clock ||
				  (t->nr_entries >= QT_TIMER_ENTRIES_MAX &&
				   qt_modify_pushes(t, args));
			need_fresh = replace && !fresh;
			if (!replace) {
				ret = qt_modify_armed(base, t, args);
				if (ret >= 0)
					base->stats.modified++;
			}
			qt_batch_unlock_base(batch, base);
			if (replace && fresh) {
				ret = qt_modify_replace(ctx, t, fresh, args, batch,
							&base);
				if (ret >= 0)
					fresh = NULL;
			}
		} else if (fresh) {
			qt_batch_drop_base(batch);
			ret = qt_modify_fired(ctx, t, fresh, args, &base);
			if (ret >= 0)
				fresh = NULL;
			need_fresh = false;
		} else {
			need_fresh = true;
		}
		if (need_fresh) {
			/* The id moves to a fresh object: allocate unlocked. */
			qt_batch_drop(ctx, batch);
			fresh = qt_timer_alloc(GFP_KERNEL);
			if (!fresh)
				return -ENOMEM;
			continue;
		}
		if (ret != -EAGAIN) {
			if (ret >= 0)
				cpu = base->idx / QT_NR_CLOCKS;
			if (ret >= 0 &&
			    was_cos != !!(args->flags & QTIMER_F_CANCEL_ON_SET)) {
				ctx->nr_cancel_on_set += was_cos ? -1 : 1;
				/* @t may be gone: the id's slot is the same. */
				qt_ids_mark(&ctx->ids, slot, !was_cos);
			}
			break;
		}
		/* The heap is full: grow it unlocked and look again. */
		qt_batch_drop(ctx, batch);
		ret = qt_base_reserve(base, 1);
		if (ret)
			goto out;
	}
	qt_batch_unlock(ctx, batch);
out:
	trace_qtimer_modify(id, args, ret, cpu);
	if (fresh)
		qt_timer_free(fresh);
	return ret;
}
