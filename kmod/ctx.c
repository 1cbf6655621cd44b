// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * The per-file timer context: ids (slot + generation, so lookups are O(1)
 * and stale or forged ids never reach another timer), arming, cancelling
 * and modifying, the ready queue of fired timers, and read().  The state
 * machine and the rules for who frees a timer are in ctx.h.
 *
 * Periodic timers are not re-armed by the expiry path: once fired they wait
 * on the ready queue, and read() counts the periods that passed meanwhile
 * and re-arms them, as timerfd does.  A ticker nobody reads therefore costs
 * one interrupt, however short its period, and has one pending record.
 */

#include <linux/hash.h>
#include <linux/hashtable.h>
#include <linux/irq_work.h>
#include <linux/math64.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/poll.h>
#include <linux/prefetch.h>
#include <linux/pvclock_gtod.h>
#include <linux/refcount.h>
#include <linux/sched/signal.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/user_namespace.h>

#include "base.h"
#include "compat.h"
#include "ctx.h"
#define CREATE_TRACE_POINTS
#include "trace.h"

#define QT_NO_SLOT		(~0U)
#define QT_MAX_SLOTS		(1U << 24)	/* t->slot is 24 bits */
/* Records gathered per lock hold in read(), copied out after it. */
#define QT_READ_CHUNK		16

unsigned long qt_max_timers_per_fd = 1UL << 20;
unsigned long qt_max_timers_per_user = 1UL << 22;

static struct kmem_cache *qt_timer_cache;

/*
 * Per-user timer accounting, for max_timers_per_user, as the kernel's
 * ucounts do it (whose types a module cannot add to): one record per user
 * namespace and uid, charged together with the record of the namespace's
 * owner in the parent namespace, up to the initial one.  So the uids of a
 * user namespace share the allowance of whoever created it, however many
 * uids it maps, and each level is held to the cap.
 */
struct qt_user {
	struct hlist_node node;		/* qt_users, qt_users_lock */
	struct user_namespace *ns;	/* a reference */
	kuid_t uid;
	refcount_t ref;
	atomic_long_t nr_timers;
	struct qt_user *parent;		/* (ns->parent, ns->owner), a reference */
};

static bool qt_user_charge_n(struct qt_user *user, long n);
static void qt_user_uncharge_n(struct qt_user *user, long n);

void qt_timer_free(struct qt_timer *t)
{
	kmem_cache_free(qt_timer_cache, t);
}

void qt_timers_free(unsigned int nr, void **timers)
{
	kmem_cache_free_bulk(qt_timer_cache, nr, timers);
}

/*
 * Start a SUBMIT chunk with timers for its @nr_arm ARMs, zeroed (which
 * init_on_alloc does anyway, so an ARM need not clear its timer again), and
 * with their places under the per-user cap taken in one atomic op rather
 * than one per ARM.  Best effort: with the bulk allocation failed, each ARM
 * allocates its own timer, so that only an ARM whose own allocation fails
 * gets -ENOMEM; and a chunk that would cross the cap leaves each ARM to
 * count itself, so that exactly those beyond it get -EDQUOT.
 */
void qt_batch_begin(struct qt_ctx *ctx, struct qt_batch *batch,
		    unsigned int nr_arm)
{
	nr_arm = min_t(unsigned int, nr_arm, QT_BATCH_MAX);
	batch->nr = 0;
	batch->quota = 0;
	batch->locked = false;
	batch->base = NULL;
	if (nr_arm < 2)
		return;
	batch->nr = kmem_cache_alloc_bulk(qt_timer_cache, GFP_KERNEL | __GFP_ZERO,
					  nr_arm, (void **)batch->timers);
	if (qt_user_charge_n(ctx->user, nr_arm))
		batch->quota = nr_arm;
}

/*
 * An op's lock: a batch's if it holds it already.  (__acquire() and
 * __release() tell sparse that each op takes and gives up the lock once,
 * as far as the op is concerned.)
 */
static void qt_ctx_lock(struct qt_ctx *ctx, struct qt_batch *batch)
	__acquires(&ctx->wqh.lock)
{
	if (batch && batch->locked) {
		lockdep_assert_held(&ctx->wqh.lock);
		__acquire(&ctx->wqh.lock);
		return;
	}
	spin_lock_irq(&ctx->wqh.lock);
	if (batch)
		batch->locked = true;
}

/* The op is done with the lock: a batch keeps it for its next op. */
static void qt_ctx_unlock(struct qt_ctx *ctx, struct qt_batch *batch)
	__releases(&ctx->wqh.lock)
{
	if (!batch)
		spin_unlock_irq(&ctx->wqh.lock);
	else
		__release(&ctx->wqh.lock);
}

/* Before an op takes base locks its own way, or wants none held. */
static void qt_op_put_base(struct qt_batch *batch)
{
	if (batch && batch->base) {
		spin_unlock(&batch->base->lock);
		batch->base = NULL;
	}
}

/* The op, holding the lock, is about to sleep. */
static void qt_ctx_drop(struct qt_ctx *ctx, struct qt_batch *batch)
	__releases(&ctx->wqh.lock)
{
	qt_op_put_base(batch);
	spin_unlock_irq(&ctx->wqh.lock);
	if (batch)
		batch->locked = false;
}

/* The op, before taking the lock, is about to sleep. */
static void qt_ctx_let_go(struct qt_ctx *ctx, struct qt_batch *batch)
{
	if (batch && batch->locked) {
		__acquire(&ctx->wqh.lock);
		qt_ctx_drop(ctx, batch);
	}
}

/*
 * End a chunk: let the lock go, free the timers no ARM took and give back
 * the places under the cap no ARM used.
 */
void qt_batch_end(struct qt_ctx *ctx, struct qt_batch *batch)
{
	qt_ctx_let_go(ctx, batch);
	if (batch->nr)
		qt_timers_free(batch->nr, (void **)batch->timers);
	batch->nr = 0;
	if (batch->quota)
		qt_user_uncharge_n(ctx->user, batch->quota);
	batch->quota = 0;
}

/* A zeroed timer. */
static struct qt_timer *qt_timer_alloc(struct qt_ctx *ctx, struct qt_batch *batch)
{
	if (batch && batch->nr)
		return batch->timers[--batch->nr];
	qt_ctx_let_go(ctx, batch);
	return kmem_cache_zalloc(qt_timer_cache, GFP_KERNEL);
}

/* A timer that an ARM did not use goes back where it came from. */
static void qt_timer_unalloc(struct qt_batch *batch, struct qt_timer *t)
{
	if (batch && batch->nr < QT_BATCH_MAX) {
		memset(t, 0, sizeof(*t));
		batch->timers[batch->nr++] = t;
	} else {
		qt_timer_free(t);
	}
}

