// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * An id used from another CPU than its own shard's (qtimer_shard.h): an id
 * armed on one CPU is cancelled and modified from another with the
 * results it gets at home, singly and in a SUBMIT that hops between CPUs'
 * timers.
 */
#define _GNU_SOURCE

#include "kselftest_harness.h"
#include "qtimer_shard.h"

/* SUBMITs ops[0..n) in batches, each op run: 0 or -errno. */
static int submit_all(int fd, struct qtimer_op *ops, int n)
{
	int done = 0;

	while (done < n) {
		int b = min_int(n - done, QTIMER_SUBMIT_MAX);
		int ret = t_submit(fd, ops + done, b, 0, NULL);

		if (ret != b)
			return ret < 0 ? ret : -EIO;
		done += b;
	}
	return 0;
}

/*
 * MODIFY (@modify) or CANCEL of ids[order[0..n)], the first half one
 * ioctl each, the rest through SUBMIT; results into res[], indexed like
 * ids.  A MODIFY gets schedule when[k] (absolute if @abs, else relative).
 */
static int act_each(int fd, const __u64 *ids, const int *order, int n,
		    bool modify, const __s64 *when, bool abs, int *res)
{
	struct qtimer_op *ops = calloc(n + 1, sizeof(*ops));
	__u32 flags = abs ? QTIMER_F_ABSTIME : 0;
	int half = n / 2, i, ret;

	if (!ops)
		return -ENOMEM;
	for (i = 0; i < half; i++) {
		int k = order[i];

		res[k] = modify ? t_modify(fd, ids[k], flags, when[k], 0, 0) :
				  t_cancel(fd, ids[k]);
	}
	for (i = half; i < n; i++) {
		int k = order[i];

		ops[i - half] = id_op(modify ? QTIMER_OP_MODIFY : QTIMER_OP_CANCEL,
				      ids[k]);
		if (modify) {
			ops[i - half].flags = flags;
			ops[i - half].expires_ns = when[k];
		}
	}
	ret = submit_all(fd, ops, n - half);
	for (i = half; !ret && i < n; i++)
		res[order[i]] = ops[i - half].result;
	free(ops);
	return ret;
}

/* How many of res[0..n) are not @want, the first few shown. */
static int count_unlike(const int *res, int n, int want, const char *what)
{
	int k, unlike = 0;

	for (k = 0; k < n; k++) {
		if (res[k] == want)
			continue;
		if (unlike++ < 5)
			t_diag("%s of timer %d returned %d, not %d", what, k,
				res[k], want);
	}
	return unlike;
}

/* --- an id used from another CPU ----------------------------------------- */

/* Timers cross_cpu_cancel and cross_cpu_modify arm, and each CPU for submit_hops. */
#define CROSS_TIMERS	5000
#define HOP_TIMERS	600

/*
 * One-shots armed on one CPU (in its shard) and
 * cancelled from another: each CANCEL finds its timer armed, exactly once;
 * after that CANCEL and MODIFY find nothing, asked from either CPU (a
 * MODIFY that found one would fire it now), and the file's count of
 * timers is back at zero.
 */
TEST_F_TIMEOUT(shard, cross_cpu_cancel, 120)
{
	const int n = CROSS_TIMERS;
	__u64 *ids = calloc(n, sizeof(*ids));
	__s64 *now = calloc(n, sizeof(*now));
	int *order = calloc(n, sizeof(*order)), *res = calloc(n, sizeof(*res));
	struct t_rng rng;
	int c;

	REQUIRE_CPUS(2);
	ASSERT_TRUE(ids && now && order && res);
	t_rng_seed(&rng, t_now(CLOCK_MONOTONIC));
	ASSERT_EQ(0, t_pin_self(self->cpus[0]));
	ASSERT_EQ(0, arm_far(self->fd, ids, n, 0));
	EXPECT_EQ(0, count_repeats(ids, n));
	EXPECT_EQ(n, t_fdinfo_get(self->fd, QT_FI_TIMERS));

	ASSERT_EQ(0, t_pin_self(self->cpus[1]));
	t_shuffle(order, n, &rng);
	ASSERT_EQ(0, act_each(self->fd, ids, order, n, false, NULL, false, res));
	EXPECT_EQ(0, count_unlike(res, n, QTIMER_CANCEL_ARMED,
				  "CANCEL from another CPU"));
	EXPECT_EQ(0, t_fdinfo_get(self->fd, QT_FI_TIMERS));

	for (c = 1; c >= 0; c--) {
		ASSERT_EQ(0, t_pin_self(self->cpus[c]));
		t_shuffle(order, n, &rng);
		ASSERT_EQ(0, act_each(self->fd, ids, order, n, false, NULL,
				      false, res));
		EXPECT_EQ(0, count_unlike(res, n, -ENOENT, "second CANCEL"));
		ASSERT_EQ(0, act_each(self->fd, ids, order, n, true, now,
				      false, res));
		EXPECT_EQ(0, count_unlike(res, n, -ENOENT,
					  "MODIFY after CANCEL"));
	}
	t_sleep_ms(50);
	EXPECT_EQ(0, t_nothing_pending(self->fd));
	EXPECT_EQ(0, t_fdinfo_get(self->fd, QT_FI_TIMERS));
	free(ids);
	free(now);
	free(order);
	free(res);
}

