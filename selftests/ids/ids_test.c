// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * Native tests of a file's timer id table (kmod/ids.h, kmod/ids.c, built
 * unchanged over selftests/shim, with kmod/timer.h's struct qt_timer): an
 * id names its timer and nothing else, a
 * freed, stale or forged one names nothing, the table grows a block at a
 * time, and a slot whose 30-bit generation wraps is retired rather than
 * giving out an id it gave out before.
 */

#include "ids.h"

#include "kselftest_harness.h"

#define NR_TIMERS	3000	/* more than 8 blocks: the block array grows */

FIXTURE(ids) {
	struct qt_ids ids;
	spinlock_t lock;
	struct qt_timer timers[NR_TIMERS];
};

FIXTURE_SETUP(ids)
{
	memset(self, 0, sizeof(*self));
	qt_ids_init(&self->ids, 0);
}

FIXTURE_TEARDOWN(ids)
{
	qt_ids_destroy(&self->ids);
}

/* Give @t a slot as ARM does, and return its id. */
static u64 arm(struct qt_ids *ids, spinlock_t *lock, struct qt_timer *t,
	       unsigned int clock)
{
	if (qt_ids_reserve(ids, lock))
		return 0;
	t->shard = 5;
	t->slot = qt_ids_alloc(ids, t, clock);
	return qt_ids_id(ids, t);
}

TEST_F(ids, an_id_names_its_timer)
{
	u64 a = arm(&self->ids, &self->lock, &self->timers[0], 1);
	u64 b = arm(&self->ids, &self->lock, &self->timers[1], 2);

	ASSERT_NE(0, a);
	ASSERT_NE(0, b);
	ASSERT_NE(a, b);
	EXPECT_EQ(&self->timers[0], qt_ids_lookup(&self->ids, a));
	EXPECT_EQ(&self->timers[1], qt_ids_lookup(&self->ids, b));
	EXPECT_EQ(1, qt_ids_clock(a));
	EXPECT_EQ(2, qt_ids_clock(b));
	EXPECT_EQ(5, qt_ids_shard(a));
	EXPECT_EQ(&self->timers[0], qt_ids_get(&self->ids, self->timers[0].slot));
	EXPECT_EQ(0, self->lock.held);
}

TEST_F(ids, a_freed_id_names_nothing_even_when_its_slot_is_reused)
{
	struct qt_timer *t = &self->timers[0];
	u64 old = arm(&self->ids, &self->lock, t, 1), fresh;
	u32 slot = t->slot;

	qt_ids_free(&self->ids, slot);
	EXPECT_EQ(NULL, qt_ids_lookup(&self->ids, old));
	EXPECT_EQ(NULL, qt_ids_get(&self->ids, slot));

	fresh = arm(&self->ids, &self->lock, &self->timers[1], 1);
	ASSERT_EQ(slot, (u32)self->timers[1].slot);	/* the free list is LIFO */
	EXPECT_NE(old, fresh);
	EXPECT_EQ(NULL, qt_ids_lookup(&self->ids, old));
	EXPECT_EQ(&self->timers[1], qt_ids_lookup(&self->ids, fresh));
}

TEST_F(ids, a_forged_id_names_nothing)
{
	u64 id = arm(&self->ids, &self->lock, &self->timers[0], 1);

	EXPECT_EQ(NULL, qt_ids_lookup(&self->ids, 0));
	/* Another clock, another generation, slot 0 (id 0 in the low half). */
	EXPECT_EQ(NULL, qt_ids_lookup(&self->ids, id ^ (1ULL << QT_ID_CLOCK_SHIFT)));
	EXPECT_EQ(NULL, qt_ids_lookup(&self->ids, id + (1ULL << QT_ID_GEN_SHIFT)));
	EXPECT_EQ(NULL, qt_ids_lookup(&self->ids, id & ~0xffffffffULL));
	/* A free slot, and one past the table. */
	EXPECT_EQ(NULL, qt_ids_lookup(&self->ids, id + 1));
	EXPECT_EQ(NULL, qt_ids_lookup(&self->ids, (id & ~0xffffffffULL) |
					   (self->ids.nr_slots + 1)));
	EXPECT_EQ(NULL, qt_ids_lookup(&self->ids, ~0ULL));
}

TEST_F(ids, the_table_grows_a_block_at_a_time)
{
	static u64 id[NR_TIMERS];
	int i;

	for (i = 0; i < NR_TIMERS; i++) {
		id[i] = arm(&self->ids, &self->lock, &self->timers[i], i % 3);
		ASSERT_NE(0, id[i]);
	}
	EXPECT_EQ(0, self->ids.nr_slots % QT_SLOTS_PER_BLOCK);
	EXPECT_GT(QT_SLOTS_PER_BLOCK + NR_TIMERS, self->ids.nr_slots);
	EXPECT_LE(self->ids.nr_slots / QT_SLOTS_PER_BLOCK, self->ids.nr_blocks);
	for (i = 0; i < NR_TIMERS; i++)
		ASSERT_EQ(&self->timers[i], qt_ids_lookup(&self->ids, id[i]));
	/* Half of them go: the rest still resolve, the others do not. */
	for (i = 0; i < NR_TIMERS; i += 2)
		qt_ids_free(&self->ids, (u32)self->timers[i].slot);
	for (i = 0; i < NR_TIMERS; i++)
		ASSERT_EQ(i % 2 ? &self->timers[i] : NULL,
			  qt_ids_lookup(&self->ids, id[i]));
}

/*
 * A slot that has been used 2^30 times: its generation wraps to 0 in the
 * id's 30 bits.  Given out again, the slot would issue the id it issued
 * first, and a caller holding that long-stale id would reach the new
 * timer.  The generation is set rather than counted up to keep this fast:
 * what matters is what the table does when it wraps.
 */
