// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * Native unit tests of the heap core (kmod/heap.c, built unchanged over
 * selftests/shim): each operation and its edge cases.  heap_helpers.h says
 * how a misused timer pointer or an entry written past cap is caught.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"

#include "heap_helpers.h"

static void shuffle(s64 *a, u32 n, u64 *s)
{
	u32 i;

	for (i = n; i > 1; i--) {
		u32 j = rng_below(s, i);
		s64 t = a[i - 1];

		a[i - 1] = a[j];
		a[j] = t;
	}
}

/* Pop everything, checking keys come out non-decreasing; returns the count. */
static u32 drain_sorted(struct __test_metadata *_metadata, struct qt_heap *h)
{
	u32 n = 0;
	s64 prev = S64_MIN;

	while (!qt_heap_empty(h)) {
		const struct qt_heap_entry *top = qt_heap_top(h);

		ASSERT_NE(NULL, top);
		ASSERT_LE(prev, top->key);
		prev = top->key;
		qt_heap_pop(h);
		n++;
	}
	ASSERT_EQ(NULL, qt_heap_top(h));
	return n;
}

/* ---------------------------------------------------------------------- */
/* Unit tests                                                              */

TEST(empty)
{
	struct th t = {};

	/* A zeroed heap is empty and has no storage. */
	ASSERT_TRUE(qt_heap_empty(&t.h));
	ASSERT_EQ(NULL, qt_heap_top(&t.h));
	ASSERT_TRUE(th_attach(&t, 4, 0));
	ASSERT_TRUE(qt_heap_empty(&t.h));
	ASSERT_EQ(NULL, qt_heap_top(&t.h));
	qt_heap_push(&t.h, 7, timer_of(1));
	ASSERT_FALSE(qt_heap_empty(&t.h));
	ASSERT_EQ(7, qt_heap_top(&t.h)->key);
	ASSERT_EQ(timer_of(1), qt_heap_top(&t.h)->timer);
	qt_heap_pop(&t.h);
	ASSERT_TRUE(qt_heap_empty(&t.h));
	ASSERT_EQ(NULL, qt_heap_top(&t.h));
	th_release(&t);
}

TEST(storage_size)
{
	ASSERT_EQ(63, qt_heap_storage_size(0));
	ASSERT_EQ(16 + 63, qt_heap_storage_size(1));
	ASSERT_EQ((size_t)UINT32_MAX * 16 + 63, qt_heap_storage_size(UINT32_MAX));
	ASSERT_EQ(16, sizeof(struct qt_heap_entry));
}

TEST(attach_alignment_every_offset)
{
	unsigned int off;

	/* Any start address, not just malloc's 16-byte aligned ones. */
	for (off = 0; off < 128; off++) {
		struct th t = {};

		ASSERT_TRUE(th_attach(&t, 9, off)) {
			TH_LOG("misalignment %u", off);
		}
		qt_heap_push(&t.h, 1, timer_of(1));
		th_release(&t);
	}
}

TEST(attach_null_releases_storage)
{
	struct th t = {};
	void *mem;

	ASSERT_TRUE(th_attach(&t, 8, 0));
	mem = t.mem;
	ASSERT_EQ(mem, qt_heap_attach(&t.h, NULL, 0));
	ASSERT_EQ(NULL, t.h.v);
	ASSERT_EQ(NULL, t.h.mem);
	ASSERT_EQ(0, t.h.cap);
	ASSERT_TRUE(qt_heap_empty(&t.h));
	t.mem = NULL;
	unpoison(mem, t.size);
	free(t.raw);
	t.raw = NULL;
	/* The first attach after that returns NULL again. */
	ASSERT_TRUE(th_attach(&t, 8, 0));
	th_release(&t);
}

TEST(attach_grow_shrink_preserve)
{
	struct qt_heap_entry before[100];
	struct th t = {};
	u64 rng = rng_seed(7);
	u32 i;

	ASSERT_TRUE(th_attach(&t, 100, 3));
	for (i = 0; i < 100; i++)
		qt_heap_push(&t.h, (s64)rng_next(&rng), timer_of(i));
	memcpy(before, t.h.v, sizeof(before));

	/* Grow: same entries at the same indices. */
	ASSERT_TRUE(th_attach(&t, 1000, 5));
	ASSERT_EQ(100, t.h.nr);
	ASSERT_EQ(0, memcmp(before, t.h.v, sizeof(before)));

	/* Shrink to exactly nr. */
	ASSERT_TRUE(th_attach(&t, 100, 8));
	ASSERT_EQ(100, t.h.nr);
	ASSERT_EQ(0, memcmp(before, t.h.v, sizeof(before)));
	ASSERT_TRUE(heap_ordered(&t.h));

	/* Shrink after pops, then keep using it. */
	for (i = 0; i < 60; i++)
		qt_heap_pop(&t.h);
	ASSERT_TRUE(th_attach(&t, 41, 1));
	qt_heap_push(&t.h, S64_MIN, timer_of(500));
	ASSERT_EQ(41, t.h.nr);
	ASSERT_EQ(S64_MIN, qt_heap_top(&t.h)->key);
	ASSERT_EQ(41, drain_sorted(_metadata, &t.h));
	th_release(&t);
}

