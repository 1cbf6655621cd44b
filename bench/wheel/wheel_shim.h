/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * The kernel names that wheel.h and wheel.c use beyond the heap core's,
 * mapped onto the C library, so that the timing wheel builds in user space
 * the way the heap core does.  heap_shim.h supplies the common ones; this
 * adds only u64 and the two bit operations of <linux/bitops.h> the wheel
 * needs, leaving heap_shim.h what it says it is: exactly what the heap needs.
 */
#ifndef _QT_WHEEL_SHIM_H
#define _QT_WHEEL_SHIM_H

#include "heap_shim.h"

typedef unsigned long long u64;

#define U64_MAX		UINT64_MAX

/* Index of the lowest set bit; @word must not be 0 (as in the kernel). */
static inline unsigned int __ffs64(u64 word)
{
	return __builtin_ctzll(word);
}

static inline u64 ror64(u64 word, unsigned int shift)
{
	return (word >> (shift & 63)) | (word << ((-shift) & 63));
}

#endif /* _QT_WHEEL_SHIM_H */
