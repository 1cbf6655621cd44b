/* SPDX-License-Identifier: GPL-2.0 */
/* Copyright (C) 2026 The qtimer authors */
#ifndef _QT_SHIM_OVERFLOW_H
#define _QT_SHIM_OVERFLOW_H

/* Without the kernel's saturation: the tests stay far from SIZE_MAX. */
#define struct_size(p, member, n)	(sizeof(*(p)) + (n) * sizeof((p)->member[0]))

#endif /* _QT_SHIM_OVERFLOW_H */
