// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * Native tests of the heap core (kmod/heap.c, built unchanged against
 * heap_shim.h): unit tests for each operation and its edge cases, then a
 * randomized differential test that drives the heap and a trivially correct
 * reference (an unsorted array searched linearly) with the same operation
 * stream and compares them after every step.  Timer pointers point into a
 * PROT_NONE mapping, so the heap dereferencing one crashes the test, and the
 * slack around the aligned entry array is poisoned for AddressSanitizer, so
 * an entry written past cap is caught even inside the allocation.  The
 * random streams come from a fixed seed list, so runs are reproducible;
 * SEED=<n> in the environment runs that one seed instead.
 */

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "kselftest_harness.h"

#include "heap.h"

/* heap_shim.h carries only what the heap needs; the tests want these too. */
typedef unsigned long long u64;
typedef unsigned char u8;

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define poison(p, n)	ASAN_POISON_MEMORY_REGION(p, n)
#define unpoison(p, n)	ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define poison(p, n)	do { (void)(p); (void)(n); } while (0)
#define unpoison(p, n)	do { (void)(p); (void)(n); } while (0)
#endif

/*
 * Timer pointers are fake: id i is guard + 8 * i in an inaccessible
 * mapping, so the id is recoverable and any dereference faults.
 */
#define MAX_IDS		4194304u

static char *guard;

