// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * The one file that creates qtimer's tracepoints (trace.h).
 */

#define CREATE_TRACE_POINTS
#include "trace.h"
