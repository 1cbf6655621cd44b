/* SPDX-License-Identifier: LGPL-2.1 OR MIT */
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * The harness side of the libtimerdev_*_test suites, which run libtimerdev
 * against the real module in the VM, one feature a suite: what they share
 * that has to expand inside a kselftest_harness suite, so that it cannot
 * be compiled into the selftests' helpers (selftests/lib/, libqttest.a,
 * which every suite links for sysfs, fdinfo, poll and the ring's pacing):
 * the `qt` fixture, the skip for a module without the record ring, a spec
 * shorthand and a tally of records.  A suite that has no TEST_F(qt, ...)
 * registers the fixture and runs nothing of it.
 *
 * Every suite goes through the library only, and asserts timing one way
 * only: never early, exactly; late, only within the generous bounds that
 * a QEMU TCG guest needs.
 */
#ifndef _TD_DEVICE_HARNESS_H
#define _TD_DEVICE_HARNESS_H

#include "kselftest_harness.h"
#include "timerdev.h"
#include "helpers.h"

/* How long a test waits for something that should happen. */
#define PATIENCE	(10 * NSEC_PER_SEC)
#define PATIENCE_MS	(PATIENCE / NSEC_PER_MSEC)
#define FAR		(600 * NSEC_PER_SEC)	/* never fires during a test */

#define NEED_RING() do {						\
	if (!t_ring_offered())						\
		SKIP(return, "the module has no QTIMER_FEAT_RING");	\
} while (0)

/* A relative CLOCK_MONOTONIC one-shot. */
static inline struct td_timer_spec mono(int64_t expires_ns, uint64_t cookie)
{
	return (struct td_timer_spec){
		.clockid = CLOCK_MONOTONIC,
		.expires_ns = expires_ns,
		.cookie = cookie,
	};
}

/* Records of one-shots with cookies 0 .. 299, each counted by cookie. */
struct tally {
	unsigned int nr;
	unsigned int per_cookie[300];
	unsigned int bad;
};

/* A td_dispatch() callback: counts @rec into the struct tally @arg. */
static inline void tally_cb(const struct qtimer_record *rec, void *arg)
{
	struct tally *t = arg;

	t->nr++;
	if (rec->cookie < 300 && rec->count == 1 && rec->flags == QTIMER_REC_LAST)
		t->per_cookie[rec->cookie]++;
	else
		t->bad++;
}

FIXTURE(qt) {
	struct td_ctx *ctx;	/* non-blocking */
};

FIXTURE_SETUP(qt)
{
	ASSERT_EQ(0, td_open(&self->ctx, TD_NONBLOCK | TD_CLOEXEC));
}

FIXTURE_TEARDOWN(qt)
{
	td_close(self->ctx);
}

#endif /* _TD_DEVICE_HARNESS_H */
