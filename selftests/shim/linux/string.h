/* SPDX-License-Identifier: GPL-2.0 */
/* Copyright (C) 2026 The qtimer authors */
#ifndef _QT_SHIM_STRING_H
#define _QT_SHIM_STRING_H

#include_next <linux/string.h>
#include <string.h>

#endif /* _QT_SHIM_STRING_H */