/* --- per-user accounting ------------------------------------------------ */

static DEFINE_HASHTABLE(qt_users, 6);
static DEFINE_SPINLOCK(qt_users_lock);

static u32 qt_user_hash(const struct user_namespace *ns, kuid_t uid)
{
	return hash_ptr(ns, 32) ^ __kuid_val(uid);
}

static struct qt_user *qt_user_find(struct user_namespace *ns, kuid_t uid)
{
	struct qt_user *user;

	lockdep_assert_held(&qt_users_lock);
	hash_for_each_possible(qt_users, user, node, qt_user_hash(ns, uid))
		if (user->ns == ns && uid_eq(user->uid, uid)) {
			/* Only ever 0 under the lock, and then unhashed. */
			refcount_inc(&user->ref);
			return user;
		}
	return NULL;
}

/*
 * The record of @uid in @ns, and of the owners up the chain, created on
 * first use.  Only that first use allocates (unlocked, then looked up
 * again: a racing open may have added it meanwhile).  User namespaces nest
 * at most 32 deep, which bounds the recursion.
 */
static struct qt_user *qt_user_get_in(struct user_namespace *ns, kuid_t uid)
{
	struct qt_user *user, *fresh, *parent = NULL;

	spin_lock(&qt_users_lock);
	user = qt_user_find(ns, uid);
	spin_unlock(&qt_users_lock);
	if (user)
		return user;

	if (ns->parent) {
		parent = qt_user_get_in(ns->parent, ns->owner);
		if (!parent)
			return NULL;
	}
	fresh = kzalloc(sizeof(*fresh), GFP_KERNEL_ACCOUNT);
	if (!fresh) {
		if (parent)
			qt_user_put(parent);
		return NULL;
	}
	fresh->ns = get_user_ns(ns);
	fresh->uid = uid;
	fresh->parent = parent;
	refcount_set(&fresh->ref, 1);
	spin_lock(&qt_users_lock);
	user = qt_user_find(ns, uid);
	if (!user) {
		hash_add(qt_users, &fresh->node, qt_user_hash(ns, uid));
		user = fresh;
		fresh = NULL;
	}
	spin_unlock(&qt_users_lock);
	if (fresh) {
		if (parent)
			qt_user_put(parent);
		put_user_ns(ns);
		kfree(fresh);
	}
	return user;
}

/* The accounting record of the caller's effective uid, in its namespace. */
struct qt_user *qt_user_get(void)
{
	return qt_user_get_in(current_user_ns(), current_euid());
}

void qt_user_put(struct qt_user *user)
{
	struct qt_user *parent;

	while (user) {
		if (!refcount_dec_and_lock(&user->ref, &qt_users_lock))
			return;
		hash_del(&user->node);
		spin_unlock(&qt_users_lock);
		parent = user->parent;
		put_user_ns(user->ns);
		kfree(user);
		user = parent;
	}
}

/*
 * Count @n timers against the cap at every level of @user's chain, or at
 * none.  One level, one atomic op, outside user namespaces.
 */
static bool qt_user_charge_n(struct qt_user *user, long n)
{
	long max = READ_ONCE(qt_max_timers_per_user);
	struct qt_user *u, *over;

	for (u = user; u; u = u->parent) {
		if (atomic_long_add_return(n, &u->nr_timers) > max)
			goto undo;
	}
	return true;
undo:
	over = u;
	for (u = user; u != over->parent; u = u->parent)
		atomic_long_sub(n, &u->nr_timers);
	return false;
}

static void qt_user_uncharge_n(struct qt_user *user, long n)
{
	for (; user; user = user->parent)
		atomic_long_sub(n, &user->nr_timers);
}

/* Count an ARM against the per-user cap, from the chunk's share if it has one. */
static bool qt_user_charge(struct qt_ctx *ctx, struct qt_batch *batch)
{
	if (batch && batch->quota) {
		batch->quota--;
		return true;
	}
	return qt_user_charge_n(ctx->user, 1);
}

/*
 * An ARM that failed gives its place back.  In a chunk it goes to the
 * chunk's share, which the next ARM may take (the place is within the cap,
 * as it was counted) and qt_batch_end() gives back otherwise.
 */
static void qt_user_uncharge(struct qt_ctx *ctx, struct qt_batch *batch)
{
	if (batch)
		batch->quota++;
	else
		qt_user_uncharge_n(ctx->user, 1);
}

/* --- ids ---------------------------------------------------------------- */

/*
 * The id table: a slot's word and its generation sit in the same page, so
 * that looking an id up touches one page of the table.  341 slots of 12
 * bytes fill a 4 KiB page.
 */
#define QT_SLOTS_PER_BLOCK	(PAGE_SIZE / (sizeof(unsigned long) + sizeof(u32)))

struct qt_slot_block {
	unsigned long word[QT_SLOTS_PER_BLOCK];
	u32 gen[QT_SLOTS_PER_BLOCK];
};

static unsigned long *qt_slot_word(const struct qt_ctx *ctx, u32 slot)
{
	return &ctx->slot_blocks[slot / QT_SLOTS_PER_BLOCK]->word[slot % QT_SLOTS_PER_BLOCK];
}

static u32 *qt_slot_gen(const struct qt_ctx *ctx, u32 slot)
{
	return &ctx->slot_blocks[slot / QT_SLOTS_PER_BLOCK]->gen[slot % QT_SLOTS_PER_BLOCK];
}

static unsigned int qt_timer_clock(const struct qt_timer *t)
{
	return READ_ONCE(t->base_idx) % QT_NR_CLOCKS;
}

/* The clock its user armed it on, which its id and records speak of. */
static unsigned int qt_timer_user_clock(const struct qt_timer *t)
{
	if (t->flags & QT_TF_RELATIVE_REAL)
		return QT_CLOCK_REALTIME;
	return qt_timer_clock(t);
}

static u64 qt_timer_id(const struct qt_ctx *ctx, const struct qt_timer *t)
{
	return (u64)(*qt_slot_gen(ctx, t->slot) & QT_ID_GEN_MASK) << QT_ID_GEN_SHIFT |
	       (u64)qt_timer_user_clock(t) << QT_ID_CLOCK_SHIFT | (t->slot + 1);
}

static struct qt_timer *qt_lookup(struct qt_ctx *ctx, u64 id)
{
	u32 slot = (u32)id - 1;
	struct qt_slot_block *block;
	struct qt_timer *t;
	unsigned long v;

	lockdep_assert_held(&ctx->wqh.lock);
	if (slot >= ctx->nr_slots)
		return NULL;
	block = ctx->slot_blocks[slot / QT_SLOTS_PER_BLOCK];
	slot %= QT_SLOTS_PER_BLOCK;
	v = block->word[slot];
	if (v & 1)
		return NULL;
	if ((block->gen[slot] & QT_ID_GEN_MASK) != id >> QT_ID_GEN_SHIFT)
		return NULL;
	t = (struct qt_timer *)v;
	if (qt_timer_user_clock(t) != qt_id_clock(id))
		return NULL;
	return t;
}

