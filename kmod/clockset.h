/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * Cancel-on-set timers and the clock sets that cancel them.
 */
#ifndef _QT_CLOCKSET_H
#define _QT_CLOCKSET_H

#include <linux/atomic.h>
#include <linux/types.h>

#include "ctx.h"

/* Sets the notifier announced (clockset.c); files compare their count. */
extern atomic_t qt_clock_sets;

/*
 * A clock set was announced that @ctx's cancel-on-set timers have not been
 * brought yet.  The notifier runs before any timer can see the new time, so
 * a timer of @ctx that expires meanwhile may have been made due by the set.
 */
static inline bool qt_clockset_pending(const struct qt_ctx *ctx)
{
	return atomic_read(&qt_clock_sets) != READ_ONCE(ctx->cos_applied);
}

/* clockset.c: the notifier, and the walks of the files it concerns */
int qt_clockset_init(void);
void qt_clockset_exit(void);
void qt_clockset_sync(struct qt_ctx *ctx);
void qt_clockset_track(struct qt_ctx *ctx);
void qt_clockset_untrack(struct qt_ctx *ctx);

#endif /* _QT_CLOCKSET_H */
