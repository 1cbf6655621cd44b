/* SPDX-License-Identifier: LGPL-2.1 OR MIT */
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * What the library's files share: the context, the export marker and the
 * system-call wrappers.  The wrappers turn a failed call into -errno and put
 * errno back as it was, so that no public function reports through errno or
 * disturbs the caller's.
 */
#ifndef _TD_INTERNAL_H
#define _TD_INTERNAL_H

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <sys/ioctl.h>
#include <sys/uio.h>
#include <unistd.h>

#include "timerdev.h"

/* Everything else is hidden by -fvisibility=hidden and the version script. */
#define TD_EXPORT __attribute__((visibility("default")))

/*
 * The record ring as mapped (see "The record ring" in <linux/qtimer.h>).
 * The pointers are set once by td_open(); map is NULL when the context has
 * no ring, and reads go to read(2).  The consumer's side of the ring, the
 * claims and the tail store, is taken by one thread at a time under lock,
 * as the header demands of a ring's consumer: read(2) of the file is a
 * consumer too, so the library's own read(2) calls happen under it as well.
 */
struct td_ring {
	void *map;
	size_t map_size;
	const uint32_t *head;		/* written by the kernel */
	uint32_t *tail;			/* written by the consumer */
	const uint32_t *flags;		/* QTIMER_RING_*, written by the kernel */
	struct qtimer_record *recs;
	uint32_t mask;			/* entries - 1 */
	pthread_mutex_t lock;
	/*
	 * A zero-copy peek (peek.c) holds lock from td_ring_peek() to
	 * td_ring_advance(): peeked, the records it claimed, and peek_end,
	 * where its scan stopped, are the holder's.  peek_owner is written
	 * before peek_active is set (release), so that a thread can tell,
	 * without the lock, whether it is the holder itself and would
	 * deadlock on it.
	 */
	unsigned int peeked;
	uint32_t peek_end;
	pthread_t peek_owner;
	bool peek_active;
};

/*
 * The timer table as mapped (table.c); map is NULL when the context has
 * none.  known[shard] is how many of a shard's slots the context's arms
 * have reached (their pages exist).  stopped lists the ids the library
 * stopped through the table that the kernel may still hold, under lock.
 */
struct td_table {
	char *map;
	size_t map_size;
	uint64_t shard_size;
	uint32_t nr_shards;
	uint32_t *known;
	pthread_mutex_t lock;
	uint64_t *stopped;
	size_t nr_stopped, cap_stopped;
};

/*
 * Immutable after td_open() but for the ring's consumer state and the
 * table's bookkeeping (see above).
 */
struct td_ctx {
	int fd;
	struct qtimer_version version;	/* as read at open */
	struct td_ring ring;
	struct td_table table;
};

/*
 * What a wrapper returns for a call that gave ret: ret, or -errno when it
 * failed; either way errno is put back to saved, its value before the call.
 */
static inline long td_sys_result(long ret, int saved)
{
	if (ret < 0)
		ret = -errno;
	errno = saved;
	return ret;
}

static inline int td_sys_ioctl(int fd, unsigned long request, void *arg)
{
	int saved = errno;

	return td_sys_result(ioctl(fd, request, arg), saved);
}

static inline ssize_t td_sys_read(int fd, void *buf, size_t len)
{
	int saved = errno;

	return td_sys_result(read(fd, buf, len), saved);
}

/*
 * read(2) that never blocks, whatever the file's O_NONBLOCK says: -EAGAIN
 * when nothing is pending.  For the reads made after poll(2) said POLLIN,
 * which a CANCEL on another thread may have voided meanwhile.
 */
static inline ssize_t td_sys_read_nowait(int fd, void *buf, size_t len)
{
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	int saved = errno;

	return td_sys_result(preadv2(fd, &iov, 1, -1, RWF_NOWAIT), saved);
}

static inline int td_sys_ppoll(struct pollfd *pfd, nfds_t nr,
			       const struct timespec *timeout)
{
	int saved = errno;

	return td_sys_result(ppoll(pfd, nr, timeout, NULL), saved);
}

/* ring.c: the record ring, when the module offers it. */
void td_ring_setup(struct td_ctx *ctx, uint32_t entries);
void td_ring_unmap(struct td_ctx *ctx);
static inline bool td_has_ring(const struct td_ctx *ctx)
{
	return ctx->ring.map != NULL;
}
unsigned int td_ring_consume(struct td_ctx *ctx, struct qtimer_record *records,
			     unsigned int max);
bool td_ring_overflowed(const struct td_ctx *ctx);
bool td_ring_empty(const struct td_ctx *ctx);

/* table.c: the timer table, when the module offers it. */
void td_table_setup(struct td_ctx *ctx);
void td_table_unmap(struct td_ctx *ctx);
void td_table_note(struct td_ctx *ctx, uint64_t id);
int td_table_stop(struct td_ctx *ctx, uint64_t id);
int td_table_push(struct td_ctx *ctx, uint64_t id, int64_t when, bool plain);
int td_table_when(uint64_t id, int64_t expires_ns, unsigned int flags,
		  bool realtime, int64_t *when);
unsigned int td_table_reclaim(struct td_ctx *ctx);
static inline bool td_has_table(const struct td_ctx *ctx)
{
	return ctx->table.map != NULL;
}
/* An arm's error that a reclaim of stopped timers may cure. */
static inline bool td_table_cap_error(const struct td_ctx *ctx, int err)
{
	return td_has_table(ctx) && (err == -ENOSPC || err == -EDQUOT);
}

/* read.c: after taking nr records from the ring, outside its lock. */
void td_ring_reap(struct td_ctx *ctx, unsigned int nr);

/* peek.c: this thread holds the ring's lock for a peek. */
static inline bool td_ring_peek_mine(struct td_ctx *ctx)
{
	/*
	 * Another thread may be writing peek_owner for a peek of its own
	 * (never this thread's value): atomic, so that the read is no race.
	 */
	return __atomic_load_n(&ctx->ring.peek_active, __ATOMIC_ACQUIRE) &&
	       pthread_equal(__atomic_load_n(&ctx->ring.peek_owner,
					     __ATOMIC_RELAXED), pthread_self());
}

/*
 * timer.c: fill an op, for its ioctl or a batch, from a spec or from
 * td_modify()'s arguments; -EINVAL for what the library rejects.
 */
int td_op_from_spec(struct qtimer_op *op, const struct td_timer_spec *spec);
int td_op_modify(struct qtimer_op *op, uint64_t id, int64_t expires_ns,
		 uint64_t period_ns, uint64_t slack_ns, unsigned int flags);

#endif /* _TD_INTERNAL_H */
