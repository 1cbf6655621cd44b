/* SPDX-License-Identifier: GPL-2.0 */
/* Copyright (C) 2026 The qtimer authors */
#ifndef _QT_SHIM_MM_H
#define _QT_SHIM_MM_H

#include <linux/minmax.h>
#include <linux/slab.h>

#define PAGE_SIZE		4096UL

#define kvmalloc(size, gfp)	memset(malloc(size), 0xa5, size)
#define kvfree(p)		free(p)

#endif /* _QT_SHIM_MM_H */
