// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * Latency under attack (latency.h) by what read()s parked mid-copy by a
 * userfaultfd page consumed:
 *
 *  - read_ends_what_parked_readers_consumed: up to 4 x 10^3 read()s of one
 *    file, each parked by a userfaultfd page after copying out 240
 *    records, which it ends only every 256; then a read() on the victim's
 *    CPU ends what all of them consumed, as the ended list is the shard's.
 *  - expirer_ends_what_parked_readers_consumed: the same, then a ring set
 *    up on the file and a timer of it firing on the victim's CPU: the
 *    expirer, in softirq, ends what waits on the file's shards.
 */
#define _GNU_SOURCE
#include <linux/userfaultfd.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>

#include "kselftest_harness.h"
#include "latency.h"

/*
 * read()s parked mid-copy: each takes PARKED_RECORDS records into a plain
 * buffer and then faults on its page of a userfaultfd region, which nobody
 * serves until the attack is over.  A read() ends what it consumed (frees
 * the one-shots' ids) only every 256 records or when it returns, and the
 * list those wait on is the shard's: so each parked read() leaves 240 on
 * it, and the next read() to end anything used to end them all in one
 * irq-off hold.
 */
#define PARKED_RECORDS	240	/* 15 chunks of 16: below the 256 that end */
#define MAX_PARKED	4000
#define PARKED_STACK	(64 * 1024)

struct parked {
	int fd;
	struct qtimer_record recs[PARKED_RECORDS];
	void *page;			/* its missing page */
	ssize_t ret;
	pthread_t thread;
};

static struct {
	int uffd;
	void *region;
	size_t len;
	long nr;
	struct parked *readers;
} parked = { .uffd = -1 };

static void *parked_read(void *arg)
{
	struct parked *p = arg;
	struct iovec iov[2] = {
		{ p->recs, sizeof(p->recs) },
		{ p->page, sizeof(struct qtimer_record) * 16 },
	};

	p->ret = readv(p->fd, iov, 2);
	return NULL;
}

static void prepare_parked_readers(struct __test_metadata *_metadata,
				   FIXTURE_DATA(latency) *self)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = { .mode = UFFDIO_REGISTER_MODE_MISSING };
	long page = sysconf(_SC_PAGESIZE), nr, i, faults = 0;
	__s64 now = t_now(CLOCK_MONOTONIC);
	int fd = t_open(0);
	pthread_attr_t attr;

	ASSERT_LE(0, fd);
	self->fds[0] = fd;
	/* Each parked read() takes 256 records; the attack's read() 16. */
	nr = (self->n - 16) / (PARKED_RECORDS + 16);
	if (nr > MAX_PARKED)
		nr = MAX_PARKED;
	ASSERT_LT(0, nr);
	ASSERT_EQ(0, arm_range(self, fd, 0, nr * (PARKED_RECORDS + 16) + 16,
			       self->home_cpu, now - NSEC_PER_MSEC, NSEC_PER_MSEC));
	ASSERT_EQ(1, t_wait_pending(fd, nr * (PARKED_RECORDS + 16) + 16,
				     120 * 1000));

	parked.uffd = syscall(__NR_userfaultfd, O_CLOEXEC);
	if (parked.uffd < 0)
		SKIP(return, "no userfaultfd: %s", strerror(errno));
	ASSERT_EQ(0, ioctl(parked.uffd, UFFDIO_API, &api));
	parked.len = nr * page;
	parked.region = mmap(NULL, parked.len, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, parked.region);
	reg.range.start = (unsigned long)parked.region;
	reg.range.len = parked.len;
	ASSERT_EQ(0, ioctl(parked.uffd, UFFDIO_REGISTER, &reg));
	parked.readers = calloc(nr, sizeof(*parked.readers));
	ASSERT_NE(NULL, parked.readers);
	ASSERT_EQ(0, pthread_attr_init(&attr));
	ASSERT_EQ(0, pthread_attr_setstacksize(&attr, PARKED_STACK));
	for (i = 0; i < nr; i++) {
		struct parked *p = &parked.readers[i];

		p->fd = fd;
		p->page = (char *)parked.region + i * page;
		ASSERT_EQ(0, pthread_create(&p->thread, &attr, parked_read, p));
		parked.nr++;
	}
	pthread_attr_destroy(&attr);
	/* One fault a parked read(): then all of them are parked. */
	while (faults < nr) {
		struct pollfd pfd = { .fd = parked.uffd, .events = POLLIN };
		struct uffd_msg msg;

		ASSERT_EQ(1, poll(&pfd, 1, 60 * 1000))
			TH_LOG("%ld of %ld read()s parked", faults, nr);
		ASSERT_EQ((ssize_t)sizeof(msg), read(parked.uffd, &msg, sizeof(msg)));
		if (msg.event == UFFD_EVENT_PAGEFAULT)
			faults++;
	}
	TH_LOG("%ld read()s parked, %ld consumed records each not yet ended",
	       nr, (long)PARKED_RECORDS);
}