static void *timer_of(u32 id)
{
	if (!guard) {
		guard = mmap(NULL, (size_t)MAX_IDS * 8, PROT_NONE,
			     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (guard == MAP_FAILED)
			abort();
	}
	return guard + (size_t)id * 8;
}

static u32 id_of(const void *timer)
{
	return (u32)(((const char *)timer - guard) / 8);
}

/* A heap with storage from malloc, deliberately misaligned by @misalign. */
struct th {
	struct qt_heap h;
	char *raw;
	void *mem;
	size_t size;
};

static void th_unpoison(struct th *t)
{
	if (t->mem)
		unpoison(t->mem, t->size);
}

/* Give @t a new array of @cap entries; returns false if attach misbehaved. */
static bool th_attach(struct th *t, u32 cap, unsigned int misalign)
{
	size_t size = qt_heap_storage_size(cap);
	char *raw = malloc(size + misalign);
	char *mem = raw + misalign;
	void *old;
	char *v;

	if (!raw)
		abort();
	/* Make malloc's leftovers look like garbage, not like zeroed entries. */
	memset(raw, 0xa5, size + misalign);
	old = qt_heap_attach(&t->h, mem, cap);
	if (old != t->mem)
		return false;
	th_unpoison(t);
	free(t->raw);
	t->raw = raw;
	t->mem = mem;
	t->size = size;

	v = (char *)t->h.v;
	if (t->h.cap != cap || t->h.mem != mem || v < mem ||
	    v + (size_t)cap * sizeof(struct qt_heap_entry) > mem + size ||
	    ((uintptr_t)&t->h.v[1] & 63))
		return false;
	poison(mem, v - mem);
	poison(v + (size_t)cap * sizeof(struct qt_heap_entry),
	       mem + size - (v + (size_t)cap * sizeof(struct qt_heap_entry)));
	return true;
}

static void th_release(struct th *t)
{
	th_unpoison(t);
	free(t->raw);
	memset(t, 0, sizeof(*t));
}

/* True if every parent's key is <= its children's. */
static bool heap_ordered(const struct qt_heap *h)
{
	u32 i;

	for (i = 1; i < h->nr; i++)
		if (h->v[(i - 1) / 4].key > h->v[i].key)
			return false;
	return true;
}

static int cmp_entry(const void *a, const void *b)
{
	const struct qt_heap_entry *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->timer < y->timer ? -1 : x->timer > y->timer;
}

/* xorshift64*: tiny, deterministic, good enough to pick operations. */
static u64 rng_next(u64 *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dull;
}

static u64 rng_seed(u64 seed)
{
	/* splitmix64 step so that small seeds give unrelated streams. */
	u64 z = seed + 0x9e3779b97f4a7c15ull;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	z ^= z >> 31;
	return z ? z : 1;
}

static u32 rng_below(u64 *s, u32 n)
{
	return (u32)((rng_next(s) >> 32) * n >> 32);
}

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

/* Merge @m entries into a heap of @n; both paths (sift-up and heapify). */
static void merge_case(struct __test_metadata *_metadata, u32 n, u32 m)
{
	struct th dst = {}, src = {};
	u64 rng = rng_seed(n * 131 + m);
	u8 *seen = calloc(n + m + 1, 1);
	s64 prev = S64_MIN;
	u32 i;

	ASSERT_NE(NULL, seen);
	ASSERT_TRUE(th_attach(&dst, n + m, 0));
	ASSERT_TRUE(th_attach(&src, m, 0));
	for (i = 0; i < n; i++)
		qt_heap_push(&dst.h, (s64)rng_below(&rng, 100000), timer_of(i));
	/* Some source keys below everything so sift-up reaches the root. */
	for (i = 0; i < m; i++)
		qt_heap_push(&src.h, (s64)rng_below(&rng, 120000) - 10000,
			     timer_of(n + i));
	qt_heap_merge(&dst.h, &src.h);
	ASSERT_EQ(n + m, dst.h.nr);
	ASSERT_EQ(0, src.h.nr);
	ASSERT_TRUE(qt_heap_empty(&src.h));
	ASSERT_TRUE(heap_ordered(&dst.h));
	while (!qt_heap_empty(&dst.h)) {
		const struct qt_heap_entry *top = qt_heap_top(&dst.h);

		ASSERT_LE(prev, top->key);
		prev = top->key;
		ASSERT_EQ(0, seen[id_of(top->timer)]++);
		qt_heap_pop(&dst.h);
	}
	for (i = 0; i < n + m; i++)
		ASSERT_EQ(1, seen[i]);
	/* The emptied source heap keeps its storage and works. */
	if (m) {
		qt_heap_push(&src.h, 5, timer_of(0));
		ASSERT_EQ(5, qt_heap_top(&src.h)->key);
	}
	free(seen);
	th_release(&dst);
	th_release(&src);
}

TEST(merge)
{
	static const u32 sizes[][2] = {
		{ 0, 0 }, { 0, 1 }, { 1, 0 }, { 0, 100 }, { 100, 0 },
		{ 1, 1 }, { 1000, 3 }, { 10000, 100 }, { 100, 10000 },
		{ 500, 500 }, { 3, 1000 }, { 5000, 332 }, { 5000, 333 },
	};
	u32 i;

	for (i = 0; i < ARRAY_SIZE(sizes); i++)
		merge_case(_metadata, sizes[i][0], sizes[i][1]);
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

/* ---------------------------------------------------------------------- */
/* Randomized differential test against a linear-scan reference            */

enum key_mode {
	KEYS_TIMER,	/* now + up to 1 s, now advancing as timers pop */
	KEYS_DUPS,	/* 0..7: mostly ties */
	KEYS_WIDE,	/* all 64 bits random, extremes mixed in */
};

enum op {
	OP_PUSH, OP_POP, OP_REPLACE_UP, OP_REPLACE_ANY, OP_FILTER,
	OP_SRC_PUSH, OP_MERGE, OP_ATTACH, OP_NR
};

static const char *const op_name[OP_NR] = {
	"push", "pop", "replace_top later", "replace_top any", "filter",
	"push to merge source", "merge", "attach",
};

FIXTURE(diff) {
	struct th heap, src;
	/* References: the same multisets, unordered. */
	struct qt_heap_entry *ref, *src_ref;
	u32 ref_nr, src_ref_nr;
	/* Per id: keep verdict for the current filter, and callback counts. */
	u8 *dead, *kept_calls, *drop_calls;
	struct qt_heap_entry *sorted_a, *sorted_b;
	u64 rng;
	s64 now;
	u32 next_id, ref_max;
	/* Where we are, for the failure report in the teardown. */
	u64 seed;
	u32 step;
	enum op op;
	/* What the runs covered, printed so a reader can judge the mix. */
	u64 ops[OP_NR], merges_sift_up, merges_heapify, filtered;
	u32 max_seen;
};

FIXTURE_VARIANT(diff) {
	u32 weight[OP_NR];
	enum key_mode keys;
	u32 max_nr;	/* bounds the reference's linear scans */
	u32 steps;
};

/* The engine's steady state: arm, expire, re-arm tickers, lazy compaction. */
FIXTURE_VARIANT_ADD(diff, timer_churn) {
	.weight = { [OP_PUSH] = 30, [OP_POP] = 25, [OP_REPLACE_UP] = 20,
		    [OP_REPLACE_ANY] = 2, [OP_FILTER] = 2, [OP_SRC_PUSH] = 5,
		    [OP_MERGE] = 1, [OP_ATTACH] = 1 },
	.keys = KEYS_TIMER, .max_nr = 3000, .steps = 30000,
};

/* Deep heaps (7+ levels): no filters to cut them back. */
FIXTURE_VARIANT_ADD(diff, grow_large) {
	.weight = { [OP_PUSH] = 70, [OP_POP] = 10, [OP_REPLACE_UP] = 10,
		    [OP_REPLACE_ANY] = 5, [OP_SRC_PUSH] = 3, [OP_MERGE] = 1,
		    [OP_ATTACH] = 1 },
	.keys = KEYS_TIMER, .max_nr = 12000, .steps = 20000,
};

FIXTURE_VARIANT_ADD(diff, drain_heavy) {
	.weight = { [OP_PUSH] = 30, [OP_POP] = 45, [OP_REPLACE_UP] = 5,
		    [OP_REPLACE_ANY] = 5, [OP_FILTER] = 2, [OP_SRC_PUSH] = 10,
		    [OP_MERGE] = 2, [OP_ATTACH] = 3 },
	.keys = KEYS_WIDE, .max_nr = 500, .steps = 30000,
};

FIXTURE_VARIANT_ADD(diff, duplicate_keys) {
	.weight = { [OP_PUSH] = 35, [OP_POP] = 30, [OP_REPLACE_UP] = 10,
		    [OP_REPLACE_ANY] = 10, [OP_FILTER] = 3, [OP_SRC_PUSH] = 10,
		    [OP_MERGE] = 2, [OP_ATTACH] = 2 },
	.keys = KEYS_DUPS, .max_nr = 1000, .steps = 30000,
};

FIXTURE_VARIANT_ADD(diff, wide_keys) {
	.weight = { [OP_PUSH] = 35, [OP_POP] = 30, [OP_REPLACE_UP] = 10,
		    [OP_REPLACE_ANY] = 10, [OP_FILTER] = 3, [OP_SRC_PUSH] = 10,
		    [OP_MERGE] = 2, [OP_ATTACH] = 2 },
	.keys = KEYS_WIDE, .max_nr = 2000, .steps = 30000,
};

/* Structural operations most of the time: filter, merge, attach. */
FIXTURE_VARIANT_ADD(diff, restructure) {
	.weight = { [OP_PUSH] = 30, [OP_POP] = 10, [OP_REPLACE_UP] = 5,
		    [OP_REPLACE_ANY] = 5, [OP_FILTER] = 10, [OP_SRC_PUSH] = 25,
		    [OP_MERGE] = 10, [OP_ATTACH] = 10 },
	.keys = KEYS_TIMER, .max_nr = 1500, .steps = 20000,
};

FIXTURE_SETUP(diff)
{
	/*
	 * Pushes stop at max_nr and merges only start below it, so neither
	 * heap exceeds twice that plus one burst of source pushes.
	 */
	self->ref_max = 2 * variant->max_nr + 64;
	self->ref = calloc(self->ref_max, sizeof(*self->ref));
	self->src_ref = calloc(self->ref_max, sizeof(*self->src_ref));
	self->sorted_a = calloc(self->ref_max, sizeof(*self->sorted_a));
	self->sorted_b = calloc(self->ref_max, sizeof(*self->sorted_b));
	self->dead = calloc(MAX_IDS, 1);
	self->kept_calls = calloc(MAX_IDS, 1);
	self->drop_calls = calloc(MAX_IDS, 1);
	ASSERT_TRUE(self->ref && self->src_ref && self->sorted_a &&
		    self->sorted_b && self->dead && self->kept_calls &&
		    self->drop_calls);
}

FIXTURE_TEARDOWN(diff)
{
	if (!_metadata->passed)
		TH_LOG("failed with seed %llu at step %u (%s); rerun with SEED=%llu",
		       self->seed, self->step, op_name[self->op], self->seed);
	th_release(&self->heap);
	th_release(&self->src);
	free(self->ref);
	free(self->src_ref);
	free(self->sorted_a);
	free(self->sorted_b);
	free(self->dead);
	free(self->kept_calls);
	free(self->drop_calls);
}

static s64 gen_key(struct _test_data_diff *self, enum key_mode mode)
{
	static const s64 special[] = {
		S64_MIN, S64_MIN + 1, -1, 0, 1, S64_MAX - 1, S64_MAX,
	};

	switch (mode) {
	case KEYS_TIMER:
		return self->now + rng_below(&self->rng, 1000000000);
	case KEYS_DUPS:
		return rng_below(&self->rng, 8);
	case KEYS_WIDE:
	default:
		if (rng_below(&self->rng, 8) == 0)
			return special[rng_below(&self->rng, ARRAY_SIZE(special))];
		return (s64)rng_next(&self->rng);
	}
}

static bool diff_keep(const struct qt_heap_entry *e, void *arg)
{
	struct _test_data_diff *self = arg;
	u32 id = id_of(e->timer);

	self->kept_calls[id]++;
	return !self->dead[id];
}

static void diff_drop(void *timer, void *arg)
{
	struct _test_data_diff *self = arg;

	self->drop_calls[id_of(timer)]++;
}

/* Index in @ref of the entry for @timer with @key, or -1. */
static long ref_find(const struct qt_heap_entry *ref, u32 nr, const struct qt_heap_entry *e)
{
	u32 i;

	for (i = 0; i < nr; i++)
		if (ref[i].timer == e->timer)
			return ref[i].key == e->key ? (long)i : -1;
	return -1;
}

/* The cheap check, after every step: sizes agree and the top is a minimum. */
static void check_top(struct __test_metadata *_metadata,
		      struct _test_data_diff *self)
{
	const struct qt_heap_entry *top = qt_heap_top(&self->heap.h);
	s64 min = S64_MAX;
	u32 i;

	ASSERT_EQ(self->ref_nr, self->heap.h.nr);
	ASSERT_EQ(self->src_ref_nr, self->src.h.nr);
	if (!self->ref_nr) {
		ASSERT_EQ(NULL, top);
		return;
	}
	ASSERT_NE(NULL, top);
	for (i = 0; i < self->ref_nr; i++)
		if (self->ref[i].key < min)
			min = self->ref[i].key;
	ASSERT_EQ(min, top->key);
	ASSERT_LE(0, ref_find(self->ref, self->ref_nr, top));
}

/* The thorough check, now and then: heap order and equal multisets. */
static void check_all(struct __test_metadata *_metadata,
		      struct _test_data_diff *self, struct th *t,
		      const struct qt_heap_entry *ref, u32 ref_nr)
{
	size_t bytes = (size_t)ref_nr * sizeof(*ref);

	ASSERT_EQ(ref_nr, t->h.nr);
	ASSERT_LE(t->h.nr, t->h.cap);
	ASSERT_TRUE(heap_ordered(&t->h));
	if (t->h.cap)
		ASSERT_EQ(0, (uintptr_t)&t->h.v[1] & 63);
	if (!ref_nr)
		return;
	memcpy(self->sorted_a, t->h.v, bytes);
	memcpy(self->sorted_b, ref, bytes);
	qsort(self->sorted_a, ref_nr, sizeof(*ref), cmp_entry);
	qsort(self->sorted_b, ref_nr, sizeof(*ref), cmp_entry);
	ASSERT_EQ(0, memcmp(self->sorted_a, self->sorted_b, bytes));
}

/* Make room for @more entries in @t, sometimes shrinking to fit instead. */
static void diff_attach(struct __test_metadata *_metadata,
			struct _test_data_diff *self, struct th *t, u32 more)
{
	u32 cap = t->h.nr + more + rng_below(&self->rng, t->h.nr + 16);

	if (!more && rng_below(&self->rng, 4) == 0)
		cap = t->h.nr;
	ASSERT_TRUE(th_attach(t, cap, rng_below(&self->rng, 64)));
}

static void diff_push(struct __test_metadata *_metadata,
		      struct _test_data_diff *self, struct th *t,
		      struct qt_heap_entry *ref, u32 *ref_nr, enum key_mode mode)
{
	struct qt_heap_entry e = { gen_key(self, mode), timer_of(self->next_id++) };

	ASSERT_LT(self->next_id, MAX_IDS);
	ASSERT_LT(*ref_nr, self->ref_max);
	if (t->h.nr == t->h.cap)
		diff_attach(_metadata, self, t, 1);
	qt_heap_push(&t->h, e.key, e.timer);
	ref[(*ref_nr)++] = e;
}

static void diff_step(struct __test_metadata *_metadata,
		      struct _test_data_diff *self,
		      const struct _fixture_variant_diff *variant, enum op op)
{
	const struct qt_heap_entry *top = qt_heap_top(&self->heap.h);
	long idx = top ? ref_find(self->ref, self->ref_nr, top) : -1;
	u32 i, removed, expect;
	s64 key;

	switch (op) {
	case OP_PUSH:
		diff_push(_metadata, self, &self->heap, self->ref, &self->ref_nr,
			  variant->keys);
		break;
	case OP_POP:
		if (!top)
			break;
		if (variant->keys == KEYS_TIMER)
			self->now = top->key;
		qt_heap_pop(&self->heap.h);
		self->ref[idx] = self->ref[--self->ref_nr];
		break;
	case OP_REPLACE_UP:
		if (!top)
			break;
		/* Modify-later or ticker re-arm: later by up to ~1 s. */
		key = top->key;
		if (variant->keys == KEYS_DUPS)
			key += rng_below(&self->rng, 3);
		else if (key > S64_MAX - 1000000000)
			key = S64_MAX;
		else
			key += rng_below(&self->rng, 1000000000);
		qt_heap_replace_top(&self->heap.h, key);
		self->ref[idx].key = key;
		break;
	case OP_REPLACE_ANY:
		if (!top)
			break;
		key = gen_key(self, variant->keys);
		if (variant->keys == KEYS_TIMER && rng_below(&self->rng, 2))
			key -= 2000000000;	/* earlier than anything */
		qt_heap_replace_top(&self->heap.h, key);
		self->ref[idx].key = key;
		break;
	case OP_FILTER: {
		/* About a quarter dead, sometimes none or all. */
		u32 kind = rng_below(&self->rng, 8);

		expect = 0;
		for (i = 0; i < self->ref_nr; i++) {
			u32 id = id_of(self->ref[i].timer);

			self->dead[id] = kind == 0 ? 0 : kind == 1 ? 1 :
					 rng_below(&self->rng, 4) == 0;
			self->kept_calls[id] = 0;
			self->drop_calls[id] = 0;
			expect += self->dead[id];
		}
		removed = qt_heap_filter(&self->heap.h, diff_keep, diff_drop, self);
		ASSERT_EQ(expect, removed);
		self->filtered += removed;
		for (i = 0; i < self->ref_nr; ) {
			u32 id = id_of(self->ref[i].timer);

			ASSERT_EQ(1, self->kept_calls[id]);
			ASSERT_EQ(self->dead[id], self->drop_calls[id]);
			if (self->dead[id])
				self->ref[i] = self->ref[--self->ref_nr];
			else
				i++;
		}
		break;
	}
	case OP_SRC_PUSH:
		/* Bursts, so merges see sources both small and large. */
		for (i = rng_below(&self->rng, 40); i-- > 0; )
			diff_push(_metadata, self, &self->src, self->src_ref,
				  &self->src_ref_nr, variant->keys);
		break;
	case OP_MERGE:
		if (self->heap.h.cap < self->heap.h.nr + self->src.h.nr)
			diff_attach(_metadata, self, &self->heap, self->src.h.nr);
		/* Mirrors qt_heap_merge()'s choice, to count both paths. */
		if (self->src.h.nr * 16 < self->heap.h.nr + self->src.h.nr)
			self->merges_sift_up += self->src.h.nr != 0;
		else
			self->merges_heapify++;
		qt_heap_merge(&self->heap.h, &self->src.h);
		memcpy(&self->ref[self->ref_nr], self->src_ref,
		       self->src_ref_nr * sizeof(*self->ref));
		self->ref_nr += self->src_ref_nr;
		self->src_ref_nr = 0;
		break;
	case OP_ATTACH:
		diff_attach(_metadata, self, &self->heap, 0);
		break;
	default:
		break;
	}
}

static void diff_run(struct __test_metadata *_metadata,
		     struct _test_data_diff *self,
		     const struct _fixture_variant_diff *variant, u64 seed)
{
	u32 total = 0, step, i;

	th_release(&self->heap);
	th_release(&self->src);
	self->ref_nr = 0;
	self->src_ref_nr = 0;
	self->next_id = 0;
	self->now = 0;
	self->rng = rng_seed(seed);
	self->seed = seed;
	for (i = 0; i < OP_NR; i++)
		total += variant->weight[i];

	for (step = 0; step < variant->steps; step++) {
		u32 pick = rng_below(&self->rng, total);
		enum op op = 0;

		while (pick >= variant->weight[op])
			pick -= variant->weight[op++];
		if (op == OP_PUSH && self->ref_nr >= variant->max_nr)
			op = OP_POP;
		if (op == OP_SRC_PUSH && self->src_ref_nr >= variant->max_nr)
			op = OP_MERGE;
		if (op == OP_MERGE && self->ref_nr >= variant->max_nr)
			op = OP_FILTER;

		self->step = step;
		self->op = op;
		diff_step(_metadata, self, variant, op);
		self->ops[op]++;
		if (self->ref_nr > self->max_seen)
			self->max_seen = self->ref_nr;
		check_top(_metadata, self);
		if (step % 101 == 0 || step + 1 == variant->steps) {
			check_all(_metadata, self, &self->heap, self->ref,
				  self->ref_nr);
			check_all(_metadata, self, &self->src, self->src_ref,
				  self->src_ref_nr);
		}
	}
}

TEST_F_TIMEOUT(diff, random, 120)
{
	static const u64 default_seeds[] = {
		1, 2, 3, 4, 5, 0x5eed, 0xdeadbeef, 20260101,
	};
	const u64 *seeds = default_seeds;
	size_t nr_seeds = ARRAY_SIZE(default_seeds), i;
	const char *env = getenv("SEED");
	u64 env_seed;

	if (env && *env) {
		env_seed = strtoull(env, NULL, 0);
		seeds = &env_seed;
		nr_seeds = 1;
		TH_LOG("seed %llu from SEED", env_seed);
	}
	for (i = 0; i < nr_seeds; i++)
		diff_run(_metadata, self, variant, seeds[i]);
	ksft_print_msg("%zu seed(s), up to %u entries: push %llu pop %llu replace %llu+%llu\n",
		       nr_seeds, self->max_seen,
		       self->ops[OP_PUSH] + self->ops[OP_SRC_PUSH], self->ops[OP_POP],
		       self->ops[OP_REPLACE_UP], self->ops[OP_REPLACE_ANY]);
	ksft_print_msg("filter %llu (%llu removed) merge %llu+%llu (sift-up+heapify) attach %llu\n",
		       self->ops[OP_FILTER], self->filtered, self->merges_sift_up,
		       self->merges_heapify, self->ops[OP_ATTACH]);
	/* The harness ends the test child with _exit(), which skips stdio. */
	fflush(stdout);
}

TEST_HARNESS_MAIN
