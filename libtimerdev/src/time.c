// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * Time helpers: qtimer speaks signed 64-bit nanoseconds, POSIX speaks
 * struct timespec (timespec.h; time64.c has the 64-bit time_t variants).
 */
#include "internal.h"
#include "timespec.h"

TD_EXPORT int64_t td_now(clockid_t clockid)
{
	struct timespec ts;
	int saved = errno;

	if (clock_gettime(clockid, &ts)) {
		errno = saved;
		return -EINVAL;
	}
	return td_ns_from_timespec(&ts);
}

TD_EXPORT int64_t td_ns_from_timespec(const struct timespec *ts)
{
	return td_ns_of_timespec(ts);
}

TD_EXPORT struct timespec td_timespec_from_ns(int64_t ns)
{
	return td_timespec_of_ns(ns);
}
