// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * Input validation of ARM (qtimer_validate.h): unknown flags, a wrong
 * opcode, reserved fields, a bad clock, expiries, periods and slack that
 * overflow or are out of range, and cancel-on-set's requirements.
 */
#define _GNU_SOURCE
#include <stdint.h>

#include "qtimer_validate.h"

TEST_F(validate, arm_valid_baseline)
{
	struct qtimer_op op = good_arm();
	struct qtimer_record rec;

	/* The baseline the other tests break: both opcode spellings work. */
	ASSERT_EQ(0, t_arm_op(self->fd, &op));
	op = good_arm();
	op.opcode = QTIMER_OP_ARM;
	ASSERT_EQ(0, t_arm_op(self->fd, &op));
	EXPECT_EQ(2, t_collect(self->fd, &rec, 1, QT_ARRIVE_MS) +
		     t_collect(self->fd, &rec, 1, QT_ARRIVE_MS));
}

TEST_F(validate, arm_unknown_flags)
{
	struct qtimer_op op;
	int bit;

	for (bit = 3; bit < 32; bit++) {
		op = good_arm();
		op.flags = 1U << bit;
		ASSERT_EQ(QTIMER_F_ALL & (1U << bit), 0);
		EXPECT_EQ(-EINVAL, t_arm_op(self->fd, &op)) {
			TH_LOG("flag bit %d", bit);
		}
	}
	EXPECT_NOTHING_ARMED(self->fd);
}

TEST_F(validate, arm_wrong_opcode)
{
	__u16 opcodes[] = { QTIMER_OP_CANCEL, QTIMER_OP_MODIFY, 4, 99, 0xffff };
	struct qtimer_op op;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(opcodes); i++) {
		op = good_arm();
		op.opcode = opcodes[i];
		EXPECT_EQ(-EINVAL, t_arm_op(self->fd, &op));
	}
	EXPECT_NOTHING_ARMED(self->fd);
}

TEST_F(validate, arm_nonzero_reserved)
{
	struct qtimer_op op = good_arm();

	op.reserved = 1;
	EXPECT_EQ(-EINVAL, t_arm_op(self->fd, &op));
	op.reserved = 1ULL << 63;
	EXPECT_EQ(-EINVAL, t_arm_op(self->fd, &op));
	EXPECT_NOTHING_ARMED(self->fd);
}

TEST_F(validate, arm_bad_clock)
{
	/* Everything but REALTIME (0), MONOTONIC (1) and BOOTTIME (7). */
	__u16 clocks[] = {
		CLOCK_PROCESS_CPUTIME_ID, CLOCK_THREAD_CPUTIME_ID,
		CLOCK_MONOTONIC_RAW, CLOCK_REALTIME_COARSE,
		CLOCK_MONOTONIC_COARSE, 8 /* REALTIME_ALARM */,
		9 /* BOOTTIME_ALARM */, 11 /* TAI */, 12, 16, 99, 0xffff,
	};
	struct qtimer_op op;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(clocks); i++) {
		op = good_arm();
		op.clockid = clocks[i];
		EXPECT_EQ(-EINVAL, t_arm_op(self->fd, &op)) {
			TH_LOG("clock %u", clocks[i]);
		}
	}
	EXPECT_NOTHING_ARMED(self->fd);
}

TEST_F(validate, arm_negative_relative_expiry)
{
	struct qtimer_op op = good_arm();

	op.expires_ns = -1;
	EXPECT_EQ(-EINVAL, t_arm_op(self->fd, &op));
	op.expires_ns = INT64_MIN;
	EXPECT_EQ(-EINVAL, t_arm_op(self->fd, &op));
	EXPECT_NOTHING_ARMED(self->fd);
}

TEST_F(validate, arm_relative_expiry_overflows)
{
	struct qtimer_op op;

	op = good_arm();
	op.expires_ns = INT64_MAX;
	EXPECT_EQ(-EOVERFLOW, t_arm_op(self->fd, &op));
	/* Only just past the end once "now" is added. */
	op = good_arm();
	op.expires_ns = INT64_MAX - t_now(CLOCK_MONOTONIC) / 2;
	EXPECT_EQ(-EOVERFLOW, t_arm_op(self->fd, &op));
	/* Relative CLOCK_REALTIME is an interval on the monotonic clock. */
	op = good_arm();
	op.clockid = CLOCK_REALTIME;
	op.expires_ns = INT64_MAX - t_now(CLOCK_MONOTONIC) / 2;
	EXPECT_EQ(-EOVERFLOW, t_arm_op(self->fd, &op));
	EXPECT_NOTHING_ARMED(self->fd);
}

TEST_F(validate, arm_period_overflows)
{
	struct qtimer_op op;

	op = good_arm();
	op.period_ns = UINT64_MAX;
	EXPECT_EQ(-EOVERFLOW, t_arm_op(self->fd, &op));
	op = good_arm();
	op.period_ns = (__u64)INT64_MAX + 1;
	EXPECT_EQ(-EOVERFLOW, t_arm_op(self->fd, &op));
	EXPECT_NOTHING_ARMED(self->fd);
}

TEST_F(validate, arm_slack_above_max)
{
	struct qtimer_op op = good_arm();
	__u64 id;

	op.slack_ns = QTIMER_SLACK_MAX_NS + 1;
	EXPECT_EQ(-EINVAL, t_arm_op(self->fd, &op));
	op.slack_ns = UINT64_MAX;
	EXPECT_EQ(-EINVAL, t_arm_op(self->fd, &op));
	EXPECT_NOTHING_ARMED(self->fd);
	/* The limit itself is allowed. */
	op = good_arm();
	op.expires_ns = 20 * NSEC_PER_SEC;
	op.slack_ns = QTIMER_SLACK_MAX_NS;
	ASSERT_EQ(0, t_arm_op(self->fd, &op));
	id = op.id;
	EXPECT_EQ(QTIMER_CANCEL_ARMED, t_cancel(self->fd, id));
}

TEST_F(validate, cancel_on_set_needs_realtime)
{
	struct qtimer_op op = good_arm();

	op.flags = QTIMER_F_ABSTIME | QTIMER_F_CANCEL_ON_SET;
	op.expires_ns = 1;
	EXPECT_EQ(-EINVAL, t_arm_op(self->fd, &op));
	op.clockid = CLOCK_BOOTTIME;
	EXPECT_EQ(-EINVAL, t_arm_op(self->fd, &op));
	EXPECT_NOTHING_ARMED(self->fd);
}

TEST_F(validate, cancel_on_set_needs_abstime)
{
	struct qtimer_op op = good_arm();
	__u64 id;

	op.clockid = CLOCK_REALTIME;
	op.flags = QTIMER_F_CANCEL_ON_SET;
	EXPECT_EQ(-EINVAL, t_arm_op(self->fd, &op));
	EXPECT_NOTHING_ARMED(self->fd);
	/* With both it is fine. */
	op.flags |= QTIMER_F_ABSTIME;
	op.expires_ns = t_now(CLOCK_REALTIME) + 20 * NSEC_PER_SEC;
	ASSERT_EQ(0, t_arm_op(self->fd, &op));
	id = op.id;
	EXPECT_EQ(QTIMER_CANCEL_ARMED, t_cancel(self->fd, id));
}

TEST_HARNESS_MAIN
