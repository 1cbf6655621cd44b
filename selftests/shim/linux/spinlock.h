/* SPDX-License-Identifier: GPL-2.0 */
/* Copyright (C) 2026 The qtimer authors */
#ifndef _QT_SHIM_SPINLOCK_H
#define _QT_SHIM_SPINLOCK_H

/* One thread: a lock has nothing to exclude, but counts its holds. */
typedef struct { int held; } spinlock_t;
#define spin_lock_irq(l)	((l)->held++)
#define spin_unlock_irq(l)	((l)->held--)

#endif /* _QT_SHIM_SPINLOCK_H */
