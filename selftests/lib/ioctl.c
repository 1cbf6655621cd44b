// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * /dev/qtimer through its raw ioctls and read(): every wrapper returns
 * -errno on failure (liburing's convention), so a test states the errno it
 * expects in one line, and record collection bounds every wait with poll().
 */
#include <sys/mman.h>

#include "helpers.h"

bool t_mask_ok(int mask)
{
	return mask > 0 && !(mask & ~(QTIMER_CANCEL_ARMED | QTIMER_CANCEL_QUEUED));
}

int t_open(int extra_flags)
{
	int fd = open(QT_DEV, O_RDWR | O_CLOEXEC | extra_flags);

	return fd < 0 ? -errno : fd;
}

int t_ioctl(int fd, unsigned long cmd, void *arg)
{
	int ret = ioctl(fd, cmd, arg);

	return ret < 0 ? -errno : ret;
}

int t_version(int fd, struct qtimer_version *v)
{
	memset(v, 0, sizeof(*v));
	return t_ioctl(fd, QTIMER_IOC_VERSION, v);
}

struct qtimer_op t_op(int clockid, __u32 flags, __s64 expires_ns,
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

int t_arm_op(int fd, struct qtimer_op *op)
{
	return t_ioctl(fd, QTIMER_IOC_ARM, op);
}

int t_arm(int fd, int clockid, __u32 flags, __s64 expires_ns,
	   __u64 period_ns, __u64 cookie, __u64 *id)
{
	struct qtimer_op op = t_op(clockid, flags, expires_ns, period_ns, cookie);
	int ret = t_arm_op(fd, &op);

	if (!ret && id)
		*id = op.id;
	return ret;
}

int t_arm_cpu(int fd, int clockid, __u32 flags, __s64 expires_ns,
	       __u64 period_ns, __u64 cookie, __u32 cpu, __u64 *id)
{
	struct qtimer_op op = t_op(clockid, flags | QTIMER_F_CPU, expires_ns,
				    period_ns, cookie);
	int ret;

	op.cpu = cpu;
	ret = t_arm_op(fd, &op);
	if (!ret && id)
		*id = op.id;
	return ret;
}

int t_arm_at_cpu0(int fd, __s64 when, __u64 cookie, __u64 *id)
{
	return t_arm_cpu(fd, CLOCK_MONOTONIC, QTIMER_F_ABSTIME, when, 0,
			  cookie, 0, id);
}

void t_fill_in_ns(struct qtimer_op *op, long k, void *arg)
{
	*op = t_op(CLOCK_MONOTONIC, 0, arg ? *(__s64 *)arg : 0, 0, k);
}

/*
 * The suites that need 10^5-10^6 timers arm them this way: one ioctl per
 * timer would take minutes under TCG.  With STOP_ON_ERROR the kernel stops
 * after the op that failed, which it counts as processed, so every
 * processed op's result is looked at, the last of a batch included.
 */
int t_arm_many(int fd, long n, t_fill_op_fn *fill, void *arg,
		__u64 *ids, long nr_ids)
{
	struct qtimer_op *ops = calloc(QTIMER_SUBMIT_MAX, sizeof(*ops));
	long done = 0;
	int ret = 0;

	if (!ops)
		return -ENOMEM;
	while (done < n) {
		int b = n - done < QTIMER_SUBMIT_MAX ? n - done : QTIMER_SUBMIT_MAX;
		int i;

		for (i = 0; i < b; i++) {
			fill(&ops[i], done + i, arg);
			ops[i].opcode = QTIMER_OP_ARM;
		}
		ret = t_submit(fd, ops, b, QTIMER_SUBMIT_STOP_ON_ERROR, NULL);
		if (ret < 0)
			break;
		for (i = 0; i < ret; i++)
			if (ops[i].result)
				break;
		if (i < ret) {
			ret = ops[i].result;
			break;
		}
		if (ret != b) {
			ret = -EIO;
			break;
		}
		for (i = 0; i < b && done + i < nr_ids; i++)
			ids[done + i] = ops[i].id;
		done += b;
		ret = 0;
	}
	free(ops);
	return ret;
}

/* GET and CANCEL name their timer by id alone: every other field is 0. */
static int t_ioctl_by_id(int fd, unsigned long cmd, __u64 id,
			 struct qtimer_op *op)
{
	memset(op, 0, sizeof(*op));
	op->id = id;
	return t_ioctl(fd, cmd, op);
}

int t_get(int fd, __u64 id, struct qtimer_op *op)
{
	return t_ioctl_by_id(fd, QTIMER_IOC_GET, id, op);
}

int t_cancel(int fd, __u64 id)
{
	struct qtimer_op op;

	return t_ioctl_by_id(fd, QTIMER_IOC_CANCEL, id, &op);
}

/* MODIFY keeps the timer's clock and cookie: those fields stay 0. */
int t_modify(int fd, __u64 id, __u32 flags, __s64 expires_ns,
	      __u64 period_ns, __u64 slack_ns)
{
	struct qtimer_op op = t_op(0, flags, expires_ns, period_ns, 0);

	op.id = id;
	op.slack_ns = slack_ns;
	return t_ioctl(fd, QTIMER_IOC_MODIFY, &op);
}

int t_submit(int fd, struct qtimer_op *ops, __u32 nr, __u32 flags,
	      __u32 *done)
{
	struct qtimer_submit s;
	int ret;

	memset(&s, 0, sizeof(s));
	s.ops = (__u64)(uintptr_t)ops;
	s.nr = nr;
	s.flags = flags;
	s.done = 0xdeadbeef;
	ret = t_ioctl(fd, QTIMER_IOC_SUBMIT, &s);
	if (done)
		*done = s.done;
	return ret;
}

int t_read(int fd, struct qtimer_record *recs, size_t max)
{
	ssize_t n = read(fd, recs, max * sizeof(*recs));

	if (n < 0)
		return -errno;
	if (n % sizeof(*recs))
		return -EPROTO;	/* never whole records: a test failure */
	return n / sizeof(*recs);
}

int t_wait_readable(int fd, int timeout_ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	int ret = poll(&pfd, 1, timeout_ms);

	if (ret < 0)
		return -errno;
	return ret > 0 && (pfd.revents & POLLIN);
}

int t_revents(int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN | POLLOUT | POLLPRI };
	int ret = poll(&pfd, 1, 0);

	return ret < 0 ? -errno : pfd.revents;
}

/*
 * Works on blocking and O_NONBLOCK files alike: it only reads after poll()
 * reported EPOLLIN.  If @stamp is given, stamp[i] is the time on @clockid
 * taken right after the read that returned record i, and stamp[i] >=
 * expires_ns is the never-early check: the reader wakes as soon as a
 * record is queued, so a record queued early is read early.  (The stamp is
 * taken after the read, not after the poll, because a periodic timer's
 * pending record may count a further expiration between the two.)
 */
int t_collect_stamped(int fd, struct qtimer_record *recs, int want,
		       int timeout_ms, int clockid, __s64 *stamp)
{
	__s64 deadline = t_now(CLOCK_MONOTONIC) + timeout_ms * NSEC_PER_MSEC;
	int got = 0;

	while (got < want) {
		__s64 left = deadline - t_now(CLOCK_MONOTONIC);
		__s64 now;
		int ret, i;

		if (left < 0)
			left = 0;
		ret = t_wait_readable(fd, (int)(left / NSEC_PER_MSEC));
		if (ret < 0)
			return ret;
		if (!ret)
			break;
		ret = t_read(fd, recs + got, want - got);
		if (ret == -EAGAIN)
			continue;
		if (ret < 0)
			return ret;
		now = t_now(clockid);
		for (i = 0; stamp && i < ret; i++)
			stamp[got + i] = now;
		got += ret;
	}
	return got;
}

int t_collect(int fd, struct qtimer_record *recs, int want, int timeout_ms)
{
	return t_collect_stamped(fd, recs, want, timeout_ms, CLOCK_MONOTONIC,
				  NULL);
}

/* The O_NONBLOCK flag is set for the read only. */
int t_nothing_pending(int fd)
{
	struct qtimer_record rec;
	int fl = fcntl(fd, F_GETFL);
	int revents = t_revents(fd);
	int ret;

	if (revents & POLLIN)
		return 1;
	fcntl(fd, F_SETFL, fl | O_NONBLOCK);
	ret = t_read(fd, &rec, 1);
	fcntl(fd, F_SETFL, fl);
	return ret == -EAGAIN ? 0 : 2;
}

int t_find_cookie(const struct qtimer_record *recs, int n, __u64 cookie)
{
	int i;

	for (i = 0; i < n; i++)
		if (recs[i].cookie == cookie)
			return i;
	return -1;
}

int t_read_to_sentinel(int fd, __u64 cookie, struct qtimer_record *others,
		       int max)
{
	struct qtimer_record buf[64];
	int nr_others = 0, n, i;
	bool found = false;

	while (!found) {
		if (t_wait_readable(fd, QT_ARRIVE_MS) != 1)
			return -1;
		n = t_read(fd, buf, 64);
		if (n < 0)
			return -1;
		for (i = 0; i < n; i++) {
			if (buf[i].cookie == cookie) {
				found = true;
				continue;
			}
			if (nr_others < max)
				others[nr_others] = buf[i];
			nr_others++;
		}
	}
	return nr_others;
}

void *t_unmapped_page(void)
{
	long pg = sysconf(_SC_PAGESIZE);
	void *p = mmap(NULL, pg, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	munmap(p, pg);
	return p;
}

void *t_readonly_copy(const void *src, size_t len)
{
	long pg = sysconf(_SC_PAGESIZE);
	void *p;

	if (len > (size_t)pg)
		return NULL;
	p = mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		 -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	memcpy(p, src, len);
	if (mprotect(p, pg, PROT_READ)) {
		munmap(p, pg);
		return NULL;
	}
	return p;
}

void t_readonly_free(void *p)
{
	munmap(p, sysconf(_SC_PAGESIZE));
}
