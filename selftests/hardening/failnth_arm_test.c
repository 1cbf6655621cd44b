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

TEST_F_TIMEOUT(failnth, open, 120)
{
	int n, fd = -1, failures = 0;
	struct outcomes o = { .n = 0 };
	bool fired;

	REQUIRE_FAILNTH();

	for (n = 1; n < MAX_NTH; n++) {
		ASSERT_EQ(0, nth_arm(self->nth, n));
		fd = open(QT_DEV, O_RDWR | O_NONBLOCK | O_CLOEXEC);
		fired = nth_fired(self->nth);
		if (fired)
			outcome(&o, fd < 0);
		if (fd < 0) {
			ASSERT_EQ(ENOMEM, errno) TH_LOG("open, allocation %d", n);
			ASSERT_TRUE(fired);
			failures++;
			/* Nothing is left half-made: the next open works. */
			fd = t_open(O_NONBLOCK);
			ASSERT_LE(0, fd);
		}
		ASSERT_EQ(0, t_arm(fd, CLOCK_MONOTONIC, 0, 0, 0, n, NULL));
		ASSERT_EQ(0, expect_one(fd, n, 0, 0)) TH_LOG("open, allocation %d", n);
		close(fd);
		if (!fired)
			break;
	}
	ASSERT_LT(n, MAX_NTH);
	ASSERT_LT(0, failures);
	TH_LOG("open: %d allocation points, %d failed cleanly: %s", n - 1,
	       failures, o.s);
}

/* ARM on a new file: the timer, the first id table and maybe the heap. */
TEST_F_TIMEOUT(failnth, arm_new_file, 120)
{
	int n, ret, failures = 0;
	struct t_fdinfo fi;
	bool fired;
	__u64 id;
	struct outcomes o = { .n = 0 };

	REQUIRE_FAILNTH();

	for (n = 1; n < MAX_NTH; n++) {
		int fd = t_open(O_NONBLOCK);
		__s64 t0 = t_now(CLOCK_MONOTONIC);

		ASSERT_LE(0, fd);
		id = 0;
		ASSERT_EQ(0, nth_arm(self->nth, n));
		ret = t_arm_cpu(fd, CLOCK_MONOTONIC, 0, 20 * NSEC_PER_MSEC, 0,
				 n, 0, &id);
		fired = nth_fired(self->nth);
		if (fired)
			outcome(&o, ret == -ENOMEM);
		ASSERT_EQ(0, t_fdinfo(fd, &fi));
		if (ret) {
			ASSERT_EQ(-ENOMEM, ret) TH_LOG("arm, allocation %d", n);
			failures++;
			EXPECT_EQ(0, fi.timers);
			EXPECT_EQ(self->user_base, fi.user_timers);
			/* It must never fire. */
			t_sleep_ms(80);
			EXPECT_EQ(0, t_nothing_pending(fd));
			t0 = t_now(CLOCK_MONOTONIC);
			ASSERT_EQ(0, t_arm_cpu(fd, CLOCK_MONOTONIC, 0,
						20 * NSEC_PER_MSEC, 0, n, 0, &id));
		} else {
			EXPECT_EQ(1, fi.timers);
			EXPECT_EQ(self->user_base + 1, fi.user_timers);
		}
		EXPECT_EQ(0, expect_one(fd, n, id, t0 + 20 * NSEC_PER_MSEC))
			TH_LOG("arm, allocation %d", n);
		ASSERT_EQ(0, t_fdinfo(fd, &fi));
		EXPECT_EQ(0, fi.timers);
		close(fd);
		if (!fired)
			break;
	}
	ASSERT_LT(n, MAX_NTH);
	ASSERT_LT(0, failures);
	TH_LOG("arm (new file): %d allocation points: %s", n - 1, o.s);
}

/*
 * ARM of timer 1025: the id table grows from 1024 to 2048 slots (16 KiB of
 * slots, 8 KiB of generations) and the CPU's heap from 1024 entries, all
 * beyond kmalloc's page-sized caches, so kvmalloc may take its vmalloc path.
 */