/*
 * MODIFY from other CPUs: timers armed on one CPU are moved later from a
 * second (the lazy path: only the fields change) and then earlier, to fire
 * soon, from a third (a new heap entry; for the relative CLOCK_REALTIME
 * ones, made absolute, a move to the realtime heap).  Every MODIFY finds
 * its timer armed.  Each timer keeps its id and cookie and fires exactly
 * once, at its last time and not before, in the order of those times on
 * each clock (MODIFY keeps the CPU, so one heap per clock fires them);
 * after that its id names nothing.
 */
TEST_F_TIMEOUT(shard, cross_cpu_modify, 120)
{
	const int n = CROSS_TIMERS;
	const __s64 spacing = 10 * NSEC_PER_USEC;
	__u64 *ids = calloc(n, sizeof(*ids));
	__s64 *when = calloc(n, sizeof(*when));
	int *order = calloc(n, sizeof(*order)), *res = calloc(n, sizeof(*res));
	unsigned char *seen = calloc(n, 1);
	struct qtimer_record recs[256];
	__s64 last[NR_FAR_CLOCKS] = { 0 }, start[NR_FAR_CLOCKS];
	int got = 0, wrong = 0, early = 0, disorder = 0, twice = 0;
	struct t_rng rng;
	int k, c;

	REQUIRE_CPUS(2);
	ASSERT_TRUE(ids && when && order && res && seen);
	t_rng_seed(&rng, t_now(CLOCK_MONOTONIC));
	ASSERT_EQ(0, t_pin_self(self->cpus[0]));
	ASSERT_EQ(0, arm_far(self->fd, ids, n, 0));

	ASSERT_EQ(0, t_pin_self(self->cpus[1]));
	for (k = 0; k < n; k++)
		when[k] = 2 * FAR_NS + k;
	t_shuffle(order, n, &rng);
	ASSERT_EQ(0, act_each(self->fd, ids, order, n, true, when, false, res));
	EXPECT_EQ(0, count_unlike(res, n, QTIMER_CANCEL_ARMED,
				  "MODIFY later from another CPU"));

	ASSERT_EQ(0, t_pin_self(self->cpus[2 % self->nr_cpus]));
	for (c = 0; c < NR_FAR_CLOCKS; c++)
		start[c] = t_now(far_clocks[c]) + 100 * NSEC_PER_MSEC;
	for (k = 0; k < n; k++) {
		when[k] = start[k % NR_FAR_CLOCKS] + k * spacing;
		order[k] = k;
	}
	ASSERT_EQ(0, act_each(self->fd, ids, order, n, true, when, true, res));
	EXPECT_EQ(0, count_unlike(res, n, QTIMER_CANCEL_ARMED,
				  "MODIFY earlier from another CPU"));

	while (got < n) {
		__s64 stamp[NR_FAR_CLOCKS];
		int i, nr;

		if (t_wait_readable(self->fd, QT_ARRIVE_MS) != 1)
			break;
		nr = t_read(self->fd, recs, 256);
		for (c = 0; c < NR_FAR_CLOCKS; c++)
			stamp[c] = t_now(far_clocks[c]);
		if (nr == -EAGAIN)
			continue;
		ASSERT_LT(0, nr);
		for (i = 0; i < nr; i++) {
			const struct qtimer_record *r = &recs[i];

			got++;
			k = r->cookie;
			if (r->cookie >= (__u64)n || r->id != ids[k] ||
			    r->expires_ns != when[k] || r->count != 1 ||
			    r->flags != QTIMER_REC_LAST) {
				if (wrong++ < 5)
					t_diag("record id %#llx cookie %llu expires %lld count %u flags %#x",
						(unsigned long long)r->id,
						(unsigned long long)r->cookie,
						(long long)r->expires_ns, r->count,
						r->flags);
				continue;
			}
			c = k % NR_FAR_CLOCKS;
			twice += seen[k]++ > 0;
			early += stamp[c] < r->expires_ns;
			disorder += r->expires_ns < last[c];
			last[c] = r->expires_ns;
		}
	}
	EXPECT_EQ(n, got);
	EXPECT_EQ(0, wrong);
	EXPECT_EQ(0, twice);
	EXPECT_EQ(0, early);
	EXPECT_EQ(0, disorder);

	/* Fired and read: gone, and the hour-away schedules with them. */
	t_shuffle(order, n, &rng);
	ASSERT_EQ(0, act_each(self->fd, ids, order, n, false, NULL, false, res));
	EXPECT_EQ(0, count_unlike(res, n, -ENOENT, "CANCEL after the record"));
	EXPECT_EQ(0, t_nothing_pending(self->fd));
	EXPECT_EQ(0, t_fdinfo_get(self->fd, QT_FI_TIMERS));
	free(ids);
	free(when);
	free(order);
	free(res);
	free(seen);
}

