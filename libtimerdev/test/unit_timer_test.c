// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * Native unit tests against the fake device (fake_harness.h), arming,
 * cancelling, modifying and GET: how a spec becomes an op, what the
 * library refuses before any ioctl and what the kernel refuses.
 */
#include <errno.h>
#include <string.h>

#include "fake_harness.h"

TEST_F(fake, version_is_fresh)
{
	struct qtimer_version v;

	fake.version.max_timers_per_fd = 77;
	ASSERT_EQ(0, td_version(self->ctx, &v));
	ASSERT_EQ(77, v.max_timers_per_fd);
	ASSERT_EQ(QTIMER_API_VERSION, v.api_version);
	ASSERT_EQ(-EINVAL, td_version(self->ctx, NULL));
}

TEST_F(fake, arm_encodes_spec)
{
	struct td_timer_spec spec = {
		.clockid = CLOCK_REALTIME,
		.flags = TD_TIMER_ABSTIME | TD_TIMER_CANCEL_ON_SET,
		.expires_ns = 123,
		.period_ns = 456,
		.slack_ns = 789,
		.cookie = 0xfeedULL << 40,
	};
	uint64_t id = 0;

	ASSERT_EQ(0, td_arm(self->ctx, &spec, &id));
	ASSERT_NE(0, id);
	ASSERT_EQ(id, fake.last_op.id);
	ASSERT_EQ(QTIMER_OP_ARM, fake.last_op.opcode);
	ASSERT_EQ(CLOCK_REALTIME, fake.last_op.clockid);
	ASSERT_EQ(QTIMER_F_ABSTIME | QTIMER_F_CANCEL_ON_SET, fake.last_op.flags);
	ASSERT_EQ(123, fake.last_op.expires_ns);
	ASSERT_EQ(456, fake.last_op.period_ns);
	ASSERT_EQ(789, fake.last_op.slack_ns);
	ASSERT_EQ(spec.cookie, fake.last_op.cookie);
	ASSERT_EQ(0, fake.last_op.cpu);
	ASSERT_EQ(0, fake.last_op.reserved);

	/* Pinned: TD_TIMER_CPU is QTIMER_F_CPU; and the id may be ignored. */
	spec.flags = TD_TIMER_CPU;
	spec.cpu = 1;
	ASSERT_EQ(0, td_arm(self->ctx, &spec, NULL));
	ASSERT_EQ(QTIMER_F_CPU, fake.last_op.flags);
	ASSERT_EQ(1, fake.last_op.cpu);
	/* CPU 0 is a CPU like any other. */
	spec.cpu = 0;
	ASSERT_EQ(0, td_arm(self->ctx, &spec, NULL));
	ASSERT_EQ(QTIMER_F_CPU, fake.last_op.flags);
	ASSERT_EQ(0, fake.last_op.cpu);
	ASSERT_EQ(3, fake_nr_live());
}

/* A zeroed spec pins nothing, armed alone or in a batch. */
TEST_F(fake, zeroed_spec_does_not_pin)
{
	struct td_timer_spec spec;
	struct td_batch batch;

	memset(&spec, 0, sizeof(spec));
	spec.clockid = CLOCK_MONOTONIC;
	ASSERT_EQ(0, td_arm(self->ctx, &spec, NULL));
	ASSERT_EQ(0, fake.last_op.flags & QTIMER_F_CPU);
	ASSERT_EQ(0, fake.last_op.cpu);

	ASSERT_EQ(0, td_batch_init(self->ctx, &batch, 4));
	ASSERT_EQ(0, td_batch_arm(&batch, &spec, 1));
	ASSERT_EQ(1, td_batch_flush(&batch));
	ASSERT_EQ(QTIMER_OP_ARM, fake.last_op.opcode);
	ASSERT_EQ(0, fake.last_op.flags & QTIMER_F_CPU);
	td_batch_free(&batch);

	/* TD_CPU_ANY, libtimerdev 1's "no CPU", still means that. */
	spec.cpu = TD_CPU_ANY;
	ASSERT_EQ(0, td_arm(self->ctx, &spec, NULL));
	ASSERT_EQ(0, fake.last_op.flags & QTIMER_F_CPU);
	ASSERT_EQ(0, fake.last_op.cpu);
	ASSERT_EQ(3, fake_nr_live());
}

TEST_F(fake, arm_rejected_by_library)
{
	struct td_timer_spec spec = { .clockid = CLOCK_MONOTONIC };
	unsigned int calls = fake.ioctl_calls;
	uint64_t id = 99;

	ASSERT_EQ(-EINVAL, td_arm(self->ctx, NULL, &id));
	spec.flags = 1U << 31;
	ASSERT_EQ(-EINVAL, td_arm(self->ctx, &spec, &id));
	spec.flags = 0;
	spec.cpu = -2;
	ASSERT_EQ(-EINVAL, td_arm(self->ctx, &spec, &id));
	/* A CPU without TD_TIMER_CPU would not pin: refused, not ignored. */
	spec.cpu = 1;
	ASSERT_EQ(-EINVAL, td_arm(self->ctx, &spec, &id));
	/* TD_TIMER_CPU names a CPU, never "any". */
	spec.flags = TD_TIMER_CPU;
	spec.cpu = TD_CPU_ANY;
	ASSERT_EQ(-EINVAL, td_arm(self->ctx, &spec, &id));
	spec.flags = 0;
	spec.cpu = 0;
	spec.clockid = -1;
	ASSERT_EQ(-EINVAL, td_arm(self->ctx, &spec, &id));
	spec.clockid = 0x10000;
	ASSERT_EQ(-EINVAL, td_arm(self->ctx, &spec, &id));
	ASSERT_EQ(calls, fake.ioctl_calls);
	ASSERT_EQ(99, id);
}

