// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * QTIMER_IOC_SUBMIT: each op gets the result its single ioctl would give,
 * failures have no effect and do not stop the batch unless
 * QTIMER_SUBMIT_STOP_ON_ERROR; errors in struct qtimer_submit itself fail
 * the call with nothing processed; and when the ops array cannot be read or
 * a result cannot be written back, processing stops at that op, which has
 * no effect (an ARM whose id cannot be returned leaves no timer behind, a
 * CANCEL whose result cannot be returned cancels nothing).
 *
 * "No effect" for ARM ops is checked by giving them expiry 0 (or pinning
 * them before a sentinel on the same CPU): had one been armed, its record
 * would be there.
 */
#define _GNU_SOURCE
#include "kselftest_harness.h"
#include "helpers.h"

#define UNTOUCHED	0x7eadbeef	/* result/id before the kernel writes */
#define SENTINEL_COOKIE	0x5e5e5e5eULL

FIXTURE(submit)
{
	int fd;
	long page;
};

FIXTURE_SETUP(submit)
{
	self->fd = t_open(O_NONBLOCK);
	ASSERT_LE(0, self->fd);
	self->page = sysconf(_SC_PAGESIZE);
}

FIXTURE_TEARDOWN(submit)
{
	if (self->fd >= 0)
		close(self->fd);
}

static struct qtimer_op arm_op(__s64 expires_ns, __u64 cookie)
{
	struct qtimer_op op = t_op(CLOCK_MONOTONIC, 0, expires_ns, 0, cookie);

	op.opcode = QTIMER_OP_ARM;
	op.id = UNTOUCHED;
	op.result = UNTOUCHED;
	return op;
}

static struct qtimer_op cancel_op(__u64 id)
{
	struct qtimer_op op;

	memset(&op, 0, sizeof(op));
	op.opcode = QTIMER_OP_CANCEL;
	op.id = id;
	op.result = UNTOUCHED;
	return op;
}

/* A one-shot on CPU 0 at absolute CLOCK_MONOTONIC @when, as an ARM op. */
static struct qtimer_op arm_cpu0_op(__s64 when, __u64 cookie)
{
	struct qtimer_op op = arm_op(when, cookie);

	op.flags = QTIMER_F_ABSTIME | QTIMER_F_CPU;
	op.cpu = 0;
	return op;
}

/* Nothing was armed by a rejected batch of expiry-0 ARMs. */
#define ASSERT_NOTHING_ARMED(fd) do {				\
	t_sleep_ms(150);					\
	EXPECT_EQ(0, t_nothing_pending(fd));			\
} while (0)

TEST_F(submit, mixed_valid_and_invalid_ops)
{
	enum { NR = 10 };
	struct qtimer_op ops[NR];
	struct qtimer_record recs[8];
	__u64 p, q;
	__u32 done;
	int i, k;

	/* P is cancelled and Q modified from inside the batch. */
	ASSERT_EQ(0, t_arm(self->fd, CLOCK_MONOTONIC, 0, 20 * NSEC_PER_SEC,
			    0, 200, &p));
	ASSERT_EQ(0, t_arm(self->fd, CLOCK_MONOTONIC, 0, 20 * NSEC_PER_SEC,
			    0, 201, &q));

	ops[0] = arm_op(50 * NSEC_PER_MSEC, 100);
	ops[1] = arm_op(0, 101);
	ops[1].clockid = 99;				/* bad clock */
	ops[2] = cancel_op(~0ULL);			/* forged id */
	ops[3] = arm_op(60 * NSEC_PER_MSEC, 103);
	ops[4] = arm_op(0, 104);
	ops[4].opcode = 77;				/* unknown opcode */
	ops[5] = arm_op(0, 105);
	ops[5].opcode = 0;				/* no opcode in a batch */
	ops[6] = cancel_op(p);
	ops[7] = cancel_op(q);
	ops[7].opcode = QTIMER_OP_MODIFY;
	ops[7].expires_ns = 70 * NSEC_PER_MSEC;
	ops[8] = arm_op(0, 108);
	ops[8].reserved = 1;				/* reserved field */
	ops[9] = cancel_op(p);				/* already cancelled */
	ops[9].expires_ns = 1;				/* and bad anyway */

	ASSERT_EQ(NR, t_submit(self->fd, ops, NR, 0, &done));
	EXPECT_EQ(NR, done);

	EXPECT_EQ(0, ops[0].result);
	EXPECT_NE(UNTOUCHED, ops[0].id);
	EXPECT_EQ(-EINVAL, ops[1].result);
	EXPECT_EQ(-ENOENT, ops[2].result);
	EXPECT_EQ(0, ops[3].result);
	EXPECT_NE(UNTOUCHED, ops[3].id);
	EXPECT_NE(ops[0].id, ops[3].id);
	EXPECT_EQ(-EINVAL, ops[4].result);
	EXPECT_EQ(-EINVAL, ops[5].result);
	EXPECT_EQ(QTIMER_CANCEL_ARMED, ops[6].result);
	EXPECT_EQ(QTIMER_CANCEL_ARMED, ops[7].result);
	EXPECT_EQ(-EINVAL, ops[8].result);
	/* Which check fires first is the engine's choice; both are errors. */
	EXPECT_TRUE(ops[9].result == -EINVAL || ops[9].result == -ENOENT);

	/* Exactly the two ARMs and the MODIFY fire. */
	ASSERT_EQ(3, t_collect(self->fd, recs, 3, QT_ARRIVE_MS));
	k = t_find_cookie(recs, 3, 100);
	ASSERT_LE(0, k);
	EXPECT_EQ(ops[0].id, recs[k].id);
	k = t_find_cookie(recs, 3, 103);
	ASSERT_LE(0, k);
	EXPECT_EQ(ops[3].id, recs[k].id);
	k = t_find_cookie(recs, 3, 201);
	ASSERT_LE(0, k);
	EXPECT_EQ(q, recs[k].id);
	t_sleep_ms(150);
	EXPECT_EQ(0, t_nothing_pending(self->fd));
	EXPECT_EQ(-ENOENT, t_cancel(self->fd, p));
	for (i = 0; i < 3; i++)
		EXPECT_EQ(-ENOENT, t_cancel(self->fd, recs[i].id));
}

