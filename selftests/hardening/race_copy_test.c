// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * The races that race_stress_test.c can only hit by chance, made
 * deterministic: CANCEL, MODIFY, a clock set and close() of a timer whose
 * record a read() is copying out, held there by a userfaultfd page, and
 * copies that fail: the read wins (the racing call gets -ENOENT and the
 * record arrives once), and no record comes back after a call was told
 * that its timer does not exist.  Skipped without CONFIG_USERFAULTFD.
 */
#define _GNU_SOURCE
#include <linux/userfaultfd.h>
#include <pthread.h>
#include <sys/syscall.h>

#include "kselftest_harness.h"
#include "helpers.h"

struct held_read {
	int fd;
	int uffd;
	char *page;
	long pagesz;
	pthread_t thread;
	ssize_t ret;
	int err;
};

static void *held_read_fn(void *p)
{
	struct held_read *h = p;

	h->ret = read(h->fd, h->page, sizeof(struct qtimer_record));
	h->err = errno;
	return NULL;
}

/* How a held read started, if not with -errno. */
enum { HELD, NO_UFFD, NO_CLOCK_SET, NO_RING };

/*
 * Start a read() of @fd into a missing userfaultfd page and wait until it
 * faults: from then until held_read_release() its record is being copied
 * out.  HELD, NO_UFFD or -errno.
 */
static int held_read_start(struct held_read *h, int fd)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = { .mode = UFFDIO_REGISTER_MODE_MISSING };
	struct pollfd pfd;
	struct uffd_msg msg;

	memset(h, 0, sizeof(*h));
	h->fd = fd;
	h->pagesz = sysconf(_SC_PAGESIZE);
	h->uffd = syscall(__NR_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (h->uffd < 0)
		return errno == ENOSYS || errno == EPERM ? NO_UFFD : -errno;
	if (ioctl(h->uffd, UFFDIO_API, &api))
		return -errno;
	h->page = mmap(NULL, h->pagesz, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (h->page == MAP_FAILED)
		return -errno;
	reg.range.start = (uintptr_t)h->page;
	reg.range.len = h->pagesz;
	if (ioctl(h->uffd, UFFDIO_REGISTER, &reg))
		return -errno;
	if (pthread_create(&h->thread, NULL, held_read_fn, h))
		return -EAGAIN;
	pfd.fd = h->uffd;
	pfd.events = POLLIN;
	if (poll(&pfd, 1, QT_ARRIVE_MS) != 1)
		return -ETIME;
	if (read(h->uffd, &msg, sizeof(msg)) != sizeof(msg) ||
	    msg.event != UFFD_EVENT_PAGEFAULT)
		return -EIO;
	return HELD;
}

/*
 * Arm a timer of @fd due now on @clockid (a ticker every @period ns, or a
 * one-shot), wait for its record and hold a read of it mid-copy.  HELD,
 * NO_UFFD or -errno.
 */
static int hold_fired(struct held_read *h, int fd, int clockid, __u32 flags,
		      __u64 period, __u64 cookie, __u64 *id)
{
	__s64 now = flags & QTIMER_F_ABSTIME ? t_now(clockid) : 0;
	int ret = t_arm(fd, clockid, flags, now, period, cookie, id);

	if (ret)
		return ret < 0 ? ret : -EPROTO;
	if (t_wait_readable(fd, QT_ARRIVE_MS) != 1)
		return -ETIME;
	return held_read_start(h, fd);
}

static ssize_t held_read_release(struct held_read *h, struct qtimer_record *rec)
{
	static char src[65536] __attribute__((aligned(4096)));
	struct uffdio_copy copy = {
		.dst = (uintptr_t)h->page,
		.src = (uintptr_t)src,
		.len = h->pagesz,
	};

	ioctl(h->uffd, UFFDIO_COPY, &copy);
	pthread_join(h->thread, NULL);
	memcpy(rec, h->page, sizeof(*rec));
	close(h->uffd);
	munmap(h->page, h->pagesz);
	return h->ret;
}

/*
 * End the held read with its copy failing: the page is unmapped before the
 * fault is woken (closing the userfaultfd wakes it), so the retried fault
 * finds no mapping and the read() gets EFAULT for its first record.
 */
static ssize_t held_read_fail(struct held_read *h)
{
	munmap(h->page, h->pagesz);
	close(h->uffd);
	pthread_join(h->thread, NULL);
	return h->ret < 0 ? -h->err : h->ret;
}

/* Skips the test if what it needs for @start is missing. */
#define HELD_OR_SKIP(start) do {					\
	int __r = (start);						\
	if (__r == NO_UFFD)						\
		SKIP(return, "no userfaultfd (CONFIG_USERFAULTFD)");	\
	if (__r == NO_CLOCK_SET)					\
		SKIP(return, "cannot set CLOCK_REALTIME: %s", strerror(errno)); \
	if (__r == NO_RING)						\
		SKIP(return, "the module offers no ring");		\
	ASSERT_EQ(HELD, __r) TH_LOG("%s", strerror(-__r));		\
} while (0)

