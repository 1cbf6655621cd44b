// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * Reading expirations.  td_read() is read(2) counted in records; td_wait()
 * adds a timeout with ppoll(2); td_dispatch() hands each record to a
 * callback.  A blocking file blocks only for the first record, as read(2)
 * does; further reads never block (RWF_NOWAIT), whatever the file's mode.
 *
 * With a record ring (ring.c), each of them takes what the ring holds
 * first, with no system call, and goes to the kernel only when the ring is
 * empty: read(2), which moves the records waiting in the kernel into the
 * ring and takes them, and blocks or not as the file does (which the
 * caller may have changed with fcntl(2) since td_open, as libuv's
 * uv_poll_init() does), or poll(2), which moves them too.  Those system
 * calls also let the kernel re-arm the tickers whose records were taken
 * from the mapping, and free the one-shots' places under the caps; so on a
 * module without QTIMER_FEAT_RING_DRAIN, which does that only then, a take
 * that empties the ring ends with a poll(2) that cannot block, as the
 * header tells a consumer that finds the ring empty (td_ring_reap()).  A
 * module with it does that by itself, and the take makes no system call.
 */
#include <limits.h>
#include <stdbool.h>

#include "internal.h"

#define TD_RECORD_SIZE		sizeof(struct qtimer_record)
/* Keeps a count of records, and its size in bytes, within an int. */
#define TD_READ_MAX		((unsigned int)(INT_MAX / TD_RECORD_SIZE))
/* td_dispatch()'s stack buffer: 2 KiB. */
#define TD_DISPATCH_CHUNK	64U

static unsigned int td_min(unsigned int a, unsigned int b)
{
	return a < b ? a : b;
}

/*
 * read(2) counted in records; max is at most TD_READ_MAX.  @nowait: never
 * block, whatever the file's mode (after poll(2) said POLLIN).
 */
static int td_read_file(struct td_ctx *ctx, struct qtimer_record *records,
			unsigned int max, bool nowait)
{
	size_t len = (size_t)max * TD_RECORD_SIZE;
	ssize_t ret;

	if (nowait)
		ret = td_sys_read_nowait(ctx->fd, records, len);
	else
		ret = td_sys_read(ctx->fd, records, len);
	if (ret < 0)
		return (int)ret;
	/* The handshake checked the record size; a torn record is a bug. */
	if (ret % TD_RECORD_SIZE)
		return -EPROTO;
	return (int)(ret / TD_RECORD_SIZE);
}

static void td_ring_unlock(void *arg)
{
	pthread_mutex_unlock(&((struct td_ctx *)arg)->ring.lock);
}

/* Are records pending right now?  Never blocks. */
static bool td_pending(struct td_ctx *ctx)
{
	struct pollfd pfd = { .fd = ctx->fd, .events = POLLIN };
	const struct timespec zero = { 0, 0 };

	return td_sys_ppoll(&pfd, 1, &zero) > 0 && (pfd.revents & POLLIN);
}

/*
 * After taking @nr records from the ring, outside its lock: if that emptied
 * it, poll(2) has the kernel reap what the tail passed.  Without it a
 * ticker taken from the mapping stayed unarmed, and a one-shot kept its
 * place under the caps, until the next system call on the file, which an
 * edge-triggered epoll loop around td_dispatch() never makes.
 */
void td_ring_reap(struct td_ctx *ctx, unsigned int nr)
{
	if (nr && !(ctx->version.features & QTIMER_FEAT_RING_DRAIN) &&
	    td_ring_empty(ctx))
		(void)td_pending(ctx);
}

/* What the ring holds; a system call only if that empties it. */
static unsigned int td_ring_take(struct td_ctx *ctx,
				 struct qtimer_record *records, unsigned int max)
{
	unsigned int nr;

	pthread_mutex_lock(&ctx->ring.lock);
	nr = td_ring_consume(ctx, records, max);
	pthread_mutex_unlock(&ctx->ring.lock);
	td_ring_reap(ctx, nr);
	return nr;
}

static int td_read_some(struct td_ctx *ctx, struct qtimer_record *records,
			unsigned int max, bool nowait)
{
	unsigned int taken;
	int ret;

	if (!ctx || !records || !max)
		return -EINVAL;
	max = td_min(max, TD_READ_MAX);
	if (!td_has_ring(ctx))
		return td_read_file(ctx, records, max, nowait);
	/* This thread's peek holds the lock until it advances. */
	if (td_ring_peek_mine(ctx))
		return -EBUSY;

	/*
	 * read(2) is the ring's consumer too, so it runs under the lock,
	 * blocking included: a thread that comes meanwhile would have
	 * blocked behind it in the kernel anyway.  read(2) is a cancellation
	 * point; a cancelled reader must not keep the lock.
	 */
	pthread_mutex_lock(&ctx->ring.lock);
	pthread_cleanup_push(td_ring_unlock, ctx);
	ret = (int)td_ring_consume(ctx, records, max);
	taken = (unsigned int)ret;
	if (!ret)
		ret = td_read_file(ctx, records, max, nowait);
	pthread_cleanup_pop(1);
	/* read(2) reaped; a take from the mapping did not. */
	td_ring_reap(ctx, taken);
	return ret;
}

