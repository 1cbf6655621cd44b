/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * Helpers shared by the qtimer selftest suites: thin wrappers around the raw
 * ioctls of uapi/linux/qtimer.h that return -errno (liburing's convention,
 * so a test can ASSERT_EQ(-EINVAL, ...) in one line), record collection
 * with poll() timeouts, clock helpers and sysfs access for the module
 * parameters and CPU hotplug.  Only what the engine's uapi promises is used:
 * the suites deliberately do not link libtimerdev, so that a library bug
 * cannot hide an engine bug or the other way round.
 */
#ifndef _QT_SELFTEST_UTIL_H
#define _QT_SELFTEST_UTIL_H

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/sysinfo.h>
#include <time.h>
#include <unistd.h>

#include <linux/qtimer.h>

#ifndef CLOCK_BOOTTIME
#define CLOCK_BOOTTIME 7
#endif

#define QT_DEV		"/dev/qtimer"
#define QT_PARAMS	"/sys/module/qtimer/parameters/"

#define NSEC_PER_USEC	1000LL
#define NSEC_PER_MSEC	1000000LL
#define NSEC_PER_SEC	1000000000LL

/* The clocks the spec names, as a VERSION clocks mask. */
#define QT_CLOCKS_SPEC	((1U << CLOCK_REALTIME) | (1U << CLOCK_MONOTONIC) | \
			 (1U << CLOCK_BOOTTIME))

/*
 * Guest time under QEMU TCG is slow and uneven: waits for something that
 * must happen use this generous bound (they return as soon as it happens,
 * so a passing run does not pay for it).
 */
#define QT_ARRIVE_MS	5000

/*
 * What CANCEL (or MODIFY) of a ticker returns when it may have fired again
 * meanwhile: any non-zero mask of the two bits.  Whether a ticker whose
 * record is queued also counts as ARMED is left open by the header, so
 * tests that do not control timing accept either.
 */
static inline bool qt_mask_ok(int m)
{
	return m > 0 && !(m & ~(QTIMER_CANCEL_ARMED | QTIMER_CANCEL_QUEUED));
}

static inline int qt_open(int extra_flags)
{
	int fd = open(QT_DEV, O_RDWR | O_CLOEXEC | extra_flags);

	return fd < 0 ? -errno : fd;
}

static inline int qt_ioctl(int fd, unsigned long cmd, void *arg)
{
	int ret = ioctl(fd, cmd, arg);

	return ret < 0 ? -errno : ret;
}

static inline int qt_version(int fd, struct qtimer_version *v)
{
	memset(v, 0, sizeof(*v));
	return qt_ioctl(fd, QTIMER_IOC_VERSION, v);
}

/* A valid relative one-shot on @clockid with no cpu, slack or period. */
static inline struct qtimer_op qt_op(int clockid, __u32 flags, __s64 expires_ns,
				     __u64 period_ns, __u64 cookie)
{
	struct qtimer_op op;

	memset(&op, 0, sizeof(op));
	op.clockid = clockid;
	op.flags = flags;
	op.expires_ns = expires_ns;
	op.period_ns = period_ns;
	op.cookie = cookie;
	return op;
}

static inline int qt_arm_op(int fd, struct qtimer_op *op)
{
	return qt_ioctl(fd, QTIMER_IOC_ARM, op);
}

/* Arms a timer and returns 0 (id in *id, if id is not NULL) or -errno. */
static inline int qt_arm(int fd, int clockid, __u32 flags, __s64 expires_ns,
			 __u64 period_ns, __u64 cookie, __u64 *id)
{
	struct qtimer_op op = qt_op(clockid, flags, expires_ns, period_ns, cookie);
	int ret = qt_arm_op(fd, &op);

	if (!ret && id)
		*id = op.id;
	return ret;
}

/* Same, on the heap of @cpu (QTIMER_F_CPU). */
static inline int qt_arm_cpu(int fd, int clockid, __u32 flags, __s64 expires_ns,
			     __u64 period_ns, __u64 cookie, __u32 cpu, __u64 *id)
{
	struct qtimer_op op = qt_op(clockid, flags | QTIMER_F_CPU, expires_ns,
				    period_ns, cookie);
	int ret;

	op.cpu = cpu;
	ret = qt_arm_op(fd, &op);
	if (!ret && id)
		*id = op.id;
	return ret;
}

