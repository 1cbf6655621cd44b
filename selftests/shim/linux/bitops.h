/* SPDX-License-Identifier: GPL-2.0 */
/* Copyright (C) 2026 The qtimer authors */
#ifndef _QT_SHIM_BITOPS_H
#define _QT_SHIM_BITOPS_H

#include <linux/bits.h>

#define BITS_TO_LONGS(n)	(((n) + BITS_PER_LONG - 1) / BITS_PER_LONG)

static inline void __set_bit(unsigned long nr, unsigned long *map)
{
	map[nr / BITS_PER_LONG] |= 1UL << (nr % BITS_PER_LONG);
}

static inline void __clear_bit(unsigned long nr, unsigned long *map)
{
	map[nr / BITS_PER_LONG] &= ~(1UL << (nr % BITS_PER_LONG));
}

/* Index of the lowest set bit; @word must not be 0 (as in the kernel). */
static inline unsigned int __ffs64(unsigned long long word)
{
	return __builtin_ctzll(word);
}

static inline unsigned long long ror64(unsigned long long word,
				       unsigned int shift)
{
	return (word >> (shift & 63)) | (word << ((-shift) & 63));
}

#endif /* _QT_SHIM_BITOPS_H */
