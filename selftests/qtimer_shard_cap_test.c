// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * The per-file cap filled from several CPUs, so from several shards
 * (qtimer_shard.h): it holds exactly, and a SUBMIT's CANCEL frees a place
 * for its own later ARM.
 */
#define _GNU_SOURCE
#include <pthread.h>

#include "kselftest_harness.h"
#include "qtimer_shard.h"

/* --- the per-file cap, filled from several CPUs --------------------------- */

#define CAP		1000	/* max_timers_per_fd for the test */
/* The places left to race for once each thread armed its share. */
#define CAP_RACED	100
#define CAP_ROUNDS	(2 * MAX_THREADS)
#define CAP_BATCH	8

struct capper {
	int fd, cpu;
	int share;		/* timers it arms before the race to the cap */
	pthread_barrier_t *bar;
	__u64 *ids;		/* 2 * CAP + CAP_ROUNDS */
	int nr_ids;		/* ARMs that succeeded, in ids[] */
	int first_cancelled;	/* ids[0..first_cancelled) were cancelled */
	int odd;		/* results neither 0 nor -ENOSPC, or failures */
	bool won[CAP_ROUNDS];	/* its one ARM in that race succeeded */
};

/* Counts one ARM's result; true once the file is full. */
static bool cap_tally(struct capper *c, const struct qtimer_op *op)
{
	if (!op->result) {
		c->ids[c->nr_ids++] = op->id;
		return false;
	}
	c->odd += op->result != -ENOSPC;
	return true;
}

/*
 * ARMs, in SUBMITs of CAP_BATCH and singly by turns, until the file is
 * full or this thread holds @limit timers.  True once the file is full.
 */
static bool cap_fill(struct capper *c, int limit)
{
	struct qtimer_op ops[CAP_BATCH];
	bool full = false;
	int round, i;

	for (round = 0; !full && c->nr_ids < limit; round++) {
		int b = min_int(round % 2 ? 1 : CAP_BATCH, limit - c->nr_ids);

		for (i = 0; i < b; i++) {
			ops[i] = t_op(CLOCK_MONOTONIC, 0, FAR_NS, 0, i);
			ops[i].opcode = QTIMER_OP_ARM;
		}
		if (b == 1) {
			ops[0].result = t_arm_op(c->fd, &ops[0]);
		} else if (t_submit(c->fd, ops, b, 0, NULL) != b) {
			c->odd++;
			return true;
		}
		for (i = 0; i < b; i++)
			full |= cap_tally(c, &ops[i]);
	}
	return full;
}

static void *cap_run(void *arg)
{
	struct capper *c = arg;
	struct qtimer_op op;
	int round;

	c->odd += t_pin_self(c->cpu) != 0;
	pthread_barrier_wait(c->bar);		/* all fill at once */
	c->odd += cap_fill(c, c->share);	/* not full yet */
	pthread_barrier_wait(c->bar);		/* all race for the rest */
	cap_fill(c, 2 * CAP);			/* bounded, should the cap fail */
	pthread_barrier_wait(c->bar);		/* full: the count */
	for (round = 0; round < CAP_ROUNDS; round++) {
		pthread_barrier_wait(c->bar);	/* one place freed */
		op = t_op(CLOCK_MONOTONIC, 0, FAR_NS, 0, round);
		op.result = t_arm_op(c->fd, &op);
		c->won[round] = !op.result;
		cap_tally(c, &op);
		pthread_barrier_wait(c->bar);	/* the race is over */
	}
	return NULL;
}

FIXTURE(cap)
{
	int fd;
	int cpus[MAX_CPUS];
	int nr_cpus;
	long long saved;	/* max_timers_per_fd as found; -1: untouched */
};

FIXTURE_SETUP(cap)
{
	self->fd = -1;
	self->nr_cpus = t_allowed_cpus(self->cpus, MAX_CPUS);
	ASSERT_LT(0, self->nr_cpus);
	self->saved = geteuid() ? -1 : t_param_get("max_timers_per_fd");
}

FIXTURE_TEARDOWN(cap)
{
	if (self->fd >= 0)
		close(self->fd);
	if (self->saved >= 0)
		EXPECT_EQ(0, t_param_set("max_timers_per_fd", self->saved));
}

/*
 * Threads on different CPUs arm on one file, in SUBMITs and singly, each
 * its share of most of the cap and then all of them at once until it is
 * full: together they got exactly max_timers_per_fd, as the uapi
 * header's ENOSPC says ("the file holds its maximum number of timers").
 * Then, over and over, one timer is cancelled from yet another CPU and
 * every thread tries one ARM at once: exactly one gets the place.
 *
 * (A per-CPU counter, as the shards' first design had, would let a file
 * overshoot its cap by up to 64 per CPU, which this test fails: the bound
 * is checked first, on its own, so that the log tells such an overshoot
 * from a broken cap.)
 */
