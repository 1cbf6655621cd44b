// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * Forged ids (qtimer_shard.h): whatever an id puts in its shard's bits,
 * one that is not live names nothing, from any CPU.
 */
#define _GNU_SOURCE

#include "kselftest_harness.h"
#include "qtimer_shard.h"

/* --- forged ids ------------------------------------------------------------ */

/* Timers a CPU arms for forged_ids, and how many of them are forged from. */
#define FORGE_LIVE	8
#define FORGE_FROM	2

/* What a CANCEL or MODIFY of an id that names nothing may return. */
static bool forged_refused(int ret)
{
	return ret == -ENOENT || ret == -EINVAL;
}

/*
 * Every CPU arms a few timers in the file, so that every shard exists
 * and holds the same slots.  From another CPU than each real id's, every
 * single-bit change of it and every other value of its bits 24-31 (the
 * low bits of the shard number) that is not itself a
 * live id is refused by CANCEL and by MODIFY to fire now (-ENOENT, or
 * -EINVAL for a form the module rejects), and touches nothing: after a
 * while nothing fired, a MODIFY of each real id to fire now finds it
 * armed, and each fires exactly once.
 */
TEST_F_TIMEOUT(shard, forged_ids, 120)
{
	const int nc = min_int(self->nr_cpus, MAX_CPUS);
	const int n = nc * FORGE_LIVE;
	__u64 live[MAX_CPUS * FORGE_LIVE];
	struct qtimer_record recs[MAX_CPUS * FORGE_LIVE + 1];
	int c, i, k, got, tried = 0, wrong = 0;
	unsigned char seen[MAX_CPUS * FORGE_LIVE] = { 0 };

	for (c = 0; c < nc; c++) {
		ASSERT_EQ(0, t_pin_self(self->cpus[c]));
		ASSERT_EQ(0, arm_far(self->fd, live + c * FORGE_LIVE, FORGE_LIVE,
				     c * FORGE_LIVE));
	}
	EXPECT_EQ(0, count_repeats(live, n));

	for (c = 0; c < nc; c++) {
		ASSERT_EQ(0, t_pin_self(self->cpus[(c + 1) % nc]));
		for (i = 0; i < FORGE_FROM; i++) {
			__u64 id = live[c * FORGE_LIVE + i * (FORGE_LIVE - 1)];

			for (k = 0; k < 64 + 256; k++) {
				__u64 forged;
				int ret;

				if (k < 64)
					forged = id ^ 1ULL << k;
				else
					forged = (id & ~(0xffULL << 24)) |
						 (__u64)(k - 64) << 24;
				if (id_in(live, n, forged))
					continue;
				tried++;
				ret = t_cancel(self->fd, forged);
				if (!forged_refused(ret) && wrong++ < 5)
					t_diag("CANCEL of %#llx (from %#llx) returned %d",
						(unsigned long long)forged,
						(unsigned long long)id, ret);
				ret = t_modify(self->fd, forged, 0, 0, 0, 0);
				if (!forged_refused(ret) && wrong++ < 5)
					t_diag("MODIFY of %#llx (from %#llx) returned %d",
						(unsigned long long)forged,
						(unsigned long long)id, ret);
			}
		}
	}
	EXPECT_EQ(0, wrong);
	/* 319 forms an id, less the few that are live ids themselves. */
	EXPECT_LT(nc * FORGE_FROM * 250, tried);
	t_sleep_ms(50);
	EXPECT_EQ(0, t_nothing_pending(self->fd));
	EXPECT_EQ(n, t_fdinfo_get(self->fd, QT_FI_TIMERS));

	for (k = 0, wrong = 0; k < n; k++)
		if (t_modify(self->fd, live[k], 0, 0, 0, 0) != QTIMER_CANCEL_ARMED &&
		    wrong++ < 5)
			t_diag("MODIFY of real timer %d did not find it armed", k);
	EXPECT_EQ(0, wrong);
	got = t_collect(self->fd, recs, n, QT_ARRIVE_MS);
	EXPECT_EQ(n, got);
	for (i = 0, wrong = 0; i < got; i++) {
		k = recs[i].cookie;
		if (k < 0 || k >= n || recs[i].id != live[k] || seen[k]++)
			wrong++;
	}
	EXPECT_EQ(0, wrong);
	t_sleep_ms(50);
	EXPECT_EQ(0, t_nothing_pending(self->fd));
	EXPECT_EQ(0, t_fdinfo_get(self->fd, QT_FI_TIMERS));
}

TEST_HARNESS_MAIN