TEST_F(submit, stop_on_error_stops_after_the_failure)
{
	struct qtimer_op ops[3];
	struct qtimer_record recs[4];
	__u32 done;

	ops[0] = arm_op(0, 1);
	ops[1] = arm_op(0, 2);
	ops[1].flags = 1U << 31;			/* unknown flag */
	ops[2] = arm_op(0, 3);

	ASSERT_EQ(2, t_submit(self->fd, ops, 3, QTIMER_SUBMIT_STOP_ON_ERROR,
			       &done));
	EXPECT_EQ(2, done);
	EXPECT_EQ(0, ops[0].result);
	EXPECT_EQ(-EINVAL, ops[1].result);
	/* Not processed: nothing written back, nothing armed. */
	EXPECT_EQ(UNTOUCHED, ops[2].result);
	EXPECT_EQ(UNTOUCHED, ops[2].id);
	ASSERT_EQ(1, t_collect(self->fd, recs, 1, QT_ARRIVE_MS));
	EXPECT_EQ(1, recs[0].cookie);
	EXPECT_EQ(ops[0].id, recs[0].id);
	ASSERT_NOTHING_ARMED(self->fd);
}

TEST_F(submit, stop_on_error_first_op_fails)
{
	struct qtimer_op ops[2];
	__u32 done;

	ops[0] = cancel_op(12345);
	ops[1] = arm_op(0, 2);
	ASSERT_EQ(1, t_submit(self->fd, ops, 2, QTIMER_SUBMIT_STOP_ON_ERROR,
			       &done));
	EXPECT_EQ(1, done);
	EXPECT_EQ(-ENOENT, ops[0].result);
	EXPECT_EQ(UNTOUCHED, ops[1].result);
	ASSERT_NOTHING_ARMED(self->fd);
}

TEST_F(submit, stop_on_error_all_succeed)
{
	struct qtimer_op ops[4];
	__u32 done;
	int i;

	for (i = 0; i < 4; i++)
		ops[i] = arm_op(20 * NSEC_PER_SEC, i);
	ASSERT_EQ(4, t_submit(self->fd, ops, 4, QTIMER_SUBMIT_STOP_ON_ERROR,
			       &done));
	EXPECT_EQ(4, done);
	for (i = 0; i < 4; i++) {
		EXPECT_EQ(0, ops[i].result);
		EXPECT_EQ(QTIMER_CANCEL_ARMED, t_cancel(self->fd, ops[i].id));
	}
}

TEST_F(submit, nr_zero)
{
	struct qtimer_op op = arm_op(0, 1);

	EXPECT_EQ(-EINVAL, t_submit(self->fd, &op, 0, 0, NULL));
	EXPECT_EQ(UNTOUCHED, op.result);
	ASSERT_NOTHING_ARMED(self->fd);
}