/* Returns the QTIMER_CANCEL_* mask or -errno. */
static inline int qt_cancel(int fd, __u64 id)
{
	struct qtimer_op op;

	memset(&op, 0, sizeof(op));
	op.id = id;
	return qt_ioctl(fd, QTIMER_IOC_CANCEL, &op);
}

/* Returns the QTIMER_CANCEL_* mask or -errno. */
static inline int qt_modify(int fd, __u64 id, __u32 flags, __s64 expires_ns,
			    __u64 period_ns, __u64 slack_ns)
{
	struct qtimer_op op;

	memset(&op, 0, sizeof(op));
	op.id = id;
	op.flags = flags;
	op.expires_ns = expires_ns;
	op.period_ns = period_ns;
	op.slack_ns = slack_ns;
	return qt_ioctl(fd, QTIMER_IOC_MODIFY, &op);
}

/* Returns the number of ops processed or -errno; *done gets the kernel's. */
static inline int qt_submit(int fd, struct qtimer_op *ops, __u32 nr,
			    __u32 flags, __u32 *done)
{
	struct qtimer_submit s;
	int ret;

	memset(&s, 0, sizeof(s));
	s.ops = (__u64)(uintptr_t)ops;
	s.nr = nr;
	s.flags = flags;
	s.done = 0xdeadbeef;
	ret = qt_ioctl(fd, QTIMER_IOC_SUBMIT, &s);
	if (done)
		*done = s.done;
	return ret;
}

/* Returns the number of whole records read (0..max) or -errno. */
static inline int qt_read(int fd, struct qtimer_record *recs, size_t max)
{
	ssize_t n = read(fd, recs, max * sizeof(*recs));

	if (n < 0)
		return -errno;
	if (n % sizeof(*recs))
		return -EPROTO;	/* never whole records: a test failure */
	return n / sizeof(*recs);
}

/* 1 when poll() reports EPOLLIN within @timeout_ms, 0 if not, or -errno. */
static inline int qt_wait_readable(int fd, int timeout_ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	int ret = poll(&pfd, 1, timeout_ms);

	if (ret < 0)
		return -errno;
	return ret > 0 && (pfd.revents & POLLIN);
}

/* The revents poll() reports right now. */
static inline int qt_revents(int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN | POLLOUT | POLLPRI };
	int ret = poll(&pfd, 1, 0);

	return ret < 0 ? -errno : pfd.revents;
}

static inline __s64 qt_now(int clockid)
{
	struct timespec ts;

	clock_gettime(clockid, &ts);
	return ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

static inline void qt_sleep_ns(__s64 ns)
{
	struct timespec ts = {
		.tv_sec = ns / NSEC_PER_SEC,
		.tv_nsec = ns % NSEC_PER_SEC,
	};

	while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) == EINTR)
		;
}

static inline void qt_sleep_ms(int ms)
{
	qt_sleep_ns((__s64)ms * NSEC_PER_MSEC);
}

/*
 * Reads until @want records have arrived or @timeout_ms of CLOCK_MONOTONIC
 * passed, and returns how many arrived (or -errno).  Works on blocking and
 * O_NONBLOCK files alike: it only reads after poll() reported EPOLLIN.  If
 * @stamp is given, stamp[i] is the time on @clockid taken right after the
 * read that returned record i, and stamp[i] >= expires_ns is the never-early
 * check: the reader wakes as soon as a record is queued, so a record queued
 * early is read early.  (The stamp is taken after the read, not after the
 * poll, because a periodic timer's pending record may count a further
 * expiration between the two.)
 */
static inline int qt_collect_stamped(int fd, struct qtimer_record *recs,
				     int want, int timeout_ms, int clockid,
				     __s64 *stamp)
{
	__s64 deadline = qt_now(CLOCK_MONOTONIC) + timeout_ms * NSEC_PER_MSEC;
	int got = 0;

	while (got < want) {
		__s64 left = deadline - qt_now(CLOCK_MONOTONIC);
		__s64 now;
		int ret, i;

		if (left < 0)
			left = 0;
		ret = qt_wait_readable(fd, (int)(left / NSEC_PER_MSEC));
		if (ret < 0)
			return ret;
		if (!ret)
			break;
		ret = qt_read(fd, recs + got, want - got);
		if (ret == -EAGAIN)
			continue;
		if (ret < 0)
			return ret;
		now = qt_now(clockid);
		for (i = 0; stamp && i < ret; i++)
			stamp[got + i] = now;
		got += ret;
	}
	return got;
}

