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
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include <linux/qtimer.h>

#include "kselftest_harness.h"

#ifndef CLOCK_BOOTTIME
#define CLOCK_BOOTTIME 7
#endif

#define QT_PARAMS	"/sys/module/qtimer/parameters/"
#define NSEC_PER_SEC	1000000000LL
#define HOUR_NS		(3600 * NSEC_PER_SEC)
/* TCG guests are slow: how long to wait for something that must happen. */
#define ARRIVE_MS	5000

static const char *const qt_keys[] = {
	"timers", "pending", "realtime", "monotonic", "boottime",
	"user_timers", "max_timers_per_fd", "max_timers_per_user",
};

#define NR_KEYS (sizeof(qt_keys) / sizeof(qt_keys[0]))

struct fdinfo {
	char text[4096];
	long long v[NR_KEYS];
	bool seen[NR_KEYS];
	int unknown;		/* lines that are neither the VFS's nor ours */
	int malformed;		/* lines not in "key:\tvalue" form */
};

enum { TIMERS, PENDING, REALTIME, MONOTONIC, BOOTTIME, USER_TIMERS,
       MAX_PER_FD, MAX_PER_USER };

static int fdinfo_read(int fd, struct fdinfo *fi)
{
	char path[64], copy[sizeof(fi->text)], *line, *save, *tab;
	unsigned int i;
	ssize_t len;
	int pfd;

	memset(fi, 0, sizeof(*fi));
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	pfd = open(path, O_RDONLY | O_CLOEXEC);
	if (pfd < 0)
		return -errno;
	len = read(pfd, fi->text, sizeof(fi->text) - 1);
	close(pfd);
	if (len < 0)
		return -errno;
	fi->text[len] = '\0';

	memcpy(copy, fi->text, len + 1);
	for (line = strtok_r(copy, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		tab = strstr(line, ":\t");
		if (!tab) {
			fi->malformed++;
			continue;
		}
		*tab = '\0';
		for (i = 0; i < NR_KEYS; i++) {
			if (!strcmp(line, qt_keys[i])) {
				fi->seen[i] = true;
				fi->v[i] = strtoll(tab + 2, NULL, 10);
				break;
			}
		}
		if (i == NR_KEYS && strcmp(line, "pos") && strcmp(line, "flags") &&
		    strcmp(line, "mnt_id") && strcmp(line, "ino"))
			fi->unknown++;
	}
	return 0;
}

/* The value of @key, or a value no count can have if it is missing. */
static long long fdinfo_get(int fd, int key)
{
	struct fdinfo fi;

	if (fdinfo_read(fd, &fi) || !fi.seen[key])
		return -1000;
	return fi.v[key];
}

static long long param_get(const char *name)
{
	char path[128], buf[32];
	long long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), QT_PARAMS "%s", name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fgets(buf, sizeof(buf), f))
		v = strtoll(buf, NULL, 10);
	fclose(f);
	return v;
}

static int param_set(const char *name, long long v)
{
	char path[128];
	FILE *f;
	int ret;

	snprintf(path, sizeof(path), QT_PARAMS "%s", name);
	f = fopen(path, "w");
	if (!f)
		return -errno;
	ret = fprintf(f, "%lld\n", v) < 0 ? -EIO : 0;
	if (fclose(f))
		ret = -errno;
	return ret;
}

static int qt_open(void)
{
	int fd = open("/dev/qtimer", O_RDWR | O_CLOEXEC | O_NONBLOCK);

	return fd < 0 ? -errno : fd;
}

static int qt_arm(int fd, unsigned int clockid, long long expires_ns,
		  unsigned long long period_ns, unsigned long long *id)
{
	struct qtimer_op op = {
		.clockid = clockid,
		.expires_ns = expires_ns,
		.period_ns = period_ns,
	};

	if (ioctl(fd, QTIMER_IOC_ARM, &op) < 0)
		return -errno;
	if (id)
		*id = op.id;
	return 0;
}

static int qt_cancel(int fd, unsigned long long id)
{
	struct qtimer_op op = { .id = id };
	int ret = ioctl(fd, QTIMER_IOC_CANCEL, &op);

	return ret < 0 ? -errno : ret;
}

static bool wait_readable(int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	return poll(&pfd, 1, ARRIVE_MS) == 1;
}

/* Wait until fdinfo shows @want pending records (expiries are async). */
static long long wait_pending(int fd, long long want)
{
	long long got = -1;
	int i;

	for (i = 0; i < ARRIVE_MS / 10; i++) {
		got = fdinfo_get(fd, PENDING);
		if (got >= want)
			break;
		usleep(10000);
	}
	return got;
}

