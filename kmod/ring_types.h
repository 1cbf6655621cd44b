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
 *
 * This header is the ring's memory and the pace of its drain, for
 * deliver.c, which writes records into it, and ring.c and ring_settle.c,
 * which own the rest (ring.h).
 */
#ifndef _QT_RING_TYPES_H
#define _QT_RING_TYPES_H

#include <linux/mutex.h>
#include <linux/types.h>
#include <linux/workqueue.h>
#include <linux/qtimer.h>

#include "clock.h"

struct qt_ctx;
struct qt_timer;

/* The fixed layout of the mapping, which RING_SETUP reports. */
#define QT_RING_HEAD_OFF	0
#define QT_RING_TAIL_OFF	64
#define QT_RING_FLAGS_OFF	128
#define QT_RING_RECS_OFF	256

/* Records read() claims per hold of the file's lock. */
#define QT_RING_READ_CHUNK	16

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
	 * The drain (qt_ring_settle_drain_work()): while a ticker stands
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
	/*
	 * (C) The positions of the records the holder of read_mutex claimed
	 * and is copying out.  Its claim is the kernel's, whatever user space
	 * writes into their flags meanwhile: qt_deliver_void() reads these, not
	 * the shared word, for them.
	 */
	u32 taken[QT_RING_READ_CHUNK];
	unsigned int nr_taken;

	void *vaddr;			/* the kernel's view of pages[] */
	struct page **pages;
	unsigned int nr_pages;
};

/* ring_settle.c */
/*
 * The drain's pace: it looks at the tail a ticker's period after the
 * ticker's record was written (it is due again then), and every
 * QT_DRAIN_MIN_NS while records wait for room; each run that finds the
 * tail where the last one left it doubles the wait, up to QT_DRAIN_MAX_NS
 * (or the period, if longer), so a consumer that stopped costs little.
 */
#define QT_DRAIN_MIN_NS		NSEC_PER_MSEC
#define QT_DRAIN_MAX_NS		(64 * NSEC_PER_MSEC)
#define QT_DRAIN_BACKOFF	6

static inline u32 qt_ring_types_idx(const struct qt_ring *ring, u32 pos)
{
	return pos & (ring->entries - 1);
}

#endif /* _QT_RING_TYPES_H */
