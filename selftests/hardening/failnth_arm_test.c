// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * Fail-nth sweeps (failnth.h) of open() and the calls that arm: ARM on a
 * new file, ARM on a file whose id table and heap must grow past kmalloc
 * sizes, and MODIFY of a fired, unread one-shot.
 */
#define _GNU_SOURCE
#include "kselftest_harness.h"
#include "failnth.h"

static int open_dev(struct failnth_try *t)
{
	t->fd = t_open(O_NONBLOCK);
	return t->fd < 0 ? t->fd : 0;
}

/* Opened or not, the file (or the next one) works. */
static bool check_open(struct __test_metadata *_metadata,
		       FIXTURE_DATA(failnth) *self, struct failnth_try *t)
{
	if (t->ret) {
		ASSERT_EQ(-ENOMEM, t->ret) TH_LOG("%s, allocation %d", t->what, t->n);
		ASSERT_TRUE(t->fired);
		/* Nothing is left half-made: the next open works. */
		t->fd = t_open(O_NONBLOCK);
		ASSERT_LE(0, t->fd);
	}
	ASSERT_EQ(0, t_arm(t->fd, CLOCK_MONOTONIC, 0, 0, 0, t->n, NULL));
	ASSERT_EQ(0, expect_one(t->fd, t->n, 0, 0))
		TH_LOG("%s, allocation %d", t->what, t->n);
	return t->ret;
}

static const struct failnth_call open_call = {
	.call = open_dev,
	.check = check_open,
};

TEST_F_TIMEOUT(failnth, open, 120)
{
	REQUIRE_FAILNTH();
	ASSERT_LT(0, failnth_sweep(_metadata, self, &open_call, "open", NULL));
}

/*
 * ARM of a one-shot 20 ms ahead on a file already holding *@t->arg far
 * away timers.
 */
static void prepare_arm(struct __test_metadata *_metadata,
			FIXTURE_DATA(failnth) *self, struct failnth_try *t)
{
	long pre = *(const long *)t->arg;

	t->fd = t_open(O_NONBLOCK);
	ASSERT_LE(0, t->fd);
	if (pre) {
		ASSERT_EQ(0, arm_many(t->fd, pre, 1ULL << 32));
	}
	t->t0 = t_now(CLOCK_MONOTONIC);
}

static int arm_soon(struct failnth_try *t)
{
	return t_arm_cpu(t->fd, CLOCK_MONOTONIC, 0, 20 * NSEC_PER_MSEC, 0,
			 t->n, 0, &t->id);
}

/*
 * A failed ARM left the counts as they were and never fires; armed again,
 * or armed at once, the one-shot fires once and is gone.
 */
static bool check_arm(struct __test_metadata *_metadata,
		      FIXTURE_DATA(failnth) *self, struct failnth_try *t)
{
	long pre = *(const long *)t->arg;
	struct t_fdinfo fi;

	ASSERT_EQ(0, t_fdinfo(t->fd, &fi));
	if (t->ret) {
		ASSERT_EQ(-ENOMEM, t->ret) TH_LOG("%s, allocation %d", t->what, t->n);
		EXPECT_EQ(pre, fi.timers);
		EXPECT_EQ(self->user_base + pre, fi.user_timers);
		/* It must never fire. */
		t_sleep_ms(80);
		EXPECT_EQ(0, t_nothing_pending(t->fd));
		t->t0 = t_now(CLOCK_MONOTONIC);
		ASSERT_EQ(0, arm_soon(t));
	} else {
		EXPECT_EQ(pre + 1, fi.timers);
		/* (The user's count is checked on a new file only.) */
		if (!pre) {
			EXPECT_EQ(self->user_base + 1, fi.user_timers);
		}
	}
	EXPECT_EQ(0, expect_one(t->fd, t->n, t->id, t->t0 + 20 * NSEC_PER_MSEC))
		TH_LOG("%s, allocation %d", t->what, t->n);
	ASSERT_EQ(0, t_fdinfo(t->fd, &fi));
	EXPECT_EQ(pre, fi.timers);
	return t->ret;
}

