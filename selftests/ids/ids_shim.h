/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * The kernel names kmod/ids.h and kmod/ids.c use, mapped onto the C
 * library, and a struct qt_timer with just what the id table reads of one,
 * so that the table builds unchanged in user space for ids_test.c.  Keep
 * it to exactly what the table needs, as heap_shim.h does for the heap.
 */
#ifndef _QT_IDS_SHIM_H
#define _QT_IDS_SHIM_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef unsigned int u32;
typedef unsigned long long u64;

#define BIT(n)			(1UL << (n))
#define PAGE_SIZE		4096UL
#define BITS_PER_BYTE		8
#define BITS_PER_LONG		64
#define BITS_TO_LONGS(n)	(((n) + BITS_PER_LONG - 1) / BITS_PER_LONG)
#define BUILD_BUG_ON(c)		_Static_assert(!(c), #c)
#define min_t(type, a, b)	((type)(a) < (type)(b) ? (type)(a) : (type)(b))

static inline void __set_bit(unsigned long nr, unsigned long *map)
{
	map[nr / BITS_PER_LONG] |= 1UL << (nr % BITS_PER_LONG);
}

static inline void __clear_bit(unsigned long nr, unsigned long *map)
{
	map[nr / BITS_PER_LONG] &= ~(1UL << (nr % BITS_PER_LONG));
}

static inline void bitmap_zero(unsigned long *map, unsigned long nbits)
{
	memset(map, 0, BITS_TO_LONGS(nbits) * sizeof(long));
}

/* The kernel's contract: the first set bit in [start, size), or size. */
static inline unsigned long find_next_bit(const unsigned long *map,
					  unsigned long size,
					  unsigned long start)
{
	for (; start < size; start++)
		if (map[start / BITS_PER_LONG] & (1UL << (start % BITS_PER_LONG)))
			return start;
	return size;
}
#define READ_ONCE(x)		(*(volatile __typeof__(x) *)&(x))
#define WRITE_ONCE(x, v)	(*(volatile __typeof__(x) *)&(x) = (v))
#define max(a, b)		((a) > (b) ? (a) : (b))

/* One thread: the file lock has nothing to exclude. */
typedef struct { int held; } spinlock_t;
#define spin_lock_irq(l)	((l)->held++)
#define spin_unlock_irq(l)	((l)->held--)

#define GFP_KERNEL_ACCOUNT	0
/* Not zeroed, as kmalloc()'s memory is not: fill it with garbage. */
#define kmalloc(size, gfp)	memset(malloc(size), 0xa5, size)
#define kvmalloc(size, gfp)	memset(malloc(size), 0xa5, size)
#define struct_size(p, member, n)	(sizeof(*(p)) + (n) * sizeof((p)->member[0]))
#define kfree(p)		free(p)
#define kvfree(p)		free(p)

/* One thread: nothing reads a directory the table has replaced. */
struct rcu_head { void *next; };
#define kvfree_rcu(p, field)	free(p)
#define smp_load_acquire(p)	__atomic_load_n(p, __ATOMIC_ACQUIRE)
#define smp_store_release(p, v)	__atomic_store_n(p, v, __ATOMIC_RELEASE)

/* What the table reads of a timer: its slot, and its shard for its id. */
struct qt_timer {
	u32 slot : 24;
	u32 shard : 4;
};

#endif /* _QT_IDS_SHIM_H */