/* On the victim's CPU, a read() of 16 records, which ends what it took. */
static void run_read_after_parked(struct __test_metadata *_metadata,
				  FIXTURE_DATA(latency) *self)
{
	struct qtimer_record recs[16];

	ASSERT_EQ((ssize_t)sizeof(recs), read(self->fds[0], recs, sizeof(recs)));
}

/* Unpark them: closing the userfaultfd lets their faults through. */
static void restore_parked(struct __test_metadata *_metadata,
			   FIXTURE_DATA(latency) *self)
{
	long i;

	if (parked.uffd >= 0)
		close(parked.uffd);
	parked.uffd = -1;
	for (i = 0; i < parked.nr; i++) {
		ASSERT_EQ(0, pthread_join(parked.readers[i].thread, NULL));
		EXPECT_EQ((ssize_t)sizeof(struct qtimer_record) * (PARKED_RECORDS + 16),
			  parked.readers[i].ret);
	}
	free(parked.readers);
	parked.readers = NULL;
	parked.nr = 0;
	if (parked.region)
		munmap(parked.region, parked.len);
	parked.region = NULL;
}

ATTACK_TEST(read_ends_what_parked_readers_consumed,
	.what = "read() after parked read()s",
	.prepare = prepare_parked_readers,
	.run = run_read_after_parked,
	.restore = restore_parked,
	.timed = true,
	.ops = "ms in read()")

/*
 * The same backlog, with a ring set up on the file after the read()s
 * parked: a timer of the file that fires on the victim's CPU makes the
 * expirer, in softirq, deliver into a file with a ring, which ends what
 * the file's shards have waiting.  Before 3191a2c it ended all of it in
 * that one delivery; now at most a chunk in all.  (The ring goes with the
 * attack's files.)
 */
static void prepare_parked_then_ring(struct __test_metadata *_metadata,
				     FIXTURE_DATA(latency) *self)
{
	prepare_parked_readers(_metadata, self);
	if (!parked.nr)
		return;
	ASSERT_EQ(0, t_ring_map(&self->ring, self->fds[0], 64));
}

/* On the victim's CPU, arm a timer due at once there; wait for its record. */
static void run_expire_after_parked(struct __test_metadata *_metadata,
				    FIXTURE_DATA(latency) *self)
{
	__s64 t = t_now(CLOCK_MONOTONIC);
	__u32 head;

	ASSERT_NE(NULL, self->ring.map);
	head = t_ring_head(&self->ring);
	ASSERT_EQ(0, t_arm_cpu(self->fds[0], CLOCK_MONOTONIC, 0, 0, 0, 1,
				self->cpu, NULL));
	/* The 16 records left unread move into the ring first, then it. */
	while (t_ring_head(&self->ring) - head < 17) {
		ASSERT_GT(60 * NSEC_PER_SEC, t_now(CLOCK_MONOTONIC) - t);
		t_sleep_ms(1);
	}
}

ATTACK_TEST(expirer_ends_what_parked_readers_consumed,
	.what = "an expiry into a ring after parked read()s",
	.prepare = prepare_parked_then_ring,
	.run = run_expire_after_parked,
	.restore = restore_parked,
	.timed = true,
	.ops = "ms to its record")

TEST_HARNESS_MAIN
