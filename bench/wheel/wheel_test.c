// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * Native tests of the timing wheel (wheel.c, built over selftests/shim as
 * the heap core is).  The promise under test is the
 * one the benchmark's comparison rests on: a timer never fires before its
 * expiry, fires by its bound (exactly on time below 64 ticks, otherwise
 * late by less than 8/63 of the time it was armed for), fires once, and
 * never after it was cancelled.  The randomized test drives the wheel and
 * a per-timer reference with the same stream and checks every expiry and,
 * after every step, that nothing past its bound is still pending.  Streams
 * come from a fixed seed list; SEED=<n> in the environment runs that one.
 */
#include <stdio.h>
#include <stdlib.h>

#include "kselftest_harness.h"

#include "wheel.h"

/* xorshift64*, the benchmark's generator; splitmix64 to seed it. */
static u64 rng_next(u64 *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dull;
}

static u64 rng_seed(u64 seed)
{
	u64 z = seed + 0x9e3779b97f4a7c15ull;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	z ^= z >> 31;
	return z ? z : 1;
}

static u64 rng_below(u64 *s, u64 n)
{
	return n ? rng_next(s) % n : 0;
}

/*
 * The last tick at which a timer armed at @clk for @expires may fire:
 * exact below 64 ticks, else within 8/63 of the wait (strictly less), as
 * wheel.h promises.  A timer armed in the past counts as armed for @clk.
 */
static u64 latest_tick(u64 clk, u64 expires)
{
	u64 wait;

	if (expires < clk)
		expires = clk;
	wait = expires - clk;
	if (wait < QT_WHEEL_LVL_SIZE)
		return expires;
	return expires + (8 * wait - 1) / 63;
}

/* Run the wheel to @now; return how many fired, each checked against @t. */
static unsigned int fire_until(struct __test_metadata *_metadata,
			       struct qt_wheel *w, u64 now,
			       const struct qt_wheel_timer *t, u64 *fired_at)
{
	struct qt_wheel_timer *list;
	unsigned int n = 0;

	while ((list = qt_wheel_expire_next(w, now))) {
		for (; list; list = list->next) {
			EXPECT_EQ(t, list);
			EXPECT_FALSE(qt_wheel_timer_pending(list));
			*fired_at = w->clk - 1;
			n++;
		}
	}
	return n;
}

TEST(empty_wheel_fires_nothing)
{
	struct qt_wheel w;

	qt_wheel_init(&w, 100);
	EXPECT_EQ(U64_MAX, qt_wheel_next_expiry(&w));
	EXPECT_EQ(NULL, qt_wheel_expire_next(&w, 1000000));
	EXPECT_EQ(1000001, w.clk);
	EXPECT_EQ(0, w.nr);
}

/* Below 64 ticks every timer fires at exactly its tick, from any clock. */
TEST(exact_below_64_ticks)
{
	static const u64 starts[] = { 0, 1, 7, 8, 63, 64, 511, 4095, 123456789 };
	struct qt_wheel_timer t;
	struct qt_wheel w;
	unsigned int i;
	u64 d, at;

	for (i = 0; i < sizeof(starts) / sizeof(starts[0]); i++) {
		for (d = 0; d < QT_WHEEL_LVL_SIZE; d++) {
			qt_wheel_init(&w, starts[i]);
			t.pprev = NULL;
			qt_wheel_add(&w, &t, starts[i] + d);
			ASSERT_EQ(0, qt_wheel_level(starts[i], starts[i] + d));
			if (d)
				ASSERT_EQ(0, fire_until(_metadata, &w, starts[i] + d - 1, &t, &at));
			ASSERT_EQ(1, fire_until(_metadata, &w, starts[i] + d, &t, &at));
			ASSERT_EQ(starts[i] + d, at);
		}
	}
}

/*
 * One timer at a time, every wait up to 70000 ticks (levels 0 to 4) and
 * random ones up to twice the wheel's reach, from random clocks: not one
 * tick early, and by its bound.  The clock is first run to the tick before
 * expiry, which must fire nothing; then as far as it takes.
 */
