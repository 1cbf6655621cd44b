// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * Arming, cancelling and modifying timers, singly or as the ops of a SUBMIT
 * chunk (batch.h).  Each op takes the lock of the shard its id is in and
 * then the lock of the one base it acts on; an op on a timer that is not in
 * its heap takes the file's delivery lock in between (timer.h).  Two base
 * locks are never held together.
 */

#include <linux/cpumask.h>
#include <linux/smp.h>

#include "base.h"
#include "batch.h"
#include "clockset.h"
#include "ctx.h"
#include "deliver.h"
#include "end.h"
#include "ring.h"
#include "trace.h"
#include "user.h"

/*
 * The timer @id names, with its shard's lock taken (the batch keeps it), or
 * NULL.  The timer may be consumed already: see qt_ops_live().
 */
static struct qt_timer *qt_lookup(struct qt_ctx *ctx, u64 id,
				  struct qt_batch *batch)
{
	struct qt_shard *shard = qt_ctx_shard_of_id(ctx, id);

	if (!shard)
		return NULL;
	qt_batch_lock(ctx, batch, shard);
	return qt_ids_lookup(&shard->ids, id);
}

/*
 * The fast path's test, under @t's shard lock: with @t's base locked,
 * whether @t is in its heap, which makes it ARMED and out of the delivery
 * side's reach while the base lock is held (see timer.h).  If not, the base
 * lock is given up for the delivery lock, under which the op goes on.
 */
static bool qt_ops_in_heap(struct qt_ctx *ctx, struct qt_batch *batch,
			   struct qt_timer *t)
{
	qt_batch_lock_timer(batch, t);
	if (t->heap_key != QT_KEY_NONE)
		return true;
	qt_batch_lock_delivery(ctx, batch);
	return false;
}

/*
 * Under the delivery lock: whether @t, which its id still names, is live.
 * A read() or a ring reap that took a timer's last record (a one-shot, or
 * one cancelled by a clock set) has consumed the timer: from then on its id
 * names nothing, exactly as after the read returns, and CANCEL and MODIFY
 * say -ENOENT.  Having said so of one still READING, they settle it too:
 * the id goes now and the reader is left with an ORPHAN, so that should its
 * copy to user space fault, the record is dropped rather than queued again.
 * One already ENDED has its id freed by its ender.  No record of a timer is
 * ever read after a call was told that the timer does not exist.
 */
static bool qt_ops_live(struct qt_ctx *ctx, struct qt_timer *t)
{
	lockdep_assert_held(&ctx->wqh.lock);
	if (t->state == QT_ENDED)
		return false;
	if (t->state == QT_READING &&
	    (!t->period || (t->flags & QT_TF_CANCELED))) {
		qt_end_forget(ctx, t, NULL);
		t->state = QT_ORPHAN;
		return false;
	}
	return true;
}

/*
 * Take @t's id away and make it dead, or hand it to whoever holds it now.
 * Under its shard's lock, and the delivery lock unless @t is in its heap.
 * *@held is the base the caller carries locked, or NULL (see
 * qt_base_relock()).  Returns the QTIMER_CANCEL_* mask of what that
 * prevented.
 */
int qt_ops_kill(struct qt_ctx *ctx, struct qt_timer *t,
		struct qt_base **held, unsigned int *freed)
{
	struct qt_base *base;
	int ret = 0;

	qt_end_forget(ctx, t, freed);
	base = *held = qt_base_relock(*held, t);
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
		qt_deliver_detach(ctx->ring, t);
		t->state = QT_DEAD;
		qt_base_put_timer(base, t);
		break;
	}
	return ret;
}

/*
 * Whether the slot the next ARM in @shard takes has its table page (if the
 * file has a table): one grown meanwhile by another thread may not yet.
 * Under the shard's lock.
 */
static bool qt_ops_table_covers(struct qt_ctx *ctx, struct qt_shard *shard)
{
	struct qt_table *table = qt_ctx_table(ctx);
	u32 covered;

	if (!table)
		return true;
	/* Pairs with qt_table_reserve()'s release: the page is in. */
	covered = smp_load_acquire(&table->covered[shard - ctx->shards]);
	return shard->ids.free_slot < covered;
}