/* A read held with hold_fired() of a CLOCK_MONOTONIC timer. */
#define FIRED_HELD_OR_SKIP(h, fd, period, cookie, id)			\
	HELD_OR_SKIP(hold_fired(h, fd, CLOCK_MONOTONIC, 0, period, cookie, id))

/* The held read ends with its copy done: it returns the record held. */
static void expect_copied(struct __test_metadata *_metadata,
			  struct held_read *h, struct qtimer_record *rec,
			  __u64 cookie, __u32 flags)
{
	ASSERT_EQ((ssize_t)sizeof(*rec), held_read_release(h, rec));
	EXPECT_EQ(cookie, rec->cookie);
	EXPECT_EQ(flags, rec->flags);
}

/*
 * The read() took the one-shot's record: the read wins and the timer is
 * gone, so CANCEL returns -ENOENT; the record arrives, once.
 */
TEST(cancel_oneshot_while_its_record_is_copied)
{
	int fd = t_open(0), ret;
	struct qtimer_record rec;
	struct held_read h;
	__u64 id;

	ASSERT_LE(0, fd);
	FIRED_HELD_OR_SKIP(&h, fd, 0, 77, &id);
	ret = t_cancel(fd, id);
	expect_copied(_metadata, &h, &rec, 77, QTIMER_REC_LAST);
	EXPECT_EQ(-ENOENT, ret);
	EXPECT_EQ(-ENOENT, t_cancel(fd, id));
	close(fd);
}

/*
 * The same with a ring: read() claims the record (TAKEN) and copies it out,
 * held by the fault, while the file's own mapping writes READY back into
 * the record's flags, as a hostile or buggy consumer may.  The kernel's
 * claim still stands: CANCEL must not say it took the record back
 * (QTIMER_CANCEL_QUEUED) and then have read() return it.
 */
TEST(cancel_oneshot_whose_ring_claim_is_forged_back)
{
	int fd = t_open(0), ret;
	struct qtimer_record rec;
	struct held_read h;
	struct t_ring r;
	__u32 idx;
	__u64 id;

	ASSERT_LE(0, fd);
	if (!t_ring_offered())
		SKIP(return, "the module offers no ring");
	ASSERT_EQ(0, t_ring_map(&r, fd, 64));
	ASSERT_EQ(0, t_arm(fd, CLOCK_MONOTONIC, 0, 0, 0, 91, &id));
	ASSERT_EQ(1, t_ring_wait_pending(&r, 1, QT_ARRIVE_MS));
	idx = t_ring_tail(&r) & (r.entries - 1);
	HELD_OR_SKIP(held_read_start(&h, fd));
	/* read() took it: TAKEN.  Forge READY back. */
	ASSERT_EQ(QTIMER_REC_TAKEN,
		  __atomic_load_n(&r.recs[idx].flags, __ATOMIC_ACQUIRE) & QTIMER_REC_CLAIM);
	__atomic_store_n(&r.recs[idx].flags,
			 (r.recs[idx].flags & ~QTIMER_REC_CLAIM) | QTIMER_REC_READY,
			 __ATOMIC_RELEASE);
	ret = t_cancel(fd, id);
	ASSERT_EQ((ssize_t)sizeof(rec), held_read_release(&h, &rec));
	EXPECT_EQ(91, rec.cookie);
	EXPECT_EQ(-ENOENT, ret)
		TH_LOG("CANCEL said %d (QUEUED is %d) of a record read() returned",
		       ret, QTIMER_CANCEL_QUEUED);
	t_ring_unmap(&r);
	close(fd);
}

/*
 * MODIFY while the read has the one-shot's record: the read wins and the
 * record says LAST ("the timer no longer exists"), so MODIFY is -ENOENT and
 * must not bring it back: no record of that id ever comes after the LAST
 * one.
 */
