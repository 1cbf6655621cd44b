// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * The timespec conversions under their plain names, for the struct
 * timespec of the time_t the platform had before 64-bit time_t was a
 * choice: always built so, even when the rest of the library is built with
 * _TIME_BITS=64 (time64.c has the variants for that struct, and td_now()).
 */
#undef _TIME_BITS

#include "internal.h"
#include "timespec.h"

TD_EXPORT int64_t td_ns_from_timespec(const struct timespec *ts)
{
	return td_ns_of_timespec(ts);
}

TD_EXPORT struct timespec td_timespec_from_ns(int64_t ns)
{
	return td_timespec_of_ns(ns);
}
