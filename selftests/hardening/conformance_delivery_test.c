// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * One-shots, relative and absolute, on CLOCK_REALTIME, CLOCK_MONOTONIC and
 * CLOCK_BOOTTIME, and tickers on each: qtimer delivers what timerfd does,
 * never before it.
 *
 * Part of the differential conformance with timerfd: conformance.h says
 * how a pair is run and judged.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <sys/timerfd.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "conformance.h"

/* --- one-shots, on each clock, relative and absolute --------------------- */

FIXTURE(oneshot) {
};

FIXTURE_VARIANT(oneshot) {
	const char *name;
	int clockid;
	bool abs;
};

FIXTURE_VARIANT_ADD(oneshot, realtime_relative) {
	"realtime relative", CLOCK_REALTIME, false };
FIXTURE_VARIANT_ADD(oneshot, realtime_absolute) {
	"realtime absolute", CLOCK_REALTIME, true };
FIXTURE_VARIANT_ADD(oneshot, monotonic_relative) {
	"monotonic relative", CLOCK_MONOTONIC, false };
FIXTURE_VARIANT_ADD(oneshot, monotonic_absolute) {
	"monotonic absolute", CLOCK_MONOTONIC, true };
FIXTURE_VARIANT_ADD(oneshot, boottime_relative) {
	"boottime relative", CLOCK_BOOTTIME, false };
FIXTURE_VARIANT_ADD(oneshot, boottime_absolute) {
	"boottime absolute", CLOCK_BOOTTIME, true };

FIXTURE_SETUP(oneshot)
{
	ASSERT_EQ(0, pin_here());
}

FIXTURE_TEARDOWN(oneshot)
{
}

/* Due at once (1 ns; absolute: long past, or 1 s ago), soon, later. */
TEST_F(oneshot, same_delivery_as_timerfd)
{
	static const __s64 after[] = { 1, 20 * MS, 150 * MS };
	static const char *const what[] = { "now + 1 ns", "now + 20 ms",
					    "now + 150 ms" };
	int c = variant->clockid;
	unsigned int i;
	char name[64];

	for (i = 0; i < 3; i++) {
		__s64 v = variant->abs ? t_now(c) + after[i] : after[i];

		snprintf(name, sizeof(name), "%s %s", variant->name, what[i]);
		ASSERT_EQ(0, one_shot(name, c, variant->abs, v));
	}
	if (variant->abs) {
		snprintf(name, sizeof(name), "%s now - 1 s", variant->name);
		ASSERT_EQ(0, one_shot(name, c, true, t_now(c) - NSEC_PER_SEC));
		snprintf(name, sizeof(name), "%s 1 ns", variant->name);
		ASSERT_EQ(0, one_shot(name, c, true, 1));
	}
}

/* --- tickers ---------------------------------------------------------------- */

FIXTURE(tick) {
};

FIXTURE_VARIANT(tick) {
	const char *name;
	int clockid;
	bool abs;
	int period_ms;
};

FIXTURE_VARIANT_ADD(tick, realtime_relative_100ms) {
	"realtime relative ticker 100 ms", CLOCK_REALTIME, false, 100 };
FIXTURE_VARIANT_ADD(tick, realtime_absolute_50ms) {
	"realtime absolute ticker 50 ms", CLOCK_REALTIME, true, 50 };
FIXTURE_VARIANT_ADD(tick, monotonic_relative_50ms) {
	"monotonic relative ticker 50 ms", CLOCK_MONOTONIC, false, 50 };
FIXTURE_VARIANT_ADD(tick, monotonic_absolute_100ms) {
	"monotonic absolute ticker 100 ms", CLOCK_MONOTONIC, true, 100 };
FIXTURE_VARIANT_ADD(tick, boottime_relative_100ms) {
	"boottime relative ticker 100 ms", CLOCK_BOOTTIME, false, 100 };
FIXTURE_VARIANT_ADD(tick, boottime_absolute_50ms) {
	"boottime absolute ticker 50 ms", CLOCK_BOOTTIME, true, 50 };

FIXTURE_SETUP(tick)
{
	ASSERT_EQ(0, pin_here());
}

FIXTURE_TEARDOWN(tick)
{
}

TEST_F(tick, same_counts_as_timerfd)
{
	__s64 period = variant->period_ms * MS;
	__s64 first = variant->abs ? t_now(variant->clockid) + period : period;

	ASSERT_EQ(0, ticker(variant->name, variant->clockid, variant->abs, first,
			    period, NSEC_PER_SEC));
}

TEST_HARNESS_MAIN