TEST_F(ids, a_slot_whose_generation_wraps_is_retired)
{
	struct qt_timer *t = &self->timers[0];
	u64 first = arm(&self->ids, &self->lock, t, 1), id;
	u32 slot = t->slot;
	int i;

	*qt_ids_gen(&self->ids, slot) = QT_ID_GEN_MASK;	/* 2^30 - 1 uses */
	qt_ids_free(&self->ids, slot);
	EXPECT_EQ(NULL, qt_ids_get(&self->ids, slot));

	for (i = 1; i < 2 * QT_SLOTS_PER_BLOCK; i++) {
		id = arm(&self->ids, &self->lock, &self->timers[i], 1);
		ASSERT_NE(0, id);
		ASSERT_NE(first, id);
		ASSERT_NE(slot, (u32)self->timers[i].slot);
	}
	EXPECT_EQ(NULL, qt_ids_lookup(&self->ids, first));
	EXPECT_EQ(NULL, qt_ids_get(&self->ids, slot));
}

/*
 * A table whose generations start at a random base (one per file): the
 * ids differ from those of a table with another base, and a slot retires
 * when its generation comes back to the base, not at 0.
 */
TEST_F(ids, generations_start_at_the_tables_base)
{
	struct qt_ids other;
	struct qt_timer *t = &self->timers[0], *u = &self->timers[1];
	u64 id, other_id;
	u32 slot;
	int i;

	qt_ids_init(&other, 12345);
	id = arm(&self->ids, &self->lock, t, 1);
	other_id = arm(&other, &self->lock, u, 1);
	ASSERT_NE(0, id);
	ASSERT_NE(0, other_id);
	EXPECT_NE(id, other_id);
	EXPECT_EQ(NULL, qt_ids_lookup(&self->ids, other_id));
	EXPECT_EQ(NULL, qt_ids_lookup(&other, id));
	EXPECT_EQ(u, qt_ids_lookup(&other, other_id));

	/* 0 is an ordinary generation there, and the base the last one. */
	slot = u->slot;
	*qt_ids_gen(&other, slot) = QT_ID_GEN_MASK | 1U << QT_GEN_CLOCK_SHIFT;
	qt_ids_free(&other, slot);
	ASSERT_NE(0, arm(&other, &self->lock, u, 1));
	EXPECT_EQ(slot, (u32)u->slot);
	*qt_ids_gen(&other, slot) = 12344 | 1U << QT_GEN_CLOCK_SHIFT;
	qt_ids_free(&other, slot);
	for (i = 2; i < 2 * QT_SLOTS_PER_BLOCK; i++) {
		ASSERT_NE(0, arm(&other, &self->lock, &self->timers[i], 1));
		ASSERT_NE(slot, (u32)self->timers[i].slot);
	}
	qt_ids_destroy(&other);
}

/* The generation below the wrap still frees the slot for reuse. */
TEST_F(ids, a_slot_below_the_wrap_is_reused)
{
	struct qt_timer *t = &self->timers[0];
	u64 old;
	u32 slot;

	old = arm(&self->ids, &self->lock, t, 1);
	slot = t->slot;
	*qt_ids_gen(&self->ids, slot) = QT_ID_GEN_MASK - 1;
	qt_ids_free(&self->ids, slot);
	ASSERT_NE(0, arm(&self->ids, &self->lock, &self->timers[1], 1));
	EXPECT_EQ(slot, (u32)self->timers[1].slot);
	EXPECT_EQ(NULL, qt_ids_lookup(&self->ids, old));
}

/*
 * Marks: a walk over the marked slots (a file's cancel-on-set timers)
 * finds exactly those, in order, across blocks and within a bound, and a
 * freed slot or a fresh block carries no mark.
 */
TEST_F(ids, a_walk_finds_exactly_the_marked_slots)
{
	u32 slot, end, n = 0;
	int i;

	for (i = 0; i < NR_TIMERS; i++) {
		ASSERT_NE(0, arm(&self->ids, &self->lock, &self->timers[i], 0));
		if (i % 7 == 3)
			qt_ids_mark(&self->ids, self->timers[i].slot, true);
	}
	/* Unmark one, and free another marked one: neither is found. */
	qt_ids_mark(&self->ids, self->timers[10].slot, false);
	qt_ids_free(&self->ids, self->timers[17].slot);

	end = self->ids.nr_slots;
	for (slot = qt_ids_next_marked(&self->ids, 0, end); slot < end;
	     slot = qt_ids_next_marked(&self->ids, slot + 1, end)) {
		struct qt_timer *t = qt_ids_get(&self->ids, slot);
		long k;

		ASSERT_NE(NULL, t);
		k = t - self->timers;
		ASSERT_EQ(3, k % 7);
		ASSERT_NE(10, k);
		ASSERT_NE(17, k);
		n++;
	}
	EXPECT_EQ((NR_TIMERS + 3) / 7 - 2, n);

	/* A bounded walk stops at its bound, on a slot boundary or not. */
	EXPECT_EQ(3, qt_ids_next_marked(&self->ids, 0, 100));
	EXPECT_EQ(2, qt_ids_next_marked(&self->ids, 0, 2));
	EXPECT_EQ(400, qt_ids_next_marked(&self->ids, 396, 400));
	EXPECT_EQ(end, qt_ids_next_marked(&self->ids, end, end));

	/* A slot freed while marked comes back unmarked. */
	ASSERT_NE(0, arm(&self->ids, &self->lock, &self->timers[17], 0));
	EXPECT_EQ(17, (u32)self->timers[17].slot);
	EXPECT_NE(17, qt_ids_next_marked(&self->ids, 17, 18));
}

TEST_HARNESS_MAIN
