// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * The shards' ENDED window (qtimer_shard_window.h): a one-shot that a
 * reader ends while CANCEL or MODIFY looks its id up goes to exactly one
 * of them, through read(), read() on a ring file and the mapped ring.
 */
#define _GNU_SOURCE
#include <pthread.h>

#include "ring_harness.h"
#include "qtimer_shard_window.h"

FIXTURE(window)
{
	int fd;
	int cpus[MAX_CPUS];
	int nr_cpus;
	struct t_ring r;
};

FIXTURE_VARIANT(window)
{
	enum taker taker;
	bool modify;
};

FIXTURE_VARIANT_ADD(window, read_cancel) { .taker = BY_READ };
FIXTURE_VARIANT_ADD(window, read_modify) { .taker = BY_READ, .modify = true };
FIXTURE_VARIANT_ADD(window, ring_read_cancel) { .taker = BY_RING_READ };
FIXTURE_VARIANT_ADD(window, ring_read_modify) {
	.taker = BY_RING_READ, .modify = true
};
FIXTURE_VARIANT_ADD(window, ring_map_cancel) { .taker = BY_RING_MAP };
FIXTURE_VARIANT_ADD(window, ring_map_modify) {
	.taker = BY_RING_MAP, .modify = true
};

FIXTURE_SETUP(window)
{
	struct qtimer_ring_setup setup;
	int ret = 0;

	memset(&self->r, 0, sizeof(self->r));
	self->nr_cpus = t_allowed_cpus(self->cpus, MAX_CPUS);
	ASSERT_LT(0, self->nr_cpus);
	self->fd = t_open(O_NONBLOCK);
	ASSERT_LE(0, self->fd);
	if (variant->taker == BY_RING_MAP)
		ret = t_ring_map(&self->r, self->fd, WIN_RING);
	else if (variant->taker == BY_RING_READ)
		ret = t_ring_setup(self->fd, WIN_RING, &setup);
	if (ret == -ENOTTY)
		SKIP(return, "no record ring: QTIMER_FEAT_RING not offered");
	ASSERT_EQ(0, ret);
}

FIXTURE_TEARDOWN(window)
{
	t_ring_fixture_close(self->fd, &self->r);
}

/*
 * Rounds on one file, so that each round's ids reuse the slots the last
 * one's timers left: the last round's ids must name nothing, the new ones
 * none of them.  Even rounds are due at once and all fired before the
 * race begins (CANCEL and MODIFY meet a queued record or the reader's
 * take); odd rounds fire while it goes on.  A round's timers are armed
 * from every CPU in turn onto one CPU's heap, read on a second CPU and
 * cancelled or modified from a third (with two CPUs, the first), a
 * different trio each round; read() takes up to 8 records at once, the
 * one raced for last, so that one read() ends timers of several shards.
 * Every third round has no handshake: the reader takes what comes and
 * the op side, as fast as it can, goes for one of the next few timers
 * the reader will take.  Only the handshake rounds count towards both
 * sides having won.
 */
