/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * A shard's timer ids: a table of slots, each holding a timer or a link in
 * the free list, and a generation per slot, so that a lookup is O(1) and a
 * stale or forged id never reaches another timer.  Each shard of a file
 * (ctx.h) has one, under the shard's lock (S); it never sees the file.
 */
#ifndef _QT_IDS_H
#define _QT_IDS_H

#include <linux/bitmap.h>
#include <linux/bitops.h>
#include <linux/bits.h>
#include <linux/mm.h>
#include <linux/rcupdate.h>
#include <linux/spinlock.h>
#include <linux/types.h>

#include "timer.h"

/*
 * A timer id: slot + 1 in bits 0-23 (so 0 is never an id), the shard of
 * the file it belongs to in bits 24-31, the clock in bits 32-33, the slot's
 * generation in bits 34-63.  A stale id fails the generation check, a
 * forged one the shard, slot, clock or generation check.
 */
#define QT_ID_SLOT_MASK		((1U << 24) - 1)
#define QT_ID_SHARD_SHIFT	24
#define QT_ID_CLOCK_SHIFT	32
#define QT_ID_GEN_SHIFT		34
#define QT_ID_GEN_MASK		((1U << 30) - 1)

static inline unsigned int qt_ids_shard(u64 id)
{
	return (u32)id >> QT_ID_SHARD_SHIFT;
}

static inline unsigned int qt_ids_clock(u64 id)
{
	return (id >> QT_ID_CLOCK_SHIFT) & 3;
}

#define QT_NO_SLOT		(~0U)
/* slot + 1 fits in the id's 24 bits */
#define QT_MAX_SLOTS		QT_ID_SLOT_MASK

/*
 * A slot's generation word: the generation in bits 0-29, and the clock of
 * the id its timer has in bits 30-31, so that a lookup checks an id
 * against the table alone and never reads a timer it does not return.
 */
#define QT_GEN_CLOCK_SHIFT	30

/* The clock a generation word @gen speaks of (QT_CLOCK_*). */
static inline unsigned int qt_ids_gen_clock(u32 gen)
{
	return gen >> QT_GEN_CLOCK_SHIFT;
}

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
 * The pointers to a table's blocks.  It is replaced, twice the size, when
 * the table outgrows it, under the table's lock; the old one is freed after
 * an RCU grace period, so that whoever holds a timer with an id may read
 * that id's generation without the lock (qt_ids_gen()).
 */
struct qt_slot_dir {
	struct rcu_head rcu;
	struct qt_slot_block *block[];
};

/*
 * A used slot holds the timer pointer; a free one holds (next free index
 * << 1) | 1.  Slots come in page-sized blocks that are never moved, so the
 * table grows by a page with no copying and wastes at most one.
 */
struct qt_ids {
	struct qt_slot_dir *dir;	/* published with release */
	u32 nr_blocks;			/* dir->block[] allocated */
	u32 nr_slots;			/* in the blocks attached */
	u32 free_slot;			/* head of the free list, or QT_NO_SLOT */
	/*
	 * Every slot's first generation, random per table (qt_ids_init()),
	 * so that ids do not repeat from file to file: another file's id
	 * fails the generation check, but for a chance of one in 2^30.
	 */
	u32 gen_base;
};

static inline void qt_ids_init(struct qt_ids *ids, u32 gen_base)
{
	ids->free_slot = QT_NO_SLOT;
	ids->gen_base = gen_base & QT_ID_GEN_MASK;
}

static inline struct qt_slot_block *qt_ids_block(const struct qt_ids *ids,
						 u32 slot)
{
	/* Pairs with qt_ids_reserve()'s release: the directory is filled in. */
	return smp_load_acquire(&ids->dir)->block[slot / QT_SLOTS_PER_BLOCK];
}

static inline unsigned long *qt_ids_word(const struct qt_ids *ids, u32 slot)
{
	return &qt_ids_block(ids, slot)->word[slot % QT_SLOTS_PER_BLOCK];
}

/*
 * @slot's generation word.  Besides the table's lock holders, the holder of
 * the slot's timer may read it (its slot is not freed under it), within an
 * RCU read section, which any irqs-off region is.
 */
static inline u32 *qt_ids_gen(const struct qt_ids *ids, u32 slot)
{
	return &qt_ids_block(ids, slot)->gen[slot % QT_SLOTS_PER_BLOCK];
}

/* The timer in @slot, or NULL if the slot is free. */
static inline struct qt_timer *qt_ids_get(const struct qt_ids *ids, u32 slot)
{
	unsigned long v = *qt_ids_word(ids, slot);

	return v & 1 ? NULL : (struct qt_timer *)v;
}

/* The id of @t, whose slot has the generation word @gen. */
static inline u64 qt_ids_make(const struct qt_timer *t, u32 gen)
{
	return (u64)(gen & QT_ID_GEN_MASK) << QT_ID_GEN_SHIFT |
	       (u64)qt_ids_gen_clock(gen) << QT_ID_CLOCK_SHIFT |
	       (u64)t->shard << QT_ID_SHARD_SHIFT | (t->slot + 1);
}

static inline u64 qt_ids_id(const struct qt_ids *ids, const struct qt_timer *t)
{
	return qt_ids_make(t, *qt_ids_gen(ids, t->slot));
}

/*
 * The timer @id names in this table, or NULL.  The caller has checked the
 * id's shard, which chose the table.
 */
static inline struct qt_timer *qt_ids_lookup(const struct qt_ids *ids, u64 id)
{
	u32 slot = (id & QT_ID_SLOT_MASK) - 1;
	struct qt_slot_block *block;
	unsigned long v;

	if (slot >= ids->nr_slots)
		return NULL;
	block = qt_ids_block(ids, slot);
	slot %= QT_SLOTS_PER_BLOCK;
	v = block->word[slot];
	if (v & 1)
		return NULL;
	if (block->gen[slot] != ((id >> QT_ID_GEN_SHIFT) |
				 qt_ids_clock(id) << QT_GEN_CLOCK_SHIFT))
		return NULL;
	return (struct qt_timer *)v;
}

/*
 * A free slot for @t, whose id says @clock: one must be there
 * (qt_ids_reserve()).
 */
static inline u32 qt_ids_alloc(struct qt_ids *ids, struct qt_timer *t,
			       unsigned int clock)
{
	u32 slot = ids->free_slot;
	unsigned long *word = qt_ids_word(ids, slot);
	u32 *gen = qt_ids_gen(ids, slot);

	WRITE_ONCE(ids->free_slot, *word >> 1);
	*word = (unsigned long)t;
	*gen = (*gen & QT_ID_GEN_MASK) | clock << QT_GEN_CLOCK_SHIFT;
	return slot;
}

/*
 * A slot whose generation has come round: odd, so it names no timer, and on
 * no free list, so it is never used again.
 */
#define QT_SLOT_RETIRED		(~0UL)

/* Set or clear @slot's mark. */
static inline void qt_ids_mark(struct qt_ids *ids, u32 slot, bool on)
{
	unsigned long *marked = qt_ids_block(ids, slot)->marked;

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
		const struct qt_slot_block *block = qt_ids_block(ids, slot);
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
	 * comes round to where it started would give out again the ids of
	 * timers it held 2^30 uses ago, and a stale id kept that long would
	 * name someone else's timer.  Retire the slot instead, at 12 bytes
	 * per 2^30 timers.
	 */
	qt_ids_mark(ids, slot, false);
	*gen = (*gen + 1) & QT_ID_GEN_MASK;
	if (*gen == ids->gen_base) {
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
