/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * A file's timer table (uapi "The timer table"): a slot of two words per
 * id, in pages the file's owner maps, through which user space pushes a
 * timer's expiry later or stops it with one compare-and-swap.  The kernel
 * writes a slot at each of its own transitions of the timer, always by
 * exchange of ctl (its word is law), and reads it when the timer's entry
 * surfaces in its heap (table.c); it trusts nothing user space writes.
 *
 * This header is the table's memory and the kernel's writes, for the
 * files below layer 6 that arm, re-arm and forget timers (ctx.h, end.c);
 * table.c owns setup, the mapping and the reads.
 */
#ifndef _QT_TABLE_H
#define _QT_TABLE_H

#include <linux/atomic.h>
#include <linux/bits.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/overflow.h>
#include <linux/types.h>
#include <linux/qtimer.h>

#include "clock.h"
#include "ids.h"
#include "timer.h"

/* Slots per page; pages per leaf of the directory, and leaves per shard. */
#define QT_TABLE_SLOTS_PER_PAGE	(PAGE_SIZE / sizeof(struct qtimer_slot))
#define QT_TABLE_LEAF_PAGES	256
#define QT_TABLE_LEAVES		((QT_MAX_SLOTS + 1) / QT_TABLE_SLOTS_PER_PAGE / \
				 QT_TABLE_LEAF_PAGES)
#define QT_TABLE_SHARD_PAGES	(QT_TABLE_LEAVES * QT_TABLE_LEAF_PAGES)
#define QT_TABLE_SHARD_SIZE	(((u64)QT_MAX_SLOTS + 1) * sizeof(struct qtimer_slot))
/* mmap() offset of the table: above any ring (QTIMER_RING_MAX records). */
#define QT_TABLE_MMAP_OFF	BIT_ULL(32)

struct qt_table {
	/* Slots of each shard that have their page, published with release. */
	u32 covered[16];
	struct mutex grow;		/* serialises qt_table_reserve() */
	/* The namespace offsets of the thread that set the table up. */
	ktime_t ns_offset[QT_NR_CLOCKS];
	/*
	 * The pages, two loads from a slot: per shard a directory of leaves
	 * of QT_TABLE_LEAF_PAGES page pointers (2 KiB, each covering 64Ki
	 * slots), each pointer published with release once what it points
	 * to is ready, and nothing freed before the table: every pop and
	 * every arm of a file with a table looks a slot up.
	 */
	struct page **dir[16][QT_TABLE_LEAVES];
};

/* Page @page (of QT_TABLE_SHARD_PAGES) of shard @shard, or NULL. */
static inline struct page *qt_table_page(struct qt_table *table,
					 unsigned int shard, u32 page)
{
	/* Address dependencies order these after the release stores. */
	struct page **leaf = READ_ONCE(table->dir[shard][page / QT_TABLE_LEAF_PAGES]);

	return leaf ? READ_ONCE(leaf[page % QT_TABLE_LEAF_PAGES]) : NULL;
}

/* Slot @slot of shard @shard, or NULL if its page does not exist yet. */
static inline struct qtimer_slot *qt_table_slot_at(struct qt_table *table,
						   unsigned int shard, u32 slot)
{
	struct page *page = qt_table_page(table, shard,
					  slot / QT_TABLE_SLOTS_PER_PAGE);

	if (!page)
		return NULL;
	return (struct qtimer_slot *)page_address(page) +
	       slot % QT_TABLE_SLOTS_PER_PAGE;
}

/* @t's slot, or NULL if it has none (armed before the table). */
static inline struct qtimer_slot *qt_table_slot(struct qt_table *table,
						const struct qt_timer *t)
{
	return qt_table_slot_at(table, t->shard, t->slot);
}

/*
 * @t's clock, ARMED, from the generation it carries: an ARM writes the
 * slot before it pushes @t into a heap, so @t's base (qt_timer_clock())
 * is not yet known there.  A relative CLOCK_REALTIME interval, whose id
 * says REALTIME and whose heap is monotonic, never reaches the table.
 */
static inline unsigned int qt_table_clock(const struct qt_timer *t)
{
	return qt_ids_gen_clock(t->gen) % QT_NR_CLOCKS;
}

/* Host time @when as the table's user sees it on @t's clock. */
static inline s64 qt_table_user_time(const struct qt_table *table,
				     const struct qt_timer *t, ktime_t when)
{
	ktime_t offset = table->ns_offset[qt_table_clock(t)];
	s64 ns;

	if (check_add_overflow(when, offset, &ns))
		return offset > 0 ? KTIME_MAX : KTIME_MIN;
	return ns;
}

/*
 * Set @slot's ctl to @state for generation @gen, by exchange; @state may
 * carry QTIMER_SLOT_PLAIN.
 */
static inline u64 qt_table_take(struct qtimer_slot *slot, u64 state, u32 gen)
{
	u64 old = READ_ONCE(slot->ctl);

	return xchg(&slot->ctl,
		    QTIMER_SLOT_CTL(state, gen, QTIMER_SLOT_SEQ(old) + 1));
}

/*
 * @t goes (back) into its heap, or MODIFY changed its schedule in place:
 * its slot says ARMED at its expiry, or KERNEL for a relative
 * CLOCK_REALTIME interval, whose expiry user space cannot name.  The
 * deadline is written before ctl, whose exchange is a full barrier, so a
 * reader that loads ctl with acquire and sees ARMED sees it.  Under the
 * locks that let the caller write @t's schedule; @t carries its gen.
 */
static inline void qt_table_arm(struct qt_table *table, struct qt_timer *t)
{
	struct qtimer_slot *slot = qt_table_slot(table, t);
	bool plain;

	if (!slot)
		return;
	if (t->flags & QT_TF_RELATIVE_REAL) {
		qt_table_take(slot, QTIMER_SLOT_KERNEL, t->gen);
		return;
	}
	WRITE_ONCE(slot->deadline, qt_table_user_time(table, t, t->expires));
	/* A push is then MODIFY's own work: libtimerdev's td_modify(). */
	plain = !t->period && !t->slack && !(t->flags & QT_TF_CANCEL_ON_SET);
	qt_table_take(slot, QTIMER_SLOT_ARMED | (plain ? QTIMER_SLOT_PLAIN : 0),
		      t->gen);
}

/*
 * @t's id is being freed (its slot's generation @gen is the id's): user
 * space can no longer act on it, and a stale id's swap fails.
 */
static inline void qt_table_forget(struct qt_table *table, struct qt_timer *t,
				   u32 gen)
{
	struct qtimer_slot *slot = qt_table_slot(table, t);

	if (slot)
		qt_table_take(slot, QTIMER_SLOT_KERNEL, gen);
}

/* table.c */
struct qt_ctx;
struct qt_shard;
struct vm_area_struct;
int qt_table_setup(struct qt_ctx *ctx, struct qtimer_table_setup *setup);
void qt_table_destroy(struct qt_table *table);
int qt_table_mmap(struct qt_ctx *ctx, struct vm_area_struct *vma);
int qt_table_reserve(struct qt_table *table, unsigned int shard, u32 nr_slots);
s64 qt_table_surface(struct qt_timer *t, ktime_t now);
bool qt_table_stopped(struct qt_table *table, struct qt_timer *t);
int qt_table_peek(struct qt_table *table, struct qt_timer *t, ktime_t *expires);
int qt_table_claim(struct qt_table *table, struct qt_timer *t);

#endif /* _QT_TABLE_H */