/*
 * qt_heap_remap(): the same bytes mapped elsewhere (here: copied wholesale
 * at the same alignment, as vmap() of the same pages would show them) are
 * taken as they are, with nothing copied from the old array.
 */
TEST(remap_takes_entries_in_place)
{
	struct qt_heap_entry before[100];
	/* aligned_alloc() wants a multiple of the alignment. */
	size_t size = (qt_heap_storage_size(200) + 63) & ~(size_t)63;
	char *a = aligned_alloc(64, size), *b = aligned_alloc(64, size);
	struct qt_heap h = {};
	u64 rng = rng_seed(11);
	u32 i;

	ASSERT_TRUE(a && b);
	ASSERT_EQ(NULL, qt_heap_attach(&h, a, 100));
	for (i = 0; i < 100; i++)
		qt_heap_push(&h, (s64)rng_next(&rng), timer_of(i));
	memcpy(before, h.v, sizeof(before));
	memcpy(b, a, size);
	/* Garbage in the old array shows if anything were copied from it. */
	memset(a, 0x5a, size);
	ASSERT_EQ(a, qt_heap_remap(&h, b, 200));
	ASSERT_EQ(b, h.mem);
	ASSERT_EQ(200, h.cap);
	ASSERT_EQ(100, h.nr);
	ASSERT_EQ(0, (uintptr_t)&h.v[1] & 63);
	ASSERT_EQ(0, memcmp(before, h.v, sizeof(before)));
	/* And it goes on working with the room it gained. */
	for (i = 100; i < 200; i++)
		qt_heap_push(&h, (s64)rng_next(&rng), timer_of(i));
	ASSERT_TRUE(heap_ordered(&h));
	ASSERT_EQ(200, drain_sorted(_metadata, &h));
	free(a);
	free(b);
}

TEST(push_pop_order)
{
	static s64 keys[5000];
	struct th t = {};
	u64 rng = rng_seed(1);
	u32 i;

	for (i = 0; i < 5000; i++)
		keys[i] = (s64)i * 3 - 7000;
	shuffle(keys, 5000, &rng);
	ASSERT_TRUE(th_attach(&t, 5000, 0));
	for (i = 0; i < 5000; i++)
		qt_heap_push(&t.h, keys[i], timer_of(i));
	ASSERT_TRUE(heap_ordered(&t.h));
	/* Distinct keys: exactly the sorted sequence, timer attached to each. */
	for (i = 0; i < 5000; i++) {
		const struct qt_heap_entry *top = qt_heap_top(&t.h);

		ASSERT_EQ((s64)i * 3 - 7000, top->key);
		ASSERT_EQ(top->key, keys[id_of(top->timer)]);
		qt_heap_pop(&t.h);
	}
	ASSERT_TRUE(qt_heap_empty(&t.h));
	th_release(&t);
}

TEST(push_pop_monotonic_inputs)
{
	struct th t = {};
	s64 i;

	ASSERT_TRUE(th_attach(&t, 3000, 0));
	/* Ascending pushes never move; descending ones always reach the root. */
	for (i = 0; i < 1500; i++)
		qt_heap_push(&t.h, i, timer_of((u32)i));
	for (i = 0; i < 1500; i++) {
		qt_heap_push(&t.h, -i, timer_of((u32)(1500 + i)));
		ASSERT_EQ(-i, qt_heap_top(&t.h)->key);
	}
	ASSERT_EQ(3000, drain_sorted(_metadata, &t.h));
	th_release(&t);
}

TEST(every_small_size)
{
	struct th t = {};
	u64 rng = rng_seed(2);
	u32 n, i, round;

	/* Sizes around partial last child groups, many orders each. */
	ASSERT_TRUE(th_attach(&t, 90, 0));
	for (n = 1; n <= 90; n++) {
		for (round = 0; round < 20; round++) {
			for (i = 0; i < n; i++)
				qt_heap_push(&t.h, rng_below(&rng, 10), timer_of(i));
			ASSERT_TRUE(heap_ordered(&t.h));
			ASSERT_EQ(n, drain_sorted(_metadata, &t.h));
		}
	}
	th_release(&t);
}