TEST_F(submit, nr_above_max)
{
	static struct qtimer_op ops[QTIMER_SUBMIT_MAX + 1];
	int i;

	for (i = 0; i <= QTIMER_SUBMIT_MAX; i++)
		ops[i] = arm_op(0, i);
	EXPECT_EQ(-EINVAL, t_submit(self->fd, ops, QTIMER_SUBMIT_MAX + 1, 0,
				     NULL));
	EXPECT_EQ(-EINVAL, t_submit(self->fd, ops, ~0U, 0, NULL));
	for (i = 0; i <= QTIMER_SUBMIT_MAX; i++)
		ASSERT_EQ(UNTOUCHED, ops[i].result);
	ASSERT_NOTHING_ARMED(self->fd);
}

TEST_F(submit, unknown_flags)
{
	struct qtimer_op op = arm_op(0, 1);

	EXPECT_EQ(-EINVAL, t_submit(self->fd, &op, 1,
				     ~QTIMER_SUBMIT_ALL, NULL));
	EXPECT_EQ(-EINVAL, t_submit(self->fd, &op, 1,
				     QTIMER_SUBMIT_STOP_ON_ERROR << 1, NULL));
	EXPECT_EQ(UNTOUCHED, op.result);
	ASSERT_NOTHING_ARMED(self->fd);
}

TEST_F(submit, nonzero_pad)
{
	struct qtimer_op op = arm_op(0, 1);
	struct qtimer_submit s = {
		.ops = (__u64)(uintptr_t)&op, .nr = 1, .pad = 1,
	};

	EXPECT_EQ(-EINVAL, t_ioctl(self->fd, QTIMER_IOC_SUBMIT, &s));
	EXPECT_EQ(UNTOUCHED, op.result);
	ASSERT_NOTHING_ARMED(self->fd);
}

TEST_F(submit, nonzero_reserved)
{
	struct qtimer_op op = arm_op(0, 1);
	struct qtimer_submit s = {
		.ops = (__u64)(uintptr_t)&op, .nr = 1, .reserved = 1ULL << 63,
	};

	EXPECT_EQ(-EINVAL, t_ioctl(self->fd, QTIMER_IOC_SUBMIT, &s));
	EXPECT_EQ(UNTOUCHED, op.result);
	ASSERT_NOTHING_ARMED(self->fd);
}

/* done is an output: whatever it holds on entry is ignored. */
TEST_F(submit, done_is_output_only)
{
	struct qtimer_op op = arm_op(0, 1);
	struct qtimer_submit s = {
		.ops = (__u64)(uintptr_t)&op, .nr = 1, .done = ~0U,
	};
	struct qtimer_record rec;

	EXPECT_EQ(1, t_ioctl(self->fd, QTIMER_IOC_SUBMIT, &s));
	EXPECT_EQ(1, s.done);
	EXPECT_EQ(1, t_collect(self->fd, &rec, 1, QT_ARRIVE_MS));
}

TEST_F(submit, submit_struct_null)
{
	EXPECT_EQ(-EFAULT, t_ioctl(self->fd, QTIMER_IOC_SUBMIT, NULL));
}

TEST_F(submit, ops_null)
{
	__u32 done;

	EXPECT_EQ(-EFAULT, t_submit(self->fd, NULL, 1, 0, &done));
	EXPECT_EQ(-EFAULT, t_submit(self->fd, NULL, 8,
				     QTIMER_SUBMIT_STOP_ON_ERROR, &done));
	ASSERT_NOTHING_ARMED(self->fd);
}

TEST_F(submit, ops_unmapped)
{
	struct qtimer_op *ops = t_unmapped_page();

	ASSERT_NE(NULL, ops);
	EXPECT_EQ(-EFAULT, t_submit(self->fd, ops, 4, 0, NULL));
	ASSERT_NOTHING_ARMED(self->fd);
}

/*
 * The array runs off the end of a mapping: ops before the hole are done,
 * the one that cannot be read has no effect, and the call says how many.
 */
TEST_F(submit, ops_run_into_unmapped_page)
{
	struct qtimer_record recs[4];
	struct qtimer_op *ops;
	char *map;
	__u32 done;

	map = mmap(NULL, 2 * self->page, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, map);
	ASSERT_EQ(0, munmap(map + self->page, self->page));
	/* ops[0..1] fit; ops[2] straddles the hole. */
	ops = (struct qtimer_op *)(map + self->page - 2 * sizeof(*ops) -
				   sizeof(*ops) / 2);
	ops[0] = arm_op(0, 1);
	ops[1] = arm_op(0, 2);
	memcpy(&ops[2], &ops[1], sizeof(*ops) / 2);
	EXPECT_EQ(2, t_submit(self->fd, ops, 3, 0, &done));
	EXPECT_EQ(2, done);
	EXPECT_EQ(0, ops[0].result);
	EXPECT_EQ(0, ops[1].result);
	ASSERT_EQ(2, t_collect(self->fd, recs, 2, QT_ARRIVE_MS));
	ASSERT_NOTHING_ARMED(self->fd);
	munmap(map, self->page);
}

