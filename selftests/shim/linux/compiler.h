/* SPDX-License-Identifier: GPL-2.0 */
/* Copyright (C) 2026 The qtimer authors */
#ifndef _QT_SHIM_COMPILER_H
#define _QT_SHIM_COMPILER_H

/* All of it is in compiler_types.h, force-included. */

#endif /* _QT_SHIM_COMPILER_H */
