/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * What a file's timers must keep doing now that its context is split into
 * per-CPU shards (Documentation/design.rst, "Context shards"),
 * one suite a feature: an id armed on one CPU is cancelled and modified
 * from another with the results it gets at home, singly and in a SUBMIT
 * that hops between CPUs' timers (qtimer_shard_cross_test.c); threads on
 * several CPUs share one file and its ids (qtimer_shard_threads_test.c)
 * and its cap (qtimer_shard_cap_test.c); a one-shot that a reader ends
 * while CANCEL or MODIFY looks its id up (the shards' ENDED window) goes
 * to exactly one of them, through read(), read() on a ring file and the
 * mapped ring (qtimer_shard_window_test.c); and a forged id, whatever it
 * puts in the shard's bits, names nothing (qtimer_shard_forged_test.c).
 *
 * The far timers and id lists they share are qtimer_shard.c's; the
 * `shard` fixture below is declared only where kselftest_harness.h was
 * included first, so that qtimer_shard.c, which is linked into each suite
 * beside it, can include this header too.
 */
#ifndef _QT_TEST_SHARD_H
#define _QT_TEST_SHARD_H

#include "helpers.h"

#define MAX_CPUS	64
/* The most CPUs a test spreads its work over. */
#define MAX_THREADS	4
/* Far enough that no test outlives it: such a timer is armed throughout. */
#define FAR_NS		(3600 * NSEC_PER_SEC)

static inline int min_int(int a, int b)
{
	return a < b ? a : b;
}

/* The clocks far timers cycle through: an id carries its clock. */
extern const int far_clocks[];
#define NR_FAR_CLOCKS	3

int far_clock(long cookie);
struct qtimer_op far_op(long cookie);
int arm_far(int fd, __u64 *ids, int n, long cookie0);
int count_repeats(const __u64 *ids, int n);
bool id_in(const __u64 *ids, int n, __u64 id);
struct qtimer_op id_op(__u16 opcode, __u64 id);

#ifdef __KSELFTEST_HARNESS_H
FIXTURE(shard)
{
	int fd;
	int cpus[MAX_CPUS];
	int nr_cpus;
};

FIXTURE_SETUP(shard)
{
	/* Before any pinning: the CPUs this test may spread over. */
	self->nr_cpus = t_allowed_cpus(self->cpus, MAX_CPUS);
	ASSERT_LT(0, self->nr_cpus);
	self->fd = t_open(O_NONBLOCK);
	ASSERT_LE(0, self->fd);
}

FIXTURE_TEARDOWN(shard)
{
	if (self->fd >= 0)
		close(self->fd);
}

#define REQUIRE_CPUS(n) do {						\
	if (self->nr_cpus < (n))					\
		SKIP(return, "needs %d CPUs to run on, has %d", (n),	\
		     self->nr_cpus);					\
} while (0)

#endif /* __KSELFTEST_HARNESS_H */

#endif /* _QT_TEST_SHARD_H */