TEST_F(fake, arm_rejected_by_kernel)
{
	struct td_timer_spec spec = {
		.clockid = CLOCK_MONOTONIC, .expires_ns = -1,
	};
	uint64_t id = 99;

	errno = 1234;
	ASSERT_EQ(-EINVAL, td_arm(self->ctx, &spec, &id));
	ASSERT_EQ(1234, errno);
	ASSERT_EQ(99, id);
}

TEST_F(fake, cancel_and_modify)
{
	struct td_timer_spec spec = { .clockid = CLOCK_MONOTONIC,
				      .expires_ns = 1000 };
	unsigned int calls;
	uint64_t id;

	ASSERT_EQ(0, td_arm(self->ctx, &spec, &id));
	ASSERT_EQ(QTIMER_CANCEL_ARMED,
		  td_modify(self->ctx, id, 5, 6, 7, TD_TIMER_ABSTIME));
	ASSERT_EQ(QTIMER_OP_MODIFY, fake.last_op.opcode);
	ASSERT_EQ(QTIMER_F_ABSTIME, fake.last_op.flags);
	ASSERT_EQ(5, fake.last_op.expires_ns);
	ASSERT_EQ(6, fake.last_op.period_ns);
	ASSERT_EQ(7, fake.last_op.slack_ns);
	ASSERT_EQ(0, fake.last_op.clockid);
	ASSERT_EQ(0, fake.last_op.cookie);

	calls = fake.ioctl_calls;
	ASSERT_EQ(-EINVAL, td_modify(self->ctx, id, 5, 0, 0, QTIMER_F_CPU));
	ASSERT_EQ(calls, fake.ioctl_calls);

	ASSERT_EQ(QTIMER_CANCEL_ARMED, td_cancel(self->ctx, id));
	ASSERT_EQ(QTIMER_OP_CANCEL, fake.last_op.opcode);
	ASSERT_EQ(-ENOENT, td_cancel(self->ctx, id));
	ASSERT_EQ(-ENOENT, td_modify(self->ctx, id, 5, 0, 0, 0));
}

/*
 * td_get: asks GET with nothing but the id, and fills the spec from the
 * answer so that it arms the same timer again (pinned where it lives);
 * errors leave the spec alone.
 */
TEST_F(fake, get_fills_a_spec_that_arms_the_same_timer)
{
	struct td_timer_spec spec = { .clockid = CLOCK_MONOTONIC }, got;
	unsigned int calls;
	uint64_t id;

	ASSERT_EQ(0, td_arm(self->ctx, &spec, &id));
	memset(&got, 0x5a, sizeof(got));
	ASSERT_EQ(-ENOTTY, td_get(self->ctx, id, &got));
	ASSERT_EQ(0x5a5a5a5a, got.cpu);

	fake.version.features |= QTIMER_FEAT_GET;
	fake.get_answer = (struct qtimer_op){
		.clockid = CLOCK_REALTIME,
		.flags = QTIMER_F_ABSTIME | QTIMER_F_CANCEL_ON_SET,
		.expires_ns = 123456789, .period_ns = 11, .slack_ns = 22,
		.cookie = 33, .cpu = 3, .result = QTIMER_CANCEL_ARMED,
	};
	ASSERT_EQ(TD_TIMER_ARMED, td_get(self->ctx, id, &got));
	EXPECT_EQ(id, fake.last_op.id);
	EXPECT_EQ(0, fake.last_op.opcode);
	EXPECT_EQ(CLOCK_REALTIME, got.clockid);
	EXPECT_EQ(TD_TIMER_ABSTIME | TD_TIMER_CANCEL_ON_SET | TD_TIMER_CPU, got.flags);
	EXPECT_EQ(123456789, got.expires_ns);
	EXPECT_EQ(11, got.period_ns);
	EXPECT_EQ(22, got.slack_ns);
	EXPECT_EQ(33, got.cookie);
	EXPECT_EQ(3, got.cpu);
	EXPECT_EQ(0, got.reserved[0]);
	EXPECT_EQ(0, got.reserved[4]);
	/* It arms as it reads. */
	ASSERT_EQ(0, td_arm(self->ctx, &got, &id));
	EXPECT_EQ(QTIMER_F_ABSTIME | QTIMER_F_CANCEL_ON_SET | QTIMER_F_CPU,
		  fake.last_op.flags);
	EXPECT_EQ(3, fake.last_op.cpu);
	EXPECT_EQ(123456789, fake.last_op.expires_ns);

	fake.get_answer.result = QTIMER_CANCEL_QUEUED;
	ASSERT_EQ(TD_TIMER_PENDING, td_get(self->ctx, id, &got));

	ASSERT_EQ(QTIMER_CANCEL_ARMED, td_cancel(self->ctx, id));
	got.cpu = 77;
	ASSERT_EQ(-ENOENT, td_get(self->ctx, id, &got));
	ASSERT_EQ(77, got.cpu);

	calls = fake.ioctl_calls;
	ASSERT_EQ(-EINVAL, td_get(NULL, id, &got));
	ASSERT_EQ(-EINVAL, td_get(self->ctx, id, NULL));
	ASSERT_EQ(calls, fake.ioctl_calls);
}

TEST_HARNESS_MAIN