TEST(never_early_and_within_bound)
{
	u64 rng = rng_seed(1), d, at, clk, expires;
	struct qt_wheel_timer t;
	struct qt_wheel w;
	unsigned int i;

	for (i = 0; i < 90000; i++) {
		d = i < 70000 ? i : rng_below(&rng, 2 * QT_WHEEL_MAX_DELTA);
		clk = rng_below(&rng, 1ull << 40);
		expires = clk + d;
		qt_wheel_init(&w, clk);
		t.pprev = NULL;
		qt_wheel_add(&w, &t, expires);
		ASSERT_EQ(1, w.nr);
		if (d)
			ASSERT_EQ(0, fire_until(_metadata, &w, expires - 1, &t, &at)) {
				TH_LOG("wait %llu from %llu: fired early", d, clk);
			}
		ASSERT_EQ(1, fire_until(_metadata, &w, U64_MAX - 1, &t, &at)) {
			TH_LOG("wait %llu from %llu: lost", d, clk);
		}
		ASSERT_GE(at, expires);
		ASSERT_LE(at, latest_tick(clk, expires)) {
			TH_LOG("wait %llu from %llu: fired %llu late", d, clk, at - expires);
		}
		ASSERT_EQ(0, w.nr);
	}
}

/* A timer armed in the past fires at the next tick expired. */
TEST(past_expiry_fires_next_tick)
{
	struct qt_wheel_timer t = {};
	struct qt_wheel w;
	u64 at;

	qt_wheel_init(&w, 1000);
	qt_wheel_add(&w, &t, 10);
	ASSERT_EQ(1, fire_until(_metadata, &w, 1000, &t, &at));
	ASSERT_EQ(1000, at);
}

/* Cancelled timers never fire, whichever bucket position they held. */
TEST(cancelled_never_fire)
{
	enum { N = 20000 };
	struct qt_wheel_timer *t = calloc(N, sizeof(*t)), *list;
	u64 rng = rng_seed(2);
	struct qt_wheel w;
	unsigned int i, fired = 0, lvl;

	ASSERT_NE(NULL, t);
	qt_wheel_init(&w, 5);
	/* Few buckets, so cancels hit heads, middles and tails of lists. */
	for (i = 0; i < N; i++)
		qt_wheel_add(&w, &t[i], 5 + rng_below(&rng, 5000));
	for (i = 0; i < N; i += 2)
		ASSERT_TRUE(qt_wheel_del(&w, &t[i]));
	for (i = 0; i < N; i += 2)
		ASSERT_FALSE(qt_wheel_del(&w, &t[i]));
	ASSERT_EQ(N / 2, w.nr);
	while ((list = qt_wheel_expire_next(&w, U64_MAX - 1)))
		for (; list; list = list->next) {
			ASSERT_EQ(1, (list - t) % 2);
			fired++;
		}
	ASSERT_EQ(N / 2, fired);
	ASSERT_EQ(0, w.nr);
	for (lvl = 0; lvl < QT_WHEEL_DEPTH; lvl++)
		ASSERT_EQ(0, w.pending[lvl]);
	/* Deleting the only timer of a bucket clears its bit. */
	qt_wheel_add(&w, &t[0], w.clk + 1000);
	ASSERT_TRUE(qt_wheel_del(&w, &t[0]));
	for (lvl = 0; lvl < QT_WHEEL_DEPTH; lvl++)
		ASSERT_EQ(0, w.pending[lvl]);
	ASSERT_EQ(U64_MAX, qt_wheel_next_expiry(&w));
	free(t);
}

/* Beyond the wheel's reach a timer is put back, never fired early. */
TEST(beyond_reach_is_put_back)
{
	struct qt_wheel_timer t = {};
	struct qt_wheel w;
	u64 expires = 3 * QT_WHEEL_MAX_DELTA + 12345, at;

	qt_wheel_init(&w, 0);
	qt_wheel_add(&w, &t, expires);
	ASSERT_EQ(0, fire_until(_metadata, &w, expires - 1, &t, &at));
	ASSERT_TRUE(qt_wheel_timer_pending(&t));
	ASSERT_EQ(1, fire_until(_metadata, &w, U64_MAX - 1, &t, &at));
	ASSERT_GE(at, expires);
	ASSERT_LE(at, latest_tick(0, expires));
}

