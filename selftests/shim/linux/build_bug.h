/* SPDX-License-Identifier: GPL-2.0 */
/* Copyright (C) 2026 The qtimer authors */
#ifndef _QT_SHIM_BUILD_BUG_H
#define _QT_SHIM_BUILD_BUG_H

#define BUILD_BUG_ON(c)		_Static_assert(!(c), #c)

#endif /* _QT_SHIM_BUILD_BUG_H */
