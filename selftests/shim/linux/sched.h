/* SPDX-License-Identifier: GPL-2.0 */
/* Copyright (C) 2026 The qtimer authors */
#ifndef _QT_SHIM_SCHED_H
#define _QT_SHIM_SCHED_H

/* The uapi one (clone flags), which glibc may reach; clockid_t. */
#include_next <linux/sched.h>
#include <time.h>

/* One thread, nothing to yield to. */
static inline int cond_resched(void)
{
	return 0;
}

#endif /* _QT_SHIM_SCHED_H */