static void qt_ctx_forget(struct qt_ctx *ctx, struct qt_timer *t);

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
	struct qt_timer *t = qt_lookup(ctx, id);

	if (t && t->state == QT_READING &&
	    (!t->period || (t->flags & QT_TF_CANCELED))) {
		qt_ctx_forget(ctx, t);
		t->state = QT_ORPHAN;
		return NULL;
	}
	return t;
}

static u32 qt_slot_alloc(struct qt_ctx *ctx, struct qt_timer *t)
{
	u32 slot = ctx->free_slot;
	unsigned long *word = qt_slot_word(ctx, slot);

	WRITE_ONCE(ctx->free_slot, *word >> 1);
	*word = (unsigned long)t;
	return slot;
}

static void qt_slot_free(struct qt_ctx *ctx, u32 slot)
{
	(*qt_slot_gen(ctx, slot))++;
	*qt_slot_word(ctx, slot) = (unsigned long)ctx->free_slot << 1 | 1;
	WRITE_ONCE(ctx->free_slot, slot);
}

/* Add a block of slots, in process context, until a slot is free. */
static int qt_slots_reserve(struct qt_ctx *ctx)
{
	struct qt_slot_block *block, **blocks = NULL, **old_blocks = NULL;
	u32 nr_blocks, max_blocks, first, next, i;

	/* Racy peek: the common case has a free slot and takes no lock. */
	if (READ_ONCE(ctx->free_slot) != QT_NO_SLOT)
		return 0;
	spin_lock_irq(&ctx->wqh.lock);
	first = ctx->nr_slots;
	max_blocks = ctx->nr_slot_blocks;
	next = ctx->free_slot;
	spin_unlock_irq(&ctx->wqh.lock);
	if (next != QT_NO_SLOT)
		return 0;
	if (first + QT_SLOTS_PER_BLOCK > QT_MAX_SLOTS)
		return -ENOSPC;

	nr_blocks = first / QT_SLOTS_PER_BLOCK;
	block = kmalloc(sizeof(*block), GFP_KERNEL_ACCOUNT);
	if (!block)
		return -ENOMEM;
	if (nr_blocks == max_blocks) {
		/* Pointers only: 8 bytes per 341 timers, doubling is fine. */
		max_blocks = max(2 * max_blocks, 8U);
		blocks = kvmalloc_array(max_blocks, sizeof(*blocks),
					GFP_KERNEL_ACCOUNT);
		if (!blocks) {
			kfree(block);
			return -ENOMEM;
		}
	}

	spin_lock_irq(&ctx->wqh.lock);
	if (ctx->nr_slots != first) {
		/* Someone else grew it. */
		spin_unlock_irq(&ctx->wqh.lock);
		kfree(block);
		kvfree(blocks);
		return 0;
	}
	if (blocks) {
		if (nr_blocks)
			memcpy(blocks, ctx->slot_blocks, nr_blocks * sizeof(*blocks));
		old_blocks = ctx->slot_blocks;
		ctx->slot_blocks = blocks;
		ctx->nr_slot_blocks = max_blocks;
	}
	for (i = 0; i < QT_SLOTS_PER_BLOCK; i++) {
		u32 link = i + 1 < QT_SLOTS_PER_BLOCK ? first + i + 1 : ctx->free_slot;

		block->word[i] = (unsigned long)link << 1 | 1;
		block->gen[i] = 0;
	}
	ctx->slot_blocks[nr_blocks] = block;
	ctx->nr_slots = first + QT_SLOTS_PER_BLOCK;
	WRITE_ONCE(ctx->free_slot, first);
	spin_unlock_irq(&ctx->wqh.lock);
	kvfree(old_blocks);
	return 0;
}

/* --- the ready queue ---------------------------------------------------- */

static void qt_ready_append(struct qt_ctx *ctx, struct qt_timer *t)
{
	lockdep_assert_held(&ctx->wqh.lock);
	t->next = NULL;
	*ctx->ready_tail = t;
	ctx->ready_tail = &t->next;
}

static void qt_ready_prepend(struct qt_ctx *ctx, struct qt_timer *t)
{
	lockdep_assert_held(&ctx->wqh.lock);
	t->next = ctx->ready;
	if (!ctx->ready)
		ctx->ready_tail = &t->next;
	ctx->ready = t;
}

static struct qt_timer *qt_ready_pop(struct qt_ctx *ctx)
{
	struct qt_timer *t = ctx->ready;

	lockdep_assert_held(&ctx->wqh.lock);
	if (t) {
		if (t == ctx->sweep_at)
			ctx->sweep_at = NULL;
		ctx->ready = t->next;
		if (!ctx->ready)
			ctx->ready_tail = &ctx->ready;
		else
			/* Timers are scattered: start on the next one's miss. */
			prefetchw(ctx->ready);
	}
	return t;
}

/*
 * Whether no heap entry points at @t any more, so that only holders of its
 * context lock can reach it (see nr_entries in ctx.h).
 */
static bool qt_timer_unreachable(struct qt_timer *t)
{
	lockdep_assert_held(&t->ctx->wqh.lock);
	/* Pairs with the release in qt_base_drop(), its last touch of @t. */
	return !smp_load_acquire(&t->nr_entries);
}

/*
 * Lock @t's base, keeping @held (the base locked for the previous timer, or
 * NULL) when it is the same one: timers handled together mostly share one.
 */
static struct qt_base *qt_base_relock(struct qt_base *held, struct qt_timer *t)
{
	if (held) {
		if (likely(READ_ONCE(t->base_idx) == held->idx))
			return held;
		spin_unlock(&held->lock);
	}
	return qt_base_lock_timer(t);
}

/*
 * An op's base lock, taken under the context lock: @base, or with
 * qt_op_lock_timer() @t's.  A batch keeps it for its next op (see struct
 * qt_batch), giving up the one it held first if that is another;
 * qt_op_unlock_base() then leaves it held, and qt_op_put_base() (also
 * called by qt_ctx_drop()) lets it go.
 */
static struct qt_base *qt_op_lock_base(struct qt_batch *batch,
				       struct qt_base *base)
{
	if (!batch) {
		spin_lock(&base->lock);
		return base;
	}
	if (batch->base == base)
		return base;
	qt_op_put_base(batch);
	spin_lock(&base->lock);
	batch->base = base;
	return base;
}

static struct qt_base *qt_op_lock_timer(struct qt_batch *batch,
					struct qt_timer *t)
{
	if (!batch)
		return qt_base_lock_timer(t);
	batch->base = qt_base_relock(batch->base, t);
	return batch->base;
}

