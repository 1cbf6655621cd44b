/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * Every difference between the kernels qtimer supports (6.1 and 6.12 LTS,
 * stock and PREEMPT_RT) lives here, so that the rest of the module reads
 * like mainline code of the newest of them.
 */
#ifndef _QT_COMPAT_H
#define _QT_COMPAT_H

#include <linux/version.h>
#include <linux/hrtimer.h>
#include <linux/nsproxy.h>
#include <linux/sched.h>
#include <linux/time_namespace.h>

/* hrtimer_setup() replaced hrtimer_init() + ->function in 6.13. */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 13, 0)
static inline void hrtimer_setup(struct hrtimer *timer,
				 enum hrtimer_restart (*function)(struct hrtimer *),
				 clockid_t clock_id, enum hrtimer_mode mode)
{
	hrtimer_init(timer, clock_id, mode);
	timer->function = function;
}
#endif

/*
 * The offset of the calling task's time namespace for @clockid: absolute
 * CLOCK_MONOTONIC and CLOCK_BOOTTIME times seen by the task are host time
 * plus this.  The kernel's own timens_ktime_to_host() calls a helper that
 * is not exported, so read the offsets directly, as its inline siblings do.
 */
static inline ktime_t qt_timens_offset(clockid_t clockid)
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

#endif /* _QT_COMPAT_H */
