// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * Module init and exit only: each step of init has a label that undoes it,
 * and exit undoes them all in reverse order.
 */

#include <linux/module.h>

#include "base.h"
#include "ctx.h"
#include "dev.h"
#include "netlink.h"
#include "user.h"

module_param_named(max_timers_per_fd, qt_max_timers_per_fd, ulong, 0644);
MODULE_PARM_DESC(max_timers_per_fd,
		 "Most timers one open file may hold; beyond, ARM fails with ENOSPC");
module_param_named(max_timers_per_user, qt_max_timers_per_user, ulong, 0644);
MODULE_PARM_DESC(max_timers_per_user,
		 "Most timers one user may hold across files; beyond, ARM fails with EDQUOT");

static int __init qt_mod_init(void)
{
	int ret;

	ret = qt_ctx_init();
	if (ret)
		goto err_ctx;
	ret = qt_bases_init(qt_expire_hrtimer, qt_expire_work);
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
	qt_bases_exit();
err_bases:
	qt_ctx_exit();
err_ctx:
	return ret;
}

static void __exit qt_mod_exit(void)
{
	qt_dev_exit();
	qt_netlink_exit();
	qt_bases_exit();
	qt_ctx_exit();
}

module_init(qt_mod_init);
module_exit(qt_mod_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("High-volume timers for user space: per-CPU 4-ary heaps on hrtimers");
MODULE_AUTHOR("The qtimer authors");
