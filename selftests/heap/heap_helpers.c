// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * The heap tests' shared helpers (heap_helpers.h), compiled once and linked
 * into heap_ops_test and heap_diff_test.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "heap_helpers.h"

static char *guard;

void *timer_of(u32 id)
{
	if (!guard) {
		guard = mmap(NULL, (size_t)MAX_IDS * 8, PROT_NONE,
			     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (guard == MAP_FAILED)
			abort();
	}
	return guard + (size_t)id * 8;
}

u32 id_of(const void *timer)
{
	return (u32)(((const char *)timer - guard) / 8);
}


void th_unpoison(struct th *t)
{
	if (t->mem)
		unpoison(t->mem, t->size);
}

/* Give @t a new array of @cap entries; returns false if attach misbehaved. */
bool th_attach(struct th *t, u32 cap, unsigned int misalign)
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

void th_release(struct th *t)
{
	th_unpoison(t);
	free(t->raw);
	memset(t, 0, sizeof(*t));
}

/* True if every parent's key is <= its children's. */
bool heap_ordered(const struct qt_heap *h)
{
	u32 i;

	for (i = 1; i < h->nr; i++)
		if (h->v[(i - 1) / 4].key > h->v[i].key)
			return false;
	return true;
}

int cmp_entry(const void *a, const void *b)
{
	const struct qt_heap_entry *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->timer < y->timer ? -1 : x->timer > y->timer;
}

/* xorshift64*: tiny, deterministic, good enough to pick operations. */
u64 rng_next(u64 *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dull;
}

u64 rng_seed(u64 seed)
{
	/* splitmix64 step so that small seeds give unrelated streams. */
	u64 z = seed + 0x9e3779b97f4a7c15ull;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	z ^= z >> 31;
	return z ? z : 1;
}

u32 rng_below(u64 *s, u32 n)
{
	return (u32)((rng_next(s) >> 32) * n >> 32);
}
