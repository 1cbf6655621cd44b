// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * /proc/<pid>/fdinfo/<fd> of a /dev/qtimer file: the keys it shows, and
 * that its counts follow arm, expiry, read, cancel and close exactly.  The
 * show_fdinfo handler prints "key:\tvalue" lines after the VFS's own pos,
 * flags, mnt_id and ino.
 */

#define _GNU_SOURCE
#include "kselftest_harness.h"
#include "helpers.h"

#define HOUR_NS		(3600 * NSEC_PER_SEC)

/* Wait until fdinfo shows @want pending records (expiries are async). */
static long long wait_pending(int fd, long long want)
{
	long long got = -1;
	int i;

	for (i = 0; i < QT_ARRIVE_MS / 10; i++) {
		got = t_fdinfo_get(fd, QT_FI_PENDING);
		if (got >= want)
			break;
		usleep(10000);
	}
	return got;
}

FIXTURE(fdinfo) {
	int fd;
};

FIXTURE_SETUP(fdinfo)
{
	self->fd = t_open(O_NONBLOCK);
	ASSERT_LE(0, self->fd) TH_LOG("open /dev/qtimer: %s", strerror(-self->fd));
}

FIXTURE_TEARDOWN(fdinfo)
{
	if (self->fd >= 0)
		close(self->fd);
}

TEST_F(fdinfo, keys_of_a_fresh_file)
{
	struct t_fdinfo fi;
	unsigned int i;

	ASSERT_EQ(0, t_fdinfo_read(self->fd, &fi));
	for (i = 0; i < QT_FI_NR; i++) {
		const char *key = t_fdinfo_key_name(i);

		EXPECT_TRUE(fi.seen[i]) TH_LOG("no '%s:' in:\n%s", key, fi.text);
	}
	EXPECT_EQ(0, fi.malformed) TH_LOG("%s", fi.text);
	EXPECT_EQ(0, fi.unknown) TH_LOG("%s", fi.text);
	EXPECT_EQ(0, fi.v[QT_FI_TIMERS]);
	EXPECT_EQ(0, fi.v[QT_FI_PENDING]);
	EXPECT_EQ(0, fi.v[QT_FI_REALTIME]);
	EXPECT_EQ(0, fi.v[QT_FI_MONOTONIC]);
	EXPECT_EQ(0, fi.v[QT_FI_BOOTTIME]);
	EXPECT_EQ(t_param_get("max_timers_per_fd"), fi.v[QT_FI_MAX_PER_FD]);
	EXPECT_EQ(t_param_get("max_timers_per_user"), fi.v[QT_FI_MAX_PER_USER]);
}

TEST_F(fdinfo, counts_per_clock)
{
	struct t_fdinfo fi;
	int i;

	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, t_arm(self->fd, CLOCK_MONOTONIC, 0, HOUR_NS, 0, 0, NULL));
	for (i = 0; i < 2; i++)
		ASSERT_EQ(0, t_arm(self->fd, CLOCK_BOOTTIME, 0, HOUR_NS, 0, 0, NULL));
	ASSERT_EQ(0, t_arm(self->fd, CLOCK_REALTIME, 0, HOUR_NS, 0, 0, NULL));

	ASSERT_EQ(0, t_fdinfo_read(self->fd, &fi));
	EXPECT_EQ(6, fi.v[QT_FI_TIMERS]);
	EXPECT_EQ(1, fi.v[QT_FI_REALTIME]);
	EXPECT_EQ(3, fi.v[QT_FI_MONOTONIC]);
	EXPECT_EQ(2, fi.v[QT_FI_BOOTTIME]);
	EXPECT_EQ(0, fi.v[QT_FI_PENDING]);
}

TEST_F(fdinfo, one_shot_arm_fire_read)
{
	struct qtimer_record rec[4];
	unsigned long long id = 0;

	ASSERT_EQ(0, t_arm(self->fd, CLOCK_MONOTONIC, 0, 1000000, 0, 0, &id));
	EXPECT_EQ(1, t_fdinfo_get(self->fd, QT_FI_TIMERS));
	ASSERT_TRUE(t_wait_readable(self->fd, QT_ARRIVE_MS) == 1);
	EXPECT_EQ(1, wait_pending(self->fd, 1));
	/* Fired but unread: the timer still exists, its record is pending. */
	EXPECT_EQ(1, t_fdinfo_get(self->fd, QT_FI_TIMERS));
	EXPECT_EQ(1, t_fdinfo_get(self->fd, QT_FI_MONOTONIC));

	ASSERT_EQ(1, t_read(self->fd, rec, 4));
	EXPECT_EQ(id, rec[0].id);
	EXPECT_TRUE(rec[0].flags & QTIMER_REC_LAST);
	/* Read: the one-shot timer is gone. */
	EXPECT_EQ(0, t_fdinfo_get(self->fd, QT_FI_PENDING));
	EXPECT_EQ(0, t_fdinfo_get(self->fd, QT_FI_TIMERS));
	EXPECT_EQ(0, t_fdinfo_get(self->fd, QT_FI_MONOTONIC));
}

