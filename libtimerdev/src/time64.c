// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * The timespec conversions for a 64-bit time_t, and td_now().  A 32-bit
 * program built with _TIME_BITS=64 has a struct timespec twice the size of
 * the plain one, and <timerdev.h> sends its calls here (as glibc sends its
 * own time functions to their time64 variants).  On a 64-bit target, and
 * on a 32-bit libc without a 64-bit time_t (where the header never sends
 * calls here), these are the same as td_ns_from_timespec() and
 * td_timespec_from_ns(), exported all the same so that the ABI is one.
 * td_now() takes no timespec: here it reads the clock past 2038 too.
 */
#undef _FILE_OFFSET_BITS
#define _FILE_OFFSET_BITS 64
#undef _TIME_BITS
#define _TIME_BITS 64

#include "internal.h"
#include "timespec.h"

TD_EXPORT int64_t td_ns_from_timespec64(const struct timespec *ts);
TD_EXPORT struct timespec td_timespec_from_ns64(int64_t ns);

TD_EXPORT int64_t td_ns_from_timespec64(const struct timespec *ts)
{
	return td_ns_of_timespec(ts);
}

TD_EXPORT struct timespec td_timespec_from_ns64(int64_t ns)
{
	return td_timespec_of_ns(ns);
}

TD_EXPORT int64_t td_now(clockid_t clockid)
{
	struct timespec ts;
	int saved = errno;

	if (clock_gettime(clockid, &ts)) {
		errno = saved;
		return -EINVAL;
	}
	return td_ns_of_timespec(&ts);
}