TEST(replace_top_up)
{
	struct th t = {};
	u32 i;

	ASSERT_TRUE(th_attach(&t, 100, 0));
	for (i = 0; i < 100; i++)
		qt_heap_push(&t.h, i * 10, timer_of(i));
	/* Like a ticker re-arm: the top moves behind everything else. */
	for (i = 0; i < 100; i++) {
		const struct qt_heap_entry *top = qt_heap_top(&t.h);

		ASSERT_EQ(i * 10, top->key);
		ASSERT_EQ(timer_of(i), top->timer);
		qt_heap_replace_top(&t.h, 1000 + i);
		ASSERT_TRUE(heap_ordered(&t.h));
	}
	for (i = 0; i < 100; i++) {
		ASSERT_EQ(1000 + i, qt_heap_top(&t.h)->key);
		ASSERT_EQ(timer_of(i), qt_heap_top(&t.h)->timer);
		qt_heap_pop(&t.h);
	}
	th_release(&t);
}

TEST(replace_top_small_step)
{
	struct th t = {};
	u32 i;

	ASSERT_TRUE(th_attach(&t, 50, 0));
	for (i = 0; i < 50; i++)
		qt_heap_push(&t.h, i * 10, timer_of(i));
	/* A step that stays on top, one that lands mid-heap, one to equality. */
	qt_heap_replace_top(&t.h, 5);
	ASSERT_EQ(5, qt_heap_top(&t.h)->key);
	ASSERT_EQ(timer_of(0), qt_heap_top(&t.h)->timer);
	qt_heap_replace_top(&t.h, 255);
	ASSERT_EQ(10, qt_heap_top(&t.h)->key);
	ASSERT_EQ(timer_of(1), qt_heap_top(&t.h)->timer);
	ASSERT_TRUE(heap_ordered(&t.h));
	qt_heap_replace_top(&t.h, 20);
	ASSERT_EQ(20, qt_heap_top(&t.h)->key);
	ASSERT_TRUE(heap_ordered(&t.h));
	ASSERT_EQ(50, drain_sorted(_metadata, &t.h));
	th_release(&t);
}

TEST(replace_top_down)
{
	struct th t = {};
	u32 i;

	ASSERT_TRUE(th_attach(&t, 64, 0));
	for (i = 0; i < 64; i++)
		qt_heap_push(&t.h, 100 + i, timer_of(i));
	/* An earlier key keeps the entry on top with the same timer. */
	qt_heap_replace_top(&t.h, -5);
	ASSERT_EQ(-5, qt_heap_top(&t.h)->key);
	ASSERT_EQ(timer_of(0), qt_heap_top(&t.h)->timer);
	qt_heap_replace_top(&t.h, S64_MIN);
	ASSERT_EQ(S64_MIN, qt_heap_top(&t.h)->key);
	ASSERT_EQ(timer_of(0), qt_heap_top(&t.h)->timer);
	ASSERT_TRUE(heap_ordered(&t.h));
	ASSERT_EQ(64, drain_sorted(_metadata, &t.h));
	th_release(&t);
}

TEST(replace_top_single)
{
	struct th t = {};

	ASSERT_TRUE(th_attach(&t, 1, 0));
	qt_heap_push(&t.h, 3, timer_of(3));
	qt_heap_replace_top(&t.h, S64_MAX);
	ASSERT_EQ(1, t.h.nr);
	ASSERT_EQ(S64_MAX, qt_heap_top(&t.h)->key);
	ASSERT_EQ(timer_of(3), qt_heap_top(&t.h)->timer);
	th_release(&t);
}

/* Filter callbacks: record how often each id was asked about and dropped. */
struct filter_log {
	u32 mod;		/* keep ids with id % mod != 0 (0: keep all) */
	bool keep_none;
	u8 kept_calls[4096];
	u8 drop_calls[4096];
};

static bool log_keep(const struct qt_heap_entry *e, void *arg)
{
	struct filter_log *log = arg;
	u32 id = id_of(e->timer);

	log->kept_calls[id]++;
	if (log->keep_none)
		return false;
	return !log->mod || id % log->mod;
}

static void log_drop(void *timer, void *arg)
{
	struct filter_log *log = arg;

	log->drop_calls[id_of(timer)]++;
}

