/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * The kernel's fixed-width names (int-ll64.h, so printk-style formats
 * match) on top of the C library's <linux/types.h> (the __u32 family,
 * which the uapi header uses), and the few other types <linux/types.h>
 * gives the kernel.
 */
#ifndef _QT_SHIM_TYPES_H
#define _QT_SHIM_TYPES_H

#include_next <linux/types.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef signed long long s64;
typedef unsigned long long u64;
typedef signed int s32;
typedef unsigned int u32;
typedef unsigned short u16;
typedef unsigned char u8;

typedef unsigned int gfp_t;

#endif /* _QT_SHIM_TYPES_H */
