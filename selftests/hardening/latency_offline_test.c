// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * Latency under attack (latency.h) by CPU hotplug:
 *
 *  - cpu_offline_merges_heap: take a CPU with 3 x 10^6 timers offline.
 *    Its heaps used to be merged into those of the CPU that ran the
 *    teardown; now they stay where they are (base.c, qt_cpu_dead()), and
 *    this guards against a walk in the teardown coming back.  Idle
 *    here means the same CPU going offline without timers, as that alone
 *    holds every CPU for 15-50 ms under TCG (stop_machine()).
 */
#define _GNU_SOURCE
#include "kselftest_harness.h"
#include "latency.h"

/*
 * A CPU goes offline from the victim's CPU and comes back online from
 * another: the CPU that brings one up spins with interrupts off until the
 * new one has checked its TSC against it, which under TCG on a busy host
 * took 200 ms.
 */
static void cpu_offline(struct __test_metadata *_metadata,
			FIXTURE_DATA(latency) *self)
{
	ASSERT_EQ(0, t_pin_self(self->cpu));
	self->offline = self->doomed_cpu;
	ASSERT_EQ(0, t_cpu_set_online(self->doomed_cpu, 0));
}

static void cpu_online(struct __test_metadata *_metadata,
		       FIXTURE_DATA(latency) *self)
{
	ASSERT_EQ(0, t_pin_self(self->home_cpu));
	ASSERT_EQ(0, t_cpu_set_online(self->doomed_cpu, 1));
	self->offline = -1;
}

/*
 * The CPU goes and comes back twice with none of our timers on it, so
 * that the idle worst but one (see judge()) still has what going offline
 * costs by itself: stop_machine() holds every CPU for 15-50 ms under TCG.
 */
static void idle_cpu_cycles(struct __test_metadata *_metadata,
			    FIXTURE_DATA(latency) *self)
{
	int i;

	for (i = 0; i < 2; i++) {
		cpu_offline(_metadata, self);
		cpu_online(_metadata, self);
		t_sleep_ms(100);
	}
}

/*
 * 3 x 10^6 timers on the CPU that goes, in three files: a merge costs
 * less per timer than the other walks.
 */
static void prepare_doomed_cpu(struct __test_metadata *_metadata,
			       FIXTURE_DATA(latency) *self)
{
	int i;

	for (i = 0; i < 3; i++)
		self->n = arm_file(_metadata, self, i, self->doomed_cpu,
				   t_now(CLOCK_MONOTONIC) + FAR_NS, FAR_NS);
}

/*
 * The teardown that merges the heaps runs on the first online CPU but the
 * one going (kernels that hand cpu_down() to work_on_cpu()), or else on
 * the CPU that writes its online file: CPU 0 either way, when the write
 * comes from there.  So here the victim sits on CPU 0, the timers on the
 * last CPU, which goes, and the rest runs on CPU 1.
 */
static void place_around_doomed_cpu(struct __test_metadata *_metadata,
				    FIXTURE_DATA(latency) *self)
{
	char path[96];

	if (self->nr_online < 3) {
		snprintf(self->skip, sizeof(self->skip),
			 "needs three online CPUs: the victim's, the one that goes, one more");
		return;
	}
	t_cpu_online_path(self->doomed_cpu, path, sizeof(path));
	if (access(path, W_OK) || !t_cpu_online(1)) {
		snprintf(self->skip, sizeof(self->skip),
			 "cpu%d cannot go offline, or cpu1 is offline",
			 self->doomed_cpu);
		return;
	}
	self->cpu = 0;
	self->home_cpu = 1;
	ASSERT_EQ(0, t_pin_self(self->home_cpu));
}

ATTACK_TEST(cpu_offline_merges_heap,
	.what = "CPU offline",
	.setup = place_around_doomed_cpu,
	.idle = idle_cpu_cycles,
	.prepare = prepare_doomed_cpu,
	.run = cpu_offline,
	.restore = cpu_online,
	.timed = true,
	.ops = "ms to go offline")

TEST_HARNESS_MAIN