/* ---------------------------------------------------------------------- */
/* Randomized test against a per-timer reference                           */

enum state { IDLE, PENDING };

#define NR_IDS	1024u

FIXTURE(diff) {
	struct qt_wheel w;
	struct qt_wheel_timer t[NR_IDS];
	/* The reference: state, expiry and the clock it was armed at. */
	enum state state[NR_IDS];
	u64 expires[NR_IDS], armed_at[NR_IDS];
	u64 rng, seed, now, nr_pending;
	u64 fired, cancelled, rearmed, far, max_pending;
	u32 step;
};

FIXTURE_VARIANT(diff) {
	u64 max_wait;		/* waits drawn up to this */
	u32 far_per_mille;	/* waits beyond the wheel's reach */
	u32 steps;
};

/* Network-timeout-like: up to ~4000 ticks, levels 0 to 3. */
FIXTURE_VARIANT_ADD(diff, near) {
	.max_wait = 4000, .far_per_mille = 0, .steps = 60000,
};

/* Every level, and some beyond the top one. */
FIXTURE_VARIANT_ADD(diff, wide) {
	.max_wait = QT_WHEEL_MAX_DELTA, .far_per_mille = 20, .steps = 40000,
};

FIXTURE_SETUP(diff)
{
	self->now = 0;
	qt_wheel_init(&self->w, 0);
}

FIXTURE_TEARDOWN(diff)
{
	if (!_metadata->passed)
		TH_LOG("failed with seed %llu at step %u; rerun with SEED=%llu",
		       self->seed, self->step, self->seed);
}

static u64 draw_wait(FIXTURE_DATA(diff) *self, const FIXTURE_VARIANT(diff) *v)
{
	u64 r = rng_below(&self->rng, 1000);

	if (r < v->far_per_mille) {
		self->far++;
		return QT_WHEEL_MAX_DELTA + rng_below(&self->rng, 3 * QT_WHEEL_MAX_DELTA);
	}
	/* Log-uniform-ish, so the fine levels see as much as the coarse. */
	return rng_below(&self->rng, 1 + (v->max_wait >>
		rng_below(&self->rng, 64 - __builtin_clzll(v->max_wait))));
}

static void arm(FIXTURE_DATA(diff) *self, u32 id, u64 expires)
{
	qt_wheel_add(&self->w, &self->t[id], expires);
	self->state[id] = PENDING;
	self->expires[id] = expires;
	/* The wheel's clock, which is what its bound is relative to. */
	self->armed_at[id] = self->w.clk;
	self->nr_pending++;
	if (self->nr_pending > self->max_pending)
		self->max_pending = self->nr_pending;
}

/* Expire up to @now, checking each timer against the reference. */
static void advance(struct __test_metadata *_metadata, FIXTURE_DATA(diff) *self,
		    const FIXTURE_VARIANT(diff) *v, u64 now)
{
	struct qt_wheel_timer *list, *next;

	while ((list = qt_wheel_expire_next(&self->w, now))) {
		u64 tick = self->w.clk - 1;

		for (; list; list = next) {
			u32 id = list - self->t;

			next = list->next;
			ASSERT_LT(id, NR_IDS);
			ASSERT_EQ(PENDING, self->state[id]) {
				TH_LOG("timer %u fired while not pending", id);
			}
			ASSERT_LE(self->expires[id], tick) {
				TH_LOG("timer %u due %llu fired early at %llu",
				       id, self->expires[id], tick);
			}
			ASSERT_LE(tick, latest_tick(self->armed_at[id], self->expires[id])) {
				TH_LOG("timer %u armed at %llu for %llu fired late at %llu",
				       id, self->armed_at[id], self->expires[id], tick);
			}
			self->state[id] = IDLE;
			self->nr_pending--;
			self->fired++;
			/* A periodic timer re-armed from its expiry. */
			if (rng_below(&self->rng, 4) == 0) {
				arm(self, id, tick + 1 + draw_wait(self, v));
				self->rearmed++;
			}
		}
	}
	self->now = now;
}

