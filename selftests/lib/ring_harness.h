/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * The harness side of the record ring's suites (selftests/qtimer_ring*_test.c):
 * what they share that has to expand inside a kselftest_harness suite, and
 * so cannot be compiled into libqttest.a with the helpers of ring.c: the
 * skips for a module without QTIMER_FEAT_RING and the `ring` fixture.  A suite that has no
 * TEST_F(ring, ...) registers the fixture and runs nothing of it.
 */
#ifndef _QT_TEST_RING_HARNESS_H
#define _QT_TEST_RING_HARNESS_H

#include "kselftest_harness.h"
#include "helpers.h"

#define SKIP_WITHOUT_RING() do {					\
	if (!t_ring_offered())						\
		SKIP(return, "no record ring: QTIMER_FEAT_RING not offered"); \
} while (0)

/* 6.1's harness runs the test body even when its setup skipped. */
#define RETURN_IF_SETUP_SKIPPED() do {					\
	if (_metadata->skip)						\
		return;							\
} while (0)

/* A non-blocking file with a 64-record ring mapped. */
FIXTURE(ring)
{
	int fd;		/* O_NONBLOCK */
	struct t_ring r;
};

FIXTURE_SETUP(ring)
{
	int ret;

	self->fd = t_open(O_NONBLOCK);
	ASSERT_LE(0, self->fd);
	ret = t_ring_map(&self->r, self->fd, 64);
	if (ret == -ENOTTY)
		SKIP(return, "no record ring: QTIMER_FEAT_RING not offered");
	ASSERT_EQ(0, ret);
}

FIXTURE_TEARDOWN(ring)
{
	t_ring_unmap(&self->r);
	if (self->fd >= 0)
		close(self->fd);
}

#endif /* _QT_TEST_RING_HARNESS_H */
