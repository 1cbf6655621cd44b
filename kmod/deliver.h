/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * Delivery (deliver.c): a timer's record, the ring or the ready queue it
 * goes to, and taking a ring record back.
 */
#ifndef _QT_DELIVER_H
#define _QT_DELIVER_H

#include "ctx.h"
#include "ring_types.h"

ktime_t qt_deliver_add_period(ktime_t when, u64 period);
ktime_t qt_deliver_expires_next(const struct qt_timer *t);
u64 qt_deliver_missed(const struct qt_timer *t, ktime_t now);
void qt_deliver_fold(struct qt_timer *t);
s64 qt_deliver_user_expires(const struct qt_timer *t, ktime_t when,
			    ktime_t ns_offset);
void qt_deliver_fill(struct qt_ctx *ctx, struct qt_timer *t,
		     struct qtimer_record *rec, const ktime_t *ns_offset);
void qt_deliver_queue(struct qt_ctx *ctx, struct qt_timer *t);
void __qt_deliver_queue_canceled(struct qt_ctx *ctx, struct qt_timer *t,
				 u32 count);
void qt_deliver_queue_canceled(struct qt_ctx *ctx, struct qt_timer *t,
			       u32 count);
void qt_deliver_ring_add(struct qt_ctx *ctx, struct qt_timer *t);
void qt_deliver_ring_write(struct qt_ctx *ctx, struct qt_ring *ring,
			   struct qt_timer *t);
void qt_deliver_drain_arm(struct qt_ring *ring, u64 ns);
bool qt_deliver_void(struct qt_ring *ring, struct qt_timer *t);
bool qt_deliver_unclaimed(struct qt_ring *ring, struct qt_timer *t);
void qt_deliver_detach(struct qt_ring *ring, struct qt_timer *t);

#endif /* _QT_DELIVER_H */
