// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * The timer table: setup, the mapping, its growth with the id tables, and
 * the kernel's reads of slots that user space writes.  The table is read
 * where a timer's fate is decided: when its entry surfaces in its heap
 * (qt_table_surface(), which takes the timer by compare-and-swap, or
 * re-keys it to the later expiry user space asked for), and by the ioctls
 * and the clock set that act on an armed timer (qt_table_claim()), which
 * take it by compare-and-swap too, leaving a stop alone.  Each word is
 * read once and checked against the timer's own generation; an expiry is
 * accepted only if it is later than the timer's, and clamped.  So a slot
 * full of garbage can make its own timer late or stopped, never early,
 * never fired twice, and it costs a surfacing entry one re-key at most.
 */

#include <linux/mm.h>
#include <linux/slab.h>

#include "base.h"
#include "ctx.h"
#include "table.h"

int qt_table_setup(struct qt_ctx *ctx, struct qtimer_table_setup *setup)
{
	struct qt_table *table;
	unsigned int i, clock;
	int ret = 0;

	BUILD_BUG_ON(ARRAY_SIZE(table->covered) < QT_MAX_SHARDS);
	BUILD_BUG_ON(ARRAY_SIZE(table->dir) < QT_MAX_SHARDS);
	if (READ_ONCE(ctx->table))
		return -EBUSY;
	table = kvzalloc(sizeof(*table), GFP_KERNEL_ACCOUNT);
	if (!table)
		return -ENOMEM;
	mutex_init(&table->grow);
	for (clock = 0; clock < QT_NR_CLOCKS; clock++)
		table->ns_offset[clock] =
			qt_clock_timens_offset(qt_clock_id(clock));
	/* Pages for the slots the file has now; arms add the rest. */
	for (i = 0; i < ctx->nr_shards; i++) {
		ret = qt_table_reserve(table, i,
				       READ_ONCE(ctx->shards[i].ids.nr_slots));
		if (ret)
			goto out;
	}

	/*
	 * Before the lock: turning the static branch on takes the CPU
	 * hotplug lock and the jump label mutex, which may sleep.
	 */
	qt_base_surface_get();
	spin_lock_irq(&ctx->wqh.lock);
	if (ctx->table)
		ret = -EBUSY;
	else
		/* The expirer's and the ops' unlocked reads see it set up. */
		smp_store_release(&ctx->table, table);
	spin_unlock_irq(&ctx->wqh.lock);
	if (ret) {
		qt_base_surface_put();
		goto out;
	}
	setup->nr_shards = ctx->nr_shards;
	setup->mmap_off = QT_TABLE_MMAP_OFF;
	setup->shard_size = QT_TABLE_SHARD_SIZE;
	return 0;
out:
	qt_table_destroy(table);
	return ret;
}

/* The file is gone, and with it every mapping (each held the file). */
void qt_table_destroy(struct qt_table *table)
{
	unsigned int shard, leaf, i;

	if (!table)
		return;
	for (shard = 0; shard < ARRAY_SIZE(table->dir); shard++)
		for (leaf = 0; leaf < QT_TABLE_LEAVES; leaf++) {
			struct page **pages = table->dir[shard][leaf];

			if (!pages)
				continue;
			for (i = 0; i < QT_TABLE_LEAF_PAGES && pages[i]; i++)
				__free_page(pages[i]);
			kfree(pages);
		}
	kvfree(table);
}

/*
 * Give @shard's slots below @nr_slots their pages, in process context
 * before an ARM takes the shard's lock: an ARM finds its slot covered or
 * drops its locks and comes here (qt_ops_arm()).  Pages are only added,
 * so a slot's page, once found, stays.
 */
int qt_table_reserve(struct qt_table *table, unsigned int shard, u32 nr_slots)
{
	u32 covered;
	int ret = 0;

	mutex_lock(&table->grow);
	for (covered = table->covered[shard]; covered < nr_slots;
	     covered += QT_TABLE_SLOTS_PER_PAGE) {
		u32 page = covered / QT_TABLE_SLOTS_PER_PAGE;
		struct page ***leaf = &table->dir[shard][page / QT_TABLE_LEAF_PAGES];
		struct page *p;

		if (!*leaf) {
			struct page **pages = kcalloc(QT_TABLE_LEAF_PAGES,
						      sizeof(*pages),
						      GFP_KERNEL_ACCOUNT);

			if (!pages) {
				ret = -ENOMEM;
				break;
			}
			/* Readers see the leaf's NULLs (qt_table_page()). */
			smp_store_release(leaf, pages);
		}
		p = alloc_page(GFP_KERNEL_ACCOUNT | __GFP_ZERO);
		if (!p) {
			ret = -ENOMEM;
			break;
		}
		/* Readers see the page zeroed, the slots KERNEL. */
		smp_store_release(&(*leaf)[page % QT_TABLE_LEAF_PAGES], p);
		/* The page is in: an ARM that sees the count finds it. */
		smp_store_release(&table->covered[shard],
				  covered + QT_TABLE_SLOTS_PER_PAGE);
	}
	mutex_unlock(&table->grow);
	return ret;
}