/*
 * ARM on this CPU: its shard's lock and its base's, nothing else.  The
 * timer is new, so nothing on the delivery side can know it.
 */
int qt_ops_arm(struct qt_ctx *ctx, const struct qt_arm_args *args,
	       struct qt_batch *batch, u64 *id)
{
	unsigned int clock = args->flags & QT_ARM_RELATIVE_REAL ?
			     QT_CLOCK_REALTIME : args->clock;
	bool pinned = args->flags & QTIMER_F_CPU;
	struct qt_table *table;
	struct qt_shard *shard;
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
		qt_batch_drop(ctx, batch);
		qt_clockset_track(ctx);
	}

	for (;;) {
		shard = qt_ctx_shard_here(ctx);
		/* Held by the batch: room is checked under the locks below. */
		if (batch->shard != shard) {
			qt_batch_drop(ctx, batch);
			cpu = pinned ? args->cpu : raw_smp_processor_id();
			base = qt_base_get(cpu, args->clock);
			ret = qt_storage_reserve(base, 1);
			if (ret)
				goto out_free;
			ret = qt_ids_reserve(&shard->ids, &shard->lock);
			if (ret)
				goto out_free;
			table = qt_ctx_table(ctx);
			if (table) {
				ret = qt_table_reserve(table, shard - ctx->shards,
						       READ_ONCE(shard->ids.nr_slots));
				if (ret)
					goto out_free;
			}
		}

		qt_batch_lock(ctx, batch, shard);
		if (shard->ids.free_slot == QT_NO_SLOT ||
		    !qt_ops_table_covers(ctx, shard)) {
			qt_batch_drop(ctx, batch);
			continue;
		}
		if (!qt_batch_charge_fd(ctx, batch)) {
			ret = -ENOSPC;
			goto out_free;
		}
		cpu = pinned ? args->cpu : smp_processor_id();
		base = qt_batch_lock_base(batch, qt_base_get(cpu, args->clock));
		if (pinned && !base->online) {
			qt_batch_uncharge_fd(batch);
			ret = -EINVAL;
			goto out_free;
		}
		if (base->heap.nr >= base->heap.cap) {
			qt_batch_uncharge_fd(batch);
			qt_batch_drop(ctx, batch);
			continue;
		}
		t->shard = shard - ctx->shards;
		t->slot = qt_ids_alloc(&shard->ids, t, clock);
		qt_ctx_timer_armed(t);
		qt_base_push(base, t);
		base->stats.armed++;

		shard->nr_per_clock[clock]++;
		if (t->flags & QT_TF_CANCEL_ON_SET) {
			shard->nr_cancel_on_set++;
			qt_ids_mark(&shard->ids, t->slot, true);
		}
		*id = qt_ctx_timer_id(t);
		trace_qtimer_arm(*id, args, cpu);
		return 0;
	}

out_free:
	qt_batch_timer_unused(batch, t);
out_user:
	qt_batch_uncharge(ctx, batch);
	return ret;
}

int qt_ops_cancel(struct qt_ctx *ctx, u64 id, struct qt_batch *batch)
{
	struct qt_timer *t;
	int ret = -ENOENT;

	t = qt_lookup(ctx, id, batch);
	if (t && (qt_ops_in_heap(ctx, batch, t) || qt_ops_live(ctx, t))) {
		struct qt_table *table = qt_ctx_table(ctx);
		/*
		 * Whoever swaps the slot first wins: a stop user space made
		 * before is as a CANCEL that came first (the timer goes all
		 * the same, its place at once).
		 */
		bool stopped = t->state == QT_ARMED && table &&
			       qt_table_claim(table, t);

		ret = qt_ops_kill(ctx, t, &batch->base, &batch->freed);
		if (stopped)
			ret = -ENOENT;
		if (batch->delivery)
			qt_read_sweep(ctx, batch);
	}
	trace_qtimer_cancel(id, ret);
	qt_batch_drop_delivery(ctx, batch);
	return ret;
}

/*
 * The schedule of a fired timer @t as read() would leave it if it ran now:
 * a ticker's next expiry after @now, counted without drift as read() counts
 * it (qt_timer_count()); a one-shot's, or a cancelled one's, the expiry it
 * fired at.
 */
