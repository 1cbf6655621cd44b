/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * The handful of kernel names that kmod/heap.h and kmod/heap.c use, mapped
 * onto the C library, so that the heap core builds unchanged in user space
 * for the unit tests, the randomized differential tests and the callgrind
 * benchmark in this directory.  Keep it to exactly what the heap needs: a
 * name added here is a kernel facility the heap is then allowed to depend on.
 */
#ifndef _QT_HEAP_SHIM_H
#define _QT_HEAP_SHIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* The kernel's own definitions (int-ll64.h), so printk-style formats match. */
typedef signed long long s64;
typedef unsigned int u32;

#define S64_MAX		INT64_MAX
#define S64_MIN		INT64_MIN

#define likely(x)	__builtin_expect(!!(x), 1)
#define unlikely(x)	__builtin_expect(!!(x), 0)

/*
 * What the kernel's prefetch() is on x86-64: prefetchnta (read, no temporal
 * locality), so the benchmark measures the instruction the module runs.
 */
#define prefetch(x)	__builtin_prefetch((x), 0, 0)

/*
 * glibc's <sys/cdefs.h> already has this one; other C libraries may not.
 * checkpatch asks for parentheses and for __always_inline itself here, but
 * this is the definition of __always_inline, the same as the kernel's.
 */
#ifndef __always_inline
#define __always_inline	inline __attribute__((__always_inline__))
#endif

#endif /* _QT_HEAP_SHIM_H */
