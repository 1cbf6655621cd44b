/* SPDX-License-Identifier: GPL-2.0 */
/* Copyright (C) 2026 The qtimer authors */
#ifndef _QT_SHIM_SLAB_H
#define _QT_SHIM_SLAB_H

#include <stdlib.h>
#include <string.h>

#include <linux/types.h>

#define GFP_KERNEL		0
#define GFP_KERNEL_ACCOUNT	0

/* Not zeroed, as kmalloc()'s memory is not: fill it with garbage. */
#define kmalloc(size, gfp)	memset(malloc(size), 0xa5, size)
#define kfree(p)		free(p)

#endif /* _QT_SHIM_SLAB_H */
