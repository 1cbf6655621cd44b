// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * The qtimer tracepoints through tracefs: each test enables events in a
 * private trace instance (so that nothing else's tracing interferes and
 * nothing is left enabled), drives a timer through the raw ioctls and finds
 * the event lines, with the values the ioctls and records reported.  Skips
 * when tracefs is not there or the caller is not root.
 */

#define _GNU_SOURCE
#include <inttypes.h>
#include <limits.h>
#include <sys/stat.h>

#include "kselftest_harness.h"
#include "helpers.h"

#define HOUR_NS		(3600 * NSEC_PER_SEC)
#define TRACE_MAX	(1 << 20)

static const char *const qt_events[] = {
	"qtimer_arm", "qtimer_cancel", "qtimer_modify", "qtimer_expire",
	"qtimer_read",
};

/* Wait for one record and read it. */
static int qt_read_one(int fd, struct qtimer_record *rec)
{
	int n;

	if (t_wait_readable(fd, QT_ARRIVE_MS) != 1)
		return -ETIMEDOUT;
	n = t_read(fd, rec, 1);
	if (n < 0)
		return n;
	return n == 1 ? 0 : -EIO;
}

/*
 * With the "record-cmd" option on (the default), enabling the first event
 * anywhere also hooks sched_switch to record command names, which patches
 * a static branch in __schedule().  Under QEMU TCG with several vCPUs that
 * cross-modification of hot code sometimes leaves a stale int3 behind
 * (6.12 oopsed in __schedule with "int3"), so the tests turn it off for
 * their instance's lifetime: instances copy the option when created.  The
 * qtimer events still patch the module's own static keys, which the tests
 * need.
 */
static int record_cmd_set(const char *root, char value, char *old)
{
	char path[128], buf[2] = { value, 0 };
	int fd;

	snprintf(path, sizeof(path), "%s/options/record-cmd", root);
	if (old) {
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0 || read(fd, old, 1) != 1)
			*old = 0;
		if (fd >= 0)
			close(fd);
	}
	return t_write_str(path, buf);
}

FIXTURE(trace) {
	char dir[PATH_MAX];	/* the private instance */
	char root[64];
	char record_cmd;	/* its value before the test, or 0 */
	char *buf;
	int fd;
};

FIXTURE_SETUP(trace)
{
	const char *root = t_tracefs_root();

	self->fd = -1;
	if (!root)
		SKIP(return, "tracefs is not mounted");
	if (geteuid())
		SKIP(return, "tracefs instances need root");
	snprintf(self->root, sizeof(self->root), "%s", root);
	if (record_cmd_set(root, '0', &self->record_cmd))
		self->record_cmd = 0;
	snprintf(self->dir, sizeof(self->dir), "%s/instances/qtimer_test_%d",
		 root, getpid());
	rmdir(self->dir);
	ASSERT_EQ(0, mkdir(self->dir, 0755)) TH_LOG("mkdir %s: %s", self->dir,
						   strerror(errno));
	self->buf = malloc(TRACE_MAX);
	ASSERT_NE(NULL, self->buf);
	self->fd = t_open(0);
	ASSERT_LE(0, self->fd) TH_LOG("open /dev/qtimer: %s", strerror(-self->fd));
}

FIXTURE_TEARDOWN(trace)
{
	char path[PATH_MAX + 64];

	if (self->fd >= 0)
		close(self->fd);
	free(self->buf);
	if (!self->dir[0])
		return;
	snprintf(path, sizeof(path), "%s/events/qtimer/enable", self->dir);
	t_write_str(path, "0");
	EXPECT_EQ(0, rmdir(self->dir)) TH_LOG("rmdir %s: %s", self->dir,
					     strerror(errno));
	if (self->record_cmd)
		record_cmd_set(self->root, self->record_cmd, NULL);
}

/* 6.1's harness runs the test body even when its setup skipped. */
#define RETURN_IF_SETUP_SKIPPED() do {					\
	if (_metadata->skip)						\
		return;							\
} while (0)

static int event_enable(const char *dir, const char *event)
{
	char path[PATH_MAX + 64];

	snprintf(path, sizeof(path), "%s/events/qtimer/%s/enable", dir, event);
	return t_write_str(path, "1");
}

/* The instance's whole trace buffer, read without consuming it. */
static const char *trace_text(const char *dir, char *buf)
{
	char path[PATH_MAX + 64];
	size_t len = 0;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/trace", dir);
	buf[0] = '\0';
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return buf;
	while (len < TRACE_MAX - 1 &&
	       (n = read(fd, buf + len, TRACE_MAX - 1 - len)) > 0)
		len += n;
	close(fd);
	buf[len] = '\0';
	return buf;
}

