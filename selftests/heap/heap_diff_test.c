// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * Native randomized differential test of the heap core (kmod/heap.c, built
 * unchanged over selftests/shim): it drives the heap and a trivially
 * correct reference (an unsorted array searched linearly) with the same
 * operation stream and compares them after every step.  The random
 * streams come from a fixed seed list, so runs are reproducible; SEED=<n>
 * in the environment runs that one seed instead.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"

#include "heap_helpers.h"

/* ---------------------------------------------------------------------- */
/* Randomized differential test against a linear-scan reference            */

enum key_mode {
	KEYS_TIMER,	/* now + up to 1 s, now advancing as timers pop */
	KEYS_DUPS,	/* 0..7: mostly ties */
	KEYS_WIDE,	/* all 64 bits random, extremes mixed in */
};

enum op {
	OP_PUSH, OP_POP, OP_REPLACE_UP, OP_REPLACE_ANY, OP_FILTER,
	OP_ATTACH, OP_NR
};

static const char *const op_name[OP_NR] = {
	"push", "pop", "replace_top later", "replace_top any", "filter",
	"attach",
};

FIXTURE(diff) {
	struct th heap;
	/* Reference: the same multiset, unordered. */
	struct qt_heap_entry *ref;
	u32 ref_nr;
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
	u64 ops[OP_NR], filtered;
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
		    [OP_REPLACE_ANY] = 2, [OP_FILTER] = 2,
		    [OP_ATTACH] = 1 },
	.keys = KEYS_TIMER, .max_nr = 3000, .steps = 30000,
};

/* Deep heaps (7+ levels): no filters to cut them back. */
FIXTURE_VARIANT_ADD(diff, grow_large) {
	.weight = { [OP_PUSH] = 70, [OP_POP] = 10, [OP_REPLACE_UP] = 10,
		    [OP_REPLACE_ANY] = 5,
		    [OP_ATTACH] = 1 },
	.keys = KEYS_TIMER, .max_nr = 12000, .steps = 20000,
};

FIXTURE_VARIANT_ADD(diff, drain_heavy) {
	.weight = { [OP_PUSH] = 30, [OP_POP] = 45, [OP_REPLACE_UP] = 5,
		    [OP_REPLACE_ANY] = 5, [OP_FILTER] = 2,
		    [OP_ATTACH] = 3 },
	.keys = KEYS_WIDE, .max_nr = 500, .steps = 30000,
};

FIXTURE_VARIANT_ADD(diff, duplicate_keys) {
	.weight = { [OP_PUSH] = 35, [OP_POP] = 30, [OP_REPLACE_UP] = 10,
		    [OP_REPLACE_ANY] = 10, [OP_FILTER] = 3,
		    [OP_ATTACH] = 2 },
	.keys = KEYS_DUPS, .max_nr = 1000, .steps = 30000,
};

FIXTURE_VARIANT_ADD(diff, wide_keys) {
	.weight = { [OP_PUSH] = 35, [OP_POP] = 30, [OP_REPLACE_UP] = 10,
		    [OP_REPLACE_ANY] = 10, [OP_FILTER] = 3,
		    [OP_ATTACH] = 2 },
	.keys = KEYS_WIDE, .max_nr = 2000, .steps = 30000,
};

/* Structural operations most of the time: filter and attach. */
FIXTURE_VARIANT_ADD(diff, restructure) {
	.weight = { [OP_PUSH] = 30, [OP_POP] = 10, [OP_REPLACE_UP] = 5,
		    [OP_REPLACE_ANY] = 5, [OP_FILTER] = 10,
		    [OP_ATTACH] = 10 },
	.keys = KEYS_TIMER, .max_nr = 1500, .steps = 20000,
};

FIXTURE_SETUP(diff)
{
	/* Pushes stop at max_nr. */
	self->ref_max = variant->max_nr + 64;
	self->ref = calloc(self->ref_max, sizeof(*self->ref));
	self->sorted_a = calloc(self->ref_max, sizeof(*self->sorted_a));
	self->sorted_b = calloc(self->ref_max, sizeof(*self->sorted_b));
	self->dead = calloc(MAX_IDS, 1);
	self->kept_calls = calloc(MAX_IDS, 1);
	self->drop_calls = calloc(MAX_IDS, 1);
	ASSERT_TRUE(self->ref && self->sorted_a &&
		    self->sorted_b && self->dead && self->kept_calls &&
		    self->drop_calls);
}

FIXTURE_TEARDOWN(diff)
{
	if (!_metadata->passed)
		TH_LOG("failed with seed %llu at step %u (%s); rerun with SEED=%llu",
		       self->seed, self->step, op_name[self->op], self->seed);
	th_release(&self->heap);
	free(self->ref);
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
		/* Short bursts, so that the heaps grow deep between pops. */
		for (i = 1 + rng_below(&self->rng, 8); i-- > 0 &&
		     self->ref_nr < variant->max_nr; )
			diff_push(_metadata, self, &self->heap, self->ref,
				  &self->ref_nr, variant->keys);
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
	self->ref_nr = 0;
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
		       self->ops[OP_PUSH], self->ops[OP_POP],
		       self->ops[OP_REPLACE_UP], self->ops[OP_REPLACE_ANY]);
	ksft_print_msg("filter %llu (%llu removed) attach %llu\n",
		       self->ops[OP_FILTER], self->filtered, self->ops[OP_ATTACH]);
	/* The harness ends the test child with _exit(), which skips stdio. */
	fflush(stdout);
}

TEST_HARNESS_MAIN
