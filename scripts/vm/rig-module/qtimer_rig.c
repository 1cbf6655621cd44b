// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * The test rig's self-test, and nothing else: loading this module makes
 * the kernel WARN (which also taints it W) and prints a line that reads as
 * the hrtimer core's hang message.  scripts/vm/run.sh --rig-warn has the
 * guest's init (scripts/vm/init.c) load it, and the run must then fail
 * naming all three: a rig that passed here would hide real splats.  It is
 * built only into the test VM's payload (make guest), never by make,
 * make install or DKMS, so that the product module carries no way to
 * forge a core-kernel message.
 */

#include <linux/bug.h>
#include <linux/module.h>
#include <linux/printk.h>

static int __init qt_rig_init(void)
{
	WARN(1, "qtimer_rig: deliberate warning for the test rig's self-test\n");
	/*
	 * Unprefixed, so that the line reads exactly as the hrtimer core's
	 * "hrtimer: interrupt took %llu ns", which the rig counts from the
	 * init's boot record on when it took less than a TCG timeslice.
	 */
	pr_warn("hrtimer: interrupt took 0 ns (qtimer_rig: deliberate, not the hrtimer core's)\n");
	return 0;
}

/* An exit function, so that the init can unload the module again. */
static void __exit qt_rig_exit(void)
{
}

module_init(qt_rig_init);
module_exit(qt_rig_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("qtimer test rig self-test: a deliberate WARN and hang message on load");
MODULE_AUTHOR("The qtimer authors");