TEST(modify_oneshot_while_its_record_is_copied)
{
	int fd = t_open(0), ret;
	struct qtimer_record rec;
	struct held_read h;
	__u64 id;

	ASSERT_LE(0, fd);
	FIRED_HELD_OR_SKIP(&h, fd, 0, 78, &id);
	ret = t_modify(fd, id, 0, 10 * NSEC_PER_MSEC, 0, 0);
	expect_copied(_metadata, &h, &rec, 78, QTIMER_REC_LAST);
	EXPECT_EQ(-ENOENT, ret);
	/* Nothing after a LAST record. */
	EXPECT_EQ(0, t_wait_readable(fd, 300))
		TH_LOG("a record of id %#llx came after its LAST record",
		       (unsigned long long)id);
	EXPECT_EQ(-ENOENT, t_cancel(fd, id));
	close(fd);
}

/*
 * A ticker whose record is being read: CANCEL returns 0 (the read took the
 * record, and a ticker with a record out is not armed); the record in
 * flight is delivered and nothing after it.
 */
TEST(cancel_ticker_while_its_record_is_copied)
{
	int fd = t_open(0), ret;
	struct qtimer_record rec;
	struct held_read h;
	__u64 id;

	ASSERT_LE(0, fd);
	FIRED_HELD_OR_SKIP(&h, fd, 20 * NSEC_PER_MSEC, 79, &id);
	ret = t_cancel(fd, id);
	expect_copied(_metadata, &h, &rec, 79, 0);
	EXPECT_EQ(0, ret);
	EXPECT_EQ(0, t_wait_readable(fd, 200));
	EXPECT_EQ(-ENOENT, t_cancel(fd, id));
	close(fd);
}

/*
 * MODIFY of a ticker being read re-times it: the old record in flight is
 * delivered (the read won, so 0), then only the new schedule.
 */
TEST(modify_ticker_while_its_record_is_copied)
{
	int fd = t_open(0), ret;
	struct qtimer_record rec;
	struct held_read h;
	__s64 t0;
	__u64 id;

	ASSERT_LE(0, fd);
	FIRED_HELD_OR_SKIP(&h, fd, 10 * NSEC_PER_MSEC, 80, &id);
	t0 = t_now(CLOCK_MONOTONIC);
	ret = t_modify(fd, id, 0, 100 * NSEC_PER_MSEC, 0, 0);
	expect_copied(_metadata, &h, &rec, 80, 0);
	EXPECT_LT(rec.expires_ns, t0);
	EXPECT_EQ(0, ret);
	/* The new schedule: a one-shot 100 ms after the modify. */
	ASSERT_EQ(1, t_collect(fd, &rec, 1, QT_ARRIVE_MS));
	EXPECT_EQ(id, rec.id);
	EXPECT_LE(t0 + 100 * NSEC_PER_MSEC, rec.expires_ns);
	EXPECT_EQ(QTIMER_REC_LAST, rec.flags);
	EXPECT_EQ(0, t_wait_readable(fd, 200));
	close(fd);
}

/*
 * CANCEL said the one-shot being read does not exist; then the read's copy
 * fails.  The record must not come back on a later read: no record of a
 * timer is read after a call was told it does not exist.  (It used to go
 * back on the queue and the next read() returned it.)
 */
TEST(cancel_oneshot_then_its_copy_fails)
{
	int fd = t_open(O_NONBLOCK);
	struct qtimer_record rec;
	struct held_read h;
	struct t_fdinfo fi;
	__u64 id;

	ASSERT_LE(0, fd);
	FIRED_HELD_OR_SKIP(&h, fd, 0, 82, &id);
	EXPECT_EQ(-ENOENT, t_cancel(fd, id));
	EXPECT_EQ(-EFAULT, held_read_fail(&h));
	EXPECT_EQ(-EAGAIN, t_read(fd, &rec, 1))
		TH_LOG("id %#llx: a record after CANCEL said -ENOENT (cookie %llu)",
		       (unsigned long long)id, (unsigned long long)rec.cookie);
	EXPECT_EQ(-ENOENT, t_cancel(fd, id));
	ASSERT_EQ(0, t_fdinfo(fd, &fi));
	EXPECT_EQ(0, fi.timers);
	EXPECT_EQ(0, fi.pending);
	close(fd);
}

