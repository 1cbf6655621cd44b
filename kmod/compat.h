/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * Every difference between the kernels qtimer supports (6.1 and 6.12 LTS,
 * stock and PREEMPT_RT) lives here, so that the rest of the module reads
 * like mainline code of the newest of them.  Kbuild includes it ahead of
 * every file of the module, as WireGuard's compat layer is.
 */
#ifndef _QT_COMPAT_H
#define _QT_COMPAT_H

#include <linux/version.h>
#include <linux/hrtimer.h>

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
 * struct nla_policy points at a struct netlink_range_validation through a
 * const pointer since 6.7, through a plain one before: there a policy's
 * range can be read-only only from the end of init on.
 */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 7, 0)
#define QT_NL_RANGE(name) \
	static struct netlink_range_validation name __ro_after_init
#else
#define QT_NL_RANGE(name) \
	static const struct netlink_range_validation name
#endif

/* vm_flags became read-only, set through vm_flags_set(), in 6.3. */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 3, 0)
#include <linux/mm_types.h>
static inline void vm_flags_set(struct vm_area_struct *vma, unsigned long flags)
{
	vma->vm_flags |= flags;
}
#endif

#endif /* _QT_COMPAT_H */