static void fill_shuffled(struct qt_heap *h, u32 n, u64 seed)
{
	u64 rng = rng_seed(seed);
	u32 i;

	for (i = 0; i < n; i++)
		qt_heap_push(h, (s64)rng_below(&rng, 1000) - 500, timer_of(i));
}

/*
 * qt_heap_delete() at random indices, down to empty: the heap stays ordered
 * after every deletion and holds exactly the entries not deleted.  Keys in
 * a narrow range, so equal keys and both sift directions occur.
 */
TEST(delete_at_any_index)
{
	static bool gone[5000];
	struct th t = {};
	u64 rng = rng_seed(11);
	u32 i, n = 5000, seen;

	ASSERT_TRUE(th_attach(&t, n, 0));
	fill_shuffled(&t.h, n, 5);
	while (t.h.nr) {
		u32 at = rng_below(&rng, t.h.nr);

		ASSERT_FALSE(gone[id_of(t.h.v[at].timer)]);
		gone[id_of(t.h.v[at].timer)] = true;
		qt_heap_delete(&t.h, at);
		if (t.h.nr % 97 == 0 || t.h.nr < 64)
			ASSERT_TRUE(heap_ordered(&t.h));
		for (i = seen = 0; i < t.h.nr; i++)
			seen += !gone[id_of(t.h.v[i].timer)];
		ASSERT_EQ(t.h.nr, seen);
	}
	for (i = 0; i < n; i++)
		ASSERT_TRUE(gone[i]);
	th_release(&t);
}

/*
 * The way base.c compacts a heap a chunk at a time: walk the array upward,
 * deleting in place and looking at the same index again after a deletion.
 * Nearly every rejected entry goes in one pass, and the heap stays ordered.
 */
TEST(delete_while_walking)
{
	struct th t = {};
	u32 i, n = 4000, removed = 0, left;

	ASSERT_TRUE(th_attach(&t, n, 0));
	fill_shuffled(&t.h, n, 6);
	for (i = 0; i < t.h.nr; ) {
		if (id_of(t.h.v[i].timer) % 3 == 0) {
			qt_heap_delete(&t.h, i);
			removed++;
			continue;
		}
		i++;
	}
	ASSERT_TRUE(heap_ordered(&t.h));
	/*
	 * A sift-up may carry an unseen entry below the walk, where a later
	 * pass (or its surfacing) finds it: only a few are missed.
	 */
	for (i = left = 0; i < t.h.nr; i++)
		left += id_of(t.h.v[i].timer) % 3 == 0;
	EXPECT_EQ(n / 3 + 1, removed + left);
	EXPECT_GE(n / 100, left);
	ASSERT_EQ(n - removed, drain_sorted(_metadata, &t.h));
	th_release(&t);
}

TEST(filter_none_removed)
{
	static struct filter_log log;
	struct qt_heap_entry before[3000];
	struct th t = {};
	u32 i;

	ASSERT_TRUE(th_attach(&t, 3000, 0));
	fill_shuffled(&t.h, 3000, 3);
	memcpy(before, t.h.v, sizeof(before));
	ASSERT_EQ(0, qt_heap_filter(&t.h, log_keep, log_drop, &log));
	ASSERT_EQ(3000, t.h.nr);
	/* Nothing removed: the array is left exactly as it was. */
	ASSERT_EQ(0, memcmp(before, t.h.v, sizeof(before)));
	for (i = 0; i < 3000; i++) {
		ASSERT_EQ(1, log.kept_calls[i]);
		ASSERT_EQ(0, log.drop_calls[i]);
	}
	th_release(&t);
}

TEST(filter_some_removed)
{
	static struct filter_log log = { .mod = 4 };
	struct th t = {};
	u32 i, removed;

	ASSERT_TRUE(th_attach(&t, 4000, 0));
	fill_shuffled(&t.h, 4000, 4);
	removed = qt_heap_filter(&t.h, log_keep, log_drop, &log);
	ASSERT_EQ(1000, removed);
	ASSERT_EQ(3000, t.h.nr);
	ASSERT_TRUE(heap_ordered(&t.h));
	for (i = 0; i < 4000; i++) {
		ASSERT_EQ(1, log.kept_calls[i]);
		ASSERT_EQ(i % 4 == 0, log.drop_calls[i]);
	}
	for (i = 0; i < t.h.nr; i++)
		ASSERT_NE(0, id_of(t.h.v[i].timer) % 4);
	ASSERT_EQ(3000, drain_sorted(_metadata, &t.h));
	th_release(&t);
}