/*
 * One SUBMIT whose ops name the timers of several CPUs in turn, CANCEL and
 * MODIFY, between ARMs on the CPU that submits: a chunk that carries one
 * shard's lock into an op on another shard's timer must let go of it
 * first.  Every op gets the result it would get alone, and afterwards
 * exactly the timers that should be armed are.
 */
TEST_F_TIMEOUT(shard, submit_hops_between_cpus, 120)
{
	const int nc = min_int(self->nr_cpus, MAX_THREADS);
	const int per = HOP_TIMERS;
	const int n = nc * per;
	__u64 *ids = calloc(2 * n, sizeof(*ids));
	struct qtimer_op *ops = calloc(n, sizeof(*ops));
	int *res = calloc(2 * n, sizeof(*res)), *want = calloc(2 * n, sizeof(*want));
	int *order = calloc(2 * n, sizeof(*order));
	int i, c, k, wrong = 0, nr_ids = n;

	REQUIRE_CPUS(2);
	ASSERT_TRUE(ids && ops && res && want && order);
	for (c = 0; c < nc; c++) {
		ASSERT_EQ(0, t_pin_self(self->cpus[c]));
		ASSERT_EQ(0, arm_far(self->fd, ids + c * per, per, c * per));
	}
	ASSERT_EQ(0, t_pin_self(self->cpus[nc - 1]));
	/* Op i names timer i / nc of CPU i % nc: every op changes shard. */
	for (i = 0; i < n; i++) {
		k = (i % nc) * per + i / nc;
		switch (i % 3) {
		case 0:
			ops[i] = id_op(QTIMER_OP_CANCEL, ids[k]);
			want[k] = -ENOENT;
			break;
		case 1:
			ops[i] = id_op(QTIMER_OP_MODIFY, ids[k]);
			ops[i].expires_ns = 2 * FAR_NS;
			want[k] = QTIMER_CANCEL_ARMED;
			break;
		default:
			ops[i] = far_op(n + i);
			want[k] = QTIMER_CANCEL_ARMED;
			break;
		}
	}
	ASSERT_EQ(0, submit_all(self->fd, ops, n));
	for (i = 0; i < n; i++) {
		int expect = i % 3 == 2 ? 0 : QTIMER_CANCEL_ARMED;

		if (ops[i].result != expect && wrong++ < 5)
			t_diag("op %d (opcode %u) returned %d, not %d", i,
				ops[i].opcode, ops[i].result, expect);
		if (i % 3 == 2 && !ops[i].result) {
			want[nr_ids] = QTIMER_CANCEL_ARMED;
			ids[nr_ids++] = ops[i].id;
		}
	}
	EXPECT_EQ(0, wrong);
	EXPECT_EQ(n + n / 3, nr_ids);
	EXPECT_EQ(0, count_repeats(ids, nr_ids));
	EXPECT_EQ(nr_ids - (n + 2) / 3, t_fdinfo_get(self->fd, QT_FI_TIMERS));

	/* From yet another CPU: armed exactly where nothing cancelled them. */
	ASSERT_EQ(0, t_pin_self(self->cpus[0]));
	for (k = 0; k < nr_ids; k++)
		order[k] = k;
	ASSERT_EQ(0, act_each(self->fd, ids, order, nr_ids, false, NULL, false,
			      res));
	for (k = 0, wrong = 0; k < nr_ids; k++)
		if (res[k] != want[k] && wrong++ < 5)
			t_diag("CANCEL of timer %d returned %d, not %d", k,
				res[k], want[k]);
	EXPECT_EQ(0, wrong);
	EXPECT_EQ(0, t_fdinfo_get(self->fd, QT_FI_TIMERS));
	free(ids);
	free(ops);
	free(res);
	free(want);
	free(order);
}

TEST_HARNESS_MAIN