TEST_F_TIMEOUT(cap, per_fd_cap_across_cpus, 120)
{
	const int nr = min_int(self->nr_cpus, MAX_THREADS);
	const int cap = CAP;
	struct capper c[MAX_THREADS];
	pthread_t thr[MAX_THREADS];
	pthread_barrier_t bar;
	int i, round, total = 0, odd = 0;

	REQUIRE_CPUS(2);
	if (self->saved < 0)
		SKIP(return, "needs root and the max_timers_per_fd parameter");
	ASSERT_EQ(0, t_param_set("max_timers_per_fd", cap));
	self->fd = t_open(O_NONBLOCK);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, pthread_barrier_init(&bar, NULL, nr + 1));
	for (i = 0; i < nr; i++) {
		c[i] = (struct capper){
			.fd = self->fd, .cpu = self->cpus[i], .bar = &bar,
			.share = (cap - CAP_RACED) / nr,
			.ids = calloc(2 * CAP + CAP_ROUNDS, sizeof(__u64)),
		};
		ASSERT_NE(NULL, c[i].ids);
		ASSERT_EQ(0, pthread_create(&thr[i], NULL, cap_run, &c[i]));
	}
	pthread_barrier_wait(&bar);
	pthread_barrier_wait(&bar);
	pthread_barrier_wait(&bar);
	for (i = 0; i < nr; i++)
		total += c[i].nr_ids;
	TH_LOG("%d threads filled a file capped at %d with %d timers (%d, %d, %d, %d)",
	       nr, cap, total, c[0].nr_ids, c[1].nr_ids,
	       nr > 2 ? c[2].nr_ids : 0, nr > 3 ? c[3].nr_ids : 0);
	EXPECT_GE(cap + 64 * nr, total) TH_LOG("over the cap by more than 64 a CPU");
	EXPECT_EQ(cap, total);
	EXPECT_EQ(total, t_fdinfo_get(self->fd, QT_FI_TIMERS));

	for (round = 0; round < CAP_ROUNDS; round++) {
		int v = round % nr, won = 0;
		struct capper *victim;

		/* A timer of thread v (its CPU's shard), cancelled from the next CPU. */
		for (i = 0; i < nr && c[v].first_cancelled >= c[v].nr_ids; i++)
			v = (v + 1) % nr;
		victim = &c[v];
		ASSERT_LT(victim->first_cancelled, victim->nr_ids);
		ASSERT_EQ(0, t_pin_self(self->cpus[(v + 1) % nr]));
		EXPECT_EQ(QTIMER_CANCEL_ARMED,
			  t_cancel(self->fd, victim->ids[victim->first_cancelled++]));
		pthread_barrier_wait(&bar);
		pthread_barrier_wait(&bar);
		for (i = 0; i < nr; i++)
			won += c[i].won[round];
		EXPECT_EQ(1, won) TH_LOG("round %d: %d ARMs got the one free place",
					 round, won);
	}
	for (i = 0; i < nr; i++) {
		ASSERT_EQ(0, pthread_join(thr[i], NULL));
		odd += c[i].odd;
		free(c[i].ids);
	}
	EXPECT_EQ(0, odd);
	EXPECT_EQ(total, t_fdinfo_get(self->fd, QT_FI_TIMERS));
	pthread_barrier_destroy(&bar);
}

/*
 * A SUBMIT on a full file: a place one of its CANCELs frees goes to one of
 * its later ARMs, and no more than that (the chunk gives the places its
 * CANCELs freed back at its end, or to its own ARMs first).  Afterwards
 * the file holds its cap again, and a single ARM finds it full.
 */
TEST_F(cap, submit_cancel_frees_a_place_for_its_arm)
{
	const int cap = 16;
	struct qtimer_op ops[5], one;
	__u64 ids[16];
	int i;

	if (self->saved < 0)
		SKIP(return, "needs root and the max_timers_per_fd parameter");
	ASSERT_EQ(0, t_param_set("max_timers_per_fd", cap));
	self->fd = t_open(O_NONBLOCK);
	ASSERT_LE(0, self->fd);
	for (i = 0; i < cap; i++)
		ASSERT_EQ(0, t_arm(self->fd, CLOCK_MONOTONIC, 0, FAR_NS, 0, i, &ids[i]));
	one = t_op(CLOCK_MONOTONIC, 0, FAR_NS, 0, 99);
	EXPECT_EQ(-ENOSPC, t_arm_op(self->fd, &one));

	for (i = 0; i < 5; i++) {
		ops[i] = t_op(CLOCK_MONOTONIC, 0, FAR_NS, 0, 100 + i);
		ops[i].opcode = QTIMER_OP_ARM;
	}
	ops[0] = (struct qtimer_op){ .opcode = QTIMER_OP_CANCEL, .id = ids[0] };
	ops[2] = (struct qtimer_op){ .opcode = QTIMER_OP_CANCEL, .id = ids[1] };
	ASSERT_EQ(5, t_submit(self->fd, ops, 5, 0, NULL));
	EXPECT_EQ(QTIMER_CANCEL_ARMED, ops[0].result);
	EXPECT_EQ(0, ops[1].result);
	EXPECT_EQ(QTIMER_CANCEL_ARMED, ops[2].result);
	EXPECT_EQ(0, ops[3].result);
	EXPECT_EQ(-ENOSPC, ops[4].result);
	EXPECT_EQ(cap, t_fdinfo_get(self->fd, QT_FI_TIMERS));
	one = t_op(CLOCK_MONOTONIC, 0, FAR_NS, 0, 99);
	EXPECT_EQ(-ENOSPC, t_arm_op(self->fd, &one));

	/* Only ARMs after it: the place goes back to the file at the end. */
	ops[0] = (struct qtimer_op){ .opcode = QTIMER_OP_CANCEL, .id = ids[2] };
	ASSERT_EQ(1, t_submit(self->fd, ops, 1, 0, NULL));
	EXPECT_EQ(QTIMER_CANCEL_ARMED, ops[0].result);
	EXPECT_EQ(cap - 1, t_fdinfo_get(self->fd, QT_FI_TIMERS));
	one = t_op(CLOCK_MONOTONIC, 0, FAR_NS, 0, 99);
	EXPECT_EQ(0, t_arm_op(self->fd, &one));
	EXPECT_EQ(cap, t_fdinfo_get(self->fd, QT_FI_TIMERS));
}

TEST_HARNESS_MAIN
