/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * The harness side of the simplest fixture a device suite starts from:
 * one non-blocking /dev/qtimer per test, alone or run once for each clock
 * the device offers.  Like ring_harness.h it expands inside a
 * kselftest_harness suite, so it cannot live in libqttest.a.  A suite
 * includes it once and names the fixture, since a test's name starts with
 * its fixture's (clock.monotonic.oneshot_relative); each macro stands on a
 * line of its own, like TEST_HARNESS_MAIN, with no semicolon after it.  A
 * fixture that needs more than the file (state of its own, another setup
 * step) declares its own and opens the file the same way.
 */
#ifndef _QT_TEST_CLOCK_HARNESS_H
#define _QT_TEST_CLOCK_HARNESS_H

#include "kselftest_harness.h"
#include "helpers.h"

/* Fixture @f: self->fd, a non-blocking /dev/qtimer, closed after the test. */
#define T_FILE_FIXTURE(f)						\
FIXTURE(f)								\
{									\
	int fd;		/* O_NONBLOCK */				\
};									\
									\
FIXTURE_SETUP(f)							\
{									\
	self->fd = t_open(O_NONBLOCK);					\
	ASSERT_LE(0, self->fd);						\
}									\
									\
FIXTURE_TEARDOWN(f)							\
{									\
	if (self->fd >= 0)						\
		close(self->fd);					\
}

/*
 * Fixture @f as T_FILE_FIXTURE(), run once per clock the device offers,
 * with the clock in variant->clockid: f.monotonic, f.boottime, f.realtime.
 */
#define T_CLOCK_FIXTURE(f)						\
T_FILE_FIXTURE(f)							\
									\
FIXTURE_VARIANT(f)							\
{									\
	int clockid;							\
};									\
									\
FIXTURE_VARIANT_ADD(f, monotonic)					\
{									\
	.clockid = CLOCK_MONOTONIC,					\
};									\
									\
FIXTURE_VARIANT_ADD(f, boottime)					\
{									\
	.clockid = CLOCK_BOOTTIME,					\
};									\
									\
FIXTURE_VARIANT_ADD(f, realtime)					\
{									\
	.clockid = CLOCK_REALTIME,					\
};

#endif /* _QT_TEST_CLOCK_HARNESS_H */
