// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * Module init and exit only: each step of init has a label that undoes it,
 * and exit undoes them all in reverse order.
 */

#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/rcupdate.h>
#include <linux/qtimer_netlink.h>

#include "base.h"
#include "clockset.h"
#include "ctx.h"
#include "dev.h"
#include "netlink.h"
#include "timer.h"
#include "user.h"

/*
 * The caps take the range the netlink config enforces (qtimer_netlink.h),
 * at load time and through sysfs alike: 0 would refuse every ARM, and a
 * per-user cap above LONG_MAX would read as negative where it is compared.
 */
static int qt_param_set_cap(const char *val, unsigned long limit,
			    const struct kernel_param *kp)
{
	unsigned long v;
	int ret;

	ret = kstrtoul(val, 0, &v);
	if (ret)
		return ret;
	if (!v || v > limit)
		return -EINVAL;
	WRITE_ONCE(*(unsigned long *)kp->arg, v);
	return 0;
}

static int qt_param_set_per_fd(const char *val, const struct kernel_param *kp)
{
	return qt_param_set_cap(val, QTIMER_MAX_TIMERS_PER_FD_LIMIT, kp);
}

static int qt_param_set_per_user(const char *val,
				 const struct kernel_param *kp)
{
	return qt_param_set_cap(val, QTIMER_MAX_TIMERS_PER_USER_LIMIT, kp);
}

static const struct kernel_param_ops qt_param_per_fd_ops = {
	.set = qt_param_set_per_fd,
	.get = param_get_ulong,
};

static const struct kernel_param_ops qt_param_per_user_ops = {
	.set = qt_param_set_per_user,
	.get = param_get_ulong,
};

module_param_cb(max_timers_per_fd, &qt_param_per_fd_ops,
		&qt_max_timers_per_fd, 0644);
MODULE_PARM_DESC(max_timers_per_fd,
		 "Most timers one open file may hold; beyond, ARM fails with ENOSPC");
module_param_cb(max_timers_per_user, &qt_param_per_user_ops,
		&qt_max_timers_per_user, 0644);
MODULE_PARM_DESC(max_timers_per_user,
		 "Most timers one user may hold across files; beyond, ARM fails with EDQUOT");

static int __init qt_mod_init(void)
{
	int ret;

	ret = qt_timer_cache_init();
	if (ret)
		goto err_cache;
	ret = qt_clockset_init();
	if (ret)
		goto err_clockset;
	ret = qt_base_init(qt_expire_hrtimer, qt_expire_work, qt_table_surface);
	if (ret)
		goto err_bases;
	ret = qt_netlink_init();
	if (ret)
		goto err_netlink;
	ret = qt_dev_init();
	if (ret)
		goto err_dev;
	return 0;

err_dev:
	qt_netlink_exit();
err_netlink:
	qt_base_exit();
err_bases:
	qt_clockset_exit();
err_clockset:
	qt_timer_cache_exit();
err_cache:
	return ret;
}

static void __exit qt_mod_exit(void)
{
	qt_dev_exit();
	qt_netlink_exit();
	qt_base_exit();
	qt_clockset_exit();
	/* kfree_rcu()'d contexts, before the timers' cache goes. */
	rcu_barrier();
	qt_timer_cache_exit();
}

module_init(qt_mod_init);
module_exit(qt_mod_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("High-volume timers for user space: per-CPU 4-ary heaps on hrtimers");
MODULE_AUTHOR("The qtimer authors");
/* The release, dkms.conf's PACKAGE_VERSION (the top Kbuild passes it). */
MODULE_VERSION(QTIMER_VERSION_STRING);
