/* SPDX-License-Identifier: LGPL-2.1 OR MIT */
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * The timespec conversions, for the struct timespec of the file that
 * includes this: time.c's (the time_t the library is built with) and
 * time64.c's (a 64-bit time_t on every target), so that a 32-bit program
 * built with either time_t gets conversions of its own struct.
 * Conversions saturate rather than wrap, so an absurd input becomes an
 * absurd but ordered time and never an early one.
 */
#ifndef _TD_TIMESPEC_H
#define _TD_TIMESPEC_H

#include <stdint.h>
#include <time.h>

#define TD_NSEC_PER_SEC	1000000000LL

static inline int64_t td_ns_of_timespec(const struct timespec *ts)
{
	int64_t ns;

	if (__builtin_mul_overflow((int64_t)ts->tv_sec, TD_NSEC_PER_SEC, &ns) ||
	    __builtin_add_overflow(ns, (int64_t)ts->tv_nsec, &ns))
		return ts->tv_sec < 0 ? INT64_MIN : INT64_MAX;
	return ns;
}

static inline struct timespec td_timespec_of_ns(int64_t ns)
{
	struct timespec ts;
	int64_t sec = ns / TD_NSEC_PER_SEC;
	int64_t nsec = ns % TD_NSEC_PER_SEC;

	/* C division truncates towards zero; tv_nsec must be in [0, 1e9). */
	if (nsec < 0) {
		nsec += TD_NSEC_PER_SEC;
		sec--;
	}
	/*
	 * A 32-bit time_t ends in 2038: beyond it, the latest (or earliest)
	 * time it holds, not one wrapped into the past.
	 */
	if (__builtin_add_overflow(sec, 0, &ts.tv_sec)) {
		ts.tv_sec = (time_t)((UINT64_C(1) << (sizeof(time_t) * 8 - 1)) - 1);
		ts.tv_nsec = TD_NSEC_PER_SEC - 1;
		if (sec < 0) {
			ts.tv_sec = -ts.tv_sec - 1;
			ts.tv_nsec = 0;
		}
		return ts;
	}
	ts.tv_nsec = (long)nsec;
	return ts;
}

#endif /* _TD_TIMESPEC_H */