/*
 * The first ARM cannot write its id back: the call fails with -EFAULT and
 * no timer is left armed (the caller could never cancel it).
 */
TEST_F(submit, readonly_ops_arm_leaves_nothing_armed)
{
	__s64 now = t_now(CLOCK_MONOTONIC);
	struct qtimer_op src[2], *ops;
	__u32 done;

	src[0] = arm_cpu0_op(now + 50 * NSEC_PER_MSEC, 1);
	src[1] = arm_cpu0_op(now + 60 * NSEC_PER_MSEC, 2);
	ops = t_readonly_copy(src, sizeof(src));
	ASSERT_NE(NULL, ops);
	EXPECT_EQ(-EFAULT, t_submit(self->fd, ops, 2, 0, &done));
	ASSERT_EQ(0, t_arm_cpu(self->fd, CLOCK_MONOTONIC, QTIMER_F_ABSTIME,
				now + 200 * NSEC_PER_MSEC, 0, SENTINEL_COOKIE,
				0, NULL));
	EXPECT_EQ(0, t_read_to_sentinel(self->fd, SENTINEL_COOKIE, NULL, 0));
	EXPECT_EQ(0, t_nothing_pending(self->fd));
	t_readonly_free(ops);
}

/*
 * struct qtimer_submit itself read-only: done cannot be written, so the
 * call fails with EFAULT before any op runs.  (It used to run the ops and
 * ignore the failed write of done.)
 */
TEST_F(submit, readonly_submit_struct_runs_nothing)
{
	struct qtimer_op ops[2];
	struct qtimer_submit s = {}, *sub;

	ops[0] = arm_op(0, 1);
	ops[1] = arm_op(0, 2);
	s.ops = (uintptr_t)ops;
	s.nr = 2;
	sub = t_readonly_copy(&s, sizeof(s));
	ASSERT_NE(NULL, sub);
	EXPECT_EQ(-EFAULT, t_ioctl(self->fd, QTIMER_IOC_SUBMIT, sub));
	EXPECT_EQ(UNTOUCHED, ops[0].result);
	EXPECT_EQ(UNTOUCHED, ops[1].result);
	ASSERT_NOTHING_ARMED(self->fd);
	t_readonly_free(sub);
}

/* Same, for the second op: the first is done and counted, the second not. */
TEST_F(submit, readonly_second_op)
{
	__s64 now = t_now(CLOCK_MONOTONIC);
	struct qtimer_record recs[4];
	struct qtimer_op *ops;
	char *map;
	__u32 done;
	int n;

	map = mmap(NULL, 2 * self->page, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, map);
	ops = (struct qtimer_op *)(map + self->page - sizeof(*ops));
	ops[0] = arm_cpu0_op(now + 50 * NSEC_PER_MSEC, 1);
	ops[1] = arm_cpu0_op(now + 60 * NSEC_PER_MSEC, 2);
	ASSERT_EQ(0, mprotect(map + self->page, self->page, PROT_READ));
	EXPECT_EQ(1, t_submit(self->fd, ops, 2, 0, &done));
	EXPECT_EQ(1, done);
	EXPECT_EQ(0, ops[0].result);
	ASSERT_EQ(0, t_arm_cpu(self->fd, CLOCK_MONOTONIC, QTIMER_F_ABSTIME,
				now + 200 * NSEC_PER_MSEC, 0, SENTINEL_COOKIE,
				0, NULL));
	/* Only ops[0]'s record, then the sentinel. */
	ASSERT_EQ(1, t_collect(self->fd, recs, 1, QT_ARRIVE_MS));
	EXPECT_EQ(1, recs[0].cookie);
	EXPECT_EQ(ops[0].id, recs[0].id);
	n = t_read_to_sentinel(self->fd, SENTINEL_COOKIE, NULL, 0);
	EXPECT_EQ(0, n);
	munmap(map, 2 * self->page);
}

