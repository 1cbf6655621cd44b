// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * The fake /dev/qtimer behind the native unit tests; see fake_qtimer.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/uio.h>

#include "fake_qtimer.h"

/* The libc functions that -Wl,--wrap renamed; nothing declares these. */
int __real_open(const char *path, int flags, ...);
int __real_ioctl(int fd, unsigned long request, ...);
ssize_t __real_read(int fd, void *buf, size_t len);
void *__real_malloc(size_t size);
void *__real_calloc(size_t nmemb, size_t size);
void *__real_mmap(void *addr, size_t len, int prot, int flags, int fd,
		  off_t off);
int __real_munmap(void *addr, size_t len);
int __real_ppoll(struct pollfd *fds, nfds_t nfds, const struct timespec *tmo,
		 const sigset_t *sigmask);
int __real_epoll_wait(int epfd, struct epoll_event *events, int max,
		      int timeout);

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

static uint32_t fake_ring_tail(void)
{
	return __atomic_load_n(fake.ring.tail_p, __ATOMIC_ACQUIRE);
}

static struct qtimer_record *fake_ring_slot(uint32_t pos)
{
	return &fake.ring.recs[pos & (fake.ring.entries - 1)];
}

unsigned int fake_ring_nr_ready(void)
{
	uint32_t pos, head = *fake.ring.head_p;
	unsigned int nr = 0;

	for (pos = fake_ring_tail(); pos != head; pos++)
		nr += (fake_ring_slot(pos)->flags & QTIMER_REC_CLAIM) ==
		      QTIMER_REC_READY;
	return nr;
}

/* Records pending: as the kernel's poll() reports them. */
static bool fake_pending(void)
{
	if (fake.head != fake.tail)
		return true;
	return fake.ring.map && fake_ring_nr_ready();
}

/* Keep the eventfd readable exactly while records are pending. */
static void fake_sync_ready(void)
{
	static bool signalled;
	uint64_t value = 1;
	bool queued = fake_pending();

	if (queued == signalled)
		return;
	/* The count is 0 or 1, so neither call can block. */
	if (queued && write(fake.fd, &value, sizeof(value)) != sizeof(value))
		abort();
	if (!queued && __real_read(fake.fd, &value, sizeof(value)) != sizeof(value))
		abort();
	signalled = queued;
}

static bool fake_ring_has_room(void)
{
	return *fake.ring.head_p - fake_ring_tail() < fake.ring.entries;
}

/* Write rec at head, READY, and publish it, as the kernel does. */
static void fake_ring_write(const struct qtimer_record *rec)
{
	uint32_t head = *fake.ring.head_p;
	struct qtimer_record *slot = fake_ring_slot(head);

	*slot = *rec;
	slot->flags = rec->flags | QTIMER_REC_READY;
	__atomic_store_n(fake.ring.head_p, head + 1, __ATOMIC_RELEASE);
}

/* Move waiting records into the room the consumer made, in order. */
static void fake_ring_settle(void)
{
	if (!fake.ring.map)
		return;
	while (fake.head != fake.tail && fake_ring_has_room())
		fake_ring_write(&fake.records[fake.head++ % FAKE_MAX_RECORDS]);
	*fake.ring.flags_p = fake.head != fake.tail ? QTIMER_RING_OVERFLOW : 0;
	fake_sync_ready();
}

void fake_push_record(uint64_t id, uint64_t cookie, uint32_t count)
{
	struct qtimer_record rec = {
		.id = id, .cookie = cookie, .count = count,
		.flags = QTIMER_REC_LAST,
	};

	/* Behind the records already waiting, so that order is kept. */
	if (fake.ring.map && fake.head == fake.tail && fake_ring_has_room())
		fake_ring_write(&rec);
	else
		fake.records[fake.tail++ % FAKE_MAX_RECORDS] = rec;
	fake_ring_settle();
	fake_sync_ready();
}

