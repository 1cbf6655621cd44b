/* SPDX-License-Identifier: GPL-2.0 */
/* Copyright (C) 2026 The qtimer authors */
#ifndef _QT_SHIM_TIME_NAMESPACE_H
#define _QT_SHIM_TIME_NAMESPACE_H

/* Nothing: without CONFIG_TIME_NS, clock.h reads no namespace. */

#endif /* _QT_SHIM_TIME_NAMESPACE_H */