/* The same with MODIFY, which must not bring the one-shot back either. */
TEST(modify_oneshot_then_its_copy_fails)
{
	int fd = t_open(O_NONBLOCK);
	struct qtimer_record rec;
	struct held_read h;
	__u64 id;

	ASSERT_LE(0, fd);
	FIRED_HELD_OR_SKIP(&h, fd, 0, 83, &id);
	EXPECT_EQ(-ENOENT, t_modify(fd, id, 0, 10 * NSEC_PER_MSEC, 0, 0));
	EXPECT_EQ(-EFAULT, held_read_fail(&h));
	EXPECT_EQ(0, t_wait_readable(fd, 200));
	EXPECT_EQ(-EAGAIN, t_read(fd, &rec, 1));
	EXPECT_EQ(-ENOENT, t_cancel(fd, id));
	close(fd);
}

/* A copy that fails with no CANCEL in between loses nothing. */
TEST(oneshot_copy_fails_record_stays)
{
	int fd = t_open(O_NONBLOCK);
	struct qtimer_record rec;
	struct held_read h;
	__u64 id;

	ASSERT_LE(0, fd);
	FIRED_HELD_OR_SKIP(&h, fd, 0, 84, &id);
	EXPECT_EQ(-EFAULT, held_read_fail(&h));
	ASSERT_EQ(1, t_read(fd, &rec, 1));
	EXPECT_EQ(id, rec.id);
	EXPECT_EQ(QTIMER_REC_LAST, rec.flags);
	close(fd);
}

/*
 * Set CLOCK_REALTIME to itself (a set all the same) and give the module's
 * clock-set work time to run.  0 or -errno.
 */
static int set_realtime_now(void)
{
	int ret = t_set_realtime(t_now(CLOCK_REALTIME));

	if (!ret)
		t_sleep_ms(100);
	return ret;
}

/*
 * In a new O_NONBLOCK file, with @ring a record ring of 16 set up on it
 * (unmapped), arm a cancel-on-set realtime timer due now (a ticker every
 * @period ns, or a one-shot) with @cookie, hold a read of its record
 * mid-copy (see hold_fired(); the file is then @h->fd) and set the clock.
 * HELD, NO_UFFD, NO_CLOCK_SET, NO_RING or -errno.
 */
static int cos_held_across_set(bool ring, __u64 cookie, __u64 period,
			       struct held_read *h, __u64 *id)
{
	struct qtimer_ring_setup s;
	int fd, ret;

	if (ring && !t_ring_offered())
		return NO_RING;
	fd = t_open(O_NONBLOCK);
	if (fd < 0)
		return fd;
	if (ring) {
		ret = t_ring_setup(fd, 16, &s);
		if (ret)
			return ret < 0 ? ret : -EPROTO;
	}
	ret = hold_fired(h, fd, CLOCK_REALTIME,
			 QTIMER_F_ABSTIME | QTIMER_F_CANCEL_ON_SET, period,
			 cookie, id);
	if (ret != HELD)
		return ret;
	return set_realtime_now() ? NO_CLOCK_SET : HELD;
}

/*
 * The clock-set cases, each on a file of its own (with or without a ring),
 * with @cookie: a cancel-on-set timer due now (a ticker every 20 ms or a
 * one-shot), its record held mid-copy by a read() when the clock is set.
 * Each leaves nothing pending and the timer gone.
 */
static void expect_gone(struct __test_metadata *_metadata, int fd, __u64 id)
{
	struct qtimer_record recs[4];

	t_sleep_ms(100);
	EXPECT_EQ(-EAGAIN, t_read(fd, recs, 4));
	EXPECT_EQ(-ENOENT, t_cancel(fd, id));
}

/*
 * The copy fails: nobody read the record, so it comes back as the
 * cancellation (as one still queued at the set does), with the count it
 * had, and nothing follows it.
 */
static void copy_fails_across_set(struct __test_metadata *_metadata, bool ring,
				  __u64 cookie, __u64 period)
{
	struct qtimer_record recs[4];
	struct held_read h;
	int got, i;
	__u64 id;

	HELD_OR_SKIP(cos_held_across_set(ring, cookie, period, &h, &id));
	EXPECT_EQ(-EFAULT, held_read_fail(&h));
	t_sleep_ms(100);
	got = t_read(h.fd, recs, 4);
	for (i = 0; i < got; i++)
		TH_LOG("record %d: cookie %llu flags %#x count %u", i,
		       (unsigned long long)recs[i].cookie, recs[i].flags,
		       recs[i].count);
	ASSERT_EQ(1, got);
	EXPECT_EQ(id, recs[0].id);
	EXPECT_EQ(cookie, recs[0].cookie);
	EXPECT_EQ(QTIMER_REC_CANCELED | QTIMER_REC_LAST, recs[0].flags);
	if (period) {
		EXPECT_LE(1, recs[0].count);
	} else {
		EXPECT_EQ(1, recs[0].count);
	}
	expect_gone(_metadata, h.fd, id);
	close(h.fd);
}

