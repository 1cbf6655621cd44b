/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * Force-included by the native builds (-include), as Kbuild force-includes
 * the kernel's: the annotations and the once-accessors every file may use
 * without naming a header.
 */
#ifndef _QT_SHIM_COMPILER_TYPES_H
#define _QT_SHIM_COMPILER_TYPES_H

#define likely(x)	__builtin_expect(!!(x), 1)
#define unlikely(x)	__builtin_expect(!!(x), 0)

/*
 * glibc's <sys/cdefs.h> may have defined it already; this is the kernel's
 * own definition.
 */
#ifndef __always_inline
#define __always_inline	inline __attribute__((__always_inline__))
#endif

/* One thread, or plain C11 atomics where the tests race: volatile suffices. */
#define READ_ONCE(x)		(*(volatile __typeof__(x) *)&(x))
#define WRITE_ONCE(x, v)	(*(volatile __typeof__(x) *)&(x) = (v))

#endif /* _QT_SHIM_COMPILER_TYPES_H */
