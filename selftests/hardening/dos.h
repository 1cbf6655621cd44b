/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * Denial-of-service bounds: what one user can make the kernel do, one
 * suite a kind of bound.
 *
 *  - dos_storm_test.c: 10^6 timers due at the same instant, spread over
 *    every CPU's heap, are all delivered exactly once, while a process
 *    started meanwhile keeps spawning /bin/true and each spawn completes
 *    within a second (five under TCG, where the guest runs 10-50x slower
 *    and unevenly): the expiry work must leave hard-irq context and yield.
 *    The VM's console scanner fails the run on any lockup or stall report.
 *    Tickers with a 1 ns period that nobody reads cost one expiry each and
 *    then nothing: the CPUs stay idle and the machine responsive, and the
 *    one pending record counts every period that passed.
 *  - dos_caps_test.c: the per-file and per-user caps hold exactly under
 *    concurrent arming, and another user is not affected by one at its cap.
 *  - dos_memcg_test.c: in a memory cgroup (memory.max 16M), timer memory is
 *    charged to the cgroup: arming until failure ends in -ENOMEM for the
 *    arming task, which is exempt from the OOM killer (no kernel OOM panic,
 *    no victim anywhere; the memcg OOM report on the console is expected),
 *    memory.current grows with the timers and falls back when the file is
 *    closed.  A cgroup's bill holds its own timers and not the growth of a
 *    heap another tenant filled (memcg_pays_no_other_tenants_heap_growth).
 *
 * QT_DOS_TIMERS sets the size of the storm (default 1000000; 32768 on a
 * debug kernel, where each operation costs 10-20 times more under TCG:
 * still 128 times what one callback may fire, so the budget engages).
 *
 * What the three share is here, the `dos` fixture above all, which raises
 * the caps and puts them (and a stepped clock) back.  Like
 * lib/ring_harness.h it expands inside a suite, so each includes it once.
 */
#ifndef _QT_DOS_H
#define _QT_DOS_H

#include "kselftest_harness.h"
#include "helpers.h"

#define PARAM_FD	QT_PARAMS "max_timers_per_fd"
#define PARAM_USER	QT_PARAMS "max_timers_per_user"

/* @len bytes shared with the children forked after: zeroed, or NULL. */
static inline void *shared_map(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* Raise the caps if they are below @n (root only); restore in teardown. */
FIXTURE(dos)
{
	struct t_knob knobs[4];
	int nr_knobs;
	bool root;
	__s64 real_offset;	/* CLOCK_REALTIME - CLOCK_MONOTONIC to restore */
	bool stepped;
};

FIXTURE_SETUP(dos)
{
	self->root = !geteuid() && !access(PARAM_FD, W_OK);
}

FIXTURE_TEARDOWN(dos)
{
	int i;

	if (self->stepped)
		EXPECT_EQ(0, t_set_realtime(t_now(CLOCK_MONOTONIC) + self->real_offset));
	for (i = self->nr_knobs - 1; i >= 0; i--)
		EXPECT_EQ(0, t_knob_restore(&self->knobs[i]));
}

static int set_param(FIXTURE_DATA(dos) *self, const char *path,
		     unsigned long long val)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%llu", val);
	return t_knob_set(&self->knobs[self->nr_knobs++], path, buf);
}

#endif /* _QT_DOS_H */
