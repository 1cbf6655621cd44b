/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * A file's record ring (ring_types.h has its memory): setup and mmap(), the
 * claims it shares with user space, reaping what the consumer is done
 * with, the read() and poll() of a ringed file, and the drain.  Records go
 * into it through deliver.h.
 */
#ifndef _QT_RING_H
#define _QT_RING_H

#include <linux/poll.h>

#include "ring_types.h"

struct qt_base;
struct iov_iter;
struct vm_area_struct;

int qt_ring_setup(struct qt_ctx *ctx, struct qtimer_ring_setup *setup);
void qt_ring_destroy(struct qt_ring *ring);
int qt_ring_mmap(struct qt_ctx *ctx, struct vm_area_struct *vma);
int qt_ring_cancel(struct qt_ring *ring, struct qt_timer *t);
int qt_ring_settle(struct qt_ctx *ctx, struct qt_base **held,
		   unsigned int *budget, struct qt_base **need,
		   struct qt_timer **dead);
__poll_t qt_ring_poll(struct qt_ctx *ctx);
ssize_t qt_ring_read(struct qt_ctx *ctx, struct iov_iter *to, bool nonblock);

#endif /* _QT_RING_H */
