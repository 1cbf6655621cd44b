// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * Input validation of MODIFY and CANCEL (qtimer_validate.h): every field
 * they must leave zero, their opcodes, and MODIFY's expiry and slack; a
 * rejected call leaves the fixture's victim armed as before.
 */
#define _GNU_SOURCE
#include <stdint.h>

#include "qtimer_validate.h"

/* Checks that the victim is untouched by a rejected MODIFY: still 20 s out. */
#define EXPECT_VICTIM_UNCHANGED() do {				\
	t_sleep_ms(100);					\
	EXPECT_EQ(0, t_nothing_pending(self->fd));		\
} while (0)

/* A valid MODIFY of the victim to fire at once (if it were accepted). */
static struct qtimer_op good_modify(__u64 id)
{
	struct qtimer_op op;

	memset(&op, 0, sizeof(op));
	op.id = id;
	return op;
}

/*
 * Test @test: MODIFY or CANCEL (@cmd) of the victim, valid but for @field =
 * @value, is -EINVAL.  A CANCEL that got through would leave the teardown
 * no victim to cancel; a MODIFY that did would make the victim fire at
 * once, which is looked for here as well.
 */
#define FIELD_TEST(test, cmd, field, value)				\
TEST_F(validate, test)							\
{									\
	struct qtimer_op op = good_modify(self->victim);		\
									\
	op.field = value;						\
	EXPECT_EQ(-EINVAL, t_ioctl(self->fd, cmd, &op));		\
	if (cmd == QTIMER_IOC_MODIFY)					\
		EXPECT_VICTIM_UNCHANGED();				\
}

#define MODIFY_REJECTS(name, field, value)				\
	FIELD_TEST(modify_##name, QTIMER_IOC_MODIFY, field, value)

MODIFY_REJECTS(nonzero_clockid, clockid, CLOCK_MONOTONIC)
MODIFY_REJECTS(nonzero_cookie, cookie, 1)
MODIFY_REJECTS(nonzero_cpu, cpu, 1)
MODIFY_REJECTS(cpu_flag, flags, QTIMER_F_CPU)	/* ARM only */

TEST_F(validate, modify_unknown_flags)
{
	struct qtimer_op op = good_modify(self->victim);

	op.flags = 1U << 3;
	EXPECT_EQ(-EINVAL, t_ioctl(self->fd, QTIMER_IOC_MODIFY, &op));
	op.flags = 1U << 31;
	EXPECT_EQ(-EINVAL, t_ioctl(self->fd, QTIMER_IOC_MODIFY, &op));
	EXPECT_VICTIM_UNCHANGED();
}

MODIFY_REJECTS(nonzero_reserved, reserved, 1)

TEST_F(validate, modify_wrong_opcode)
{
	struct qtimer_op op = good_modify(self->victim);

	op.opcode = QTIMER_OP_ARM;
	EXPECT_EQ(-EINVAL, t_ioctl(self->fd, QTIMER_IOC_MODIFY, &op));
	op.opcode = QTIMER_OP_CANCEL;
	EXPECT_EQ(-EINVAL, t_ioctl(self->fd, QTIMER_IOC_MODIFY, &op));
	op.opcode = 99;
	EXPECT_EQ(-EINVAL, t_ioctl(self->fd, QTIMER_IOC_MODIFY, &op));
	EXPECT_VICTIM_UNCHANGED();
}

MODIFY_REJECTS(negative_relative_expiry, expires_ns, -1)

TEST_F(validate, modify_overflows)
{
	struct qtimer_op op = good_modify(self->victim);

	op.expires_ns = INT64_MAX;
	EXPECT_EQ(-EOVERFLOW, t_ioctl(self->fd, QTIMER_IOC_MODIFY, &op));
	op = good_modify(self->victim);
	op.period_ns = UINT64_MAX;
	EXPECT_EQ(-EOVERFLOW, t_ioctl(self->fd, QTIMER_IOC_MODIFY, &op));
	EXPECT_VICTIM_UNCHANGED();
}

MODIFY_REJECTS(slack_above_max, slack_ns, QTIMER_SLACK_MAX_NS + 1)

/* The victim is MONOTONIC: CANCEL_ON_SET cannot be added by MODIFY. */
TEST_F(validate, modify_cancel_on_set_needs_realtime)
{
	struct qtimer_op op = good_modify(self->victim);

	op.flags = QTIMER_F_ABSTIME | QTIMER_F_CANCEL_ON_SET;
	op.expires_ns = 1;
	EXPECT_EQ(-EINVAL, t_ioctl(self->fd, QTIMER_IOC_MODIFY, &op));
	EXPECT_VICTIM_UNCHANGED();
}

TEST_F(validate, modify_valid_baseline)
{
	struct qtimer_op op = good_modify(self->victim);
	struct qtimer_record rec;

	op.opcode = QTIMER_OP_MODIFY;
	op.expires_ns = 20 * NSEC_PER_SEC;
	EXPECT_EQ(QTIMER_CANCEL_ARMED,
		  t_ioctl(self->fd, QTIMER_IOC_MODIFY, &op));
	/* Both opcode spellings. */
	op = good_modify(self->victim);
	op.expires_ns = 20 * NSEC_PER_SEC;
	EXPECT_EQ(QTIMER_CANCEL_ARMED,
		  t_ioctl(self->fd, QTIMER_IOC_MODIFY, &op));
	EXPECT_EQ(0, t_collect(self->fd, &rec, 1, 50));
}

/* CANCEL: only opcode and id may be non-zero. */
#define CANCEL_FIELD_TEST(name, field, value)				\
	FIELD_TEST(cancel_nonzero_##name, QTIMER_IOC_CANCEL, field, value)

CANCEL_FIELD_TEST(expires, expires_ns, 1)
CANCEL_FIELD_TEST(negative_expires, expires_ns, -1)
CANCEL_FIELD_TEST(flags, flags, QTIMER_F_ABSTIME)
CANCEL_FIELD_TEST(clockid, clockid, CLOCK_MONOTONIC)
CANCEL_FIELD_TEST(period, period_ns, 1)
CANCEL_FIELD_TEST(slack, slack_ns, 1)
CANCEL_FIELD_TEST(cookie, cookie, 1)
CANCEL_FIELD_TEST(cpu, cpu, 1)
CANCEL_FIELD_TEST(reserved, reserved, 1)
CANCEL_FIELD_TEST(opcode, opcode, QTIMER_OP_ARM)

TEST_F(validate, cancel_valid_baseline)
{
	struct qtimer_op op = good_modify(self->victim);
	__u64 id;

	op.opcode = QTIMER_OP_CANCEL;
	EXPECT_EQ(QTIMER_CANCEL_ARMED,
		  t_ioctl(self->fd, QTIMER_IOC_CANCEL, &op));
	/* Re-arm a victim for the teardown's check. */
	ASSERT_EQ(0, t_arm(self->fd, CLOCK_MONOTONIC, 0, 20 * NSEC_PER_SEC,
			    0, 0, &id));
	self->victim = id;
}

TEST_HARNESS_MAIN
