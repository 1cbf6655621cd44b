/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * A file's record ring (ring_types.h has its memory): setup and mmap(), the
 * claims it shares with user space, and the read() and poll() of a ringed
 * file (ring.c); reaping what the consumer is done with, refilling, and
 * the drain (ring_settle.c).  Records go into it through deliver.h.
 */
#ifndef _QT_RING_H
#define _QT_RING_H

#include <linux/poll.h>

#include "ring_types.h"

struct qt_base;
struct iov_iter;
struct vm_area_struct;
struct work_struct;

/* ring.c */
int qt_ring_setup(struct qt_ctx *ctx, struct qtimer_ring_setup *setup);
void qt_ring_destroy(struct qt_ring *ring);
int qt_ring_mmap(struct qt_ctx *ctx, struct vm_area_struct *vma);
int qt_ring_cancel(struct qt_ring *ring, struct qt_timer *t);
__poll_t qt_ring_poll(struct qt_ctx *ctx);
ssize_t qt_ring_read(struct qt_ctx *ctx, struct iov_iter *to, bool nonblock);

/* The consumer's tail, or where reaping stands if it is out of range. */
static inline u32 qt_ring_tail(const struct qt_ring *ring)
{
	/* Pairs with the consumer's release: it is done with what is before. */
	u32 tail = smp_load_acquire(ring->tail_p);

	if (tail - ring->reaped > ring->head - ring->reaped)
		return ring->reaped;
	return tail;
}

/* ring_settle.c */
/* What settling some chunks of a ring came to. */
enum qt_settle_end {
	QT_SETTLED,		/* nothing left to reap or move in */
	QT_SETTLE_MORE,		/* the chunks ran out first */
	QT_SETTLE_ROOM,		/* a ticker needs room, which only a sleep gives */
	QT_SETTLE_STUCK,	/* a ticker needs room and there is no memory */
	QT_SETTLE_GONE,		/* the file is being released */
};

int qt_ring_settle(struct qt_ctx *ctx, struct qt_base **held,
		   unsigned int *budget, struct qt_base **need,
		   struct qt_timer **dead);
enum qt_settle_end qt_ring_settle_all(struct qt_ctx *ctx, bool may_sleep,
				      struct qt_timer **dead)
	__must_hold(&ctx->wqh.lock);
void qt_ring_settle_drain_work(struct work_struct *work);

#endif /* _QT_RING_H */
