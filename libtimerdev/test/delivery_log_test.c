// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * Natively, that the judge of the event-loop examples' logs can fail: a
 * log with one record dropped, repeated, early or late is rejected, and
 * the same log without the fault is accepted.  (The VM runs the judge on
 * the real logs: examples_test.c.)
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "delivery_log.h"

#define NR		100
#define BOUND		1000000000LL	/* 1 s */

enum fault { NONE, DROP, REPEAT, EXPIRES_EARLY, ARRIVES_EARLY, LATE, UNKNOWN };

/* A log of NR cookies, in a scrambled order, with one fault at cookie 42. */
static void write_log(const char *path, enum fault fault)
{
	FILE *f = fopen(path, "w");
	long long due, expires, arrival;
	unsigned int i, cookie;

	if (!f)
		abort();
	for (i = 0; i < NR; i++) {
		cookie = (i * 37) % NR;
		due = 1000000000LL + cookie * 1000;
		expires = due + 10;
		arrival = expires + 50000;
		if (cookie == 42) {
			if (fault == DROP)
				continue;
			if (fault == EXPIRES_EARLY)
				expires = due - 1;
			if (fault == ARRIVES_EARLY)
				arrival = expires - 1;
			if (fault == LATE)
				arrival = due + BOUND + 1;
			if (fault == UNKNOWN)
				cookie = NR;
		}
		fprintf(f, "%u %lld %lld %lld\n", cookie, due, expires, arrival);
		if (cookie == 42 && fault == REPEAT)
			fprintf(f, "%u %lld %lld %lld\n", cookie, due, expires,
				arrival + 1);
	}
	if (fclose(f))
		abort();
}

FIXTURE(judge) {
	char path[64];
	struct delivery_summary sum;
	char why[256];
};

FIXTURE_SETUP(judge)
{
	int fd;

	snprintf(self->path, sizeof(self->path), "/tmp/delivery_log_test.XXXXXX");
	fd = mkstemp(self->path);
	ASSERT_LE(0, fd);
	close(fd);
}

FIXTURE_TEARDOWN(judge)
{
	unlink(self->path);
}

static int judge(FIXTURE_DATA(judge) *self, enum fault fault)
{
	int ret;

	write_log(self->path, fault);
	ret = delivery_log_check(self->path, NR, BOUND, &self->sum, self->why,
				 sizeof(self->why));
	if (ret)
		printf("# rejected: %s\n", self->why);
	return ret;
}

TEST_F(judge, accepts_every_cookie_once_in_time)
{
	ASSERT_EQ(0, judge(self, NONE));
	EXPECT_EQ(NR, self->sum.once);
	EXPECT_EQ(NR, self->sum.lines);
	EXPECT_EQ(50010, self->sum.max_late_ns);
}

TEST_F(judge, rejects_a_dropped_record)
{
	ASSERT_EQ(-1, judge(self, DROP));
	EXPECT_EQ(1, self->sum.missing);
	EXPECT_EQ(NR - 1, self->sum.once);
}

TEST_F(judge, rejects_a_repeated_record)
{
	ASSERT_EQ(-1, judge(self, REPEAT));
	EXPECT_EQ(1, self->sum.repeated);
	EXPECT_EQ(NR - 1, self->sum.once);
	EXPECT_EQ(0, self->sum.missing);
}

TEST_F(judge, rejects_an_expiry_before_its_due_time)
{
	ASSERT_EQ(-1, judge(self, EXPIRES_EARLY));
	EXPECT_EQ(1, self->sum.early);
}

TEST_F(judge, rejects_an_arrival_before_its_expiry)
{
	ASSERT_EQ(-1, judge(self, ARRIVES_EARLY));
	EXPECT_EQ(1, self->sum.early);
}

TEST_F(judge, rejects_an_arrival_beyond_the_bound)
{
	ASSERT_EQ(-1, judge(self, LATE));
	EXPECT_EQ(1, self->sum.too_late);
}

TEST_F(judge, rejects_an_unknown_cookie)
{
	ASSERT_EQ(-1, judge(self, UNKNOWN));
	EXPECT_EQ(1, self->sum.unknown);
	EXPECT_EQ(1, self->sum.missing);
}

TEST_F(judge, rejects_a_log_that_is_not_there)
{
	unlink(self->path);
	ASSERT_GT(0, delivery_log_check(self->path, NR, BOUND, &self->sum,
					self->why, sizeof(self->why)));
}

TEST_HARNESS_MAIN
