// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * Time helpers: qtimer speaks signed 64-bit nanoseconds, POSIX speaks
 * struct timespec.  Conversions saturate rather than wrap, so an absurd
 * input becomes an absurd but ordered time and never an early one.
 */
#include "internal.h"

#define TD_NSEC_PER_SEC	1000000000LL

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
	int64_t ns;

	if (__builtin_mul_overflow((int64_t)ts->tv_sec, TD_NSEC_PER_SEC, &ns) ||
	    __builtin_add_overflow(ns, (int64_t)ts->tv_nsec, &ns))
		return ts->tv_sec < 0 ? INT64_MIN : INT64_MAX;
	return ns;
}

TD_EXPORT struct timespec td_timespec_from_ns(int64_t ns)
{
	struct timespec ts;
	int64_t sec = ns / TD_NSEC_PER_SEC;
	int64_t nsec = ns % TD_NSEC_PER_SEC;

	/* C division truncates towards zero; tv_nsec must be in [0, 1e9). */
	if (nsec < 0) {
		nsec += TD_NSEC_PER_SEC;
		sec--;
	}
	ts.tv_sec = (time_t)sec;
	ts.tv_nsec = (long)nsec;
	return ts;
}
