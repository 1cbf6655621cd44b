// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * CANCEL racing the record ring's consumer (uapi/linux/qtimer.h, "The
 * record ring"): each timer's record goes to exactly one of the consumer's
 * claim and CANCEL, and CANCEL's result says which.  The race is a suite
 * of its own so that kcsan-6.1 runs it without the rest of the ring's
 * tests (selftests/suites.manifest); qtimer_ring_test has CANCEL and MODIFY
 * against a claim one step at a time.
 *
 * The consumer is selftests/lib/ring.c's, which follows the header to the
 * letter.  A module without QTIMER_FEAT_RING skips the test.
 */
#define _GNU_SOURCE
#include <pthread.h>

#include "kselftest_harness.h"
#include "ring_harness.h"

/* --- CANCEL racing the mapped consumer ---------------------------------- */

#define RACE_TIMERS	400
#define RACE_STEP_NS	(10 * NSEC_PER_USEC)

struct race {
	struct qt_ring *r;
	unsigned char taken[RACE_TIMERS];	/* times each was claimed */
	long foreign;				/* records of no timer here */
	_Atomic bool stop;
	struct qt_rng rng;
};

/*
 * The one consumer: one record a pass, with a short random pause after
 * each, so that records wait READY at the tail where the canceller aims;
 * poll() when the ring is empty; after the stop, on until nothing is
 * pending.
 */
static void *race_consumer(void *arg)
{
	struct race *race = arg;
	struct qtimer_record rec;

	for (;;) {
		int n = qt_ring_consume(race->r, &rec, 1);

		if (n < 0)
			break;
		if (n) {
			__s64 until = qt_now(CLOCK_MONOTONIC) +
				      qt_rand_below(&race->rng, 20 * NSEC_PER_USEC);

			if (rec.cookie < RACE_TIMERS)
				race->taken[rec.cookie]++;
			else
				race->foreign++;
			while (qt_now(CLOCK_MONOTONIC) < until)
				;
			continue;
		}
		if (qt_wait_readable(race->r->fd, 1) == 0 && atomic_load(&race->stop) &&
		    qt_ring_head(race->r) == qt_ring_tail(race->r))
			break;
	}
	return NULL;
}

static void race_fill(struct qtimer_op *op, long k, void *arg)
{
	__s64 base = *(__s64 *)arg;

	*op = qt_op(CLOCK_MONOTONIC, QTIMER_F_ABSTIME, base + k * RACE_STEP_NS,
		    0, k);
}

/*
 * Each timer's record goes to exactly one of the consumer's claim and
 * CANCEL: a timer CANCEL reported gone (-ENOENT) was claimed, once; one
 * whose record or expiry CANCEL prevented (QUEUED, ARMED) was never
 * claimed.  While the timers fire, this thread cancels the timer whose
 * READY record sits at the consumer's tail, the one the consumer is about
 * to claim, so that the two compare-and-swaps meet; then it cancels the
 * rest in a shuffled order.  The ring is small, so records also wait in
 * the kernel.
 */
TEST_F_TIMEOUT(ring, cancel_races_mapped_consumer, 120)
{
	static bool cancelled[RACE_TIMERS];
	static int res[RACE_TIMERS], order[RACE_TIMERS];
	static __u64 ids[RACE_TIMERS];
	static struct race race;
	struct qt_rng rng;
	pthread_t thr;
	int round, k;

	RETURN_IF_SETUP_SKIPPED();
	qt_rng_seed(&rng, (uint64_t)qt_now(CLOCK_MONOTONIC));
	for (round = 0; round < 4; round++) {
		__s64 base = qt_now(CLOCK_MONOTONIC) + 2 * NSEC_PER_MSEC, end;
		int wins[3] = { 0 }, chased = 0, wrong = 0;

		memset(&race, 0, sizeof(race));
		memset(cancelled, 0, sizeof(cancelled));
		race.r = &self->r;
		qt_rng_seed(&race.rng, qt_rand(&rng));
		ASSERT_EQ(0, qt_arm_many(self->fd, RACE_TIMERS, race_fill, &base,
					 ids, RACE_TIMERS));
		ASSERT_EQ(0, pthread_create(&thr, NULL, race_consumer, &race));

		end = base + RACE_TIMERS * RACE_STEP_NS + 20 * NSEC_PER_MSEC;
		while (qt_now(CLOCK_MONOTONIC) < end) {
			__u32 tail = qt_ring_tail(&self->r);
			__u64 cookie;

			if (tail == qt_ring_head(&self->r) ||
			    qt_ring_claim_of(&self->r, tail) != QTIMER_REC_READY)
				continue;
			cookie = __atomic_load_n(&qt_ring_rec(&self->r, tail)->cookie,
						 __ATOMIC_RELAXED);
			if (cookie >= RACE_TIMERS || cancelled[cookie])
				continue;
			res[cookie] = qt_cancel(self->fd, ids[cookie]);
			cancelled[cookie] = true;
			chased++;
		}
		for (k = 0; k < RACE_TIMERS; k++)
			order[k] = k;
		for (k = RACE_TIMERS - 1; k > 0; k--) {
			int j = qt_rand_below(&rng, k + 1), t = order[k];

			order[k] = order[j];
			order[j] = t;
		}
		for (k = 0; k < RACE_TIMERS; k++) {
			if (cancelled[order[k]])
				continue;
			res[order[k]] = qt_cancel(self->fd, ids[order[k]]);
			cancelled[order[k]] = true;
		}
		atomic_store(&race.stop, true);
		ASSERT_EQ(0, pthread_join(thr, NULL));

		EXPECT_EQ(0, race.foreign);
		for (k = 0; k < RACE_TIMERS; k++) {
			bool gone = res[k] == -ENOENT;
			bool prevented = res[k] == QTIMER_CANCEL_QUEUED ||
					 res[k] == QTIMER_CANCEL_ARMED;

			if ((gone && race.taken[k] == 1) ||
			    (prevented && !race.taken[k])) {
				wins[gone ? 0 : res[k] == QTIMER_CANCEL_QUEUED ? 1 : 2]++;
				continue;
			}
			wrong++;
			qt_diag("round %d timer %d: CANCEL returned %d, the consumer claimed it %d times",
				round, k, res[k], race.taken[k]);
		}
		EXPECT_EQ(0, wrong);
		EXPECT_EQ(0, qt_ring_flags(&self->r) & QTIMER_RING_OVERFLOW);
		qt_diag("round %d: %d cancels aimed at the tail; claimed %d, voided or unqueued %d, unfired %d",
			round, chased, wins[0], wins[1], wins[2]);
	}
}

TEST_HARNESS_MAIN
