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
/* CANCELs aimed at the record at the tail, per round. */
#define RACE_AIMS	100
/* However slow the kernel, a round's aiming ends by then. */
#define RACE_AIM_NS	(20 * NSEC_PER_SEC)
/* lead_ns's least step and its bound either way (see struct race). */
#define RACE_LEAD_STEP_NS	200
#define RACE_LEAD_MAX_NS	(5 * NSEC_PER_MSEC)

struct race {
	struct t_ring *r;
	unsigned char taken[RACE_TIMERS];	/* times each was claimed */
	long foreign;				/* records of no timer here */
	_Atomic bool stop;
	struct t_rng rng;
	/*
	 * The aiming handshake.  While aiming, the consumer offers each READY
	 * record at its tail before it claims it: it writes the record's
	 * index to offer_idx and bumps offer; the canceller answers with
	 * fire = offer and enters CANCEL of that record's timer, and the
	 * consumer claims.  So the two compare-and-swaps meet on every
	 * offered record.  Which side starts first, and by how much, is
	 * lead_ns: above zero the consumer waits a random time of up to
	 * twice that before it claims, below zero the canceller waits so
	 * before it cancels.  The consumer moves it after each race, towards
	 * itself after a loss, away after a win, so that the races gather
	 * where either side is as likely to win, on a fast kernel as on a
	 * slow one (on kcsan-6.1 CANCEL won three in four with no wait at
	 * all).
	 */
	_Atomic bool aiming;
	_Atomic unsigned int offer, fire;
	_Atomic __u32 offer_idx;
	_Atomic __s64 lead_ns;
};

/*
 * Offer the record at the tail, if READY, and wait until CANCEL is on it.
 * Returns its cookie, or -1 if none was offered or the aiming ended.
 */
static long race_offer_tail(struct race *race)
{
	__u32 tail = t_ring_tail(race->r);
	unsigned int o;
	__u64 cookie;
	__s64 lead;

	if (tail == t_ring_head(race->r) ||
	    t_ring_claim_of(race->r, tail) != QTIMER_REC_READY)
		return -1;
	cookie = t_ring_rec(race->r, tail)->cookie;
	atomic_store(&race->offer_idx, tail);
	o = atomic_load(&race->offer) + 1;
	atomic_store(&race->offer, o);
	while (atomic_load(&race->fire) != o)
		if (!atomic_load(&race->aiming))
			return -1;
	lead = atomic_load(&race->lead_ns);
	if (lead > 0)
		t_busy_wait_ns(t_rand_below(&race->rng, 2 * lead + 1));
	return cookie < RACE_TIMERS ? (long)cookie : -1;
}

/*
 * The one consumer: one record a pass, with a short random pause after
 * each, so that records also wait READY at the tail while the rest are
 * cancelled; poll() when the ring is empty; after the stop, on until
 * nothing is pending.
 */
static void *race_consumer(void *arg)
{
	struct race *race = arg;
	struct qtimer_record rec;

	for (;;) {
		long offered = -1;
		int n;

		if (atomic_load(&race->aiming))
			offered = race_offer_tail(race);
		n = t_ring_consume(race->r, &rec, 1);
		if (n < 0)
			break;
		if (offered >= 0) {
			__s64 lead = atomic_load(&race->lead_ns);
			__s64 step = llabs(lead) / 8 + RACE_LEAD_STEP_NS;

			/* Claimed it: the consumer starts later next time. */
			if (n && rec.cookie == (__u64)offered)
				lead = lead + step > RACE_LEAD_MAX_NS ? RACE_LEAD_MAX_NS : lead + step;
			else
				lead = lead - step < -RACE_LEAD_MAX_NS ? -RACE_LEAD_MAX_NS : lead - step;
			atomic_store(&race->lead_ns, lead);
		}
		if (n) {
			if (rec.cookie < RACE_TIMERS)
				race->taken[rec.cookie]++;
			else
				race->foreign++;
			t_busy_wait_ns(t_rand_below(&race->rng, 20 * NSEC_PER_USEC));
			continue;
		}
		if (t_wait_readable(race->r->fd, 1) == 0 && atomic_load(&race->stop) &&
		    t_ring_head(race->r) == t_ring_tail(race->r))
			break;
	}
	return NULL;
}

static void race_fill(struct qtimer_op *op, long k, void *arg)
{
	__s64 base = *(__s64 *)arg;

	*op = t_op(CLOCK_MONOTONIC, QTIMER_F_ABSTIME, base + k * RACE_STEP_NS,
		    0, k);
}

/*
 * Answer the consumer's offers with a CANCEL of the offered record's
 * timer, RACE_AIMS of them or until RACE_AIM_NS is up.  Returns how many.
 */
