// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * One file shared by threads on several CPUs (qtimer_shard.h): their ids,
 * armed at once, are all distinct and all counted, and when they cancel
 * each other's timers, exactly one CANCEL finds each, whether the threads
 * that armed them still run or have exited.
 */
#define _GNU_SOURCE
#include <pthread.h>

#include "kselftest_harness.h"
#include "qtimer_shard.h"

/* --- one file, threads on several CPUs ------------------------------------ */

/* Timers each sharer arms; its ops go in SUBMITs of SHARE_BATCH, or singly. */
#define SHARE_TIMERS	2000
#define SHARE_BATCH	32

struct sharer {
	int fd, idx, nr, per;
	int arm_cpu, cancel_cpu;
	bool arm, cancel;
	pthread_barrier_t *bar;
	__u64 *ids;		/* nr * per: sharer i's at [i * per] */
	_Atomic int *armed;	/* per id: CANCELs that found it armed */
	_Atomic int *gone;	/* per id: CANCELs that found nothing */
	int failed;		/* pinning, ARMs, CANCELs returning else */
};

static void share_arm(struct sharer *s)
{
	struct qtimer_op ops[SHARE_BATCH];
	int first = s->idx * s->per, k = 0, i, b;

	while (k < s->per) {
		b = min_int(s->per - k, SHARE_BATCH);
		for (i = 0; i < b; i++)
			ops[i] = far_op(first + k + i);
		/* Every third batch one ARM at a time. */
		if ((k / SHARE_BATCH) % 3 == 2) {
			for (i = 0; i < b; i++)
				ops[i].result = t_arm_op(s->fd, &ops[i]);
		} else if (t_submit(s->fd, ops, b, 0, NULL) != b) {
			s->failed++;
			return;
		}
		for (i = 0; i < b; i++) {
			s->failed += ops[i].result != 0;
			s->ids[first + k + i] = ops[i].id;
		}
		k += b;
	}
}

/*
 * CANCEL every other sharer's ids, walking them forwards or backwards by
 * the parity of this sharer, so that several CPUs go for the same id at
 * about the same time; in SUBMITs and singly, by turns.
 */
static void share_cancel(struct sharer *s)
{
	struct qtimer_op ops[SHARE_BATCH];
	int gid[SHARE_BATCH];
	int j, k, i, b;

	for (j = 1; j < s->nr; j++) {
		int first = ((s->idx + j) % s->nr) * s->per;

		for (k = 0; k < s->per; k += b) {
			b = min_int(s->per - k, SHARE_BATCH);
			for (i = 0; i < b; i++) {
				gid[i] = first + (s->idx % 2 ? s->per - 1 - (k + i) : k + i);
				ops[i] = id_op(QTIMER_OP_CANCEL, s->ids[gid[i]]);
			}
			if ((k / SHARE_BATCH) % 2) {
				for (i = 0; i < b; i++)
					ops[i].result = t_cancel(s->fd, ops[i].id);
			} else if (t_submit(s->fd, ops, b, 0, NULL) != b) {
				s->failed++;
				return;
			}
			for (i = 0; i < b; i++) {
				if (ops[i].result == QTIMER_CANCEL_ARMED)
					atomic_fetch_add(&s->armed[gid[i]], 1);
				else if (ops[i].result == -ENOENT)
					atomic_fetch_add(&s->gone[gid[i]], 1);
				else
					s->failed++;
			}
		}
	}
}

static void *share_run(void *arg)
{
	struct sharer *s = arg;

	if (s->arm) {
		if (t_pin_self(s->arm_cpu))
			s->failed++;
		pthread_barrier_wait(s->bar);	/* all arm at once */
		share_arm(s);
		if (!s->cancel)
			return NULL;
		pthread_barrier_wait(s->bar);	/* all armed: the count */
	}
	if (t_pin_self(s->cancel_cpu))
		s->failed++;
	pthread_barrier_wait(s->bar);		/* all cancel at once */
	share_cancel(s);
	return NULL;
}

/*
 * Sharers, each on its own CPU, arm on one file at once: every id is
 * distinct and the file counts them all.  Then each cancels the timers
 * all the others armed, so that up to three CPUs race for each id:
 * exactly one CANCEL finds it armed, the others find nothing.  With
 * @armers_exit the arming threads are gone before new ones, each on the
 * CPU of another armer, cancel.
 */
static void shared_fd_threads(struct __test_metadata *_metadata,
			      FIXTURE_DATA(shard) *self, bool armers_exit)
{
	const int nr = min_int(self->nr_cpus, MAX_THREADS);
	const int per = SHARE_TIMERS;
	const int n = nr * per;
	struct sharer s[MAX_THREADS];
	pthread_t thr[MAX_THREADS];
	pthread_barrier_t bar;
	__u64 *ids = calloc(n, sizeof(*ids));
	_Atomic int *armed = calloc(n, sizeof(*armed));
	_Atomic int *gone = calloc(n, sizeof(*gone));
	int i, k, failed = 0, wrong = 0;

	ASSERT_TRUE(ids && armed && gone);
	ASSERT_EQ(0, pthread_barrier_init(&bar, NULL, nr + 1));
	for (i = 0; i < nr; i++) {
		s[i] = (struct sharer){
			.fd = self->fd, .idx = i, .nr = nr, .per = per,
			.arm_cpu = self->cpus[i],
			.cancel_cpu = self->cpus[armers_exit ? (i + 1) % nr : i],
			.arm = true, .cancel = !armers_exit, .bar = &bar,
			.ids = ids, .armed = armed, .gone = gone,
		};
		ASSERT_EQ(0, pthread_create(&thr[i], NULL, share_run, &s[i]));
	}
	pthread_barrier_wait(&bar);
	if (armers_exit) {
		for (i = 0; i < nr; i++)
			ASSERT_EQ(0, pthread_join(thr[i], NULL));
	} else {
		pthread_barrier_wait(&bar);
	}
	EXPECT_EQ(0, count_repeats(ids, n));
	EXPECT_EQ(n, t_fdinfo_get(self->fd, QT_FI_TIMERS));
	if (armers_exit) {
		for (i = 0; i < nr; i++) {
			failed += s[i].failed;
			s[i].failed = 0;
			s[i].arm = false;
			s[i].cancel = true;
			ASSERT_EQ(0, pthread_create(&thr[i], NULL, share_run,
						    &s[i]));
		}
	}
	pthread_barrier_wait(&bar);
	for (i = 0; i < nr; i++) {
		ASSERT_EQ(0, pthread_join(thr[i], NULL));
		failed += s[i].failed;
	}
	EXPECT_EQ(0, failed);
	for (k = 0; k < n; k++) {
		if (armed[k] == 1 && gone[k] == nr - 2)
			continue;
		if (wrong++ < 5)
			t_diag("timer %d: %d CANCELs found it armed, %d found nothing",
				k, armed[k], gone[k]);
	}
	EXPECT_EQ(0, wrong);
	EXPECT_EQ(0, t_fdinfo_get(self->fd, QT_FI_TIMERS));
	EXPECT_EQ(0, t_nothing_pending(self->fd));
	pthread_barrier_destroy(&bar);
	free(ids);
	free((void *)armed);
	free((void *)gone);
}

TEST_F_TIMEOUT(shard, shared_fd_threads, 120)
{
	REQUIRE_CPUS(2);
	shared_fd_threads(_metadata, self, false);
}

TEST_F_TIMEOUT(shard, shared_fd_threads_armers_exited, 120)
{
	REQUIRE_CPUS(2);
	shared_fd_threads(_metadata, self, true);
}

TEST_HARNESS_MAIN
