// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * Latency under attack (latency.h) through the timer table:
 *
 *  - expirer_under_a_hostile_table: 10^6 timers due at once on the
 *    victim's CPU, every slot of which a thread on another CPU keeps
 *    writing LATER with a deadline 1 s ahead, without the protocol's
 *    compare-and-swap, pass after pass.  Each entry that surfaces is then
 *    re-keyed rather than fired (qt_table_surface()), and is due again
 *    within the second: the expirer could re-key the whole heap in one
 *    run if re-keys were not counted in its scan budget.  The baseline is
 *    the same on CONTROL_TIMERS timers.  That the pushes were honoured is
 *    checked too: some timers fire at an expiry a push gave them.
 */
#define _GNU_SOURCE
#include <sys/mman.h>

#include "kselftest_harness.h"
#include "latency.h"

#define PUSH_AHEAD_NS	NSEC_PER_SEC
#define DUE_SPAN_NS	(10 * NSEC_PER_MSEC)

/* The hostile writer: every slot of ids[0, n), LATER, pass after pass. */
struct pusher {
	pthread_t thread;
	bool running;
	const struct t_table *tb;
	const __u64 *ids;
	long n;
	__s64 until;
	_Atomic long writes;
};

static void *pusher_fn(void *arg)
{
	struct pusher *p = arg;
	__u32 seq = 0;
	long k = 0;

	for (;;) {
		__s64 now = t_now(CLOCK_MONOTONIC);
		long end = k + 256;

		if (now >= p->until)
			break;
		for (; k < end && k < p->n; k++) {
			struct qtimer_slot *slot = t_table_slot(p->tb, p->ids[k]);

			__atomic_store_n(&slot->deadline, now + PUSH_AHEAD_NS,
					 __ATOMIC_RELAXED);
			__atomic_store_n(&slot->ctl,
					 QTIMER_SLOT_CTL(QTIMER_SLOT_LATER,
							 QTIMER_ID_GEN(p->ids[k]), ++seq),
					 __ATOMIC_RELEASE);
		}
		p->writes += 256;
		if (k >= p->n)
			k = 0;
	}
	return NULL;
}

static void pusher_start(struct __test_metadata *_metadata, struct pusher *p,
			 int cpu)
{
	ASSERT_EQ(0, start_on_cpu(&p->thread, cpu, 0, pusher_fn, p));
	p->running = true;
}

static void pusher_join(struct pusher *p)
{
	if (p->running)
		pthread_join(p->thread, NULL);
	p->running = false;
}

static struct t_table attack_table, control_table;
static struct pusher attack_pusher, control_pusher;
static __s64 attack_due;

static void require_table(struct __test_metadata *_metadata,
			  FIXTURE_DATA(latency) *self)
{
	if (!t_table_offered())
		snprintf(self->skip, sizeof(self->skip), "no timer table");
}

/*
 * The baseline, during the idle window: CONTROL_TIMERS timers with a
 * table on the victim's CPU, due 100 ms on, pushed by a writer on the
 * home CPU for the window.
 */
static void control_hostile_table(struct __test_metadata *_metadata,
				  FIXTURE_DATA(latency) *self)
{
	__s64 now = t_now(CLOCK_MONOTONIC);
	int fd = t_open(0);

	ASSERT_LE(0, fd);
	self->fds[1] = fd;
	ASSERT_EQ(0, t_table_map(&control_table, fd));
	ASSERT_EQ(0, arm_range(self, fd, 0, CONTROL_TIMERS, self->cpu,
			       now + 100 * NSEC_PER_MSEC, DUE_SPAN_NS));
	control_pusher = (struct pusher){
		.tb = &control_table, .ids = self->ids, .n = CONTROL_TIMERS,
		.until = now + IDLE_NS,
	};
	pusher_start(_metadata, &control_pusher, self->home_cpu);
}

/*
 * self->n timers with a table on the victim's CPU, due together (over
 * DUE_SPAN_NS) once arming them is surely over: ARM_BUDGET_NS and 2 s
 * from the start.
 */
static void prepare_due_table(struct __test_metadata *_metadata,
			      FIXTURE_DATA(latency) *self)
{
	__s64 t = t_now(CLOCK_MONOTONIC), took = 0;
	long n = 0;
	int fd;

	pusher_join(&control_pusher);
	t_table_unmap(&control_table);
	control_end(self);
	attack_due = t + ARM_BUDGET_NS + 2 * NSEC_PER_SEC;
	fd = t_open(O_NONBLOCK);
	ASSERT_LE(0, fd);
	self->fds[0] = fd;
	ASSERT_EQ(0, t_table_map(&attack_table, fd));
	while (n < self->n && took < ARM_BUDGET_NS) {
		long step = self->n - n < ARM_STEP ? self->n - n : ARM_STEP;

		ASSERT_EQ(0, arm_range(self, fd, n, step, self->cpu, attack_due,
				       DUE_SPAN_NS));
		n += step;
		took = t_now(CLOCK_MONOTONIC) - t;
	}
	self->n = n;
	TH_LOG("%ld timers with a table on CPU %d armed in %.2f s, due in %.2f s",
	       n, self->cpu, (double)took / NSEC_PER_SEC,
	       (double)(attack_due - t_now(CLOCK_MONOTONIC)) / NSEC_PER_SEC);
}

/*
 * The writer on the home CPU from now until ATTACK_NS after the timers
 * are due; this thread sleeps meanwhile.  Most timers must still be
 * waiting at the end: their pushes were honoured.
 */
static void run_hostile_table(struct __test_metadata *_metadata,
			      FIXTURE_DATA(latency) *self)
{
	long long pending;

	attack_pusher = (struct pusher){
		.tb = &attack_table, .ids = self->ids, .n = self->n,
		.until = attack_due + ATTACK_NS,
	};
	pusher_start(_metadata, &attack_pusher, self->home_cpu);
	pusher_join(&attack_pusher);
	self->ops = attack_pusher.writes;
	pending = t_fdinfo_named(self->fds[0], "pending");
	TH_LOG("%lld of %ld timers fired during the pushes", pending, self->n);
}

/*
 * After the measurement: the records of the timers that fired.  One whose
 * expiry is past the armed ones was re-keyed by a push first: the attack
 * reached its path.  None early.
 */
static void restore_hostile_table(struct __test_metadata *_metadata,
				  FIXTURE_DATA(latency) *self)
{
	static struct qtimer_record recs[4096];
	long rekeyed = 0, total = 0, early = 0;
	__s64 now;
	int n, i;

	pusher_join(&control_pusher);
	t_table_unmap(&control_table);
	t_table_unmap(&attack_table);
	while ((n = read(self->fds[0], recs, sizeof(recs))) > 0) {
		now = t_now(CLOCK_MONOTONIC);
		n /= sizeof(recs[0]);
		for (i = 0; i < n; i++) {
			rekeyed += recs[i].expires_ns >= attack_due + DUE_SPAN_NS;
			early += recs[i].expires_ns > now;
		}
		total += n;
	}
	TH_LOG("%ld records read, %ld of them re-keyed by a push first", total,
	       rekeyed);
	EXPECT_EQ(0, early);
	EXPECT_LT(0, rekeyed)
		TH_LOG("no fired timer had been pushed: the attack missed its path");
}

ATTACK_TEST(expirer_under_a_hostile_table,
	.what = "the expirer under a table pushing every due timer",
	.setup = require_table,
	.idle = control_hostile_table,
	.idle_what = "the same on a small file",
	.prepare = prepare_due_table,
	.run = run_hostile_table,
	.restore = restore_hostile_table,
	.ops = "slot writes")

TEST_HARNESS_MAIN