/* CANCEL's side of a queued record: void it in the ring, or drop it. */
static bool fake_discard_record(uint64_t id)
{
	unsigned int i, kept = fake.head;
	bool found = false;
	uint32_t pos;

	if (fake.ring.map) {
		for (pos = fake_ring_tail(); pos != *fake.ring.head_p; pos++) {
			struct qtimer_record *slot = fake_ring_slot(pos);
			uint32_t flags = __atomic_load_n(&slot->flags,
							 __ATOMIC_RELAXED);

			if (slot->id != id ||
			    (flags & QTIMER_REC_CLAIM) != QTIMER_REC_READY)
				continue;
			if (__atomic_compare_exchange_n(&slot->flags, &flags,
					(flags & ~QTIMER_REC_CLAIM) | QTIMER_REC_VOID,
					false, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
				found = true;
		}
	}
	for (i = fake.head; i != fake.tail; i++) {
		struct qtimer_record *rec = &fake.records[i % FAKE_MAX_RECORDS];

		if (rec->id == id)
			found = true;
		else
			fake.records[kept++ % FAKE_MAX_RECORDS] = *rec;
	}
	fake.tail = kept;
	fake_ring_settle();
	fake_sync_ready();
	return found;
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
	fake.open_calls++;
	if ((flags & O_ACCMODE) == O_RDWR && fake.rdwr_errno) {
		errno = fake.rdwr_errno;
		return -1;
	}
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
		return fake_discard_record(op->id) ? QTIMER_CANCEL_QUEUED :
						     QTIMER_CANCEL_ARMED;
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

static int fake_ring_setup(struct qtimer_ring_setup *setup)
{
	struct fake_ring *ring = &fake.ring;
	size_t size;
	char *map;

	ring->setup_calls++;
	ring->setup = *setup;
	if (!(fake.version.features & QTIMER_FEAT_RING))
		return -ENOTTY;
	if (ring->setup_errno)
		return -ring->setup_errno;
	if (setup->entries < QTIMER_RING_MIN || setup->entries > QTIMER_RING_MAX ||
	    (setup->entries & (setup->entries - 1)) || setup->flags ||
	    setup->reserved[0] || setup->reserved[1])
		return -EINVAL;
	if (ring->map)
		return -EBUSY;
	size = FAKE_RING_RECS_OFF + setup->entries * sizeof(struct qtimer_record);
	map = __real_mmap(NULL, size, PROT_READ | PROT_WRITE,
			  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED)
		return -ENOMEM;
	ring->size = size;
	ring->entries = setup->entries;
	ring->tail_p = (uint32_t *)(map + FAKE_RING_TAIL_OFF);
	ring->head_p = (uint32_t *)(map + FAKE_RING_HEAD_OFF);
	ring->flags_p = (uint32_t *)(map + FAKE_RING_FLAGS_OFF);
	ring->recs = (struct qtimer_record *)(map + FAKE_RING_RECS_OFF);
	ring->map = map;
	/* What was queued before is the overflow from now on. */
	fake_ring_settle();

	setup->tail_off = FAKE_RING_TAIL_OFF;
	setup->head_off = FAKE_RING_HEAD_OFF;
	setup->flags_off = FAKE_RING_FLAGS_OFF;
	setup->recs_off = FAKE_RING_RECS_OFF;
	setup->mmap_size = ring->short_size ? size - 1 : size;
	return 0;
}

/* GET: the kernel's checks, then the answer the test set for a live id. */
static int fake_get(struct qtimer_op *op)
{
	uint64_t id = op->id;

	fake.last_op = *op;
	if (!(fake.version.features & QTIMER_FEAT_GET))
		return -ENOTTY;
	if (op->opcode || op->clockid || op->flags || op->expires_ns ||
	    op->period_ns || op->slack_ns || op->cookie || op->cpu ||
	    op->result || op->reserved)
		return -EINVAL;
	if (!fake_valid_id(id))
		return -ENOENT;
	*op = fake.get_answer;
	op->id = id;
	return op->result;
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
	case QTIMER_IOC_RING_SETUP:
		return fake_ring_setup(arg);
	case QTIMER_IOC_GET:
		return fake_get(arg);
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

/* read() with a ring: claim from the tail, as a mapped consumer would. */
static size_t fake_ring_read(void *buf, size_t len)
{
	size_t size = sizeof(struct qtimer_record), done = 0;
	uint32_t tail = fake_ring_tail();

	fake_ring_settle();
	while (done + size <= len && tail != *fake.ring.head_p) {
		struct qtimer_record *slot = fake_ring_slot(tail++), rec;
		uint32_t flags = slot->flags;

		if ((flags & QTIMER_REC_CLAIM) != QTIMER_REC_READY ||
		    !__atomic_compare_exchange_n(&slot->flags, &flags,
				(flags & ~QTIMER_REC_CLAIM) | QTIMER_REC_TAKEN,
				false, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
			continue;
		rec = *slot;
		rec.flags = flags & ~QTIMER_REC_CLAIM;
		memcpy((char *)buf + done, &rec, size);
		done += size;
		__atomic_store_n(fake.ring.tail_p, tail, __ATOMIC_RELEASE);
		/* The room it made takes what waits, as the kernel's read does. */
		fake_ring_settle();
	}
	__atomic_store_n(fake.ring.tail_p, tail, __ATOMIC_RELEASE);
	fake_ring_settle();
	return done;
}

/*
 * The library polls without its ring lock (after a take that emptied the
 * ring) while another thread reads under it, as the kernel allows; the
 * fake's state, the eventfd's count among it, is kept under this lock on
 * those paths.
 */
static pthread_mutex_t fake_lock = PTHREAD_MUTEX_INITIALIZER;

static ssize_t fake_read(void *buf, size_t len);

ssize_t __wrap_read(int fd, void *buf, size_t len)
{
	ssize_t ret;

	if (fd != fake.fd || fd < 0)
		return __real_read(fd, buf, len);
	pthread_mutex_lock(&fake_lock);
	ret = fake_read(buf, len);
	pthread_mutex_unlock(&fake_lock);
	return ret;
}

ssize_t __real_preadv2(int fd, const struct iovec *iov, int iovcnt,
		       off_t offset, int flags);

/* The library's read that never blocks: the fake's reads never do. */
ssize_t __wrap_preadv2(int fd, const struct iovec *iov, int iovcnt,
		       off_t offset, int flags)
{
	ssize_t ret;

	if (fd != fake.fd || fd < 0)
		return __real_preadv2(fd, iov, iovcnt, offset, flags);
	if (iovcnt != 1 || offset != -1 || flags != RWF_NOWAIT)
		abort();
	pthread_mutex_lock(&fake_lock);
	fake.nowait_reads++;
	ret = fake_read(iov->iov_base, iov->iov_len);
	pthread_mutex_unlock(&fake_lock);
	return ret;
}

static ssize_t fake_read(void *buf, size_t len)
{
	size_t size = sizeof(struct qtimer_record), done = 0;

	fake.read_calls++;
	if (len < size) {
		errno = EINVAL;
		return -1;
	}
	if (fake.ring.map) {
		done = fake_ring_read(buf, len);
		if (!done) {
			errno = EAGAIN;
			return -1;
		}
		return done;
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

void *__wrap_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	struct fake_ring *ring = &fake.ring;
	int err = 0;

	if (fd != fake.fd || fd < 0)
		return __real_mmap(addr, len, prot, flags, fd, off);
	ring->mmap_calls++;
	ring->mmap_prot = prot;
	ring->mmap_flags = flags;
	ring->mmap_len = len;
	ring->mmap_off = off;
	if (ring->mmap_errno)
		err = ring->mmap_errno;
	else if (!ring->map)
		err = ENODEV;
	/* As the kernel's mmap: writing a shared mapping needs a writable file. */
	else if ((prot & PROT_WRITE) && (fake.open_flags & O_ACCMODE) == O_RDONLY)
		err = EACCES;
	else if (off || len > ring->size || !(flags & MAP_SHARED))
		err = EINVAL;
	if (err) {
		errno = err;
		return MAP_FAILED;
	}
	ring->mapped = true;
	return ring->map;
}

int __wrap_munmap(void *addr, size_t len)
{
	struct fake_ring *ring = &fake.ring;

	if (!ring->map || addr != ring->map)
		return __real_munmap(addr, len);
	/* Kept, so that a test can look at the ring after td_close(). */
	ring->munmap_calls++;
	ring->munmap_len = len;
	ring->mapped = false;
	return 0;
}

int __wrap_ppoll(struct pollfd *fds, nfds_t nfds, const struct timespec *tmo,
		 const sigset_t *sigmask)
{
	nfds_t i;

	for (i = 0; i < nfds; i++) {
		if (fake.fd >= 0 && fds[i].fd == fake.fd) {
			pthread_mutex_lock(&fake_lock);
			fake.poll_calls++;
			fake_ring_settle();
			fake_sync_ready();
			pthread_mutex_unlock(&fake_lock);
		}
	}
	return __real_ppoll(fds, nfds, tmo, sigmask);
}

/* epoll polls the file as poll() does: the tail may have moved meanwhile. */
int __wrap_epoll_wait(int epfd, struct epoll_event *events, int max,
		      int timeout)
{
	if (fake.fd >= 0) {
		pthread_mutex_lock(&fake_lock);
		fake_ring_settle();
		fake_sync_ready();
		pthread_mutex_unlock(&fake_lock);
	}
	return __real_epoll_wait(epfd, events, max, timeout);
}