static void qt_op_unlock_base(struct qt_batch *batch, struct qt_base *base)
{
	if (!batch)
		spin_unlock(&base->lock);
}

/*
 * Make @t DEAD: its owner is done with it.  *@held is the base the caller
 * holds locked, or NULL, and is swapped for @t's base if need be (see
 * qt_base_relock()); the caller unlocks it.  Returns true when nothing can
 * reach @t any more, for the caller to free it, which may wait until the
 * locks are dropped; otherwise the last stale heap entry dropped frees it.
 */
static bool qt_timer_let_die(struct qt_timer *t, struct qt_base **held)
{
	if (qt_timer_unreachable(t))
		return true;
	*held = qt_base_relock(*held, t);
	t->state = QT_DEAD;
	return !t->nr_entries;
}

/* Free a GHOST or ORPHAN once its owner is done with it. */
static void qt_timer_bury(struct qt_timer *t)
{
	struct qt_base *base = NULL;
	bool free = qt_timer_let_die(t, &base);

	if (base)
		spin_unlock(&base->lock);
	if (free)
		qt_timer_free(t);
}

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
 * stopped (ctx->sweep_at, which qt_ready_pop() forgets if it takes it), and
 * frees the GHOSTs on the way.  The walk outpaces the ghosts that ops add,
 * and no step holds the context lock for more than a chunk, however long
 * the queue: amortised O(1), bounded O(1).
 */
static void qt_ready_sweep(struct qt_ctx *ctx, struct qt_batch *batch)
{
	struct qt_timer **link, *t;
	unsigned int n = 0;

	lockdep_assert_held(&ctx->wqh.lock);
	if (ctx->nr_ghosts <= ctx->nr_ready + 64)
		return;
	qt_op_put_base(batch);
	link = ctx->sweep_at ? &ctx->sweep_at->next : &ctx->ready;
	while ((t = *link) && n++ < QT_SWEEP_CHUNK) {
		if (t->state == QT_GHOST) {
			*link = t->next;
			if (ctx->ready_tail == &t->next)
				ctx->ready_tail = link;
			ctx->nr_ghosts--;
			qt_timer_bury(t);
			continue;
		}
		ctx->sweep_at = t;
		link = &t->next;
	}
	/* At the end of the queue: the next step starts at its head. */
	if (!t)
		ctx->sweep_at = NULL;
}

static void qt_ctx_forget(struct qt_ctx *ctx, struct qt_timer *t)
{
	qt_slot_free(ctx, t->slot);
	ctx->nr_timers--;
	ctx->nr_per_clock[qt_timer_user_clock(t)]--;
	if (t->flags & QT_TF_CANCEL_ON_SET)
		ctx->nr_cancel_on_set--;
	qt_user_uncharge_n(ctx->user, 1);
}

/*
 * Take @t's id away and make it dead, or hand it to whoever holds it now.
 * Returns the QTIMER_CANCEL_* mask of what that prevented.
 */
static int qt_timer_kill(struct qt_ctx *ctx, struct qt_timer *t,
			 struct qt_batch *batch)
{
	struct qt_base *base;
	int ret = 0;

	lockdep_assert_held(&ctx->wqh.lock);
	qt_ctx_forget(ctx, t);
	base = qt_op_lock_timer(batch, t);
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
	}
	qt_op_unlock_base(batch, base);
	return ret;
}

/* --- arm, cancel, modify ------------------------------------------------ */

static LIST_HEAD(qt_cos_list);
static DEFINE_MUTEX(qt_cos_mutex);

/*
 * Clock sets announced by the notifier, and those the work has applied.
 * The notifier runs before any timer can see the new time, so a timer that
 * expires while they differ may have been made due by the set itself.
 */
static atomic_t qt_clock_sets = ATOMIC_INIT(0);
static atomic_t qt_clock_sets_done = ATOMIC_INIT(0);

/* A clock set was announced and its work has not finished. */
static bool qt_clock_set_pending(void)
{
	return atomic_read(&qt_clock_sets) != atomic_read(&qt_clock_sets_done);
}

/* Files with cancel-on-set timers are walked when the clock is set. */
static void qt_clock_set_sync(void);

static void qt_cos_track(struct qt_ctx *ctx)
{
	/*
	 * A clock set still being applied must not cancel a timer armed
	 * after it: let it finish first.  One comparison when none is.
	 */
	qt_clock_set_sync();
	if (!list_empty_careful(&ctx->cos_node))
		return;
	mutex_lock(&qt_cos_mutex);
	if (list_empty(&ctx->cos_node))
		list_add_tail(&ctx->cos_node, &qt_cos_list);
	mutex_unlock(&qt_cos_mutex);
}

static void qt_timer_set(struct qt_timer *t, const struct qt_arm_args *args)
{
	t->expires = args->expires;
	t->period = args->period;
	t->slack = args->slack;
	if (args->flags & QTIMER_F_CANCEL_ON_SET)
		t->flags |= QT_TF_CANCEL_ON_SET;
	else
		t->flags &= ~QT_TF_CANCEL_ON_SET;
	if (args->flags & QT_ARM_RELATIVE_REAL)
		t->flags |= QT_TF_RELATIVE_REAL;
	else
		t->flags &= ~QT_TF_RELATIVE_REAL;
}

int qt_ctx_arm(struct qt_ctx *ctx, const struct qt_arm_args *args,
	       struct qt_batch *batch, u64 *id)
{
	bool pinned = args->flags & QTIMER_F_CPU;
	struct qt_base *base;
	struct qt_timer *t;
	unsigned int cpu;
	int ret;

	if (!qt_user_charge(ctx, batch))
		return -EDQUOT;
	t = qt_timer_alloc(ctx, batch);
	if (!t) {
		ret = -ENOMEM;
		goto out_user;
	}
	t->ctx = ctx;
	t->cookie = args->cookie;
	t->heap_key = QT_KEY_NONE;
	qt_timer_set(t, args);
	if (args->flags & QTIMER_F_CANCEL_ON_SET) {
		qt_ctx_let_go(ctx, batch);
		qt_cos_track(ctx);
	}