TEST_F_TIMEOUT(window, ended_window, 240)
{
	const int rounds = WIN_ROUNDS, n = WIN_TIMERS;
	static __u64 last_ids[WIN_MAX];
	static struct duel d;
	int reader_won = 0, op_won = 0, op_armed = 0, round, k;
	__s64 lead = 0, setup_ns = 0, race_ns = 0;
	struct t_rng rng;

	RETURN_IF_SETUP_SKIPPED();
	REQUIRE_CPUS(2);
	t_rng_seed(&rng, t_now(CLOCK_MONOTONIC));
	for (round = 0; round < rounds; round++) {
		const int nc = self->nr_cpus;
		int heap_cpu = self->cpus[round % nc];
		int op_cpu = nc > 2 ? self->cpus[(round + 2) % nc] : heap_cpu;
		bool due_now = !(round % 2);
		int stale = 0, reused = 0, wrong;
		__s64 start, race_start, base, spacing;
		pthread_t thr;

		memset(&d, 0, sizeof(d));
		d.fd = self->fd;
		d.ring = &self->r;
		d.taker = variant->taker;
		d.modify = variant->modify;
		d.free_run = round % 3 == 2;
		d.n = n;
		d.round = round;
		d.reader_cpu = self->cpus[(round + 1) % nc];
		d.lead_ns = lead;
		t_rng_seed(&d.rng, t_rand(&rng));

		/*
		 * A soon round's timers start to fire after as long as the
		 * last round took to reach its race, and go on firing for
		 * as long as its race took: during this one's.
		 */
		start = t_now(CLOCK_MONOTONIC);
		base = due_now ? start - NSEC_PER_MSEC : start + setup_ns;
		spacing = due_now ? 2 : (race_ns / n + 2) & ~1LL;
		for (k = 0; k < n; k++)
			d.old_when[k] = (base & ~1LL) + k * spacing;
		ASSERT_EQ(0, duel_arm(&d, self->cpus, nc, heap_cpu));
		EXPECT_EQ(0, count_repeats(d.ids, n));
		for (k = 0; round && k < n; k++) {
			stale += t_cancel(self->fd, last_ids[k]) != -ENOENT;
			reused += id_in(d.ids, n, last_ids[k]);
		}
		EXPECT_EQ(0, stale);
		EXPECT_EQ(0, reused);
		if (due_now)
			ASSERT_EQ(1, t_wait_pending(self->fd, n, QT_ARRIVE_MS));

		ASSERT_EQ(0, t_pin_self(op_cpu));
		race_start = t_now(CLOCK_MONOTONIC);
		d.deadline = race_start + WIN_ROUND_NS;
		ASSERT_EQ(0, pthread_create(&thr, NULL, duel_reader, &d));
		duel_act(&d, &rng);
		ASSERT_EQ(0, pthread_join(thr, NULL));
		setup_ns = race_start - start;
		race_ns = t_now(CLOCK_MONOTONIC) - race_start;
		duel_drain(&d);

		wrong = duel_verdict(&d);
		EXPECT_EQ(0, wrong);
		EXPECT_FALSE(d.timed_out);
		EXPECT_EQ(0, t_fdinfo_get(self->fd, QT_FI_TIMERS));
		if (d.free_run) {
			for (k = 0; k < n; k++) {
				d.reader_won += d.res[k] == -ENOENT;
				d.op_won += d.res[k] == QTIMER_CANCEL_QUEUED;
				d.op_armed += d.res[k] == QTIMER_CANCEL_ARMED;
			}
			TH_LOG("round %d (%s, CPUs %d/%d/%d, no handshake) in %lld ms: the reader took first %d, the %s %d; %d found armed",
			       round, due_now ? "due at once" : "due soon",
			       heap_cpu, d.reader_cpu, op_cpu,
			       race_ns / NSEC_PER_MSEC, d.reader_won,
			       d.modify ? "MODIFY" : "CANCEL", d.op_won,
			       d.op_armed);
		} else {
			TH_LOG("round %d (%s, CPUs %d/%d/%d): %d races in %lld ms; the reader won %d, the %s %d; %d found armed; lead %.1f us",
			       round, due_now ? "due at once" : "due soon",
			       heap_cpu, d.reader_cpu, op_cpu, d.steps,
			       race_ns / NSEC_PER_MSEC, d.reader_won,
			       d.modify ? "MODIFY" : "CANCEL", d.op_won,
			       d.op_armed, (double)d.lead_ns / NSEC_PER_USEC);
			reader_won += d.reader_won;
			op_won += d.op_won;
			op_armed += d.op_armed;
			lead = d.lead_ns;
		}
		memcpy(last_ids, d.ids, sizeof(last_ids));
	}
	TH_LOG("in all, with a handshake: the reader won %d, the %s %d, %d found armed",
	       reader_won, variant->modify ? "MODIFY" : "CANCEL", op_won,
	       op_armed);
	EXPECT_LT(0, reader_won) TH_LOG("the reader never took a record the op went for");
	EXPECT_LT(0, op_won) TH_LOG("the op never took back a record the reader went for");
}

TEST_HARNESS_MAIN
