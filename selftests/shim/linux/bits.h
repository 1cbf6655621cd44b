/* SPDX-License-Identifier: GPL-2.0 */
/* Copyright (C) 2026 The qtimer authors */
#ifndef _QT_SHIM_BITS_H
#define _QT_SHIM_BITS_H

#include_next <linux/bits.h>
#include <linux/build_bug.h>

#define BIT(n)			(1UL << (n))
#define BITS_PER_BYTE		8
#define BITS_PER_LONG		64

#endif /* _QT_SHIM_BITS_H */