	for (;;) {
		/* Held by the batch: room is checked under the locks below. */
		if (!batch || !batch->locked) {
			cpu = pinned ? args->cpu : raw_smp_processor_id();
			ret = qt_base_reserve(qt_base_get(cpu, args->clock), 1);
			if (ret)
				goto out_free;
			ret = qt_slots_reserve(ctx);
			if (ret)
				goto out_free;
		}

		qt_ctx_lock(ctx, batch);
		if (ctx->nr_timers >= READ_ONCE(qt_max_timers_per_fd)) {
			ret = -ENOSPC;
			goto out_unlock;
		}
		if (ctx->free_slot == QT_NO_SLOT) {
			qt_ctx_drop(ctx, batch);
			continue;
		}
		cpu = pinned ? args->cpu : smp_processor_id();
		base = qt_op_lock_base(batch, qt_base_get(cpu, args->clock));
		if (pinned && !base->online) {
			qt_op_unlock_base(batch, base);
			ret = -EINVAL;
			goto out_unlock;
		}
		if (base->heap.nr >= base->heap.cap) {
			qt_op_unlock_base(batch, base);
			qt_ctx_drop(ctx, batch);
			continue;
		}
		t->slot = qt_slot_alloc(ctx, t);
		t->state = QT_ARMED;
		qt_base_push(base, t);
		base->stats.armed++;
		qt_op_unlock_base(batch, base);

		ctx->nr_timers++;
		ctx->nr_per_clock[qt_timer_user_clock(t)]++;
		if (t->flags & QT_TF_CANCEL_ON_SET)
			ctx->nr_cancel_on_set++;
		*id = qt_timer_id(ctx, t);
		trace_qtimer_arm(*id, args, cpu);
		qt_ctx_unlock(ctx, batch);
		return 0;
	}

out_unlock:
	qt_ctx_unlock(ctx, batch);
out_free:
	qt_timer_unalloc(batch, t);
out_user:
	qt_user_uncharge(ctx, batch);
	return ret;
}

int qt_ctx_cancel(struct qt_ctx *ctx, u64 id, struct qt_batch *batch)
{
	struct qt_timer *t;
	int ret;

	qt_ctx_lock(ctx, batch);
	t = qt_lookup_live(ctx, id);
	if (t) {
		ret = qt_timer_kill(ctx, t, batch);
		qt_ready_sweep(ctx, batch);
	} else {
		ret = -ENOENT;
	}
	trace_qtimer_cancel(id, ret);
	qt_ctx_unlock(ctx, batch);
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
	fresh->state = QT_ARMED;
	*qt_slot_word(ctx, t->slot) = (unsigned long)fresh;
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
	base = qt_op_lock_base(batch, qt_modify_target(t, args));
	*basep = base;
	if (base->heap.nr >= base->heap.cap) {
		qt_op_unlock_base(batch, base);
		return -EAGAIN;
	}
	qt_timer_take_over(ctx, t, fresh, base, args);
	base->stats.modified++;
	qt_op_unlock_base(batch, base);

	/* Two base locks are never held together: the old one now. */
	base = qt_op_lock_timer(batch, t);
	if (t->heap_key != QT_KEY_NONE)
		qt_base_unlink(base, t);
	t->state = QT_DEAD;
	qt_base_put_timer(base, t);
	qt_op_unlock_base(batch, base);
	return QTIMER_CANCEL_ARMED;
}

/*
 * Re-time a timer whose old record is queued or being read.  That record
 * must never be read, and the object is still linked where it is, so the id
 * moves to a fresh object and the old one is left to die where it stands.
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
	qt_timer_take_over(ctx, t, fresh, base, args);
	spin_unlock(&base->lock);

	if (t->state == QT_QUEUED) {
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

	if (args->flags & QTIMER_F_CANCEL_ON_SET) {
		qt_ctx_let_go(ctx, batch);
		qt_cos_track(ctx);
	}
	for (;;) {
		qt_ctx_lock(ctx, batch);
		t = qt_lookup_live(ctx, id);
		if (!t) {
			ret = -ENOENT;
			break;
		}
		was_cos = t->flags & QT_TF_CANCEL_ON_SET;
		if (t->state == QT_ARMED) {
			bool replace;

			base = qt_op_lock_timer(batch, t);
			replace = qt_timer_clock(t) != args->clock ||
				  (t->nr_entries >= QT_TIMER_ENTRIES_MAX &&
				   qt_modify_pushes(t, args));
			need_fresh = replace && !fresh;
			if (!replace) {
				ret = qt_modify_armed(base, t, args);
				if (ret >= 0)
					base->stats.modified++;
			}
			qt_op_unlock_base(batch, base);
			if (replace && fresh) {
				ret = qt_modify_replace(ctx, t, fresh, args, batch,
							&base);
				if (ret >= 0)
					fresh = NULL;
			}
		} else if (fresh) {
			qt_op_put_base(batch);
			ret = qt_modify_fired(ctx, t, fresh, args, &base);
			if (ret >= 0)
				fresh = NULL;
			need_fresh = false;
		} else {
			need_fresh = true;
		}
		if (need_fresh) {
			/* The id moves to a fresh object: allocate unlocked. */
			qt_ctx_drop(ctx, batch);
			fresh = kmem_cache_alloc(qt_timer_cache, GFP_KERNEL);
			if (!fresh)
				return -ENOMEM;
			continue;
		}
		if (ret != -EAGAIN) {
			if (ret >= 0)
				cpu = base->idx / QT_NR_CLOCKS;
			if (was_cos != !!(args->flags & QTIMER_F_CANCEL_ON_SET))
				ctx->nr_cancel_on_set += was_cos ? -1 : 1;
			break;
		}
		/* The heap is full: grow it unlocked and look again. */
		qt_ctx_drop(ctx, batch);
		ret = qt_base_reserve(base, 1);
		if (ret)
			goto out;
	}
	qt_ctx_unlock(ctx, batch);
out:
	trace_qtimer_modify(id, args, ret, cpu);
	if (fresh)
		qt_timer_free(fresh);
	return ret;
}

/* --- expiry ------------------------------------------------------------- */

/*
 * Settle one popped timer of @ctx: queue its record, or free it if it died
 * in transit.  @base is the timer's base, locked, or NULL when the transit
 * reference is the timer's only one (see nr_entries in ctx.h).  Returns true
 * when a record was queued.
 */
