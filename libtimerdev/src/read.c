// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * Reading expirations.  td_read() is read(2) counted in records; td_wait()
 * adds a timeout with ppoll(2); td_dispatch() hands each record to a
 * callback.  A blocking file blocks only for the first record, as read(2)
 * does; further reads are made only when poll says records are pending.
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

TD_EXPORT int td_read(struct td_ctx *ctx, struct qtimer_record *records,
		      unsigned int max)
{
	ssize_t ret;

	if (!ctx || !records || !max)
		return -EINVAL;
	max = td_min(max, TD_READ_MAX);
	ret = td_sys_read(ctx->fd, records, (size_t)max * TD_RECORD_SIZE);
	if (ret < 0)
		return (int)ret;
	/* The handshake checked the record size; a torn record is a bug. */
	if (ret % TD_RECORD_SIZE)
		return -EPROTO;
	return (int)(ret / TD_RECORD_SIZE);
}

/* Are records pending right now?  Never blocks. */
static bool td_pending(struct td_ctx *ctx)
{
	struct pollfd pfd = { .fd = ctx->fd, .events = POLLIN };
	const struct timespec zero = { 0, 0 };

	return td_sys_ppoll(&pfd, 1, &zero) > 0 && (pfd.revents & POLLIN);
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
		ret = td_read(ctx, records, max);
		/* Another reader may have taken them (non-blocking files only). */
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
		/* A short read means nothing more was pending. */
		if (total >= max || (unsigned int)nr < TD_DISPATCH_CHUNK ||
		    !td_pending(ctx))
			break;
		nr = td_read(ctx, buf, td_min(max - total, TD_DISPATCH_CHUNK));
		if (nr <= 0)
			break;	/* progress was made: report it, as read(2) does */
	}
	return (int)total;
}