/* The first trace line that contains both @event and @with, or NULL. */
static const char *find_event(const char *text, const char *event,
			      const char *with)
{
	char tag[64];
	const char *p = text;

	snprintf(tag, sizeof(tag), " %s: ", event);
	while ((p = strstr(p, tag))) {
		const char *bol = p, *eol = strchr(p, '\n');

		while (bol > text && bol[-1] != '\n')
			bol--;
		if (!eol)
			eol = p + strlen(p);
		if (!with || (strstr(bol, with) && strstr(bol, with) < eol))
			return bol;
		p = eol;
	}
	return NULL;
}

static int count_events(const char *text, const char *event)
{
	char tag[64];
	int n = 0;

	snprintf(tag, sizeof(tag), " %s: ", event);
	while ((text = strstr(text, tag))) {
		n++;
		text += strlen(tag);
	}
	return n;
}

TEST_F(trace, events_exist)
{
	char path[PATH_MAX + 64];
	unsigned int i;

	RETURN_IF_SETUP_SKIPPED();
	for (i = 0; i < sizeof(qt_events) / sizeof(qt_events[0]); i++) {
		snprintf(path, sizeof(path), "%s/events/qtimer/%s/format",
			 self->dir, qt_events[i]);
		EXPECT_EQ(0, access(path, R_OK)) TH_LOG("no %s", path);
	}
}

TEST_F(trace, expire_event)
{
	struct qtimer_record rec;
	unsigned long long id = 0;
	char want[96];
	const char *line, *late;

	RETURN_IF_SETUP_SKIPPED();
	ASSERT_EQ(0, event_enable(self->dir, "qtimer_expire"));
	ASSERT_EQ(0, t_arm(self->fd, CLOCK_MONOTONIC, 0, 2000000, 0, 0, &id));
	ASSERT_EQ(0, qt_read_one(self->fd, &rec));
	ASSERT_EQ(id, rec.id);

	/* The event's expires is the record's (no time namespace here). */
	snprintf(want, sizeof(want), "id=0x%llx expires=%lld ", id,
		 (long long)rec.expires_ns);
	line = find_event(trace_text(self->dir, self->buf), "qtimer_expire", want);
	ASSERT_NE(NULL, line) TH_LOG("no '%s' in:\n%s", want, self->buf);
	/* Never early. */
	late = strstr(line, " late=");
	ASSERT_NE(NULL, late);
	EXPECT_LE(0, strtoll(late + 6, NULL, 10));
	EXPECT_EQ(1, count_events(self->buf, "qtimer_expire"));
}

TEST_F(trace, arm_event)
{
	struct qtimer_op op = {
		.clockid = CLOCK_BOOTTIME,
		.flags = QTIMER_F_CPU,
		.expires_ns = HOUR_NS,
		.period_ns = HOUR_NS,
		.slack_ns = 5000,
		.cpu = 0,
	};
	char want[128];

	RETURN_IF_SETUP_SKIPPED();
	ASSERT_EQ(0, event_enable(self->dir, "qtimer_arm"));
	ASSERT_EQ(0, t_ioctl(self->fd, QTIMER_IOC_ARM, &op));
	snprintf(want, sizeof(want),
		 "id=0x%llx clock=BOOTTIME expires=", (unsigned long long)op.id);
	trace_text(self->dir, self->buf);
	EXPECT_NE(NULL, find_event(self->buf, "qtimer_arm", want))
		TH_LOG("no '%s' in:\n%s", want, self->buf);
	snprintf(want, sizeof(want), "period=%lld slack=5000 cpu=0", HOUR_NS);
	EXPECT_NE(NULL, find_event(self->buf, "qtimer_arm", want))
		TH_LOG("no '%s' in:\n%s", want, self->buf);
}

TEST_F(trace, modify_and_cancel_events)
{
	struct qtimer_op op = { .expires_ns = 2 * HOUR_NS };
	unsigned long long id = 0;
	char want[96];

	RETURN_IF_SETUP_SKIPPED();
	ASSERT_EQ(0, event_enable(self->dir, "qtimer_modify"));
	ASSERT_EQ(0, event_enable(self->dir, "qtimer_cancel"));
	ASSERT_EQ(0, t_arm(self->fd, CLOCK_MONOTONIC, 0, HOUR_NS, 0, 0, &id));
	op.id = id;
	ASSERT_EQ(QTIMER_CANCEL_ARMED, t_ioctl(self->fd, QTIMER_IOC_MODIFY, &op));
	memset(&op, 0, sizeof(op));
	op.id = id;
	ASSERT_EQ(QTIMER_CANCEL_ARMED, t_ioctl(self->fd, QTIMER_IOC_CANCEL, &op));
	ASSERT_EQ(-ENOENT, t_ioctl(self->fd, QTIMER_IOC_CANCEL, &op));

	trace_text(self->dir, self->buf);
	snprintf(want, sizeof(want), "id=0x%llx ", id);
	EXPECT_NE(NULL, find_event(self->buf, "qtimer_modify", want))
		TH_LOG("no modify of %s in:\n%s", want, self->buf);
	EXPECT_NE(NULL, find_event(self->buf, "qtimer_modify", "period=0 slack=0 result=1"));
	snprintf(want, sizeof(want), "id=0x%llx result=%d", id, QTIMER_CANCEL_ARMED);
	EXPECT_NE(NULL, find_event(self->buf, "qtimer_cancel", want))
		TH_LOG("no '%s' in:\n%s", want, self->buf);
	snprintf(want, sizeof(want), "id=0x%llx result=%d", id, -ENOENT);
	EXPECT_NE(NULL, find_event(self->buf, "qtimer_cancel", want))
		TH_LOG("no '%s' in:\n%s", want, self->buf);
	EXPECT_EQ(1, count_events(self->buf, "qtimer_modify"));
	EXPECT_EQ(2, count_events(self->buf, "qtimer_cancel"));
}

