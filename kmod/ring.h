/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * A file's record ring (uapi "The record ring"): pages shared with user
 * space that the expirer writes records into as timers fire, and that a
 * mapped consumer takes them from by claim, with no system call.  The
 * kernel keeps its own head and the timer behind each record beside it, and
 * trusts nothing the consumer writes: the tail only says how far it is done,
 * the claims only who won a record.
 */
#ifndef _QT_RING_H
#define _QT_RING_H

#include <linux/mutex.h>
#include <linux/poll.h>
#include <linux/types.h>
#include <linux/workqueue.h>
#include <linux/qtimer.h>

#include "clock.h"

struct qt_base;
struct qt_ctx;
struct qt_timer;
struct iov_iter;
struct vm_area_struct;

/* The fixed layout of the mapping, which RING_SETUP reports. */
#define QT_RING_HEAD_OFF	0
#define QT_RING_TAIL_OFF	64
#define QT_RING_FLAGS_OFF	128
#define QT_RING_RECS_OFF	256

struct qt_ring {
	/* Shared with user space: written by one side, never trusted. */
	u32 *head_p;			/* the kernel's head, published */
	u32 *tail_p;			/* the consumer's */
	u32 *flags_p;			/* QTIMER_RING_* */
	struct qtimer_record *recs;

	u32 entries;			/* constant, a power of two */
	u32 head;			/* (C) records written */
	u32 reaped;			/* (C) records settled after consumption */
	u32 nr_owned;			/* (C) non-NULL owner[] entries */
	/* (C) no READY record in [tail, scanned): qt_ring_scan()'s cursor */
	u32 scanned;
	/* (C) the RINGED timer of each record in [reaped, head), or NULL */
	struct qt_timer **owner;
	/*
	 * The drain (ring.c, qt_ring_drain_work()): while a ticker stands
	 * behind a record or records wait in the kernel, the kernel looks
	 * at the tail by itself now and then, so that what the consumer
	 * passed with no system call is reaped and refilled, and wakes it.
	 */
	struct qt_ctx *ctx;		/* constant, the ring's file */
	struct delayed_work drain;
	unsigned long drain_at;		/* (C) when it runs, if drain_armed */
	bool drain_armed;		/* (C) queued, and not yet run */
	u8 drain_idle;			/* (C) its runs since the tail last moved */
	u32 drain_tail;			/* (C) the tail its last run saw */
	u64 drain_period;		/* (C) the shortest period behind a record */
	/* The namespace offsets of the thread that set the ring up. */
	ktime_t ns_offset[QT_NR_CLOCKS];
	struct mutex read_mutex;	/* one read() at a time */

	void *vaddr;			/* the kernel's view of pages[] */
	struct page **pages;
	unsigned int nr_pages;
};

/* ring.c */
int qt_ring_setup(struct qt_ctx *ctx, struct qtimer_ring_setup *setup);
void qt_ring_destroy(struct qt_ring *ring);
int qt_ring_mmap(struct qt_ctx *ctx, struct vm_area_struct *vma);
void qt_ring_add(struct qt_ctx *ctx, struct qt_timer *t);
bool qt_ring_void(struct qt_ring *ring, struct qt_timer *t);
void qt_ring_detach(struct qt_ring *ring, struct qt_timer *t);
int qt_ring_cancel(struct qt_ring *ring, struct qt_timer *t);
int qt_ring_settle(struct qt_ctx *ctx, struct qt_base **held,
		   unsigned int *budget, struct qt_base **need,
		   struct qt_timer **dead);
__poll_t qt_ring_poll(struct qt_ctx *ctx);
ssize_t qt_ring_read(struct qt_ctx *ctx, struct iov_iter *to, bool nonblock);

#endif /* _QT_RING_H */