static inline int qt_collect(int fd, struct qtimer_record *recs, int want,
			     int timeout_ms)
{
	return qt_collect_stamped(fd, recs, want, timeout_ms, CLOCK_MONOTONIC,
				  NULL);
}

/*
 * Nothing pending right now: poll does not report EPOLLIN and an O_NONBLOCK
 * read gets -EAGAIN (the flag is set for the read only).  Returns 0, or the
 * unexpected poll bits / read result encoded as a positive value.
 */
static inline int qt_nothing_pending(int fd)
{
	struct qtimer_record rec;
	int fl = fcntl(fd, F_GETFL);
	int revents = qt_revents(fd);
	int ret;

	if (revents & POLLIN)
		return 1;
	fcntl(fd, F_SETFL, fl | O_NONBLOCK);
	ret = qt_read(fd, &rec, 1);
	fcntl(fd, F_SETFL, fl);
	return ret == -EAGAIN ? 0 : 2;
}

/*
 * CPUs the kernel may have (online or not), cached: glibc reads sysfs on
 * every get_nprocs_conf(), far too slow for a per-timer loop under TCG.
 */
/*
 * Waits until at least @n records are pending on @fd, to set up a test
 * that needs them all queued (and unread) at once.  Uses the "pending:"
 * line of the file's fdinfo, which only paces the test: if the key is not
 * there, it falls back to a generous sleep, and the test's own checks
 * still decide.  Returns 1 when they are there (or presumed), 0 on timeout.
 */
static inline int qt_wait_pending(int fd, unsigned int n, int timeout_ms)
{
	__s64 deadline = qt_now(CLOCK_MONOTONIC) + timeout_ms * NSEC_PER_MSEC;
	char path[64], line[128];
	unsigned int pending;
	bool found;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	do {
		found = false;
		f = fopen(path, "r");
		while (f && fgets(line, sizeof(line), f)) {
			if (sscanf(line, "pending: %u", &pending) == 1) {
				found = true;
				break;
			}
		}
		if (f)
			fclose(f);
		if (!found) {
			qt_sleep_ms(300);
			return 1;
		}
		if (pending >= n)
			return 1;
		qt_sleep_ms(5);
	} while (qt_now(CLOCK_MONOTONIC) < deadline);
	return 0;
}

static inline int qt_nr_cpus(void)
{
	static int nr;

	if (!nr)
		nr = get_nprocs_conf();
	return nr;
}

static inline int qt_pin_self(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) ? -errno : 0;
}

/* sysfs: read/write one unsigned number; return 0 or -errno. */
static inline int qt_sysfs_read(const char *path, unsigned long long *val)
{
	FILE *f = fopen(path, "r");
	int ret;

	if (!f)
		return -errno;
	ret = fscanf(f, "%llu", val) == 1 ? 0 : -EIO;
	fclose(f);
	return ret;
}

static inline int qt_sysfs_write(const char *path, unsigned long long val)
{
	char buf[32];
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	int len, ret;

	if (fd < 0)
		return -errno;
	len = snprintf(buf, sizeof(buf), "%llu\n", val);
	ret = write(fd, buf, len) == len ? 0 : -errno;
	close(fd);
	return ret;
}

/* A page the kernel can neither read nor write (mapped, then unmapped). */
static inline void *qt_unmapped_page(void)
{
	long pg = sysconf(_SC_PAGESIZE);
	void *p = mmap(NULL, pg, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	munmap(p, pg);
	return p;
}

/* Index of the record with @cookie in recs[0..n), or -1. */
static inline int qt_find_cookie(const struct qtimer_record *recs, int n,
				 __u64 cookie)
{
	int i;

	for (i = 0; i < n; i++)
		if (recs[i].cookie == cookie)
			return i;
	return -1;
}

#endif /* _QT_SELFTEST_UTIL_H */
