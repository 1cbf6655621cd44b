/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * The clocks timers run on: qtimer's index of each (which picks a heap per
 * CPU), its POSIX clock id, its reading now, and the offset a time namespace
 * gives it.
 */
#ifndef _QT_CLOCK_H
#define _QT_CLOCK_H

#include <linux/ktime.h>
#include <linux/nsproxy.h>
#include <linux/sched.h>
#include <linux/time_namespace.h>

enum {
	QT_CLOCK_REALTIME,
	QT_CLOCK_MONOTONIC,
	QT_CLOCK_BOOTTIME,
	QT_NR_CLOCKS,
};

clockid_t qt_clock_id(unsigned int clock);
ktime_t qt_clock_now(unsigned int clock);

/*
 * The offset of the calling task's time namespace for @clockid: absolute
 * CLOCK_MONOTONIC and CLOCK_BOOTTIME times seen by the task are host time
 * plus this.  The kernel's own timens_ktime_to_host() calls a helper that
 * is not exported, so read the offsets directly, as its inline siblings do.
 */
static inline ktime_t qt_clock_timens_offset(clockid_t clockid)
{
#ifdef CONFIG_TIME_NS
	struct timens_offsets *offs = &current->nsproxy->time_ns->offsets;

	switch (clockid) {
	case CLOCK_MONOTONIC:
		return timespec64_to_ktime(offs->monotonic);
	case CLOCK_BOOTTIME:
		return timespec64_to_ktime(offs->boottime);
	}
#endif
	return 0;
}

#endif /* _QT_CLOCK_H */
