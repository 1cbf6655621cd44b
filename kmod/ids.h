/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * A file's timer ids: a table of slots, each holding a timer or a link in
 * the free list, and a generation per slot, so that a lookup is O(1) and a
 * stale or forged id never reaches another timer.  The table belongs to its
 * file and is under the file's lock (C); it never sees the file itself.
 */
#ifndef _QT_IDS_H
#define _QT_IDS_H

#ifdef __KERNEL__
#include <linux/bitmap.h>
#include <linux/bitops.h>
#include <linux/bits.h>
#include <linux/mm.h>
#include <linux/spinlock.h>
#include <linux/types.h>

#include "timer.h"
#else
/* The native tests (selftests/ids) bring their own struct qt_timer. */
#include "ids_shim.h"
#endif

/*
 * A timer id: slot + 1 in bits 0-31 (so 0 is never an id), the clock in
 * bits 32-33, the slot's generation in bits 34-63.  A stale id fails the
 * generation check, a forged one the slot, clock or generation check.
 */
#define QT_ID_CLOCK_SHIFT	32
#define QT_ID_GEN_SHIFT		34
#define QT_ID_GEN_MASK		((1U << 30) - 1)

static inline unsigned int qt_id_clock(u64 id)
{
	return (id >> QT_ID_CLOCK_SHIFT) & 3;
}

#define QT_NO_SLOT		(~0U)
#define QT_MAX_SLOTS		BIT(24)		/* t->slot is 24 bits */

/*
 * The table: a slot's word, its generation and its mark sit in the same
 * page, so that looking an id up touches one page of the table.  A mark is
 * one bit a file sets on the slots it must find fast (its cancel-on-set
 * timers), so that a walk over them reads a bitmap word per 64 slots
 * rather than every slot's timer.  337 slots of 12 bytes and a bit fill a
 * 4 KiB page.
 */
#define QT_SLOT_BITS		(BITS_PER_BYTE * (sizeof(unsigned long) + sizeof(u32)) + 1)
#define QT_SLOTS_PER_BLOCK	((PAGE_SIZE * BITS_PER_BYTE - (BITS_PER_LONG - 1)) / \
				 QT_SLOT_BITS)

struct qt_slot_block {
	unsigned long word[QT_SLOTS_PER_BLOCK];
	u32 gen[QT_SLOTS_PER_BLOCK];
	unsigned long marked[BITS_TO_LONGS(QT_SLOTS_PER_BLOCK)];
};

/*
 * A used slot holds the timer pointer; a free one holds (next free index
 * << 1) | 1.  Slots come in page-sized blocks that are never moved, so the
 * table grows by a page with no copying and wastes at most one.
 */
struct qt_ids {
	struct qt_slot_block **blocks;
	u32 nr_blocks;			/* blocks[] allocated */
	u32 nr_slots;			/* in the blocks attached */
	u32 free_slot;			/* head of the free list, or QT_NO_SLOT */
};

static inline unsigned long *qt_ids_word(const struct qt_ids *ids, u32 slot)
{
	return &ids->blocks[slot / QT_SLOTS_PER_BLOCK]->word[slot % QT_SLOTS_PER_BLOCK];
}

static inline u32 *qt_ids_gen(const struct qt_ids *ids, u32 slot)
{
	return &ids->blocks[slot / QT_SLOTS_PER_BLOCK]->gen[slot % QT_SLOTS_PER_BLOCK];
}

/* The timer in @slot, or NULL if the slot is free. */
static inline struct qt_timer *qt_ids_get(const struct qt_ids *ids, u32 slot)
{
	unsigned long v = *qt_ids_word(ids, slot);

	return v & 1 ? NULL : (struct qt_timer *)v;
}

/* The id of @t, whose slot has generation @gen. */
static inline u64 qt_id_make(const struct qt_timer *t, u32 gen)
{
	return (u64)(gen & QT_ID_GEN_MASK) << QT_ID_GEN_SHIFT |
	       (u64)qt_timer_user_clock(t) << QT_ID_CLOCK_SHIFT | (t->slot + 1);
}

static inline u64 qt_ids_id(const struct qt_ids *ids, const struct qt_timer *t)
{
	return qt_id_make(t, *qt_ids_gen(ids, t->slot));
}

/* The timer @id names, or NULL. */
static inline struct qt_timer *qt_ids_lookup(const struct qt_ids *ids, u64 id)
{
	u32 slot = (u32)id - 1;
	struct qt_slot_block *block;
	struct qt_timer *t;
	unsigned long v;

	if (slot >= ids->nr_slots)
		return NULL;
	block = ids->blocks[slot / QT_SLOTS_PER_BLOCK];
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

/* A free slot for @t: one must be there (qt_ids_reserve()). */
static inline u32 qt_ids_alloc(struct qt_ids *ids, struct qt_timer *t)
{
	u32 slot = ids->free_slot;
	unsigned long *word = qt_ids_word(ids, slot);

	WRITE_ONCE(ids->free_slot, *word >> 1);
	*word = (unsigned long)t;
	return slot;
}

/*
 * A slot whose generation has wrapped: odd, so it names no timer, and on
 * no free list, so it is never used again.
 */
#define QT_SLOT_RETIRED		(~0UL)

/* Set or clear @slot's mark. */
static inline void qt_ids_mark(struct qt_ids *ids, u32 slot, bool on)
{
	unsigned long *marked = ids->blocks[slot / QT_SLOTS_PER_BLOCK]->marked;

	if (on)
		__set_bit(slot % QT_SLOTS_PER_BLOCK, marked);
	else
		__clear_bit(slot % QT_SLOTS_PER_BLOCK, marked);
}

/* The first marked slot in [@slot, @end), or @end if none is. */
static inline u32 qt_ids_next_marked(const struct qt_ids *ids, u32 slot,
				     u32 end)
{
	while (slot < end) {
		const struct qt_slot_block *block = ids->blocks[slot / QT_SLOTS_PER_BLOCK];
		u32 first = slot - slot % QT_SLOTS_PER_BLOCK;
		u32 size = min_t(u32, end - first, QT_SLOTS_PER_BLOCK);
		unsigned long bit;

		bit = find_next_bit(block->marked, size, slot % QT_SLOTS_PER_BLOCK);
		if (bit < size)
			return first + bit;
		slot = first + size;
	}
	return end;
}

/* @slot's id names nothing any more. */
static inline void qt_ids_free(struct qt_ids *ids, u32 slot)
{
	u32 *gen = qt_ids_gen(ids, slot);

	/*
	 * An id carries 30 bits of the generation: a slot whose generation
	 * wraps would give out again the ids of timers it held 2^30 uses ago,
	 * and a stale id kept that long would name someone else's timer.
	 * Retire the slot instead, at 12 bytes per 2^30 timers.
	 */
	qt_ids_mark(ids, slot, false);
	if (!(++*gen & QT_ID_GEN_MASK)) {
		*qt_ids_word(ids, slot) = QT_SLOT_RETIRED;
		return;
	}
	*qt_ids_word(ids, slot) = (unsigned long)ids->free_slot << 1 | 1;
	WRITE_ONCE(ids->free_slot, slot);
}

/* @slot's id names @t from now on. */
static inline void qt_ids_replace(struct qt_ids *ids, u32 slot,
				  struct qt_timer *t)
{
	*qt_ids_word(ids, slot) = (unsigned long)t;
}

int qt_ids_reserve(struct qt_ids *ids, spinlock_t *lock);
void qt_ids_destroy(struct qt_ids *ids);

#endif /* _QT_IDS_H */