/*
 * The copy succeeds: the record arrives as it was taken, before the set;
 * a ticker's cancellation record follows it, a one-shot's nothing.
 */
static void copied_across_set(struct __test_metadata *_metadata, bool ring,
			      __u64 cookie, __u64 period)
{
	struct qtimer_record rec, recs[4];
	struct held_read h;
	__u64 id;

	HELD_OR_SKIP(cos_held_across_set(ring, cookie, period, &h, &id));
	expect_copied(_metadata, &h, &rec, cookie, period ? 0 : QTIMER_REC_LAST);
	EXPECT_EQ(id, rec.id);
	if (!period) {
		EXPECT_EQ(1, rec.count);
	} else {
		t_sleep_ms(100);
		ASSERT_EQ(1, t_read(h.fd, recs, 4));
		EXPECT_EQ(id, recs[0].id);
		EXPECT_EQ(QTIMER_REC_CANCELED | QTIMER_REC_LAST, recs[0].flags);
		EXPECT_EQ(0, recs[0].count);
	}
	expect_gone(_metadata, h.fd, id);
	close(h.fd);
}

#define TICKER	(20 * NSEC_PER_MSEC)

/*
 * A ticker: the record in flight is delivered, then the cancellation
 * record, and the ticker stops.  (It used to go on ticking: the clock-set
 * walk skipped a timer in the middle of a read.)
 */
TEST(clock_set_while_a_tickers_record_is_copied)
{
	copied_across_set(_metadata, false, 85, TICKER);
}

TEST(clock_set_while_a_tickers_record_is_copied_and_fails)
{
	copy_fails_across_set(_metadata, false, 86, TICKER);
}

/* (A one-shot's used to come back plain: the walk left it alone.) */
TEST(clock_set_while_a_oneshots_record_is_copied_and_fails)
{
	copy_fails_across_set(_metadata, false, 87, 0);
}

TEST(clock_set_while_a_oneshots_record_is_copied)
{
	copied_across_set(_metadata, false, 88, 0);
}

/*
 * The same four with a record ring, where read() takes records from the ring
 * by claim: a ring of 16, unmapped.  (The copy-fails ones used to come back
 * as the plain record: the walk marked only a claimed ticker, whose plain
 * record was then followed by a second, empty cancellation.)
 */
TEST(ring_clock_set_while_a_oneshots_record_is_copied_and_fails)
{
	copy_fails_across_set(_metadata, true, 91, 0);
}

TEST(ring_clock_set_while_a_tickers_record_is_copied_and_fails)
{
	copy_fails_across_set(_metadata, true, 92, TICKER);
}

TEST(ring_clock_set_while_a_oneshots_record_is_copied)
{
	copied_across_set(_metadata, true, 93, 0);
}

TEST(ring_clock_set_while_a_tickers_record_is_copied)
{
	copied_across_set(_metadata, true, 94, TICKER);
}

/* The last close of a file while a read() of it is mid-copy. */
TEST(close_while_a_record_is_copied)
{
	int fd = t_open(0), i;
	struct qtimer_record rec;
	struct held_read h;

	ASSERT_LE(0, fd);
	for (i = 0; i < 4; i++)
		ASSERT_EQ(0, t_arm(fd, CLOCK_MONOTONIC, 0, 0,
				    i ? 0 : NSEC_PER_MSEC, 81 + i, NULL));
	ASSERT_EQ(0, t_arm(fd, CLOCK_MONOTONIC, 0, NSEC_PER_SEC, 0, 90, NULL));
	ASSERT_EQ(1, t_wait_readable(fd, QT_ARRIVE_MS));
	t_sleep_ms(50);
	HELD_OR_SKIP(held_read_start(&h, fd));
	/* The read holds the file: this close is not the last reference. */
	close(fd);
	ASSERT_EQ((ssize_t)sizeof(rec), held_read_release(&h, &rec));
	EXPECT_LE(81, rec.cookie);
	EXPECT_GE(84, rec.cookie);
}

TEST_HARNESS_MAIN