static ktime_t qt_get_next(const struct qt_timer *t, ktime_t now)
{
	if (!t->period || (t->flags & QT_TF_CANCELED) || now < t->expires)
		return t->expires;
	return qt_deliver_add_period(t->expires +
				     qt_deliver_missed(t, now) * t->period,
				     t->period);
}

/* Fill @op with @t's schedule as its user sees it, @next its expiry. */
static void qt_get_fill(const struct qt_timer *t, ktime_t next,
			struct qtimer_op *op)
{
	unsigned int clock = qt_timer_clock(t);
	ktime_t ns_offset;

	op->clockid = qt_clock_id(qt_timer_user_clock(t));
	op->flags = QTIMER_F_ABSTIME;
	if (t->flags & QT_TF_CANCEL_ON_SET)
		op->flags |= QTIMER_F_CANCEL_ON_SET;
	/* As a record says it, in the caller's namespace. */
	ns_offset = qt_clock_timens_offset(qt_clock_id(clock));
	op->expires_ns = qt_deliver_user_expires(t, next, ns_offset);
	op->period_ns = t->period;
	op->slack_ns = t->slack;
	op->cookie = t->cookie;
	op->cpu = READ_ONCE(t->base_idx) / QT_NR_CLOCKS;
}

/*
 * GET: @id's schedule into @op, changing nothing but what any op settles
 * (a one-shot a read() is taking is gone, as for CANCEL).  Under the shard
 * lock and the base lock of a timer in its heap, or the delivery lock of
 * one out of it, which hold its (C) fields still (timer.h).
 */
int qt_ops_get(struct qt_ctx *ctx, u64 id, struct qt_batch *batch,
	       struct qtimer_op *op)
{
	struct qt_table *table = qt_ctx_table(ctx);
	struct qt_timer *t;
	int ret = -ENOENT;

	t = qt_lookup(ctx, id, batch);
	if (!t)
		goto out;
	if (qt_ops_in_heap(ctx, batch, t)) {
		ktime_t next = t->expires;

		/* Stopped, or pushed later, through the timer table. */
		if (table && qt_table_peek(table, t, &next))
			goto out;
		qt_get_fill(t, next, op);
		ret = QTIMER_CANCEL_ARMED;
		goto out;
	}
	if (!qt_ops_live(ctx, t))
		goto out;
	/* In transit, stopped: the expirer ends it with no record. */
	if (t->state == QT_ARMED && table && qt_table_stopped(table, t))
		goto out;
	ret = QTIMER_CANCEL_QUEUED;
	if (t->state == QT_READING) {
		ret = 0;
	} else if (t->state == QT_RINGED &&
		   !qt_deliver_unclaimed(ctx->ring, t)) {
		/*
		 * The consumer claimed its record: a one-shot is consumed, as
		 * CANCEL and MODIFY would find, and its id goes now; a ticker
		 * is being read until the reap re-arms it.
		 */
		if (!t->period || (t->flags & QT_TF_CANCELED)) {
			/* Freeing takes @t's base: the batch must not hold one. */
			qt_batch_drop_base(batch);
			qt_end_forget(ctx, t, NULL);
			qt_deliver_detach(ctx->ring, t);
			qt_end_free_when_unreferenced(t);
			ret = -ENOENT;
			goto out;
		}
		ret = 0;
	}
	/* In transit (ARMED), its record is on its way: as good as queued. */
	qt_get_fill(t, qt_get_next(t, qt_clock_now(qt_timer_clock(t))), op);
out:
	qt_batch_drop_delivery(ctx, batch);
	return ret;
}

/*
 * Re-time an ARMED timer in its heap, in place.  Later: only the fields
 * change and the heap catches up when the entry surfaces (Go's lazy
 * modify-later).  Earlier: a new entry goes in and the old one turns stale,
 * so the heap never needs to find an entry by timer.
 */
static bool qt_modify_pushes(const struct qt_timer *t,
			     const struct qt_arm_args *args)
{
	return ktime_add_ns(args->expires, args->slack) < t->heap_key;
}

