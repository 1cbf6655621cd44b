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
 *
 * With QTIMER_FEAT_RING in version.features it also offers the record ring
 * (-Wl,--wrap=mmap,munmap,ppoll,epoll_wait besides): RING_SETUP hands out a
 * shared anonymous mapping laid out unlike the kernel's, so that only a
 * library that follows the offsets it reports can find its way; records
 * go into it READY as the kernel writes them, or wait in records[] with
 * QTIMER_RING_OVERFLOW set when it is full; CANCEL voids a READY record by
 * claim; read() consumes from it as the kernel's does; and read(), ppoll()
 * and epoll_wait() first move waiting records into the room the consumer's
 * tail made, as the kernel's read and poll do.
 */
#ifndef _FAKE_QTIMER_H
#define _FAKE_QTIMER_H

#include <stdbool.h>
#include <stdint.h>
#include <linux/ioctl.h>
#include <linux/qtimer.h>

#define FAKE_PATH	"/fake/qtimer"
#define FAKE_MAX_IDS	65536
#define FAKE_MAX_RECORDS 8192

/* Where the fake puts things in its mapping: nothing like the kernel. */
#define FAKE_RING_TAIL_OFF	0
#define FAKE_RING_HEAD_OFF	68
#define FAKE_RING_FLAGS_OFF	132
#define FAKE_RING_RECS_OFF	192

struct fake_ring {
	int setup_errno;		/* RING_SETUP fails with this if non-zero */
	int mmap_errno;			/* mmap() fails with this if non-zero */
	bool short_size;		/* report an mmap_size too small for the records */
	unsigned int setup_calls, mmap_calls, munmap_calls;
	struct qtimer_ring_setup setup;	/* as the library passed it in */
	int mmap_prot, mmap_flags;	/* of the last mmap() */
	size_t mmap_len, munmap_len;
	off_t mmap_off;
	bool mapped;			/* mmap()ed and not munmap()ed */
	/* The ring itself, once set up: map is NULL before. */
	char *map;
	size_t size;
	uint32_t entries;
	uint32_t *head_p, *tail_p, *flags_p;
	struct qtimer_record *recs;
};

struct fake_qtimer {
	int fd;				/* the eventfd handed out, or -1 */
	int open_flags;			/* as passed to the open() that succeeded */
	int rdwr_errno;			/* an O_RDWR open() fails with this */
	unsigned int open_calls;	/* of FAKE_PATH */
	unsigned int read_calls;	/* read() of the fake fd, RWF_NOWAIT ones too */
	unsigned int nowait_reads;	/* of which preadv2(RWF_NOWAIT) */
	unsigned int poll_calls;	/* ppoll() naming the fake fd */
	int version_errno;		/* VERSION fails with this if non-zero */
	struct qtimer_version version;	/* what VERSION reports */
	struct qtimer_op last_op;	/* the last op any ioctl saw */
	/* What GET of a live id answers (id kept), its result the return. */
	struct qtimer_op get_answer;
	unsigned int ioctl_calls;	/* on the fake fd */
	unsigned int submit_calls;
	unsigned int submit_limit;	/* ops run per SUBMIT; 0: all */
	int submit_errno;		/* SUBMIT fails with this if non-zero */
	unsigned int alloc_fail;	/* fail this many upcoming allocations */
	uint64_t next_id;
	bool live[FAKE_MAX_IDS];
	struct qtimer_record records[FAKE_MAX_RECORDS];
	unsigned int head, tail;	/* records[head, tail) are queued */
	struct fake_ring ring;
};

extern struct fake_qtimer fake;

void fake_push_record(uint64_t id, uint64_t cookie, uint32_t count);
unsigned int fake_nr_live(void);
/* Records in the ring's [tail, head) with claim QTIMER_REC_READY. */
unsigned int fake_ring_nr_ready(void);

#endif /* _FAKE_QTIMER_H */