static int race_aim(struct race *race, struct t_ring *r, int fd,
		    const __u64 *ids, int *res, bool *cancelled, uint64_t seed)
{
	struct t_rng rng;
	__s64 deadline = t_now(CLOCK_MONOTONIC) + RACE_AIM_NS;
	unsigned int seen = 0, spins = 0;
	int aimed = 0;

	t_rng_seed(&rng, seed);
	while (aimed < RACE_AIMS) {
		unsigned int o = atomic_load(&race->offer);
		__u64 cookie;
		__s64 lead;

		if (o == seen) {
			if (!(++spins & 1023) && t_now(CLOCK_MONOTONIC) > deadline)
				break;
			continue;
		}
		seen = o;
		cookie = __atomic_load_n(&t_ring_rec(r, atomic_load(&race->offer_idx))->cookie,
					 __ATOMIC_RELAXED);
		if (cookie >= RACE_TIMERS || cancelled[cookie]) {
			atomic_store(&race->fire, o);
			continue;
		}
		lead = atomic_load(&race->lead_ns);
		atomic_store(&race->fire, o);
		if (lead < 0)
			t_busy_wait_ns(t_rand_below(&rng, 2 * -lead + 1));
		res[cookie] = t_cancel(fd, ids[cookie]);
		cancelled[cookie] = true;
		aimed++;
	}
	atomic_store(&race->aiming, false);
	return aimed;
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
 *
 * The aiming is a handshake with the consumer (struct race), not a chase
 * within a window of time: on kcsan-6.1 and debug-6.1 under TCG arming
 * the 400 timers took 60-80 ms, longer than the window the timers' own
 * schedule left, and not one CANCEL met a claim.  Each round must aim
 * some, and over the rounds each side must win such a race at least once,
 * or the race this suite is for went untested.
 */
TEST_F_TIMEOUT(ring, cancel_races_mapped_consumer, 120)
{
	static bool cancelled[RACE_TIMERS], aimed_at[RACE_TIMERS];
	static int res[RACE_TIMERS], order[RACE_TIMERS];
	static __u64 ids[RACE_TIMERS];
	static struct race race;
	int aimed_claimed = 0, aimed_voided = 0;
	struct t_rng rng;
	pthread_t thr;
	int round, k;

	RETURN_IF_SETUP_SKIPPED();
	t_rng_seed(&rng, (uint64_t)t_now(CLOCK_MONOTONIC));
	for (round = 0; round < 4; round++) {
		__s64 base = t_now(CLOCK_MONOTONIC) + 2 * NSEC_PER_MSEC;
		int wins[3] = { 0 }, lost = 0, won = 0, aimed, wrong = 0;

		memset(&race, 0, sizeof(race));
		memset(cancelled, 0, sizeof(cancelled));
		race.r = &self->r;
				race.aiming = true;
		t_rng_seed(&race.rng, t_rand(&rng));
		ASSERT_EQ(0, t_arm_many(self->fd, RACE_TIMERS, race_fill, &base,
					 ids, RACE_TIMERS));
		ASSERT_EQ(0, pthread_create(&thr, NULL, race_consumer, &race));

		aimed = race_aim(&race, &self->r, self->fd, ids, res, cancelled,
				 t_rand(&rng));
		memcpy(aimed_at, cancelled, sizeof(aimed_at));
		t_shuffle(order, RACE_TIMERS, &rng);
		for (k = 0; k < RACE_TIMERS; k++) {
			if (cancelled[order[k]])
				continue;
			res[order[k]] = t_cancel(self->fd, ids[order[k]]);
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
				if (aimed_at[k] && gone)
					lost++;
				else if (aimed_at[k])
					won++;
				continue;
			}
			wrong++;
			t_diag("round %d timer %d: CANCEL returned %d, the consumer claimed it %d times",
				round, k, res[k], race.taken[k]);
		}
		EXPECT_EQ(0, wrong);
		EXPECT_EQ(0, t_ring_flags(&self->r) & QTIMER_RING_OVERFLOW);
		t_diag("round %d: %d cancels aimed at the tail (the consumer claimed %d first, CANCEL voided %d; lead %.1f us); claimed %d, voided or unqueued %d, unfired %d",
			round, aimed, lost, won, (double)race.lead_ns / NSEC_PER_USEC,
			wins[0], wins[1], wins[2]);
		EXPECT_LT(0, aimed) TH_LOG("round %d aimed no CANCEL at the record at the tail",
					   round);
		aimed_claimed += lost;
		aimed_voided += won;
	}
	EXPECT_LT(0, aimed_claimed) TH_LOG("the consumer never claimed a record a CANCEL was aimed at");
	EXPECT_LT(0, aimed_voided) TH_LOG("a CANCEL aimed at the tail never voided its record");
}

TEST_HARNESS_MAIN
