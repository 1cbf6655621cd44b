/* SPDX-License-Identifier: GPL-2.0 */
/* Copyright (C) 2026 The qtimer authors */
#ifndef _QT_SHIM_LIMITS_H
#define _QT_SHIM_LIMITS_H

/* glibc's <limits.h> reaches the uapi one for its own constants. */
#include_next <linux/limits.h>
#include <stdint.h>

#define S64_MAX		INT64_MAX
#define S64_MIN		INT64_MIN
#define U64_MAX		UINT64_MAX
#define U32_MAX		UINT32_MAX

#endif /* _QT_SHIM_LIMITS_H */