static int read_records(int fd, struct qtimer_record *recs, int max)
{
	ssize_t n = read(fd, recs, max * sizeof(*recs));

	return n < 0 ? -errno : (int)(n / sizeof(*recs));
}

FIXTURE(fdinfo) {
	int fd;
};

FIXTURE_SETUP(fdinfo)
{
	self->fd = qt_open();
	ASSERT_LE(0, self->fd) TH_LOG("open /dev/qtimer: %s", strerror(-self->fd));
}

FIXTURE_TEARDOWN(fdinfo)
{
	if (self->fd >= 0)
		close(self->fd);
}

TEST_F(fdinfo, keys_of_a_fresh_file)
{
	struct fdinfo fi;
	unsigned int i;

	ASSERT_EQ(0, fdinfo_read(self->fd, &fi));
	for (i = 0; i < NR_KEYS; i++) {
		const char *key = qt_keys[i];

		EXPECT_TRUE(fi.seen[i]) TH_LOG("no '%s:' in:\n%s", key, fi.text);
	}
	EXPECT_EQ(0, fi.malformed) TH_LOG("%s", fi.text);
	EXPECT_EQ(0, fi.unknown) TH_LOG("%s", fi.text);
	EXPECT_EQ(0, fi.v[TIMERS]);
	EXPECT_EQ(0, fi.v[PENDING]);
	EXPECT_EQ(0, fi.v[REALTIME]);
	EXPECT_EQ(0, fi.v[MONOTONIC]);
	EXPECT_EQ(0, fi.v[BOOTTIME]);
	EXPECT_EQ(param_get("max_timers_per_fd"), fi.v[MAX_PER_FD]);
	EXPECT_EQ(param_get("max_timers_per_user"), fi.v[MAX_PER_USER]);
}

TEST_F(fdinfo, counts_per_clock)
{
	struct fdinfo fi;
	int i;

	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, qt_arm(self->fd, CLOCK_MONOTONIC, HOUR_NS, 0, NULL));
	for (i = 0; i < 2; i++)
		ASSERT_EQ(0, qt_arm(self->fd, CLOCK_BOOTTIME, HOUR_NS, 0, NULL));
	ASSERT_EQ(0, qt_arm(self->fd, CLOCK_REALTIME, HOUR_NS, 0, NULL));

	ASSERT_EQ(0, fdinfo_read(self->fd, &fi));
	EXPECT_EQ(6, fi.v[TIMERS]);
	EXPECT_EQ(1, fi.v[REALTIME]);
	EXPECT_EQ(3, fi.v[MONOTONIC]);
	EXPECT_EQ(2, fi.v[BOOTTIME]);
	EXPECT_EQ(0, fi.v[PENDING]);
}

TEST_F(fdinfo, one_shot_arm_fire_read)
{
	struct qtimer_record rec[4];
	unsigned long long id = 0;

	ASSERT_EQ(0, qt_arm(self->fd, CLOCK_MONOTONIC, 1000000, 0, &id));
	EXPECT_EQ(1, fdinfo_get(self->fd, TIMERS));
	ASSERT_TRUE(wait_readable(self->fd));
	EXPECT_EQ(1, wait_pending(self->fd, 1));
	/* Fired but unread: the timer still exists, its record is pending. */
	EXPECT_EQ(1, fdinfo_get(self->fd, TIMERS));
	EXPECT_EQ(1, fdinfo_get(self->fd, MONOTONIC));

	ASSERT_EQ(1, read_records(self->fd, rec, 4));
	EXPECT_EQ(id, rec[0].id);
	EXPECT_TRUE(rec[0].flags & QTIMER_REC_LAST);
	/* Read: the one-shot timer is gone. */
	EXPECT_EQ(0, fdinfo_get(self->fd, PENDING));
	EXPECT_EQ(0, fdinfo_get(self->fd, TIMERS));
	EXPECT_EQ(0, fdinfo_get(self->fd, MONOTONIC));
}