static vm_fault_t qt_table_fault(struct vm_fault *vmf)
{
	struct qt_ctx *ctx = vmf->vma->vm_file->private_data;
	unsigned long idx = vmf->pgoff - (QT_TABLE_MMAP_OFF >> PAGE_SHIFT);
	struct page *page;

	/* ctx->table was set before any mapping could be made (qt_table_mmap()). */
	page = qt_table_page(ctx->table, idx / QT_TABLE_SHARD_PAGES,
			     idx % QT_TABLE_SHARD_PAGES);
	if (!page)
		return VM_FAULT_SIGBUS;
	get_page(page);
	vmf->page = page;
	return 0;
}

static const struct vm_operations_struct qt_table_vm_ops = {
	.fault = qt_table_fault,
};

int qt_table_mmap(struct qt_ctx *ctx, struct vm_area_struct *vma)
{
	unsigned long first = QT_TABLE_MMAP_OFF >> PAGE_SHIFT, end;
	struct qt_table *table;

	/* Pairs with qt_table_setup()'s release. */
	table = smp_load_acquire(&ctx->table);
	if (!table)
		return -ENODEV;
	end = first + (ctx->nr_shards * QT_TABLE_SHARD_SIZE >> PAGE_SHIFT);
	/* Both sides write it: a private copy would stop nothing. */
	if (vma->vm_pgoff < first || vma->vm_pgoff + vma_pages(vma) > end ||
	    !(vma->vm_flags & VM_SHARED))
		return -EINVAL;
	vm_flags_set(vma, VM_DONTEXPAND | VM_DONTDUMP);
	vma->vm_ops = &qt_table_vm_ops;
	return 0;
}

/*
 * @slot's deadline as host time, if later than @t's expiry: read once,
 * converted from the table's namespace, clamped; else @t's expiry.
 */
static ktime_t qt_table_later(struct qt_table *table, struct qt_timer *t,
			      struct qtimer_slot *slot)
{
	s64 deadline = READ_ONCE(slot->deadline), host;

	if (check_sub_overflow(deadline, table->ns_offset[qt_table_clock(t)],
			       &host))
		host = deadline < 0 ? 0 : QT_EXPIRES_MAX;
	host = clamp_t(s64, host, 0, QT_EXPIRES_MAX);
	return max_t(ktime_t, host, t->expires);
}

/* Attempts at taking a slot by compare-and-swap before exchanging it. */
#define QT_TABLE_CAS_TRIES	4

/**
 * qt_table_surface() - Decide a due timer's fate from its slot.
 * @t: ARMED, the top of its base's heap, due at @now (its expiry passed).
 * @now: the base clock's reading.
 *
 * The base's surface hook (qt_base_collect()), under the base's lock.  A
 * timer user space pushed to a later expiry that is still ahead gets that
 * expiry, for the base to re-key its entry (its slot stays LATER, and the
 * next surfacing finds the expiry reached); one it stopped is left STOPPED,
 * to be ended by the expirer with no record (qt_table_stopped()); any other
 * is taken by swapping ctl to KERNEL, from which user space's swaps fail.
 * The swap is retried while user space changes the word, and after
 * QT_TABLE_CAS_TRIES the word is exchanged and what it held acted on, so a
 * writer that flips it in a loop costs a few reads.
 *
 * Return: 0 to pop @t, or the later expiry to re-key it to (after @now).
 */
s64 qt_table_surface(struct qt_timer *t, ktime_t now)
{
	/* Pairs with qt_table_setup()'s release. */
	struct qt_table *table = smp_load_acquire(&t->ctx->table);
	u32 gen = t->gen & QT_ID_GEN_MASK, state;
	struct qtimer_slot *slot;
	unsigned int tries;
	ktime_t later;
	u64 ctl, taken;

	if (!table || (t->flags & QT_TF_RELATIVE_REAL))
		return 0;
	slot = qt_table_slot(table, t);
	if (!slot)
		return 0;
	ctl = READ_ONCE(slot->ctl);
	for (tries = 0;; tries++) {
		state = QTIMER_SLOT_STATE(ctl);
		/* Not this timer's word, or the kernel's already: fire. */
		if (QTIMER_SLOT_GEN(ctl) != gen || state == QTIMER_SLOT_KERNEL)
			return 0;
		if (state == QTIMER_SLOT_STOPPED)
			return 0;
		if (state == QTIMER_SLOT_LATER) {
			later = qt_table_later(table, t, slot);
			if (later > now)
				return later;
			/* Passed already: fire, at the expiry it was pushed to. */
			t->expires = later;
		}
		taken = QTIMER_SLOT_CTL(QTIMER_SLOT_KERNEL, gen,
					QTIMER_SLOT_SEQ(ctl) + 1);
		if (tries < QT_TABLE_CAS_TRIES) {
			if (try_cmpxchg(&slot->ctl, &ctl, taken))
				return 0;
			continue;
		}
		ctl = xchg(&slot->ctl, taken);
		if (QTIMER_SLOT_GEN(ctl) != gen)
			return 0;
		state = QTIMER_SLOT_STATE(ctl);
		/* What user space won meanwhile stands: put it back. */
		if (state == QTIMER_SLOT_STOPPED) {
			WRITE_ONCE(slot->ctl, ctl);
			return 0;
		}
		if (state == QTIMER_SLOT_LATER) {
			later = qt_table_later(table, t, slot);
			if (later > now) {
				WRITE_ONCE(slot->ctl, ctl);
				return later;
			}
			t->expires = later;
		}
		return 0;
	}
}

