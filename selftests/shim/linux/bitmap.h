/* SPDX-License-Identifier: GPL-2.0 */
/* Copyright (C) 2026 The qtimer authors */
#ifndef _QT_SHIM_BITMAP_H
#define _QT_SHIM_BITMAP_H

#include <string.h>

#include <linux/bitops.h>

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

#endif /* _QT_SHIM_BITMAP_H */
