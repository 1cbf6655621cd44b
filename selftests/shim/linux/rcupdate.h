/* SPDX-License-Identifier: GPL-2.0 */
/* Copyright (C) 2026 The qtimer authors */
#ifndef _QT_SHIM_RCUPDATE_H
#define _QT_SHIM_RCUPDATE_H

#include <stdlib.h>

/* One thread: nothing reads a directory the table has replaced. */
struct rcu_head { void *next; };
#define kvfree_rcu(p, field)	free(p)

#define smp_load_acquire(p)	__atomic_load_n(p, __ATOMIC_ACQUIRE)
#define smp_store_release(p, v)	__atomic_store_n(p, v, __ATOMIC_RELEASE)

#endif /* _QT_SHIM_RCUPDATE_H */
