/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * The harness side of the record ring's suites (selftests/qtimer_ring*_test.c):
 * what they share that has to expand inside a kselftest_harness suite, and
 * so cannot be compiled into libqttest.a with the helpers of ring.c: the
 * skips for a module without QTIMER_FEAT_RING, the setup and teardown of a
 * fixture with a mapped ring, and the `ring` fixture.  A suite that has no
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

/*
 * The setup of every fixture that holds a non-blocking file and a ring of
 * @entries records mapped on it (*fd, *r): it skips when the module offers
 * no ring, which returns from here only, so it comes last in the setup.
 */
static inline void t_ring_fixture_open(struct __test_metadata *_metadata,
				       int *fd, struct t_ring *r,
				       __u32 entries)
{
	int ret;

	*fd = t_open(O_NONBLOCK);
	ASSERT_LE(0, *fd);
	ret = t_ring_map(r, *fd, entries);
	if (ret == -ENOTTY)
		SKIP(return, "no record ring: QTIMER_FEAT_RING not offered");
	ASSERT_EQ(0, ret);
}

/* Its teardown: the mapping (if any) goes before the file. */
static inline void t_ring_fixture_close(int fd, struct t_ring *r)
{
	t_ring_unmap(r);
	if (fd >= 0)
		close(fd);
}

/* A non-blocking file with a 64-record ring mapped. */
FIXTURE(ring)
{
	int fd;		/* O_NONBLOCK */
	struct t_ring r;
};

FIXTURE_SETUP(ring)
{
	t_ring_fixture_open(_metadata, &self->fd, &self->r, 64);
}

FIXTURE_TEARDOWN(ring)
{
	t_ring_fixture_close(self->fd, &self->r);
}

#endif /* _QT_TEST_RING_HARNESS_H */