static bool qt_deliver_one(struct qt_ctx *ctx, struct qt_base *base,
			   struct qt_timer *t, ktime_t now)
{
	lockdep_assert_held(&ctx->wqh.lock);
	if (base)
		lockdep_assert_held(&base->lock);
	t->nr_entries--;	/* the transit reference */
	if (t->state == QT_ARMED && t->heap_key == QT_KEY_NONE) {
		t->state = QT_QUEUED;
		t->count = 1;
		/*
		 * A clock set is under way (the work has not run yet): it came
		 * first, even if it is what made this timer due.
		 */
		if ((t->flags & QT_TF_CANCEL_ON_SET) && qt_clock_set_pending()) {
			t->flags |= QT_TF_CANCELED;
			t->count = 0;
		}
		/* The id costs a miss in the id table: only when tracing. */
		if (trace_qtimer_expire_enabled())
			trace_qtimer_expire(qt_timer_id(ctx, t), t->expires, now);
		qt_ready_append(ctx, t);
		ctx->nr_ready++;
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
 * qt_ctx_deliver() - Hand a batch of popped timers to their files.
 * @batch: timers the base's expirer popped while ARMED, each holding its
 *	transit reference.
 * @nr: how many.
 * @now: the clock reading they were found due at.
 * @wait: whether to wait for a file's lock when it is busy.
 *
 * Called under rcu_read_lock().  A context may be closing: its memory stays
 * valid for the RCU grace period, and a closing context has made all its
 * timers DEAD under its lock, so nothing is queued on it.
 *
 * The timers of one file are delivered under one hold of its lock, with one
 * wakeup: a wakeup runs every poll and epoll waiter's callback, which per
 * timer cost more than the delivery itself.  Within a file the batch order
 * (deadline order) is kept.  The base lock, which the expirer has just
 * dropped and takes again for the next batch, is needed only for a timer
 * that still has heap entries besides its transit reference (one re-timed
 * or cancelled meanwhile); for the others the context lock is enough (see
 * nr_entries in ctx.h), which keeps readers and the expirer from waiting on
 * each other's base lock holds.
 *
 * Without @wait, delivery stops at the first file whose lock is busy, so
 * that the expirer can pop more meanwhile instead of spinning.
 *
 * Return: how many were left undelivered, at the front of @batch in their
 * order (0 with @wait).
 */
unsigned int qt_ctx_deliver(struct qt_timer **batch, unsigned int nr,
			    ktime_t now, bool wait)
{
	unsigned int i, rest;
	unsigned long flags;

	while (nr) {
		struct qt_ctx *ctx = batch[0]->ctx;
		struct qt_base *base = NULL;
		bool wake = false;

		if (wait)
			spin_lock_irqsave(&ctx->wqh.lock, flags);
		else if (!spin_trylock_irqsave(&ctx->wqh.lock, flags))
			break;
		/* Deliver ctx's timers and keep the others, in order, for later. */
		for (i = rest = 0; i < nr; i++) {
			struct qt_timer *t = batch[i];

			if (t->ctx != ctx) {
				batch[rest++] = t;
				continue;
			}
			if (READ_ONCE(t->nr_entries) == 1) {
				wake |= qt_deliver_one(ctx, NULL, t, now);
				continue;
			}
			/* Its other entries are in its base's heap. */
			base = qt_base_relock(base, t);
			wake |= qt_deliver_one(ctx, base, t, now);
		}
		if (base)
			spin_unlock(&base->lock);
		if (wake)
			wake_up_locked_poll(&ctx->wqh, EPOLLIN | EPOLLRDNORM);
		spin_unlock_irqrestore(&ctx->wqh.lock, flags);
		nr = rest;
	}
	return nr;
}

/* --- read --------------------------------------------------------------- */

static ktime_t qt_expires_next(const struct qt_timer *t)
{
	if (t->expires > QT_EXPIRES_MAX - (s64)min_t(u64, t->period, QT_EXPIRES_MAX))
		return QT_EXPIRES_MAX;
	return t->expires + t->period;
}

/*
 * Fill @rec from a QUEUED timer and mark it READING.  A periodic timer's
 * count takes in every period that passed since it fired, and its expires
 * becomes the latest of those: the next deadline is one period after it,
 * Go's when + period * (1 + late / period), so the ticker never drifts.
 */
static void qt_take_record(struct qt_ctx *ctx, struct qt_timer *t,
			   struct qtimer_record *rec, const ktime_t *ns_offset)
{
	unsigned int clock = qt_timer_clock(t);
	u64 count;

	/*
	 * The clock was set and the work that cancels cancel-on-set timers has
	 * not run yet: a read right after clock_settime() returns must see the
	 * cancellation as timerfd's does (ECANCELED), not a plain record.
	 */
	if ((t->flags & QT_TF_CANCEL_ON_SET) && qt_clock_set_pending())
		t->flags |= QT_TF_CANCELED;
	count = t->count;
	if (t->period && !(t->flags & QT_TF_CANCELED)) {
		ktime_t now = qt_clock_now(clock);

		if (now > t->expires) {
			u64 missed = div64_u64(now - t->expires, t->period);

			count += missed;
			t->expires += missed * t->period;
		}
	}
	t->count = min_t(u64, count, QTIMER_COUNT_MAX);
	t->state = QT_READING;
	ctx->nr_ready--;

	rec->id = qt_timer_id(ctx, t);
	rec->cookie = t->cookie;
	/* Another namespace's reader may see beyond ktime_t: saturate. */
	if (t->flags & QT_TF_RELATIVE_REAL)
		rec->expires_ns = ktime_mono_to_real(t->expires);
	else if (check_add_overflow(t->expires, ns_offset[clock], &rec->expires_ns))
		rec->expires_ns = ns_offset[clock] > 0 ? KTIME_MAX : KTIME_MIN;
	rec->count = t->count;
	rec->flags = 0;
	if (!t->period || (t->flags & QT_TF_CANCELED))
		rec->flags |= QTIMER_REC_LAST;
	if (t->flags & QT_TF_CANCELED)
		rec->flags |= QTIMER_REC_CANCELED;
	trace_qtimer_read(rec->id, rec->count, rec->flags);
}

/*
 * Queue the cancellation record of a cancel-on-set timer that is not armed
 * (any more) when the clock is set, with @count expirations pending.
 */
static void qt_timer_queue_canceled(struct qt_ctx *ctx, struct qt_timer *t,
				    u32 count)
{
	lockdep_assert_held(&ctx->wqh.lock);
	t->flags = (t->flags & ~QT_TF_SET_WHILE_READ) | QT_TF_CANCELED;
	t->count = count;
	t->state = QT_QUEUED;
	qt_ready_append(ctx, t);
	ctx->nr_ready++;
	wake_up_locked_poll(&ctx->wqh, EPOLLIN | EPOLLRDNORM);
}

/*
 * Settle the timers a read() took: delivered ones die (one-shot) or re-arm
 * (periodic); those whose record could not be copied go back to the front
 * of the queue, so a fault loses nothing.  Returns -EAGAIN with *done set
 * when a periodic timer's heap needs to grow first.
 *
 * The timers are settled under one hold of each base lock they share, and
 * those that are now free (DEAD with no heap entry left) are not freed here
 * but collected in @dead[*nr_dead], for the caller to free in bulk once it
 * dropped the context lock: nothing can reach them any more.
 */
static int qt_read_settle(struct qt_ctx *ctx, struct qt_timer **taken,
			  unsigned int nr, unsigned int copied, unsigned int *done,
			  void **dead, unsigned int *nr_dead)
{
	struct qt_base *base = NULL;
	unsigned int i;
	int ret = 0;

	lockdep_assert_held(&ctx->wqh.lock);
	for (i = *done; i < copied; i++) {
		struct qt_timer *t = taken[i];

		if (t->state == QT_ORPHAN || !t->period ||
		    (t->flags & QT_TF_CANCELED)) {
			if (t->state != QT_ORPHAN)
				qt_ctx_forget(ctx, t);
			if (qt_timer_let_die(t, &base))
				dead[(*nr_dead)++] = t;
			continue;
		}
		if (t->flags & QT_TF_SET_WHILE_READ) {
			/* The clock was set meanwhile: cancelled, not re-armed. */
			qt_timer_queue_canceled(ctx, t, 0);
			continue;
		}
		base = qt_base_relock(base, t);
		if (base->heap.nr >= base->heap.cap) {
			ret = -EAGAIN;
			break;
		}
		t->expires = qt_expires_next(t);
		t->count = 0;
		t->state = QT_ARMED;
		qt_base_push(base, t);
	}
	if (base)
		spin_unlock(&base->lock);
	*done = i;
	if (ret)
		return ret;
	/* Back to the front in their original order. */
	for (i = nr; i-- > copied; ) {
		struct qt_timer *t = taken[i];

		if (t->state == QT_ORPHAN) {
			qt_timer_bury(t);
			continue;
		}
		/* Its record, back on the queue, becomes the cancellation. */
		if (t->flags & QT_TF_SET_WHILE_READ)
			t->flags = (t->flags & ~QT_TF_SET_WHILE_READ) | QT_TF_CANCELED;
		t->state = QT_QUEUED;
		qt_ready_prepend(ctx, t);
		ctx->nr_ready++;
	}
	if (nr > copied)
		wake_up_locked_poll(&ctx->wqh, EPOLLIN | EPOLLRDNORM);
	return 0;
}

ssize_t qt_ctx_read(struct qt_ctx *ctx, char __user *buf, size_t len,
		    bool nonblock)
{
	struct qtimer_record recs[QT_READ_CHUNK];
	struct qt_timer *taken[QT_READ_CHUNK];
	void *dead[QT_READ_CHUNK];
	size_t max = len / sizeof(recs[0]), got = 0;
	unsigned int nr, copied, done, nr_dead, clock;
	ktime_t ns_offset[QT_NR_CLOCKS];
	struct qt_timer *t;
	int ret, err;

	if (!max)
		return -EINVAL;
	/* The reader's time namespace, looked up once rather than per record. */
	for (clock = 0; clock < QT_NR_CLOCKS; clock++)
		ns_offset[clock] = qt_timens_offset(qt_clock_id(clock));
	while (got < max) {
		spin_lock_irq(&ctx->wqh.lock);
		if (!ctx->nr_ready) {
			if (got || nonblock) {
				spin_unlock_irq(&ctx->wqh.lock);
				break;
			}
			ret = wait_event_interruptible_locked_irq(ctx->wqh,
								  ctx->nr_ready);
			if (ret) {
				spin_unlock_irq(&ctx->wqh.lock);
				return ret;
			}
		}
		nr = 0;
		while (nr < min_t(size_t, QT_READ_CHUNK, max - got) &&
		       (t = qt_ready_pop(ctx))) {
			if (t->state == QT_GHOST) {
				ctx->nr_ghosts--;
				qt_timer_bury(t);
				continue;
			}
			qt_take_record(ctx, t, &recs[nr], ns_offset);
			taken[nr++] = t;
		}
		spin_unlock_irq(&ctx->wqh.lock);
		if (!nr)
			continue;

		/* A record cut in the middle was not delivered. */
		copied = nr - DIV_ROUND_UP(copy_to_user(buf + got * sizeof(recs[0]),
							recs, nr * sizeof(recs[0])),
					   sizeof(recs[0]));
		err = -EFAULT;
		done = 0;
		for (;;) {
			nr_dead = 0;
			spin_lock_irq(&ctx->wqh.lock);
			ret = qt_read_settle(ctx, taken, nr, copied, &done,
					     dead, &nr_dead);
			spin_unlock_irq(&ctx->wqh.lock);
			if (nr_dead)
				qt_timers_free(nr_dead, dead);
			if (ret != -EAGAIN)
				break;
			/*
			 * A delivered ticker goes back into its heap, which
			 * needs room.  Without memory for it, neither its
			 * record nor those after it count as delivered: they go
			 * back to the queue, as after a fault, and the read
			 * returns what came before them, or -ENOMEM.  The
			 * ticker's count and deadline are kept, so nothing is
			 * lost and the next read() catches up.
			 */
			if (qt_base_reserve(&qt_bases[READ_ONCE(taken[done]->base_idx)], 1)) {
				copied = done;
				err = -ENOMEM;
			}
		}
		got += copied;
		if (copied < nr)
			return got ? got * sizeof(recs[0]) : err;
	}
	if (!got)
		return -EAGAIN;
	return got * sizeof(recs[0]);
}

/* --- clock set ---------------------------------------------------------- */

/*
 * When CLOCK_REALTIME is set, cancel-on-set timers are cancelled with a
 * record saying so.  The timekeeping core announces clock sets only through
 * the pvclock notifier chain, called under the timekeeper lock, so hop to an
 * irq_work and then to process context, as KVM does.
 */
static void qt_clock_set_workfn(struct work_struct *work)
{
	int sets = atomic_read(&qt_clock_sets);
	struct qt_ctx *ctx;
	u32 slot;

	mutex_lock(&qt_cos_mutex);
	list_for_each_entry(ctx, &qt_cos_list, cos_node) {
		spin_lock_irq(&ctx->wqh.lock);
		for (slot = 0; ctx->nr_cancel_on_set && slot < ctx->nr_slots; slot++) {
			struct qt_timer *t;
			struct qt_base *base;

			/*
			 * A file may hold a million timers: let interrupts in
			 * now and then.  An ARM or MODIFY of a cancel-on-set
			 * timer waits for this walk (qt_cos_track()), so one
			 * that lands in a slot already passed is not missed.
			 */
			if (slot && !(slot % 1024)) {
				spin_unlock_irq(&ctx->wqh.lock);
				cond_resched();
				spin_lock_irq(&ctx->wqh.lock);
			}
			t = (struct qt_timer *)*qt_slot_word(ctx, slot);
			if ((unsigned long)t & 1 || !(t->flags & QT_TF_CANCEL_ON_SET))
				continue;
			/*
			 * Its pending record becomes the cancellation record,
			 * a one-shot's too: as timerfd's read says ECANCELED
			 * for an expiry not yet read when the clock was set.
			 */
			if (t->state == QT_QUEUED) {
				t->flags |= QT_TF_CANCELED;
				continue;
			}
			/*
			 * A read() has its record, taken before the set: that
			 * read settles it into a cancellation record instead
			 * of re-arming it (qt_read_settle()).
			 */
			if (t->state == QT_READING && t->period &&
			    !(t->flags & QT_TF_CANCELED)) {
				t->flags |= QT_TF_SET_WHILE_READ;
				continue;
			}
			if (t->state != QT_ARMED)
				continue;
			base = qt_base_lock_timer(t);
			if (t->heap_key != QT_KEY_NONE)
				qt_base_unlink(base, t);
			spin_unlock(&base->lock);
			qt_timer_queue_canceled(ctx, t, 0);
		}
		spin_unlock_irq(&ctx->wqh.lock);
	}
	mutex_unlock(&qt_cos_mutex);
	atomic_set(&qt_clock_sets_done, sets);
}

static DECLARE_WORK(qt_clock_set_work, qt_clock_set_workfn);

static void qt_clock_set_irq_work(struct irq_work *work)
{
	schedule_work(&qt_clock_set_work);
}

static DEFINE_IRQ_WORK(qt_clock_set_iw, qt_clock_set_irq_work);

static void qt_clock_set_sync(void)
{
	if (!qt_clock_set_pending())
		return;
	irq_work_sync(&qt_clock_set_iw);
	flush_work(&qt_clock_set_work);
}

static int qt_clock_notify(struct notifier_block *nb, unsigned long was_set,
			   void *priv)
{
	if (was_set) {
		atomic_inc(&qt_clock_sets);
		irq_work_queue(&qt_clock_set_iw);
	}
	return NOTIFY_OK;
}

static struct notifier_block qt_clock_nb = {
	.notifier_call = qt_clock_notify,
};

/* --- contexts ----------------------------------------------------------- */

struct qt_ctx *qt_ctx_create(void)
{
	struct qt_ctx *ctx = kzalloc(sizeof(*ctx), GFP_KERNEL_ACCOUNT);

	if (!ctx)
		return NULL;
	ctx->user = qt_user_get();
	if (!ctx->user) {
		kfree(ctx);
		return NULL;
	}
	init_waitqueue_head(&ctx->wqh);
	ctx->ready_tail = &ctx->ready;
	ctx->free_slot = QT_NO_SLOT;
	INIT_LIST_HEAD(&ctx->cos_node);
	return ctx;
}

/* Timers release() handles per hold of the context lock. */
#define QT_RELEASE_CHUNK	64

/* The last close: every timer dies.  No read() or ioctl() can be running. */
void qt_ctx_release(struct qt_ctx *ctx)
{
	struct qt_timer *t;
	u32 slot;

	if (!list_empty(&ctx->cos_node)) {
		mutex_lock(&qt_cos_mutex);
		list_del(&ctx->cos_node);
		mutex_unlock(&qt_cos_mutex);
	}

	spin_lock_irq(&ctx->wqh.lock);
	for (slot = 0; slot < ctx->nr_slots; slot++) {
		unsigned long v = *qt_slot_word(ctx, slot);

		if (!(v & 1))
			qt_timer_kill(ctx, (struct qt_timer *)v, NULL);
		/* Let interrupts in now and then: a file may hold millions. */
		if (!(slot % QT_RELEASE_CHUNK)) {
			spin_unlock_irq(&ctx->wqh.lock);
			cond_resched();
			spin_lock_irq(&ctx->wqh.lock);
		}
	}
	spin_unlock_irq(&ctx->wqh.lock);

	/*
	 * The ready queue is GHOSTs now.  Those that nothing else can reach
	 * are freed in bulk, a chunk at a time and with interrupts on: one
	 * by one under the lock, a million unread records held a CPU with
	 * interrupts off for as long as freeing them took.
	 */
	do {
		struct qt_base *base = NULL;
		void *dead[QT_RELEASE_CHUNK];
		unsigned int nr = 0;

		spin_lock_irq(&ctx->wqh.lock);
		while (nr < QT_RELEASE_CHUNK && (t = qt_ready_pop(ctx)))
			if (qt_timer_let_die(t, &base))
				dead[nr++] = t;
		if (base)
			spin_unlock(&base->lock);
		spin_unlock_irq(&ctx->wqh.lock);
		if (nr)
			qt_timers_free(nr, dead);
		cond_resched();
	} while (t);

	for (slot = 0; slot < ctx->nr_slots; slot += QT_SLOTS_PER_BLOCK)
		kfree(ctx->slot_blocks[slot / QT_SLOTS_PER_BLOCK]);
	kvfree(ctx->slot_blocks);
	qt_user_put(ctx->user);
	/* An expirer may still hold a timer of ours in transit. */
	kfree_rcu(ctx, rcu);
	qt_base_trim();
}

void qt_ctx_show_fdinfo(struct qt_ctx *ctx, struct seq_file *m)
{
	u32 timers, pending, per_clock[QT_NR_CLOCKS];

	spin_lock_irq(&ctx->wqh.lock);
	timers = ctx->nr_timers;
	pending = ctx->nr_ready;
	memcpy(per_clock, ctx->nr_per_clock, sizeof(per_clock));
	spin_unlock_irq(&ctx->wqh.lock);

	seq_printf(m, "timers:\t%u\n", timers);
	seq_printf(m, "pending:\t%u\n", pending);
	seq_printf(m, "realtime:\t%u\n", per_clock[QT_CLOCK_REALTIME]);
	seq_printf(m, "monotonic:\t%u\n", per_clock[QT_CLOCK_MONOTONIC]);
	seq_printf(m, "boottime:\t%u\n", per_clock[QT_CLOCK_BOOTTIME]);
	seq_printf(m, "user_timers:\t%ld\n",
		   atomic_long_read(&ctx->user->nr_timers));
	seq_printf(m, "max_timers_per_fd:\t%lu\n", READ_ONCE(qt_max_timers_per_fd));
	seq_printf(m, "max_timers_per_user:\t%lu\n",
		   READ_ONCE(qt_max_timers_per_user));
}

int qt_ctx_init(void)
{
	int ret;

	qt_timer_cache = kmem_cache_create("qtimer_timer",
					   sizeof(struct qt_timer), 0,
					   SLAB_ACCOUNT, NULL);
	if (!qt_timer_cache)
		return -ENOMEM;
	ret = pvclock_gtod_register_notifier(&qt_clock_nb);
	if (ret) {
		kmem_cache_destroy(qt_timer_cache);
		return ret;
	}
	return 0;
}

void qt_ctx_exit(void)
{
	pvclock_gtod_unregister_notifier(&qt_clock_nb);
	irq_work_sync(&qt_clock_set_iw);
	flush_work(&qt_clock_set_work);
	/* kfree_rcu()'d contexts, before the timers' cache goes. */
	rcu_barrier();
	kmem_cache_destroy(qt_timer_cache);
}
