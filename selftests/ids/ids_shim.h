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
#define READ_ONCE(x)		(*(volatile __typeof__(x) *)&(x))
#define WRITE_ONCE(x, v)	(*(volatile __typeof__(x) *)&(x) = (v))
#define max(a, b)		((a) > (b) ? (a) : (b))

/* One thread: the file lock has nothing to exclude. */
typedef struct { int held; } spinlock_t;
#define spin_lock_irq(l)	((l)->held++)
#define spin_unlock_irq(l)	((l)->held--)

#define GFP_KERNEL_ACCOUNT	0
#define kmalloc(size, gfp)	malloc(size)
#define kvmalloc_array(n, size, gfp)	calloc(n, size)
#define kfree(p)		free(p)
#define kvfree(p)		free(p)

/* What the table reads of a timer: its slot, and the clock of its id. */
struct qt_timer {
	u32 slot : 24;
	u32 clock;
};

static inline unsigned int qt_timer_user_clock(const struct qt_timer *t)
{
	return t->clock;
}

#endif /* _QT_IDS_SHIM_H */
