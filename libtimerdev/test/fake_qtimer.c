// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * The fake /dev/qtimer behind the native unit tests; see fake_qtimer.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/eventfd.h>

#include "fake_qtimer.h"

/* The libc functions that -Wl,--wrap renamed; nothing declares these. */
int __real_open(const char *path, int flags, ...);
int __real_ioctl(int fd, unsigned long request, ...);
ssize_t __real_read(int fd, void *buf, size_t len);
void *__real_malloc(size_t size);
void *__real_calloc(size_t nmemb, size_t size);

struct fake_qtimer fake = {
	.fd = -1,
	.version = {
		.api_version = QTIMER_API_VERSION,
		.record_size = sizeof(struct qtimer_record),
		.features = QTIMER_FEAT_SUBMIT | QTIMER_FEAT_PERIODIC,
		.op_size = sizeof(struct qtimer_op),
		.submit_max = QTIMER_SUBMIT_MAX,
		.clocks = (1 << CLOCK_REALTIME) | (1 << CLOCK_MONOTONIC) |
			  (1 << CLOCK_BOOTTIME),
		.count_max = QTIMER_COUNT_MAX,
		.max_slack_ns = QTIMER_SLACK_MAX_NS,
		.max_timers_per_fd = FAKE_MAX_IDS - 1,
		.max_timers_per_user = FAKE_MAX_IDS - 1,
	},
	.next_id = 1,
};

/* Keep the eventfd readable exactly while records are queued. */
static void fake_sync_ready(void)
{
	static bool signalled;
	uint64_t value = 1;
	bool queued = fake.head != fake.tail;

	if (queued == signalled)
		return;
	/* The count is 0 or 1, so neither call can block. */
	if (queued && write(fake.fd, &value, sizeof(value)) != sizeof(value))
		abort();
	if (!queued && __real_read(fake.fd, &value, sizeof(value)) != sizeof(value))
		abort();
	signalled = queued;
}

void fake_push_record(uint64_t id, uint64_t cookie, uint32_t count)
{
	struct qtimer_record *rec = &fake.records[fake.tail++ % FAKE_MAX_RECORDS];

	memset(rec, 0, sizeof(*rec));
	rec->id = id;
	rec->cookie = cookie;
	rec->count = count;
	rec->flags = QTIMER_REC_LAST;
	fake_sync_ready();
}

unsigned int fake_nr_live(void)
{
	unsigned int i, nr = 0;

	for (i = 0; i < FAKE_MAX_IDS; i++)
		nr += fake.live[i];
	return nr;
}

int __wrap_open(const char *path, int flags, ...)
{
	va_list ap;
	int mode;

	va_start(ap, flags);
	mode = (flags & O_CREAT) ? va_arg(ap, int) : 0;
	va_end(ap);

	if (strcmp(path, FAKE_PATH))
		return __real_open(path, flags, mode);
	fake.open_flags = flags;
	fake.fd = eventfd(0, EFD_NONBLOCK |
			  ((flags & O_CLOEXEC) ? EFD_CLOEXEC : 0));
	/* eventfd's own non-blocking mode is for the fake; report the caller's. */
	if (fake.fd >= 0 && !(flags & O_NONBLOCK))
		fcntl(fake.fd, F_SETFL, fcntl(fake.fd, F_GETFL) & ~O_NONBLOCK);
	return fake.fd;
}

static int fake_valid_id(uint64_t id)
{
	return id && id < FAKE_MAX_IDS && fake.live[id];
}