TD_EXPORT int td_read(struct td_ctx *ctx, struct qtimer_record *records,
		      unsigned int max)
{
	return td_read_some(ctx, records, max, false);
}

/*
 * More records for td_dispatch(), if any are pending: never blocks, and
 * returns 0 when there are none.
 */
static int td_read_more(struct td_ctx *ctx, struct qtimer_record *records,
			unsigned int max)
{
	unsigned int nr;
	int ret;

	if (!td_has_ring(ctx)) {
		/* Nothing pending is -EAGAIN: no poll(2) needed first. */
		ret = td_read_file(ctx, records, max, true);
		return ret == -EAGAIN ? 0 : ret;
	}
	/* A callback peeked and has not advanced yet. */
	if (td_ring_peek_mine(ctx))
		return -EBUSY;
	pthread_mutex_lock(&ctx->ring.lock);
	/* ppoll(2) is a cancellation point, as in td_read(). */
	pthread_cleanup_push(td_ring_unlock, ctx);
	nr = td_ring_consume(ctx, records, max);
	/*
	 * Drained, but records wait in the kernel for room: poll(2) moves
	 * them into the ring, and unlike read(2) cannot block on a blocking
	 * file should a CANCEL void them meanwhile.
	 */
	if (!nr && td_ring_overflowed(ctx)) {
		(void)td_pending(ctx);
		nr = td_ring_consume(ctx, records, max);
	}
	pthread_cleanup_pop(1);
	td_ring_reap(ctx, nr);
	return (int)nr;
}

TD_EXPORT int td_wait(struct td_ctx *ctx, struct qtimer_record *records,
		      unsigned int max, int64_t timeout_ns)
{
	struct pollfd pfd = { .events = POLLIN };
	int64_t deadline = 0, left = 0;
	struct timespec ts;
	int ret;

	if (!ctx || !records || !max)
		return -EINVAL;
	if (td_has_ring(ctx) && td_ring_peek_mine(ctx))
		return -EBUSY;
	/* Records in the ring need no waiting and no system call. */
	if (td_has_ring(ctx)) {
		ret = (int)td_ring_take(ctx, records, td_min(max, TD_READ_MAX));
		if (ret)
			return ret;
	}
	pfd.fd = ctx->fd;
	if (timeout_ns >= 0) {
		deadline = td_now(CLOCK_MONOTONIC);
		if (deadline < 0)
			return (int)deadline;
		if (__builtin_add_overflow(deadline, timeout_ns, &deadline))
			deadline = INT64_MAX;
		left = timeout_ns;
	}

	for (;;) {
		if (timeout_ns >= 0)
			ts = td_timespec_from_ns(left);
		ret = td_sys_ppoll(&pfd, 1, timeout_ns >= 0 ? &ts : NULL);
		if (ret < 0)
			return ret;
		if (ret == 0)
			return -ETIME;
		if (pfd.revents & POLLNVAL)
			return -EBADF;
		if (!(pfd.revents & POLLIN))
			return -EIO;	/* POLLERR or POLLHUP: not a qtimer file */
		/*
		 * Without blocking: another reader may have taken them, or a
		 * CANCEL voided them, since poll(2) said so.
		 */
		ret = td_read_some(ctx, records, max, true);
		if (ret != -EAGAIN)
			return ret;
		if (timeout_ns >= 0) {
			left = deadline - td_now(CLOCK_MONOTONIC);
			if (left <= 0)
				return -ETIME;
		}
	}
}

TD_EXPORT int td_dispatch(struct td_ctx *ctx, td_record_cb cb, void *arg,
			  unsigned int max)
{
	struct qtimer_record buf[TD_DISPATCH_CHUNK];
	unsigned int total = 0;
	int nr, i;

	if (!ctx || !cb || !max)
		return -EINVAL;
	max = td_min(max, TD_READ_MAX);

	nr = td_read(ctx, buf, td_min(max, TD_DISPATCH_CHUNK));
	if (nr < 0)
		return nr;
	for (;;) {
		for (i = 0; i < nr; i++)
			cb(&buf[i], arg);
		total += nr;
		if (total >= max)
			break;
		/*
		 * A short read(2) means nothing more was pending; a short
		 * take from the ring, only that the ring is drained.
		 */
		if (!td_has_ring(ctx) && (unsigned int)nr < TD_DISPATCH_CHUNK)
			break;
		nr = td_read_more(ctx, buf, td_min(max - total, TD_DISPATCH_CHUNK));
		if (nr <= 0)
			break;	/* progress was made: report it, as read(2) does */
	}
	return (int)total;
}