/*
 * Heap entries a timer may have before a MODIFY that would push another
 * moves its id to a fresh object instead (qt_modify_replace()): each
 * modify-earlier leaves a stale entry behind, and nr_entries is a u8.
 */
#define QT_TIMER_ENTRIES_MAX	32

/*
 * Whether MODIFY moves @t's id to a fresh object: in transit (the expirer
 * holds it, and a timer in transit never goes back into a heap, see
 * timer.h), on another clock's heap, or with too many entries.  Under
 * @t's base lock.
 */
static bool qt_modify_replaces(const struct qt_timer *t,
			       const struct qt_arm_args *args)
{
	return t->heap_key == QT_KEY_NONE || qt_timer_clock(t) != args->clock ||
	       (t->nr_entries >= QT_TIMER_ENTRIES_MAX && qt_modify_pushes(t, args));
}

/*
 * MODIFY of an ARMED @t takes its table slot, once nothing can fail any
 * more: a stop user space made first stands (-ENOENT, nothing changed),
 * and one after fails.  Taken earlier, a failure would have to give the
 * slot back, and meanwhile the expirer could have fired @t at the expiry a
 * push of user space had moved.
 */
static int qt_modify_claim(struct qt_timer *t)
{
	struct qt_table *table = qt_ctx_table(t->ctx);

	return table ? qt_table_claim(table, t) : 0;
}

static int qt_modify_armed(struct qt_base *base, struct qt_timer *t,
			   const struct qt_arm_args *args)
{
	struct qt_table *table = qt_ctx_table(t->ctx);
	bool push = qt_modify_pushes(t, args);

	if (push && base->heap.nr >= base->heap.cap)
		return -EAGAIN;
	if (qt_modify_claim(t))
		return -ENOENT;
	if (push)
		qt_base_unlink(base, t);
	qt_timer_set(t, args);
	if (push)
		qt_base_push(base, t);
	if (table)
		qt_table_arm(table, t);
	base->stats.modified++;
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
static void qt_ops_take_over(struct qt_ctx *ctx, struct qt_timer *t,
			     struct qt_timer *fresh, struct qt_base *base,
			     const struct qt_arm_args *args)
{
	lockdep_assert_held(&base->lock);
	memset(fresh, 0, sizeof(*fresh));
	fresh->ctx = ctx;
	fresh->cookie = t->cookie;
	fresh->slot = t->slot;
	fresh->shard = t->shard;
	fresh->flags = t->flags & QT_TF_CANCEL_ON_SET;
	fresh->heap_key = QT_KEY_NONE;
	fresh->base_idx = base->idx;
	qt_timer_set(fresh, args);
	qt_ids_replace(&qt_ctx_shard_of(t)->ids, t->slot, fresh);
	qt_ctx_timer_armed(fresh);
	qt_base_push(base, fresh);
}

/*
 * Re-time an ARMED timer that qt_modify_replaces(): the id moves to @fresh
 * and the old object dies, to be freed by its last stale entry (or by the
 * expirer, in transit).  Compacting the heap instead to shed its stale
 * entries would cost O(n) under the base lock, at the will of whoever
 * modifies one timer.  Under the shard and delivery locks.
 */
static int qt_modify_replace(struct qt_ctx *ctx, struct qt_timer *t,
			     struct qt_timer *fresh, const struct qt_arm_args *args,
			     struct qt_batch *batch, struct qt_base **basep)
{
	struct qt_base *base;

	/* The new base first, so that a full heap leaves @t untouched. */
	base = qt_batch_lock_base(batch, qt_modify_target(t, args));
	*basep = base;
	if (base->heap.nr >= base->heap.cap)
		return -EAGAIN;
	if (qt_modify_claim(t))
		return -ENOENT;
	qt_ops_take_over(ctx, t, fresh, base, args);
	base->stats.modified++;

	/* Two base locks are never held together: the old one now. */
	base = qt_batch_lock_timer(batch, t);
	if (t->heap_key != QT_KEY_NONE)
		qt_base_unlink(base, t);
	t->state = QT_DEAD;
	qt_base_put_timer(base, t);
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
 * *basep is that base (on -EAGAIN, the one whose heap needs room).  Under
 * the shard and delivery locks, with no base lock.
 */
static int qt_modify_fired(struct qt_ctx *ctx, struct qt_timer *t,
			   struct qt_timer *fresh, const struct qt_arm_args *args,
			   struct qt_batch *batch, struct qt_base **basep)
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
			qt_end_forget(ctx, t, NULL);
			qt_deliver_detach(ctx->ring, t);
			qt_end_free_when_unreferenced(t);
			return -ENOENT;
		}
	}
	qt_ops_take_over(ctx, t, fresh, base, args);
	spin_unlock(&base->lock);

	if (t->state == QT_RINGED) {
		qt_deliver_detach(ctx->ring, t);
		qt_end_free_when_unreferenced(t);
	} else if (t->state == QT_QUEUED) {
		ret = QTIMER_CANCEL_QUEUED;
		t->state = QT_GHOST;
		ctx->nr_ready--;
		ctx->nr_ghosts++;
		qt_read_sweep(ctx, batch);
	} else {
		t->state = QT_ORPHAN;
	}
	return ret;
}

