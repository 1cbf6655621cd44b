/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * What the heap core's native tests share (heap_helpers.c): fake timer
 * pointers into an inaccessible mapping, so the heap dereferencing one
 * crashes the test; heaps whose storage is deliberately misaligned, with
 * the slack around the entry array poisoned for AddressSanitizer; the heap
 * property; and a reproducible random generator.
 */
#ifndef _QT_HEAP_HELPERS_H
#define _QT_HEAP_HELPERS_H

#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/limits.h>

#include "heap.h"

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

/* A heap with storage from malloc, deliberately misaligned by @misalign. */
struct th {
	struct qt_heap h;
	char *raw;
	void *mem;
	size_t size;
};

void *timer_of(u32 id);
u32 id_of(const void *timer);
void th_unpoison(struct th *t);
bool th_attach(struct th *t, u32 cap, unsigned int misalign);
void th_release(struct th *t);
bool heap_ordered(const struct qt_heap *h);
int cmp_entry(const void *a, const void *b);
u64 rng_next(u64 *s);
u64 rng_seed(u64 seed);
u32 rng_below(u64 *s, u32 n);

#endif /* _QT_HEAP_HELPERS_H */
