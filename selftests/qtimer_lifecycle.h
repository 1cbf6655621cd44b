/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * The `caps` fixture of the lifecycle suites that change the module's caps
 * (qtimer_lifecycle_{memory,caps}_test.c): it saves max_timers_per_fd and
 * max_timers_per_user and puts them back.  Like lib/ring_harness.h it
 * expands inside a suite, so each suite includes it once.
 */
#ifndef _QT_TEST_LIFECYCLE_H
#define _QT_TEST_LIFECYCLE_H

#include "kselftest_harness.h"
#include "helpers.h"


/*
 * The module parameters are global: tests that change them restore the
 * values they found, in the teardown (which runs after failed ASSERTs).
 */
FIXTURE(caps)
{
	unsigned long long per_fd, per_user;
	bool usable;
};

FIXTURE_SETUP(caps)
{
	self->usable = !geteuid() &&
		       !t_sysfs_read(QT_PARAMS "max_timers_per_fd",
				      &self->per_fd) &&
		       !t_sysfs_read(QT_PARAMS "max_timers_per_user",
				      &self->per_user);
}

FIXTURE_TEARDOWN(caps)
{
	if (!self->usable)
		return;
	EXPECT_EQ(0, t_sysfs_write(QT_PARAMS "max_timers_per_fd",
				    self->per_fd));
	EXPECT_EQ(0, t_sysfs_write(QT_PARAMS "max_timers_per_user",
				    self->per_user));
}

#define REQUIRE_CAPS() do {						\
	if (!self->usable)						\
		SKIP(return, "needs root and the qtimer module parameters"); \
} while (0)

#endif /* _QT_TEST_LIFECYCLE_H */
