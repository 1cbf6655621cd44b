// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * The three clocks a timer may run on, by qtimer's index of them.
 */

#include <linux/timekeeping.h>

#include "clock.h"

static const clockid_t qt_clock_ids[QT_NR_CLOCKS] = {
	[QT_CLOCK_REALTIME]	= CLOCK_REALTIME,
	[QT_CLOCK_MONOTONIC]	= CLOCK_MONOTONIC,
	[QT_CLOCK_BOOTTIME]	= CLOCK_BOOTTIME,
};

clockid_t qt_clock_id(unsigned int clock)
{
	return qt_clock_ids[clock];
}

ktime_t qt_clock_now(unsigned int clock)
{
	switch (clock) {
	case QT_CLOCK_REALTIME:
		return ktime_get_real();
	case QT_CLOCK_BOOTTIME:
		return ktime_get_boottime();
	default:
		return ktime_get();
	}
}