/*
 * MODIFY a timer in its heap under its shard's and base's locks alone, the
 * common case; any other under the delivery lock too, with a fresh object
 * for its id to move to, allocated with no lock held.
 */
int qt_ops_modify(struct qt_ctx *ctx, u64 id, const struct qt_arm_args *args,
		  struct qt_batch *batch)
{
	bool cos = args->flags & QTIMER_F_CANCEL_ON_SET;
	struct qt_timer *t, *fresh = NULL;
	struct qt_base *base;
	struct qt_shard *shard;
	int ret, cpu = -1;
	bool was_cos;
	u32 slot;

	if (cos) {
		qt_batch_drop(ctx, batch);
		qt_clockset_track(ctx);
	}
	for (;;) {
		t = qt_lookup(ctx, id, batch);
		if (!t) {
			ret = -ENOENT;
			break;
		}
		shard = batch->shard;
		slot = (id & QT_ID_SLOT_MASK) - 1;
		if (qt_ops_in_heap(ctx, batch, t)) {
			base = batch->base;
			was_cos = t->flags & QT_TF_CANCEL_ON_SET;
			if (!qt_modify_replaces(t, args)) {
				ret = qt_modify_armed(base, t, args);
				goto done;
			}
			qt_batch_lock_delivery(ctx, batch);
		}
		if (!qt_ops_live(ctx, t)) {
			ret = -ENOENT;
			break;
		}
		was_cos = t->flags & QT_TF_CANCEL_ON_SET;
		if (!fresh) {
			/* The id moves to a fresh object: allocate unlocked. */
			qt_batch_drop(ctx, batch);
			fresh = qt_timer_alloc(GFP_KERNEL);
			if (!fresh) {
				ret = -ENOMEM;
				goto out;
			}
			continue;
		}
		if (t->state == QT_ARMED) {
			base = qt_batch_lock_timer(batch, t);
			/* Back in its heap meanwhile (a ticker's reap). */
			if (!qt_modify_replaces(t, args))
				ret = qt_modify_armed(base, t, args);
			else
				ret = qt_modify_replace(ctx, t, fresh, args, batch,
							&base);
		} else {
			qt_batch_drop_base(batch);
			ret = qt_modify_fired(ctx, t, fresh, args, batch, &base);
		}
		if (qt_ids_get(&shard->ids, slot) == fresh)
			fresh = NULL;
done:
		if (ret != -EAGAIN) {
			if (ret >= 0) {
				cpu = base->idx / QT_NR_CLOCKS;
				if (was_cos != cos) {
					shard->nr_cancel_on_set += was_cos ? -1 : 1;
					/* @t may be gone: the id's slot is the same. */
					qt_ids_mark(&shard->ids, slot, cos);
				}
			}
			break;
		}
		/* The heap is full: grow it unlocked and look again. */
		qt_batch_drop(ctx, batch);
		ret = qt_storage_reserve(base, 1);
		if (ret)
			goto out;
	}
	qt_batch_drop_delivery(ctx, batch);
out:
	trace_qtimer_modify(id, args, ret, cpu);
	if (fresh)
		qt_timer_free(fresh);
	return ret;
}