TEST(filter_all_removed)
{
	static struct filter_log log = { .keep_none = true };
	struct th t = {};
	u32 i;

	ASSERT_TRUE(th_attach(&t, 777, 0));
	fill_shuffled(&t.h, 777, 5);
	ASSERT_EQ(777, qt_heap_filter(&t.h, log_keep, log_drop, &log));
	ASSERT_TRUE(qt_heap_empty(&t.h));
	ASSERT_EQ(NULL, qt_heap_top(&t.h));
	for (i = 0; i < 777; i++) {
		ASSERT_EQ(1, log.kept_calls[i]);
		ASSERT_EQ(1, log.drop_calls[i]);
	}
	/* Still usable afterwards. */
	qt_heap_push(&t.h, 1, timer_of(1));
	ASSERT_EQ(1, qt_heap_top(&t.h)->key);
	th_release(&t);
}

TEST(filter_empty)
{
	static struct filter_log log;
	struct th t = {};
	u32 i;

	ASSERT_EQ(0, qt_heap_filter(&t.h, log_keep, log_drop, &log));
	ASSERT_TRUE(th_attach(&t, 4, 0));
	ASSERT_EQ(0, qt_heap_filter(&t.h, log_keep, log_drop, &log));
	for (i = 0; i < 4096; i++)
		ASSERT_EQ(0, log.kept_calls[i] + log.drop_calls[i]);
	th_release(&t);
}

TEST(duplicate_keys)
{
	static u8 seen[2000];
	struct th t = {};
	u64 rng = rng_seed(9);
	u32 i, pushed[3] = {}, popped[3] = {};
	s64 prev = 0;

	ASSERT_TRUE(th_attach(&t, 2000, 0));
	for (i = 0; i < 2000; i++) {
		u32 key = rng_below(&rng, 3);

		pushed[key]++;
		qt_heap_push(&t.h, key, timer_of(i));
	}
	/* Equal keys come out in any order, but each timer exactly once. */
	for (i = 0; i < 2000; i++) {
		const struct qt_heap_entry *top = qt_heap_top(&t.h);

		ASSERT_LE(prev, top->key);
		prev = top->key;
		ASSERT_EQ(0, seen[id_of(top->timer)]++);
		popped[top->key]++;
		qt_heap_pop(&t.h);
	}
	for (i = 0; i < 3; i++)
		ASSERT_EQ(pushed[i], popped[i]);
	/* All equal. */
	for (i = 0; i < 1000; i++)
		qt_heap_push(&t.h, 42, timer_of(i));
	qt_heap_replace_top(&t.h, 42);
	ASSERT_EQ(1000, drain_sorted(_metadata, &t.h));
	th_release(&t);
}

TEST(extreme_keys)
{
	static const s64 special[] = {
		S64_MAX, S64_MIN, 0, -1, 1, S64_MAX - 1, S64_MIN + 1,
		S64_MAX, S64_MIN, (s64)1 << 62, -((s64)1 << 62),
	};
	struct th t = {};
	u32 i, round;
	u64 rng = rng_seed(11);

	ASSERT_TRUE(th_attach(&t, 1100, 0));
	/* No key arithmetic: extremes compare correctly and never overflow. */
	for (round = 0; round < 100; round++)
		for (i = 0; i < ARRAY_SIZE(special); i++)
			qt_heap_push(&t.h, special[(i + round) % ARRAY_SIZE(special)],
				     timer_of(round * 16 + i));
	ASSERT_EQ(S64_MIN, qt_heap_top(&t.h)->key);
	qt_heap_replace_top(&t.h, S64_MAX);
	ASSERT_EQ(S64_MIN, qt_heap_top(&t.h)->key);
	ASSERT_EQ(1100, drain_sorted(_metadata, &t.h));

	for (i = 0; i < 1000; i++)
		qt_heap_push(&t.h, (s64)rng_next(&rng), timer_of(i));
	qt_heap_push(&t.h, S64_MIN, timer_of(1000));
	qt_heap_push(&t.h, S64_MAX, timer_of(1001));
	ASSERT_EQ(S64_MIN, qt_heap_top(&t.h)->key);
	ASSERT_EQ(timer_of(1000), qt_heap_top(&t.h)->timer);
	for (i = 0; i < 1001; i++)
		qt_heap_pop(&t.h);
	ASSERT_EQ(S64_MAX, qt_heap_top(&t.h)->key);
	ASSERT_EQ(timer_of(1001), qt_heap_top(&t.h)->timer);
	th_release(&t);
}

TEST_HARNESS_MAIN
