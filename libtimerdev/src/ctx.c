// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * Opening and closing a context.  td_open() insists on the QTIMER_IOC_VERSION
 * handshake so that a program built against one <linux/qtimer.h> never talks
 * to a device whose records or ops have another layout, and then sets up the
 * record ring and the timer table when the device offers them (ring.c,
 * table.c).
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static int td_handshake(int fd, struct qtimer_version *version)
{
	int ret;

	memset(version, 0, sizeof(*version));
	ret = td_sys_ioctl(fd, QTIMER_IOC_VERSION, version);
	if (ret < 0) {
		/* Not a qtimer device at all, or one without the handshake. */
		if (ret == -ENOTTY || ret == -EINVAL)
			return -ENOTSUP;
		return ret;
	}
	if (version->api_version != QTIMER_API_VERSION ||
	    version->record_size != sizeof(struct qtimer_record) ||
	    version->op_size != sizeof(struct qtimer_op))
		return -EPROTO;
	return 0;
}

/* 0, TD_RING_OFF, or a ring size the uapi allows. */
static bool td_ring_entries_ok(uint32_t entries)
{
	return !entries || entries == TD_RING_OFF ||
	       (entries >= QTIMER_RING_MIN && entries <= QTIMER_RING_MAX &&
		!(entries & (entries - 1)));
}

static bool td_open_params_ok(const struct td_open_params *params)
{
	size_t i;

	if (params->flags & ~(TD_NONBLOCK | TD_CLOEXEC | TD_NOCLOEXEC |
			      TD_NOTABLE))
		return false;
	if ((params->flags & TD_CLOEXEC) && (params->flags & TD_NOCLOEXEC))
		return false;
	/* Room for later fields: params that fill it are not for us. */
	for (i = 0; i < sizeof(params->reserved) / sizeof(params->reserved[0]); i++)
		if (params->reserved[i])
			return false;
	return td_ring_entries_ok(params->ring_entries);
}

TD_EXPORT int td_open2(struct td_ctx **ctxp, const struct td_open_params *params)
{
	uint32_t entries;
	int oflags = 0;
	struct td_ctx *ctx;
	int saved = errno;
	const char *path;
	bool writable;
	int fd, ret;

	if (!ctxp)
		return -EINVAL;
	*ctxp = NULL;
	if (!params || !td_open_params_ok(params))
		return -EINVAL;
	path = params->path ? params->path : TD_DEVICE_PATH;
	entries = params->ring_entries ? params->ring_entries :
					 TD_RING_DEFAULT_ENTRIES;
	if (params->flags & TD_NONBLOCK)
		oflags |= O_NONBLOCK;
	/* A library's descriptor does not leak into exec'd programs. */
	if (!(params->flags & TD_NOCLOEXEC))
		oflags |= O_CLOEXEC;

	ctx = malloc(sizeof(*ctx));
	if (!ctx) {
		errno = saved;
		return -ENOMEM;
	}
	memset(ctx, 0, sizeof(*ctx));
	/*
	 * Read-write, because mmap() of the ring with PROT_WRITE and
	 * MAP_SHARED needs a writable file.  A node we may only read (or a
	 * path that is no device at all) is opened read-only as before, and
	 * goes without the ring; its error is the one reported.  Without a
	 * ring, read-write all the same: the caller may set one up later
	 * through the descriptor, and the mode does not depend on it.
	 */
	fd = open(path, oflags | O_RDWR);
	writable = fd >= 0;
	if (!writable)
		fd = open(path, oflags | O_RDONLY);
	if (fd < 0) {
		ret = -errno;
		goto err_free;
	}
	ret = td_handshake(fd, &ctx->version);
	if (ret)
		goto err_close;
	ctx->fd = fd;
	if (writable && entries != TD_RING_OFF)
		td_ring_setup(ctx, entries);
	if (writable && !(params->flags & TD_NOTABLE))
		td_table_setup(ctx);
	*ctxp = ctx;
	errno = saved;
	return 0;

err_close:
	close(fd);
err_free:
	free(ctx);
	errno = saved;
	return ret;
}

TD_EXPORT int td_open_path(struct td_ctx **ctxp, const char *path, int flags)
{
	struct td_open_params params = {
		.path = path,
		.flags = (unsigned int)flags,
	};

	/* NULL means the default only in td_open2()'s params. */
	if (!path) {
		if (ctxp)
			*ctxp = NULL;
		return -EINVAL;
	}
	return td_open2(ctxp, &params);
}

TD_EXPORT int td_open(struct td_ctx **ctxp, int flags)
{
	return td_open_path(ctxp, TD_DEVICE_PATH, flags);
}

TD_EXPORT void td_close(struct td_ctx *ctx)
{
	int saved = errno;

	if (!ctx)
		return;
	td_ring_unmap(ctx);
	td_table_unmap(ctx);
	/* close() of a character device cannot usefully fail. */
	close(ctx->fd);
	free(ctx);
	errno = saved;
}

TD_EXPORT int td_fd(const struct td_ctx *ctx)
{
	if (!ctx)
		return -EINVAL;
	return ctx->fd;
}

TD_EXPORT int td_version(struct td_ctx *ctx, struct qtimer_version *version)
{
	/* Asked afresh: the limits are module parameters that root may change. */
	if (!ctx || !version)
		return -EINVAL;
	return td_sys_ioctl(ctx->fd, QTIMER_IOC_VERSION, version);
}
