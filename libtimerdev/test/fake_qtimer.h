/* SPDX-License-Identifier: LGPL-2.1 OR MIT */
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * A fake /dev/qtimer for the native unit tests.  The test binary links the
 * static library with -Wl,--wrap=open,--wrap=ioctl,--wrap=read,... so the
 * library's system calls on FAKE_PATH land here instead of in a kernel.  The
 * file descriptor is a real eventfd that the fake keeps readable exactly
 * while records are queued, so ppoll() and epoll work on it unchanged.
 *
 * The model is deliberately small: ids are live or not, timers never fire
 * by themselves (tests queue records with fake_push_record()), and every
 * knob exists to drive one library path (handshake mismatch, partial or
 * failing SUBMIT, allocation failure).
 */
#ifndef _FAKE_QTIMER_H
#define _FAKE_QTIMER_H

#include <stdbool.h>
#include <stdint.h>
#include <linux/ioctl.h>
#include <linux/qtimer.h>

#define FAKE_PATH	"/fake/qtimer"
#define FAKE_MAX_IDS	65536
#define FAKE_MAX_RECORDS 4096

struct fake_qtimer {
	int fd;				/* the eventfd handed out, or -1 */
	int open_flags;			/* as passed to open() */
	int version_errno;		/* VERSION fails with this if non-zero */
	struct qtimer_version version;	/* what VERSION reports */
	struct qtimer_op last_op;	/* the last op any ioctl saw */
	unsigned int ioctl_calls;	/* on the fake fd */
	unsigned int submit_calls;
	unsigned int submit_limit;	/* ops run per SUBMIT; 0: all */
	int submit_errno;		/* SUBMIT fails with this if non-zero */
	unsigned int alloc_fail;	/* fail this many upcoming allocations */
	uint64_t next_id;
	bool live[FAKE_MAX_IDS];
	struct qtimer_record records[FAKE_MAX_RECORDS];
	unsigned int head, tail;	/* records[head, tail) are queued */
};

extern struct fake_qtimer fake;

void fake_push_record(uint64_t id, uint64_t cookie, uint32_t count);
unsigned int fake_nr_live(void);

#endif /* _FAKE_QTIMER_H */
