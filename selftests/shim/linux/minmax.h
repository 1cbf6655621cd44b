/* SPDX-License-Identifier: GPL-2.0 */
/* Copyright (C) 2026 The qtimer authors */
#ifndef _QT_SHIM_MINMAX_H
#define _QT_SHIM_MINMAX_H

#define min_t(type, a, b)	((type)(a) < (type)(b) ? (type)(a) : (type)(b))
#define max(a, b)		((a) > (b) ? (a) : (b))

#endif /* _QT_SHIM_MINMAX_H */