/* Nothing past its bound is still pending, and the counts agree. */
static void check_no_loss(struct __test_metadata *_metadata, FIXTURE_DATA(diff) *self)
{
	u64 next = qt_wheel_next_expiry(&self->w), earliest_bound = U64_MAX;
	u32 id;

	ASSERT_EQ(self->nr_pending, self->w.nr);
	for (id = 0; id < NR_IDS; id++) {
		ASSERT_EQ(self->state[id] == PENDING, qt_wheel_timer_pending(&self->t[id]));
		if (self->state[id] != PENDING)
			continue;
		/* Every tick before the wheel's clock has been expired. */
		ASSERT_GE(latest_tick(self->armed_at[id], self->expires[id]), self->w.clk) {
			TH_LOG("timer %u armed at %llu for %llu lost by %llu",
			       id, self->armed_at[id], self->expires[id], self->w.clk);
		}
		if (latest_tick(self->armed_at[id], self->expires[id]) < earliest_bound)
			earliest_bound = latest_tick(self->armed_at[id], self->expires[id]);
	}
	/* The next bucket due is no later than the first bound that falls. */
	if (self->nr_pending)
		ASSERT_LE(next, earliest_bound);
}

static void run_seed(struct __test_metadata *_metadata, FIXTURE_DATA(diff) *self,
		     const FIXTURE_VARIANT(diff) *v, u64 seed)
{
	u32 id;

	self->seed = seed;
	self->rng = rng_seed(seed);
	for (self->step = 0; self->step < v->steps; self->step++) {
		u64 r = rng_below(&self->rng, 1000);

		id = rng_below(&self->rng, NR_IDS);
		if (r < 450) {
			/* Arm, or modify: cancel and arm again. */
			if (self->state[id] == PENDING) {
				ASSERT_TRUE(qt_wheel_del(&self->w, &self->t[id]));
				self->nr_pending--;
			}
			arm(self, id, self->now + draw_wait(self, v));
		} else if (r < 700) {
			ASSERT_EQ(self->state[id] == PENDING,
				  qt_wheel_del(&self->w, &self->t[id]));
			if (self->state[id] == PENDING) {
				self->cancelled++;
				self->nr_pending--;
			}
			self->state[id] = IDLE;
		} else if (r < 990) {
			/* Time moves slowly, so hundreds of timers are pending. */
			advance(_metadata, self, v, self->now + rng_below(&self->rng, 4));
		} else if (r < 995) {
			advance(_metadata, self, v, self->now + draw_wait(self, v));
		} else {
			/* Straight to the next bucket due, as an idle CPU would. */
			u64 next = qt_wheel_next_expiry(&self->w);

			if (next != U64_MAX)
				advance(_metadata, self, v, next);
		}
		if (_metadata->passed == 0)
			return;
		if (self->step % 64 == 0)
			check_no_loss(_metadata, self);
	}
	check_no_loss(_metadata, self);
	/* Run everything out: each pending timer fires exactly once. */
	while (self->nr_pending && _metadata->passed)
		advance(_metadata, self, v, qt_wheel_next_expiry(&self->w));
	ASSERT_EQ(0, self->w.nr);
	for (id = 0; id < NR_IDS; id++)
		ASSERT_EQ(IDLE, self->state[id]);
}

TEST_F(diff, random_ops)
{
	static const u64 seeds[] = { 1, 2, 3, 0x5eed, 0xdeadbeef };
	const char *env = getenv("SEED");
	unsigned int i;

	if (env) {
		run_seed(_metadata, self, variant, strtoull(env, NULL, 0));
	} else {
		for (i = 0; i < sizeof(seeds) / sizeof(seeds[0]) && _metadata->passed; i++) {
			memset(self->state, 0, sizeof(self->state));
			self->nr_pending = 0;
			self->now = 0;
			qt_wheel_init(&self->w, 0);
			run_seed(_metadata, self, variant, seeds[i]);
		}
	}
	TH_LOG("fired %llu, cancelled %llu, re-armed on expiry %llu, beyond reach %llu, pending at most %llu",
	       self->fired, self->cancelled, self->rearmed, self->far, self->max_pending);
}

TEST_HARNESS_MAIN
