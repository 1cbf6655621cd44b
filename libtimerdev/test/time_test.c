// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * The timespec helpers as a program of each ABI sees them: built natively,
 * as a 32-bit program, and as a 32-bit program with a 64-bit time_t
 * (_TIME_BITS=64), whose struct timespec is twice the size of the
 * library's own 32-bit one.  Each must get conversions of its own struct,
 * and a 32-bit time_t must saturate past 2038, never wrap into the past.
 */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>

#include "kselftest_harness.h"
#include "timerdev.h"
#include "abi_layout.h"

#define NSEC_PER_SEC	1000000000LL
/* 2100-01-01T00:00:00Z, past a 32-bit time_t's end. */
#define SEC_2100	4102444800LL

TEST(abi)
{
	TH_LOG("time_t %zu bytes, struct timespec %zu bytes, long %zu bytes",
	       sizeof(time_t), sizeof(struct timespec), sizeof(long));
#if defined(_TIME_BITS) && _TIME_BITS == 64
	ASSERT_EQ(8, sizeof(time_t));
#endif
}

TEST(ns_from_timespec)
{
	struct timespec ts = { .tv_sec = 3, .tv_nsec = 5 };

	ASSERT_EQ(3000000005LL, td_ns_from_timespec(&ts));
	ts = (struct timespec){ .tv_sec = -2, .tv_nsec = 500000000 };
	ASSERT_EQ(-1500000000LL, td_ns_from_timespec(&ts));
	ts = (struct timespec){ .tv_sec = 1, .tv_nsec = 999999999 };
	ASSERT_EQ(1999999999LL, td_ns_from_timespec(&ts));
}

/* Beyond 2038 and beyond int64_t nanoseconds: a 64-bit time_t only. */
TEST(ns_from_timespec_wide)
{
	struct timespec ts;

	if (sizeof(time_t) < 8)
		SKIP(return, "a 32-bit time_t ends in 2038");
	ts = (struct timespec){ .tv_sec = (time_t)SEC_2100, .tv_nsec = 7 };
	ASSERT_EQ(SEC_2100 * NSEC_PER_SEC + 7, td_ns_from_timespec(&ts));
	/* Saturates rather than wraps: never an early time. */
	ts = (struct timespec){ .tv_sec = (time_t)(INT64_MAX / NSEC_PER_SEC + 1) };
	ASSERT_EQ(INT64_MAX, td_ns_from_timespec(&ts));
	ts = (struct timespec){ .tv_sec = (time_t)(INT64_MIN / NSEC_PER_SEC - 1) };
	ASSERT_EQ(INT64_MIN, td_ns_from_timespec(&ts));
	/* The largest representable second with room for its nanoseconds. */
	ts = (struct timespec){ .tv_sec = (time_t)(INT64_MAX / NSEC_PER_SEC),
				.tv_nsec = INT64_MAX % NSEC_PER_SEC };
	ASSERT_EQ(INT64_MAX, td_ns_from_timespec(&ts));
	ts.tv_nsec++;
	ASSERT_EQ(INT64_MAX, td_ns_from_timespec(&ts));
}

TEST(timespec_from_ns)
{
	struct timespec ts = td_timespec_from_ns(3000000005LL);

	ASSERT_EQ(3, ts.tv_sec);
	ASSERT_EQ(5, ts.tv_nsec);
	/* Negative times are floored so that tv_nsec stays in [0, 1e9). */
	ts = td_timespec_from_ns(-1);
	ASSERT_EQ(-1, ts.tv_sec);
	ASSERT_EQ(999999999, ts.tv_nsec);
	ts = td_timespec_from_ns(-2000000000LL);
	ASSERT_EQ(-2, ts.tv_sec);
	ASSERT_EQ(0, ts.tv_nsec);
}

/* Past 2038: exact with a 64-bit time_t, the latest time with a 32-bit one. */
TEST(timespec_from_ns_after_2038)
{
	struct timespec ts = td_timespec_from_ns(SEC_2100 * NSEC_PER_SEC + 7);

	if (sizeof(time_t) == 8) {
		ASSERT_EQ(SEC_2100, (long long)ts.tv_sec);
		ASSERT_EQ(7, ts.tv_nsec);
	} else {
		ASSERT_EQ(INT32_MAX, (long long)ts.tv_sec);
		ASSERT_EQ(999999999, ts.tv_nsec);
	}
	ts = td_timespec_from_ns(INT64_MIN);
	ASSERT_GT(0, (long long)ts.tv_sec);
	ASSERT_LE(0, ts.tv_nsec);
	ASSERT_GT(NSEC_PER_SEC, ts.tv_nsec);
	if (sizeof(time_t) == 4) {
		ASSERT_EQ(INT32_MIN, (long long)ts.tv_sec);
	} else {
		ASSERT_EQ(INT64_MIN, td_ns_from_timespec(&ts));
	}
}

/* Within what the time_t holds, ns -> timespec -> ns is exact. */
TEST(round_trip)
{
	int64_t lim = sizeof(time_t) == 8 ? INT64_MAX : INT32_MAX * NSEC_PER_SEC;
	int64_t ns;
	int i;

	srand(42);
	for (i = 0; i < 100000; i++) {
		struct timespec ts;

		ns = ((int64_t)rand() << 33) ^ ((int64_t)rand() << 2) ^ rand();
		ns %= lim;
		if (i & 1)
			ns = -ns;
		ts = td_timespec_from_ns(ns);
		ASSERT_GE(ts.tv_nsec, 0);
		ASSERT_LT(ts.tv_nsec, NSEC_PER_SEC);
		ASSERT_EQ(ns, td_ns_from_timespec(&ts));
	}
}

TEST(now)
{
	struct timespec ts;
	int64_t a, b;

	ASSERT_EQ(0, clock_gettime(CLOCK_MONOTONIC, &ts));
	a = td_ns_from_timespec(&ts);
	b = td_now(CLOCK_MONOTONIC);
	ASSERT_LT(0, a);
	ASSERT_LE(a, b);
	ASSERT_GT(a + 10 * NSEC_PER_SEC, b);
}

TEST_HARNESS_MAIN
