/* SPDX-License-Identifier: GPL-2.0 */
/* Copyright (C) 2026 The qtimer authors */
#ifndef _QT_SHIM_KTIME_H
#define _QT_SHIM_KTIME_H

#include <linux/limits.h>
#include <linux/types.h>

typedef s64 ktime_t;
#define KTIME_MAX	S64_MAX

#endif /* _QT_SHIM_KTIME_H */