/* One op, as the kernel's single ioctl would run it. */
static int fake_run_op(struct qtimer_op *op, unsigned int opcode)
{
	fake.last_op = *op;
	if (op->opcode && op->opcode != opcode)
		return -EINVAL;
	switch (opcode) {
	case QTIMER_OP_ARM:
		if (op->flags & ~QTIMER_F_ALL || op->reserved || op->result)
			return -EINVAL;
		if (!(op->flags & QTIMER_F_ABSTIME) && op->expires_ns < 0)
			return -EINVAL;
		if (op->clockid != CLOCK_MONOTONIC && op->clockid != CLOCK_REALTIME &&
		    op->clockid != CLOCK_BOOTTIME)
			return -EINVAL;
		if (fake.next_id >= FAKE_MAX_IDS)
			return -ENOSPC;
		op->id = fake.next_id++;
		fake.live[op->id] = true;
		fake.last_op.id = op->id;
		return 0;
	case QTIMER_OP_CANCEL:
		if (!fake_valid_id(op->id))
			return -ENOENT;
		fake.live[op->id] = false;
		return QTIMER_CANCEL_ARMED;
	case QTIMER_OP_MODIFY:
		if (op->flags & ~(QTIMER_F_ABSTIME | QTIMER_F_CANCEL_ON_SET))
			return -EINVAL;
		if (!fake_valid_id(op->id))
			return -ENOENT;
		return QTIMER_CANCEL_ARMED;
	}
	return -EINVAL;
}

static int fake_submit(struct qtimer_submit *submit)
{
	struct qtimer_op *ops = (struct qtimer_op *)(uintptr_t)submit->ops;
	unsigned int i, nr = submit->nr;

	fake.submit_calls++;
	if (fake.submit_errno)
		return -fake.submit_errno;
	if (!nr || nr > fake.version.submit_max || submit->flags ||
	    submit->pad || submit->reserved)
		return -EINVAL;
	if (fake.submit_limit && nr > fake.submit_limit)
		nr = fake.submit_limit;
	for (i = 0; i < nr; i++)
		ops[i].result = fake_run_op(&ops[i], ops[i].opcode);
	submit->done = nr;
	return nr;
}

static int fake_ioctl(unsigned long request, void *arg)
{
	fake.ioctl_calls++;
	switch (request) {
	case QTIMER_IOC_VERSION:
		if (fake.version_errno)
			return -fake.version_errno;
		memcpy(arg, &fake.version, sizeof(fake.version));
		return 0;
	case QTIMER_IOC_ARM:
		return fake_run_op(arg, QTIMER_OP_ARM);
	case QTIMER_IOC_CANCEL:
		return fake_run_op(arg, QTIMER_OP_CANCEL);
	case QTIMER_IOC_MODIFY:
		return fake_run_op(arg, QTIMER_OP_MODIFY);
	case QTIMER_IOC_SUBMIT:
		return fake_submit(arg);
	}
	return -ENOTTY;
}

int __wrap_ioctl(int fd, unsigned long request, ...)
{
	va_list ap;
	void *arg;
	int ret;

	va_start(ap, request);
	arg = va_arg(ap, void *);
	va_end(ap);

	if (fd != fake.fd || fd < 0)
		return __real_ioctl(fd, request, arg);
	ret = fake_ioctl(request, arg);
	if (ret < 0) {
		errno = -ret;
		return -1;
	}
	return ret;
}

ssize_t __wrap_read(int fd, void *buf, size_t len)
{
	size_t size = sizeof(struct qtimer_record), done = 0;

	if (fd != fake.fd || fd < 0)
		return __real_read(fd, buf, len);
	if (len < size) {
		errno = EINVAL;
		return -1;
	}
	if (fake.head == fake.tail) {
		/* The fake cannot block: a blocking read would hang the test. */
		errno = EAGAIN;
		return -1;
	}
	while (done + size <= len && fake.head != fake.tail) {
		memcpy((char *)buf + done,
		       &fake.records[fake.head++ % FAKE_MAX_RECORDS], size);
		done += size;
	}
	fake_sync_ready();
	return done;
}

static bool fake_alloc_fails(void)
{
	if (!fake.alloc_fail)
		return false;
	fake.alloc_fail--;
	errno = ENOMEM;
	return true;
}

void *__wrap_malloc(size_t size)
{
	return fake_alloc_fails() ? NULL : __real_malloc(size);
}

void *__wrap_calloc(size_t nmemb, size_t size)
{
	return fake_alloc_fails() ? NULL : __real_calloc(nmemb, size);
}
