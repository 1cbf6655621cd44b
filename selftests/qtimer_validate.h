/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * Input validation, one check per test, split by what is validated into
 * qtimer_validate_{arm,cpu,modify,io}_test.c, which share the `validate`
 * fixture here.  Each test starts from a valid request and breaks exactly
 * one thing, so the check under test is the one that fires.  A rejected
 * call must change nothing (a rejected MODIFY or CANCEL leaves its timer
 * armed as before; a rejected or faulting read loses no record), and the
 * file must keep working afterwards, which the fixture's teardown checks
 * after every test.  Like lib/ring_harness.h it expands inside a suite, so
 * each suite includes it once.
 */
#ifndef _QT_TEST_VALIDATE_H
#define _QT_TEST_VALIDATE_H

#include "kselftest_harness.h"
#include "helpers.h"

FIXTURE(validate)
{
	int fd;
	__u64 victim;	/* a live timer 20 s away, for CANCEL and MODIFY */
};

FIXTURE_SETUP(validate)
{
	self->fd = t_open(O_NONBLOCK);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, t_arm(self->fd, CLOCK_MONOTONIC, 0, 20 * NSEC_PER_SEC,
			    0, 0xdead, &self->victim));
}

FIXTURE_TEARDOWN(validate)
{
	struct qtimer_record rec;
	__u64 id = 0;

	/* Rejected calls changed nothing: the victim is armed as before... */
	EXPECT_EQ(QTIMER_CANCEL_ARMED, t_cancel(self->fd, self->victim));
	/* ... and the file still works. */
	EXPECT_EQ(0, t_arm(self->fd, CLOCK_MONOTONIC, 0, 0, 0, 0xf00d, &id));
	EXPECT_EQ(1, t_collect(self->fd, &rec, 1, QT_ARRIVE_MS));
	EXPECT_EQ(id, rec.id);
	EXPECT_EQ(0xf00d, rec.cookie);
	close(self->fd);
}

/* A valid ARM that would fire at once if it were (wrongly) accepted. */
static inline struct qtimer_op good_arm(void)
{
	return t_op(CLOCK_MONOTONIC, 0, 0, 0, 1);
}

/* Nothing was armed by the rejected ARMs of expiry 0 above. */
#define EXPECT_NOTHING_ARMED(fd) do {			\
	t_sleep_ms(100);				\
	EXPECT_EQ(0, t_nothing_pending(fd));		\
} while (0)

#endif /* _QT_TEST_VALIDATE_H */