TEST_F_TIMEOUT(failnth, arm_grows_tables, 600)
{
	enum { PRE = 1024 };
	int n, ret, failures = 0;
	struct t_fdinfo fi;
	bool fired;
	__u64 id;
	struct outcomes o = { .n = 0 };

	REQUIRE_FAILNTH();

	for (n = 1; n < MAX_NTH; n++) {
		int fd = t_open(O_NONBLOCK);
		__s64 t0;

		ASSERT_LE(0, fd);
		ASSERT_EQ(0, arm_many(fd, PRE, 1ULL << 32));
		id = 0;
		t0 = t_now(CLOCK_MONOTONIC);
		ASSERT_EQ(0, nth_arm(self->nth, n));
		ret = t_arm_cpu(fd, CLOCK_MONOTONIC, 0, 20 * NSEC_PER_MSEC, 0,
				 n, 0, &id);
		fired = nth_fired(self->nth);
		if (fired)
			outcome(&o, ret == -ENOMEM);
		ASSERT_EQ(0, t_fdinfo(fd, &fi));
		if (ret) {
			ASSERT_EQ(-ENOMEM, ret) TH_LOG("arm 1025, allocation %d", n);
			failures++;
			EXPECT_EQ(PRE, fi.timers);
			EXPECT_EQ(self->user_base + PRE, fi.user_timers);
			t_sleep_ms(80);
			EXPECT_EQ(0, t_nothing_pending(fd));
			t0 = t_now(CLOCK_MONOTONIC);
			ASSERT_EQ(0, t_arm_cpu(fd, CLOCK_MONOTONIC, 0,
						20 * NSEC_PER_MSEC, 0, n, 0, &id));
		} else {
			EXPECT_EQ(PRE + 1, fi.timers);
		}
		EXPECT_EQ(0, expect_one(fd, n, id, t0 + 20 * NSEC_PER_MSEC))
			TH_LOG("arm 1025, allocation %d", n);
		ASSERT_EQ(0, t_fdinfo(fd, &fi));
		EXPECT_EQ(PRE, fi.timers);
		close(fd);
		if (!fired)
			break;
	}
	ASSERT_LT(n, MAX_NTH);
	ASSERT_LT(0, failures);
	TH_LOG("arm (growing tables): %d allocation points: %s", n - 1, o.s);
}

/*
 * MODIFY of a fired, unread one-shot needs a fresh timer object (the old
 * one stays on the ready queue to die).  On -ENOMEM the old record must
 * still be there, and be the only one.
 */
TEST_F_TIMEOUT(failnth, modify_fired, 120)
{
	int n, ret, failures = 0;
	struct qtimer_record rec;
	struct t_fdinfo fi;
	bool fired;
	__u64 id;
	struct outcomes o = { .n = 0 };

	REQUIRE_FAILNTH();

	for (n = 1; n < MAX_NTH; n++) {
		int fd = t_open(O_NONBLOCK);
		__s64 t0;

		ASSERT_LE(0, fd);
		ASSERT_EQ(0, arm_fired(fd, n, &id));
		t0 = t_now(CLOCK_MONOTONIC);
		ASSERT_EQ(0, nth_arm(self->nth, n));
		/* Far enough out that it is still armed when fdinfo is read. */
		ret = t_modify(fd, id, 0, 300 * NSEC_PER_MSEC, 0, 0);
		fired = nth_fired(self->nth);
		if (fired)
			outcome(&o, ret == -ENOMEM);
		ASSERT_EQ(0, t_fdinfo(fd, &fi));
		EXPECT_EQ(1, fi.timers);
		if (ret < 0) {
			ASSERT_EQ(-ENOMEM, ret) TH_LOG("modify, allocation %d", n);
			failures++;
			EXPECT_EQ(1, fi.pending);
			ASSERT_EQ(1, t_read(fd, &rec, 1));
			EXPECT_EQ(id, rec.id);
			EXPECT_EQ(n, rec.cookie);
			EXPECT_LT(rec.expires_ns, t0);
			EXPECT_EQ(QTIMER_REC_LAST, rec.flags);
			/* It was read: the one-shot is gone. */
			EXPECT_EQ(-ENOENT, t_modify(fd, id, 0, 0, 0, 0));
			t_sleep_ms(80);
			EXPECT_EQ(0, t_nothing_pending(fd));
		} else {
			EXPECT_EQ(QTIMER_CANCEL_QUEUED, ret);
			EXPECT_EQ(0, fi.pending);
			EXPECT_EQ(0, expect_one(fd, n, id, t0 + 300 * NSEC_PER_MSEC))
				TH_LOG("modify, allocation %d", n);
		}
		ASSERT_EQ(0, t_fdinfo(fd, &fi));
		EXPECT_EQ(0, fi.timers);
		close(fd);
		if (!fired)
			break;
	}
	ASSERT_LT(n, MAX_NTH);
	ASSERT_LT(0, failures);
	TH_LOG("modify (fired): %d allocation points: %s", n - 1, o.s);
}

TEST_HARNESS_MAIN