TEST_F(trace, read_event)
{
	struct qtimer_record rec;
	unsigned long long tick = 0, once = 0;
	char want[96];

	RETURN_IF_SETUP_SKIPPED();
	ASSERT_EQ(0, event_enable(self->dir, "qtimer_read"));
	ASSERT_EQ(0, t_arm(self->fd, CLOCK_MONOTONIC, 0, 1000000, HOUR_NS, 0, &tick));
	ASSERT_EQ(0, qt_read_one(self->fd, &rec));
	ASSERT_EQ(tick, rec.id);
	ASSERT_EQ(0, t_arm(self->fd, CLOCK_MONOTONIC, 0, 1000000, 0, 0, &once));
	ASSERT_EQ(0, qt_read_one(self->fd, &rec));
	ASSERT_EQ(once, rec.id);

	trace_text(self->dir, self->buf);
	/* The ticker's record is not the last: no flags. */
	snprintf(want, sizeof(want), "id=0x%llx count=1 flags=\n", tick);
	EXPECT_NE(NULL, strstr(self->buf, want)) TH_LOG("no '%s' in:\n%s", want, self->buf);
	snprintf(want, sizeof(want), "id=0x%llx count=1 flags=LAST\n", once);
	EXPECT_NE(NULL, strstr(self->buf, want)) TH_LOG("no '%s' in:\n%s", want, self->buf);
	EXPECT_EQ(2, count_events(self->buf, "qtimer_read"));
}

/*
 * A timer pinned with QTIMER_F_CPU keeps its CPU when MODIFY re-arms it
 * after it fired (its record pending), although the caller runs on another
 * CPU: the modify event names the CPU whose heap holds the timer.
 */
TEST_F(trace, modify_fired_keeps_cpu)
{
	struct qtimer_op op = {
		.clockid = CLOCK_MONOTONIC,
		.flags = QTIMER_F_CPU,
		.expires_ns = 1000000,
		.cpu = 1,
	};
	struct pollfd pfd = { .fd = self->fd, .events = POLLIN };
	struct qtimer_record rec;
	cpu_set_t set;
	char want[96];

	RETURN_IF_SETUP_SKIPPED();
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		SKIP(return, "needs two CPUs");
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(set), &set));

	ASSERT_EQ(0, t_ioctl(self->fd, QTIMER_IOC_ARM, &op));
	ASSERT_EQ(1, poll(&pfd, 1, QT_ARRIVE_MS));
	/* Fired, record unread: MODIFY drops the record and re-arms. */
	ASSERT_EQ(0, event_enable(self->dir, "qtimer_modify"));
	op.clockid = 0;		/* MODIFY: clockid, cpu and cookie zero */
	op.flags = 0;
	op.cpu = 0;
	op.expires_ns = 2000000;
	ASSERT_EQ(QTIMER_CANCEL_QUEUED, t_ioctl(self->fd, QTIMER_IOC_MODIFY, &op));
	ASSERT_EQ(0, qt_read_one(self->fd, &rec));
	EXPECT_EQ(op.id, rec.id);
	EXPECT_EQ(0, rec.flags & QTIMER_REC_CANCELED);

	trace_text(self->dir, self->buf);
	snprintf(want, sizeof(want), "id=0x%llx ", (unsigned long long)op.id);
	EXPECT_NE(NULL, find_event(self->buf, "qtimer_modify", want))
		TH_LOG("no modify of %s in:\n%s", want, self->buf);
	snprintf(want, sizeof(want), "result=%d cpu=1\n", QTIMER_CANCEL_QUEUED);
	EXPECT_NE(NULL, strstr(self->buf, want)) TH_LOG("no '%s' in:\n%s", want, self->buf);
}

/* Events that are not enabled leave nothing in the buffer. */
TEST_F(trace, disabled_events_are_silent)
{
	struct qtimer_record rec;

	RETURN_IF_SETUP_SKIPPED();
	ASSERT_EQ(0, t_arm(self->fd, CLOCK_MONOTONIC, 0, 1000000, 0, 0, NULL));
	ASSERT_EQ(0, qt_read_one(self->fd, &rec));
	trace_text(self->dir, self->buf);
	EXPECT_EQ(NULL, strstr(self->buf, " qtimer_")) TH_LOG("%s", self->buf);
}

TEST_HARNESS_MAIN