TEST_F(fdinfo, pending_counts_records)
{
	struct qtimer_record rec[8];
	int i, got = 0;

	for (i = 0; i < 5; i++)
		ASSERT_EQ(0, qt_arm(self->fd, CLOCK_MONOTONIC, 1000000 + i * 1000, 0, NULL));
	EXPECT_EQ(5, wait_pending(self->fd, 5));
	EXPECT_EQ(5, fdinfo_get(self->fd, TIMERS));
	ASSERT_EQ(2, read_records(self->fd, rec, 2));
	EXPECT_EQ(3, fdinfo_get(self->fd, PENDING));
	EXPECT_EQ(3, fdinfo_get(self->fd, TIMERS));
	while (got < 3) {
		int n = read_records(self->fd, rec, 8);

		ASSERT_LT(0, n);
		got += n;
	}
	EXPECT_EQ(0, fdinfo_get(self->fd, PENDING));
	EXPECT_EQ(0, fdinfo_get(self->fd, TIMERS));
}

TEST_F(fdinfo, periodic_stays_after_read)
{
	struct qtimer_record rec;
	unsigned long long id = 0;

	ASSERT_EQ(0, qt_arm(self->fd, CLOCK_MONOTONIC, 1000000, HOUR_NS, &id));
	EXPECT_EQ(1, wait_pending(self->fd, 1));
	ASSERT_EQ(1, read_records(self->fd, &rec, 1));
	EXPECT_EQ(id, rec.id);
	EXPECT_FALSE(rec.flags & QTIMER_REC_LAST);
	/* Re-armed for the next period: still a timer, nothing pending. */
	EXPECT_EQ(0, fdinfo_get(self->fd, PENDING));
	EXPECT_EQ(1, fdinfo_get(self->fd, TIMERS));
	EXPECT_EQ(1, fdinfo_get(self->fd, MONOTONIC));
}

TEST_F(fdinfo, cancel_armed_and_queued)
{
	unsigned long long far = 0, near = 0;

	ASSERT_EQ(0, qt_arm(self->fd, CLOCK_BOOTTIME, HOUR_NS, 0, &far));
	ASSERT_EQ(0, qt_arm(self->fd, CLOCK_MONOTONIC, 1000000, 0, &near));
	EXPECT_EQ(1, wait_pending(self->fd, 1));
	EXPECT_EQ(2, fdinfo_get(self->fd, TIMERS));

	EXPECT_EQ(QTIMER_CANCEL_ARMED, qt_cancel(self->fd, far));
	EXPECT_EQ(1, fdinfo_get(self->fd, TIMERS));
	EXPECT_EQ(0, fdinfo_get(self->fd, BOOTTIME));

	/* Cancelling a queued record takes it out of pending too. */
	EXPECT_EQ(QTIMER_CANCEL_QUEUED, qt_cancel(self->fd, near));
	EXPECT_EQ(0, fdinfo_get(self->fd, TIMERS));
	EXPECT_EQ(0, fdinfo_get(self->fd, PENDING));
	EXPECT_EQ(0, fdinfo_get(self->fd, MONOTONIC));
}

/* user_timers counts the user's timers in every file, and close frees them. */
TEST_F(fdinfo, user_timers_across_files)
{
	long long base = fdinfo_get(self->fd, USER_TIMERS);
	int other, i;

	ASSERT_LE(0, base);
	other = qt_open();
	ASSERT_LE(0, other);
	for (i = 0; i < 4; i++)
		ASSERT_EQ(0, qt_arm(other, CLOCK_MONOTONIC, HOUR_NS, 0, NULL));
	ASSERT_EQ(0, qt_arm(self->fd, CLOCK_MONOTONIC, HOUR_NS, 0, NULL));
	EXPECT_EQ(base + 5, fdinfo_get(self->fd, USER_TIMERS));
	EXPECT_EQ(base + 5, fdinfo_get(other, USER_TIMERS));
	EXPECT_EQ(1, fdinfo_get(self->fd, TIMERS));
	EXPECT_EQ(4, fdinfo_get(other, TIMERS));
	close(other);
	EXPECT_EQ(base + 1, fdinfo_get(self->fd, USER_TIMERS));
}

TEST_F(fdinfo, caps_follow_parameters)
{
	long long per_fd = param_get("max_timers_per_fd");

	if (geteuid())
		SKIP(return, "writing module parameters needs root");
	ASSERT_LT(0, per_fd);
	ASSERT_EQ(0, param_set("max_timers_per_fd", 1234));
	EXPECT_EQ(1234, fdinfo_get(self->fd, MAX_PER_FD));
	ASSERT_EQ(0, param_set("max_timers_per_fd", per_fd));
	EXPECT_EQ(per_fd, fdinfo_get(self->fd, MAX_PER_FD));
}

TEST_HARNESS_MAIN