TEST_F(fdinfo, pending_counts_records)
{
	struct qtimer_record rec[8];
	int i, got = 0;

	for (i = 0; i < 5; i++)
		ASSERT_EQ(0, t_arm(self->fd, CLOCK_MONOTONIC, 0,
				    1000000 + i * 1000, 0, 0, NULL));
	EXPECT_EQ(5, wait_pending(self->fd, 5));
	EXPECT_EQ(5, t_fdinfo_get(self->fd, QT_FI_TIMERS));
	ASSERT_EQ(2, t_read(self->fd, rec, 2));
	EXPECT_EQ(3, t_fdinfo_get(self->fd, QT_FI_PENDING));
	EXPECT_EQ(3, t_fdinfo_get(self->fd, QT_FI_TIMERS));
	while (got < 3) {
		int n = t_read(self->fd, rec, 8);

		ASSERT_LT(0, n);
		got += n;
	}
	EXPECT_EQ(0, t_fdinfo_get(self->fd, QT_FI_PENDING));
	EXPECT_EQ(0, t_fdinfo_get(self->fd, QT_FI_TIMERS));
}

TEST_F(fdinfo, periodic_stays_after_read)
{
	struct qtimer_record rec;
	unsigned long long id = 0;

	ASSERT_EQ(0, t_arm(self->fd, CLOCK_MONOTONIC, 0, 1000000, HOUR_NS, 0, &id));
	EXPECT_EQ(1, wait_pending(self->fd, 1));
	ASSERT_EQ(1, t_read(self->fd, &rec, 1));
	EXPECT_EQ(id, rec.id);
	EXPECT_FALSE(rec.flags & QTIMER_REC_LAST);
	/* Re-armed for the next period: still a timer, nothing pending. */
	EXPECT_EQ(0, t_fdinfo_get(self->fd, QT_FI_PENDING));
	EXPECT_EQ(1, t_fdinfo_get(self->fd, QT_FI_TIMERS));
	EXPECT_EQ(1, t_fdinfo_get(self->fd, QT_FI_MONOTONIC));
}

TEST_F(fdinfo, cancel_armed_and_queued)
{
	unsigned long long far = 0, near = 0;

	ASSERT_EQ(0, t_arm(self->fd, CLOCK_BOOTTIME, 0, HOUR_NS, 0, 0, &far));
	ASSERT_EQ(0, t_arm(self->fd, CLOCK_MONOTONIC, 0, 1000000, 0, 0, &near));
	EXPECT_EQ(1, wait_pending(self->fd, 1));
	EXPECT_EQ(2, t_fdinfo_get(self->fd, QT_FI_TIMERS));

	EXPECT_EQ(QTIMER_CANCEL_ARMED, t_cancel(self->fd, far));
	EXPECT_EQ(1, t_fdinfo_get(self->fd, QT_FI_TIMERS));
	EXPECT_EQ(0, t_fdinfo_get(self->fd, QT_FI_BOOTTIME));

	/* Cancelling a queued record takes it out of pending too. */
	EXPECT_EQ(QTIMER_CANCEL_QUEUED, t_cancel(self->fd, near));
	EXPECT_EQ(0, t_fdinfo_get(self->fd, QT_FI_TIMERS));
	EXPECT_EQ(0, t_fdinfo_get(self->fd, QT_FI_PENDING));
	EXPECT_EQ(0, t_fdinfo_get(self->fd, QT_FI_MONOTONIC));
}

/* user_timers counts the user's timers in every file, and close frees them. */
TEST_F(fdinfo, user_timers_across_files)
{
	long long base = t_fdinfo_get(self->fd, QT_FI_USER_TIMERS);
	int other, i;

	ASSERT_LE(0, base);
	other = t_open(O_NONBLOCK);
	ASSERT_LE(0, other);
	for (i = 0; i < 4; i++)
		ASSERT_EQ(0, t_arm(other, CLOCK_MONOTONIC, 0, HOUR_NS, 0, 0, NULL));
	ASSERT_EQ(0, t_arm(self->fd, CLOCK_MONOTONIC, 0, HOUR_NS, 0, 0, NULL));
	EXPECT_EQ(base + 5, t_fdinfo_get(self->fd, QT_FI_USER_TIMERS));
	EXPECT_EQ(base + 5, t_fdinfo_get(other, QT_FI_USER_TIMERS));
	EXPECT_EQ(1, t_fdinfo_get(self->fd, QT_FI_TIMERS));
	EXPECT_EQ(4, t_fdinfo_get(other, QT_FI_TIMERS));
	close(other);
	EXPECT_EQ(base + 1, t_fdinfo_get(self->fd, QT_FI_USER_TIMERS));
}

TEST_F(fdinfo, caps_follow_parameters)
{
	long long per_fd = t_param_get("max_timers_per_fd");

	if (geteuid())
		SKIP(return, "writing module parameters needs root");
	ASSERT_LT(0, per_fd);
	ASSERT_EQ(0, t_param_set("max_timers_per_fd", 1234));
	EXPECT_EQ(1234, t_fdinfo_get(self->fd, QT_FI_MAX_PER_FD));
	ASSERT_EQ(0, t_param_set("max_timers_per_fd", per_fd));
	EXPECT_EQ(per_fd, t_fdinfo_get(self->fd, QT_FI_MAX_PER_FD));
}

TEST_HARNESS_MAIN
