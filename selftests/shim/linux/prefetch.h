/* SPDX-License-Identifier: GPL-2.0 */
/* Copyright (C) 2026 The qtimer authors */
#ifndef _QT_SHIM_PREFETCH_H
#define _QT_SHIM_PREFETCH_H

/*
 * What the kernel's prefetch() is on x86-64: prefetchnta (read, no temporal
 * locality), so the benchmark measures the instruction the module runs.
 */
#define prefetch(x)	__builtin_prefetch((x), 0, 0)

#endif /* _QT_SHIM_PREFETCH_H */
