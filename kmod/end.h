/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * The end of a timer's life (end.c).
 */
#ifndef _QT_END_H
#define _QT_END_H

#include "ctx.h"

bool qt_end_charge_n(struct qt_ctx *ctx, unsigned int nr);
void qt_end_give_back(struct qt_ctx *ctx, unsigned int nr);
void qt_end_forget(struct qt_ctx *ctx, struct qt_timer *t, unsigned int *freed);
void qt_end_timer(struct qt_timer *t, struct qt_base **held);
void qt_end_ctx(struct qt_ctx *ctx, struct qt_timer **dead);
void qt_end_ctx_atomic(struct qt_ctx *ctx, struct qt_timer **dead,
		       unsigned int *budget);
bool qt_end_let_die(struct qt_timer *t, struct qt_base **held);
void qt_end_free_when_unreferenced(struct qt_timer *t);

#endif /* _QT_END_H */
