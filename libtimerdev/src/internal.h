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
#include <sys/ioctl.h>
#include <unistd.h>

#include "timerdev.h"

/* Everything else is hidden by -fvisibility=hidden and the version script. */
#define TD_EXPORT __attribute__((visibility("default")))

/* Immutable after td_open(), which is what makes a context thread-safe. */
struct td_ctx {
	int fd;
	struct qtimer_version version;	/* as read at open */
};

static inline int td_sys_ioctl(int fd, unsigned long request, void *arg)
{
	int saved = errno;
	int ret = ioctl(fd, request, arg);

	if (ret < 0)
		ret = -errno;
	errno = saved;
	return ret;
}

static inline ssize_t td_sys_read(int fd, void *buf, size_t len)
{
	int saved = errno;
	ssize_t ret = read(fd, buf, len);

	if (ret < 0)
		ret = -errno;
	errno = saved;
	return ret;
}

static inline int td_sys_ppoll(struct pollfd *pfd, nfds_t nr,
			       const struct timespec *timeout)
{
	int saved = errno;
	int ret = ppoll(pfd, nr, timeout, NULL);

	if (ret < 0)
		ret = -errno;
	errno = saved;
	return ret;
}

/* timer.c: fill an op from a spec; -EINVAL for what the library rejects. */
int td_op_from_spec(struct qtimer_op *op, const struct td_timer_spec *spec);
int td_check_modify_flags(unsigned int flags);

#endif /* _TD_INTERNAL_H */