/*
 * Whether user space stopped @t, popped by the expirer (ARMED, in transit):
 * then it ends with no record.  Its slot says STOPPED only if the surface
 * hook left it so, or if user space wrote over the kernel's word, which
 * stops only its own timer.  Under the file's delivery lock.
 */
bool qt_table_stopped(struct qt_table *table, struct qt_timer *t)
{
	struct qtimer_slot *slot = qt_table_slot(table, t);
	u64 ctl;

	if (!slot)
		return false;
	ctl = READ_ONCE(slot->ctl);
	return QTIMER_SLOT_STATE(ctl) == QTIMER_SLOT_STOPPED &&
	       QTIMER_SLOT_GEN(ctl) == (t->gen & QT_ID_GEN_MASK);
}

/*
 * For GET of @t, ARMED: -ENOENT if user space stopped it, else 0 with
 * *@expires moved to the later expiry user space pushed it to, if any.
 * Reads only.
 */
int qt_table_peek(struct qt_table *table, struct qt_timer *t, ktime_t *expires)
{
	struct qtimer_slot *slot = qt_table_slot(table, t);
	u64 ctl;

	if (!slot || (t->flags & QT_TF_RELATIVE_REAL))
		return 0;
	ctl = READ_ONCE(slot->ctl);
	if (QTIMER_SLOT_GEN(ctl) != (t->gen & QT_ID_GEN_MASK))
		return 0;
	if (QTIMER_SLOT_STATE(ctl) == QTIMER_SLOT_STOPPED)
		return -ENOENT;
	if (QTIMER_SLOT_STATE(ctl) == QTIMER_SLOT_LATER)
		*expires = qt_table_later(table, t, slot);
	return 0;
}

/**
 * qt_table_claim() - Take an armed timer's slot for an ioctl or clock set.
 * @table: the file's table.
 * @t: an ARMED timer (in its heap or in transit), under its shard's lock.
 *
 * ctl becomes KERNEL by compare-and-swap, so that user space's swaps on it
 * fail from now on, unless user space stopped the timer first: a STOPPED
 * word is left as it is, so that the expirer, which may hold the timer,
 * never sees it taken back.  An op that goes on re-arms the slot
 * (qt_table_arm()) or forgets it (qt_table_forget()), so it is taken only
 * once nothing can fail.  As qt_table_surface(), it exchanges the word after
 * QT_TABLE_CAS_TRIES failed swaps.
 *
 * Return: -ENOENT if user space had stopped @t, else 0.
 */
int qt_table_claim(struct qt_table *table, struct qt_timer *t)
{
	struct qtimer_slot *slot = qt_table_slot(table, t);
	u32 gen = t->gen & QT_ID_GEN_MASK;
	unsigned int tries;
	u64 ctl, taken;

	if (!slot)
		return 0;
	ctl = READ_ONCE(slot->ctl);
	for (tries = 0;; tries++) {
		if (QTIMER_SLOT_GEN(ctl) == gen &&
		    QTIMER_SLOT_STATE(ctl) == QTIMER_SLOT_STOPPED)
			return -ENOENT;
		taken = QTIMER_SLOT_CTL(QTIMER_SLOT_KERNEL, gen,
					QTIMER_SLOT_SEQ(ctl) + 1);
		if (tries == QT_TABLE_CAS_TRIES)
			break;
		if (try_cmpxchg(&slot->ctl, &ctl, taken))
			return 0;
	}
	ctl = xchg(&slot->ctl, taken);
	if (QTIMER_SLOT_GEN(ctl) == gen &&
	    QTIMER_SLOT_STATE(ctl) == QTIMER_SLOT_STOPPED) {
		WRITE_ONCE(slot->ctl, ctl);
		return -ENOENT;
	}
	return 0;
}
