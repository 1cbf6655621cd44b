/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * The end of a timer's life (end.c).
 */
#ifndef _QT_END_H
#define _QT_END_H

#include "ctx.h"

bool qt_ctx_charge_n(struct qt_ctx *ctx, unsigned int nr);
void qt_ctx_give_back(struct qt_ctx *ctx, unsigned int nr);
void qt_ctx_forget(struct qt_ctx *ctx, struct qt_timer *t, unsigned int *freed);
void qt_timer_end(struct qt_timer *t, struct qt_base **held);
void qt_ctx_end(struct qt_ctx *ctx, struct qt_timer **dead);
void qt_ctx_end_atomic(struct qt_ctx *ctx, struct qt_timer **dead,
		       unsigned int *budget);
bool qt_timer_let_die(struct qt_timer *t, struct qt_base **held);
void qt_timer_free_when_unreferenced(struct qt_timer *t);

#endif /* _QT_END_H */
