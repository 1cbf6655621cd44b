/* SPDX-License-Identifier: GPL-2.0 */
/* Copyright (C) 2026 The qtimer authors */
#ifndef _QT_SHIM_ERRNO_H
#define _QT_SHIM_ERRNO_H

#include_next <linux/errno.h>
#include <errno.h>

#endif /* _QT_SHIM_ERRNO_H */