static const struct failnth_call arm_call = {
	.prepare = prepare_arm,
	.call = arm_soon,
	.check = check_arm,
};

/* ARM on a new file: the timer, the first id table and maybe the heap. */
TEST_F_TIMEOUT(failnth, arm_new_file, 120)
{
	long pre = 0;

	REQUIRE_FAILNTH();
	ASSERT_LT(0, failnth_sweep(_metadata, self, &arm_call, "arm (new file)",
				   &pre));
}

/*
 * ARM of timer 1025: the id table grows from 1024 to 2048 slots (16 KiB of
 * slots, 8 KiB of generations) and the CPU's heap from 1024 entries, all
 * beyond kmalloc's page-sized caches, so kvmalloc may take its vmalloc path.
 */
TEST_F_TIMEOUT(failnth, arm_grows_tables, 600)
{
	long pre = 1024;

	REQUIRE_FAILNTH();
	ASSERT_LT(0, failnth_sweep(_metadata, self, &arm_call,
				   "arm (growing tables)", &pre));
}

/*
 * MODIFY of a fired, unread one-shot needs a fresh timer object (the old
 * one stays on the ready queue to die).  On -ENOMEM the old record must
 * still be there, and be the only one.
 */
static void prepare_fired(struct __test_metadata *_metadata,
			  FIXTURE_DATA(failnth) *self, struct failnth_try *t)
{
	t->fd = t_open(O_NONBLOCK);
	ASSERT_LE(0, t->fd);
	ASSERT_EQ(0, arm_fired(t->fd, t->n, &t->id));
	t->t0 = t_now(CLOCK_MONOTONIC);
}

/* Far enough out that it is still armed when fdinfo is read. */
static int modify_later(struct failnth_try *t)
{
	return t_modify(t->fd, t->id, 0, 300 * NSEC_PER_MSEC, 0, 0);
}

static bool check_modify(struct __test_metadata *_metadata,
			 FIXTURE_DATA(failnth) *self, struct failnth_try *t)
{
	struct qtimer_record rec;
	struct t_fdinfo fi;

	ASSERT_EQ(0, t_fdinfo(t->fd, &fi));
	EXPECT_EQ(1, fi.timers);
	if (t->ret < 0) {
		ASSERT_EQ(-ENOMEM, t->ret) TH_LOG("%s, allocation %d", t->what, t->n);
		EXPECT_EQ(1, fi.pending);
		ASSERT_EQ(1, t_read(t->fd, &rec, 1));
		EXPECT_EQ(t->id, rec.id);
		EXPECT_EQ(t->n, rec.cookie);
		EXPECT_LT(rec.expires_ns, t->t0);
		EXPECT_EQ(QTIMER_REC_LAST, rec.flags);
		/* It was read: the one-shot is gone. */
		EXPECT_EQ(-ENOENT, t_modify(t->fd, t->id, 0, 0, 0, 0));
		t_sleep_ms(80);
		EXPECT_EQ(0, t_nothing_pending(t->fd));
	} else {
		EXPECT_EQ(QTIMER_CANCEL_QUEUED, t->ret);
		EXPECT_EQ(0, fi.pending);
		EXPECT_EQ(0, expect_one(t->fd, t->n, t->id,
					t->t0 + 300 * NSEC_PER_MSEC))
			TH_LOG("%s, allocation %d", t->what, t->n);
	}
	ASSERT_EQ(0, t_fdinfo(t->fd, &fi));
	EXPECT_EQ(0, fi.timers);
	return t->ret < 0;
}

static const struct failnth_call modify_call = {
	.prepare = prepare_fired,
	.call = modify_later,
	.check = check_modify,
};

TEST_F_TIMEOUT(failnth, modify_fired, 120)
{
	REQUIRE_FAILNTH();
	ASSERT_LT(0, failnth_sweep(_metadata, self, &modify_call,
				   "modify (fired)", NULL));
}

TEST_HARNESS_MAIN
