// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * Growing and freeing a shard's id table; ids.h has the lookups, which are
 * inline on every op's path.
 */

#include <linux/errno.h>
#include <linux/overflow.h>
#include <linux/sched.h>
#include <linux/slab.h>

#include "ids.h"

/**
 * qt_ids_reserve() - Make sure @ids has a free slot.
 * @ids: the table.
 * @lock: the lock of its shard, not held: the table is under it.
 *
 * Adds a block of slots, allocated in process context, if none is free.
 *
 * Return: 0, or -ENOSPC at QT_MAX_SLOTS, or -ENOMEM.
 */
int qt_ids_reserve(struct qt_ids *ids, spinlock_t *lock)
{
	struct qt_slot_dir *dir = NULL, *old_dir = NULL;
	struct qt_slot_block *block;
	u32 nr_blocks, max_blocks, first, next, i;

	BUILD_BUG_ON(sizeof(struct qt_slot_block) > PAGE_SIZE);

	/* Racy peek: the common case has a free slot and takes no lock. */
	if (READ_ONCE(ids->free_slot) != QT_NO_SLOT)
		return 0;
	spin_lock_irq(lock);
	first = ids->nr_slots;
	max_blocks = ids->nr_blocks;
	next = ids->free_slot;
	spin_unlock_irq(lock);
	if (next != QT_NO_SLOT)
		return 0;
	if (first + QT_SLOTS_PER_BLOCK > QT_MAX_SLOTS)
		return -ENOSPC;

	nr_blocks = first / QT_SLOTS_PER_BLOCK;
	block = kmalloc(sizeof(*block), GFP_KERNEL_ACCOUNT);
	if (!block)
		return -ENOMEM;
	if (nr_blocks == max_blocks) {
		/* Pointers only: 8 bytes per 337 timers, doubling is fine. */
		max_blocks = max(2 * max_blocks, 8U);
		dir = kvmalloc(struct_size(dir, block, max_blocks),
			       GFP_KERNEL_ACCOUNT);
		if (!dir) {
			kfree(block);
			return -ENOMEM;
		}
	}

	spin_lock_irq(lock);
	if (ids->nr_slots != first) {
		/* Someone else grew it. */
		spin_unlock_irq(lock);
		kfree(block);
		kvfree(dir);
		return 0;
	}
	for (i = 0; i < QT_SLOTS_PER_BLOCK; i++) {
		u32 link = i + 1 < QT_SLOTS_PER_BLOCK ? first + i + 1 : ids->free_slot;

		block->word[i] = (unsigned long)link << 1 | 1;
		block->gen[i] = ids->gen_base;
	}
	bitmap_zero(block->marked, QT_SLOTS_PER_BLOCK);
	if (dir) {
		if (nr_blocks)
			memcpy(dir->block, ids->dir->block,
			       nr_blocks * sizeof(dir->block[0]));
		dir->block[nr_blocks] = block;
		old_dir = ids->dir;
		ids->nr_blocks = max_blocks;
		/* Pairs with qt_ids_block()'s acquire. */
		smp_store_release(&ids->dir, dir);
	} else {
		ids->dir->block[nr_blocks] = block;
	}
	ids->nr_slots = first + QT_SLOTS_PER_BLOCK;
	WRITE_ONCE(ids->free_slot, first);
	spin_unlock_irq(lock);
	/* Timer holders may still read through it (qt_ids_gen()). */
	if (old_dir)
		kvfree_rcu(old_dir, rcu);
	return 0;
}

/*
 * Free the table of a file that is gone: for 10^6 timers, 3000 blocks,
 * from release(), with a rescheduling point after each.
 */
void qt_ids_destroy(struct qt_ids *ids)
{
	u32 slot;

	for (slot = 0; slot < ids->nr_slots; slot += QT_SLOTS_PER_BLOCK) {
		kfree(ids->dir->block[slot / QT_SLOTS_PER_BLOCK]);
		cond_resched();
	}
	kvfree(ids->dir);
}