/* A CANCEL whose result cannot be written back cancels nothing. */
TEST_F(submit, readonly_ops_cancel_has_no_effect)
{
	struct qtimer_record rec;
	struct qtimer_op src, *ops;
	__u64 id;

	ASSERT_EQ(0, t_arm(self->fd, CLOCK_MONOTONIC, 0, 100 * NSEC_PER_MSEC,
			    0, 9, &id));
	src = cancel_op(id);
	ops = t_readonly_copy(&src, sizeof(src));
	ASSERT_NE(NULL, ops);
	EXPECT_EQ(-EFAULT, t_submit(self->fd, ops, 1, 0, NULL));
	ASSERT_EQ(1, t_collect(self->fd, &rec, 1, QT_ARRIVE_MS));
	EXPECT_EQ(id, rec.id);
	t_readonly_free(ops);
}

/* A full batch of arms, then a full batch of cancels of the same ids. */
TEST_F(submit, max_batch_arm_then_cancel)
{
	static struct qtimer_op ops[QTIMER_SUBMIT_MAX];
	static __u64 ids[QTIMER_SUBMIT_MAX];
	__u32 done;
	int i;

	for (i = 0; i < QTIMER_SUBMIT_MAX; i++) {
		ops[i] = arm_op(20 * NSEC_PER_SEC + i * NSEC_PER_USEC, i);
		if (i % 3 == 1) {
			ops[i].flags = QTIMER_F_CPU;
			ops[i].cpu = i % t_nr_cpus();
		}
	}
	ASSERT_EQ(QTIMER_SUBMIT_MAX,
		  t_submit(self->fd, ops, QTIMER_SUBMIT_MAX, 0, &done));
	EXPECT_EQ(QTIMER_SUBMIT_MAX, done);
	for (i = 0; i < QTIMER_SUBMIT_MAX; i++) {
		ASSERT_EQ(0, ops[i].result);
		ids[i] = ops[i].id;
	}
	for (i = 0; i < QTIMER_SUBMIT_MAX; i++)
		ops[i] = cancel_op(ids[(i * 7) % QTIMER_SUBMIT_MAX]);
	ASSERT_EQ(QTIMER_SUBMIT_MAX,
		  t_submit(self->fd, ops, QTIMER_SUBMIT_MAX,
			    QTIMER_SUBMIT_STOP_ON_ERROR, &done));
	EXPECT_EQ(QTIMER_SUBMIT_MAX, done);
	for (i = 0; i < QTIMER_SUBMIT_MAX; i++)
		ASSERT_EQ(QTIMER_CANCEL_ARMED, ops[i].result);
	/* All ids were distinct, or a cancel above would have failed. */
	for (i = 0; i < 64; i++)
		EXPECT_EQ(-ENOENT, t_cancel(self->fd, ids[i]));
	EXPECT_EQ(0, t_nothing_pending(self->fd));
}

/* A MODIFY whose result cannot be written back re-times nothing. */
TEST_F(submit, readonly_ops_modify_has_no_effect)
{
	struct qtimer_record rec;
	struct qtimer_op src, *ops;
	__s64 when = t_now(CLOCK_MONOTONIC) + 100 * NSEC_PER_MSEC;
	__u64 id;

	ASSERT_EQ(0, t_arm(self->fd, CLOCK_MONOTONIC, QTIMER_F_ABSTIME, when,
			    0, 9, &id));
	src = cancel_op(id);
	src.opcode = QTIMER_OP_MODIFY;
	src.expires_ns = 20 * NSEC_PER_SEC;
	ops = t_readonly_copy(&src, sizeof(src));
	ASSERT_NE(NULL, ops);
	EXPECT_EQ(-EFAULT, t_submit(self->fd, ops, 1, 0, NULL));
	/* Still on its old schedule. */
	ASSERT_EQ(1, t_collect(self->fd, &rec, 1, QT_ARRIVE_MS));
	EXPECT_EQ(id, rec.id);
	EXPECT_EQ(when, rec.expires_ns);
	t_readonly_free(ops);
}

/*
 * An ARM op that straddles a page boundary so that its id can be written
 * back but its result cannot: the op did not complete, so no timer may be
 * left behind.
 */
TEST_F(submit, arm_result_unwritable_leaves_nothing_armed)
{
	struct qtimer_op *op;
	char *map;

	map = mmap(NULL, 2 * self->page, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, map);
	/* id (bytes 8-15) in the first page, result (52-55) in the second. */
	op = (struct qtimer_op *)(map + self->page - 32);
	*op = arm_op(0, 1);
	ASSERT_EQ(0, mprotect(map + self->page, self->page, PROT_READ));
	EXPECT_EQ(-EFAULT, t_submit(self->fd, op, 1, 0, NULL));
	ASSERT_NOTHING_ARMED(self->fd);
	munmap(map, 2 * self->page);
}

TEST_HARNESS_MAIN
