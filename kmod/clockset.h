/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * Cancel-on-set timers and the clock sets that cancel them.
 */
#ifndef _QT_CLOCKSET_H
#define _QT_CLOCKSET_H

#include <linux/types.h>

struct qt_ctx;

int qt_clockset_init(void);
void qt_clockset_exit(void);
bool qt_clockset_pending(const struct qt_ctx *ctx);
void qt_clockset_sync(struct qt_ctx *ctx);
void qt_clockset_track(struct qt_ctx *ctx);
void qt_clockset_untrack(struct qt_ctx *ctx);

#endif /* _QT_CLOCKSET_H */
