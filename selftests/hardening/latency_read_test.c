// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * Latency under attack (latency.h) by the ready queue and read():
 *
 *  - cancel_sweeps_ready_queue: cancel 10^6 fired, unread one-shots: once
 *    the cancelled ones outnumber the others, the ready queue is swept.
 *  - close_frees_ready_queue: close a file with 10^6 unread records.
 *    These two are judged against the same on files of CONTROL_TIMERS
 *    unread records at a time.
 *  - read_takes_every_record_in_one_call: one readv() of 10^6 unread
 *    records, and ring_read_takes_every_record_in_one_call, the same
 *    with a ring set up on the file (they wait in the kernel for room in
 *    it).  Both are judged against the same read() of CONTROL_TIMERS.
 *    (signal_ends_a_long_read, beside them, is no latency test: a signal
 *    during such a read() ends it with the records it has.)
 *  - read_frees_leading_cancelled_records: read() one record behind 5 x
 *    10^5 cancelled ones, as many as may wait without a sweep.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <sys/time.h>
#include <sys/uio.h>

#include "kselftest_harness.h"
#include "latency.h"

/*
 * 10^6 one-shots due within the last millisecond, all fired and unread.
 * On the victim's CPU, where they fire while the rest are armed from
 * another: a few seconds under TCG.
 */
static void prepare_unread(struct __test_metadata *_metadata,
			   FIXTURE_DATA(latency) *self)
{
	__s64 t;

	self->n = arm_file(_metadata, self, 0, self->cpu,
			   t_now(CLOCK_MONOTONIC) - NSEC_PER_MSEC, NSEC_PER_MSEC);
	t = t_now(CLOCK_MONOTONIC);
	ASSERT_EQ(1, t_wait_pending(self->fds[0], self->n, 120 * 1000))
		TH_LOG("not all %ld fired within 120 s", self->n);
	TH_LOG("all fired and queued %.2f s after arming",
	       (double)(t_now(CLOCK_MONOTONIC) - t) / NSEC_PER_SEC);
}

/*
 * Sweeps of n, n/2, n/4... entries, each once the cancelled records
 * outnumber the others.  Every CANCEL must find its record queued, so
 * every sweep the attack is about happens.
 */
static void run_cancel_queued(struct __test_metadata *_metadata,
			      FIXTURE_DATA(latency) *self)
{
	cancel_ids(_metadata, self->fds[0], self->ids, self->n,
		   QTIMER_CANCEL_QUEUED);
	self->ops = self->n;
	EXPECT_EQ(0, t_nothing_pending(self->fds[0]));
}

/*
 * The baseline of the attacks on unread records: the same, on a file of
 * CONTROL_TIMERS unread records at a time, for IDLE_NS, from the victim's
 * CPU.  The records fire on another CPU, so that no expiry is in the
 * window.  Cancelling or closing 10^6 keeps the vCPU busy for 0.4-3 s, and
 * under TCG a busy vCPU competes for the host's CPUs where an idle one
 * sleeps: a baseline as busy keeps a loaded host from looking like a long
 * walk.  @how: cancel its records, close the file, or read them all.
 */
enum unread_end { CANCEL_UNREAD, CLOSE_UNREAD, READ_UNREAD };

static long read_in_one_call(struct __test_metadata *_metadata, int fd,
			     long n);

static void control_unread(struct __test_metadata *_metadata,
			   FIXTURE_DATA(latency) *self, enum unread_end how)
{
	__s64 deadline = t_now(CLOCK_MONOTONIC) + IDLE_NS;
	int fd = -1;

	ASSERT_EQ(0, t_pin_self(self->cpu));
	do {
		if (fd < 0) {
			fd = t_open(0);
			ASSERT_LE(0, fd);
			self->fds[1] = fd;
		}
		ASSERT_EQ(0, arm_range(self, fd, 0, CONTROL_TIMERS,
				       self->home_cpu,
				       t_now(CLOCK_MONOTONIC) - NSEC_PER_MSEC,
				       NSEC_PER_MSEC));
		ASSERT_EQ(1, t_wait_pending(fd, CONTROL_TIMERS, QT_ARRIVE_MS));
		if (how == CLOSE_UNREAD) {
			close(fd);
			fd = self->fds[1] = -1;
		} else if (how == READ_UNREAD) {
			ASSERT_EQ(CONTROL_TIMERS,
				  read_in_one_call(_metadata, fd, CONTROL_TIMERS));
		} else {
			cancel_ids(_metadata, fd, self->ids, CONTROL_TIMERS,
				   QTIMER_CANCEL_QUEUED);
		}
	} while (t_now(CLOCK_MONOTONIC) < deadline);
	ASSERT_EQ(0, t_pin_self(self->home_cpu));
	if (fd >= 0)
		close(fd);
	self->fds[1] = -1;
}

static void control_cancel_queued(struct __test_metadata *_metadata,
				  FIXTURE_DATA(latency) *self)
{
	control_unread(_metadata, self, CANCEL_UNREAD);
}

ATTACK_TEST(cancel_sweeps_ready_queue,
	.what = "CANCEL of unread records",
	.idle = control_cancel_queued,
	.idle_what = "the same on small files",
	.prepare = prepare_unread,
	.run = run_cancel_queued,
	.ops = "CANCELs")

static void run_close_unread(struct __test_metadata *_metadata,
			     FIXTURE_DATA(latency) *self)
{
	close(self->fds[0]);
	self->fds[0] = -1;
}

static void control_close_unread(struct __test_metadata *_metadata,
				 FIXTURE_DATA(latency) *self)
{
	control_unread(_metadata, self, CLOSE_UNREAD);
}

ATTACK_TEST(close_frees_ready_queue,
	.what = "close() with unread records",
	.idle = control_close_unread,
	.idle_what = "the same on small files",
	.prepare = prepare_unread,
	.run = run_close_unread,
	.timed = true,
	.ops = "ms in close()")

/*
 * All of @fd's @n records in one readv(), through iovecs that alias one
 * buffer, written before the call so that no page fault in the copy
 * offers a preemption point: the records read.
 */
static long read_in_one_call(struct __test_metadata *_metadata, int fd,
			     long n)
{
	enum { PER_IOV = 1024 };
	static struct qtimer_record buf[PER_IOV];
	static struct iovec iov[UIO_MAXIOV];
	long per = PER_IOV, i, nr;
	ssize_t ret;

	while ((n + per - 1) / per > UIO_MAXIOV)
		per *= 2;
	ASSERT_GE(PER_IOV, per) {
		TH_LOG("%ld records do not fit %d iovecs", n, UIO_MAXIOV);
	}
	memset(buf, 0, sizeof(buf));
	nr = (n + per - 1) / per;
	for (i = 0; i < nr; i++) {
		iov[i].iov_base = buf;
		iov[i].iov_len = (i < nr - 1 ? per : n - i * per) * sizeof(buf[0]);
	}
	ret = readv(fd, iov, nr);
	ASSERT_LE(0, ret) TH_LOG("readv: %s", strerror(errno));
	return ret / sizeof(buf[0]);
}

/*
 * read() takes records a chunk at a time, with the file's lock dropped in
 * between, but on a PREEMPT_VOLUNTARY kernel (Debian's) nothing in its
 * loop was a rescheduling point: one read() of 10^6 records held the CPU
 * for all of them.  The baseline is the same read() of CONTROL_TIMERS.
 */
static void run_read_in_one_call(struct __test_metadata *_metadata,
				 FIXTURE_DATA(latency) *self)
{
	EXPECT_EQ(self->n, read_in_one_call(_metadata, self->fds[0], self->n));
}

static void control_read_unread(struct __test_metadata *_metadata,
				FIXTURE_DATA(latency) *self)
{
	control_unread(_metadata, self, READ_UNREAD);
}

ATTACK_TEST(read_takes_every_record_in_one_call,
	.what = "one read() of every record",
	.idle = control_read_unread,
	.idle_what = "the same on small files",
	.prepare = prepare_unread,
	.run = run_read_in_one_call,
	.timed = true,
	.ops = "ms in read()")

static void on_alarm(int sig)
{
}

/*
 * A signal ends a long read() early, with the records it has, as for any
 * read() that has made progress: a read() of 10^6 records takes seconds
 * under TCG, and used to hold the signal until it had them all.
 */
TEST_F_TIMEOUT(latency, signal_ends_a_long_read, 300)
{
	struct sigaction sa = { .sa_handler = on_alarm };	/* no SA_RESTART */
	struct itimerval it = { .it_value.tv_usec = 50 * 1000 };
	long got;
	__s64 t;

	if (self->skip[0])
		SKIP(return, "%s", self->skip);
	prepare_unread(_metadata, self);
	ASSERT_EQ(0, sigaction(SIGALRM, &sa, NULL));
	t = t_now(CLOCK_MONOTONIC);
	ASSERT_EQ(0, setitimer(ITIMER_REAL, &it, NULL));
	got = read_in_one_call(_metadata, self->fds[0], self->n);
	t = t_now(CLOCK_MONOTONIC) - t;
	TH_LOG("%ld of %ld records in %.0f ms, a signal after 50", got,
	       self->n, (double)t / NSEC_PER_MSEC);
	if (got == self->n && t < 50 * NSEC_PER_MSEC)
		SKIP(return, "the read() was over before the signal came");
	EXPECT_GT(self->n, got);
	EXPECT_LT(0, got);
	/* Nothing lost: the rest is still there. */
	EXPECT_EQ(self->n - got, t_fdinfo_get(self->fds[0], QT_FI_PENDING));
}

/*
 * The same through the ring's read(): the records wait for room in it.
 * (The ring goes with the attack's files.)
 */
static void prepare_unread_then_ring(struct __test_metadata *_metadata,
				     FIXTURE_DATA(latency) *self)
{
	prepare_unread(_metadata, self);
	ASSERT_EQ(0, t_ring_map(&self->ring, self->fds[0], 64));
}

ATTACK_TEST(ring_read_takes_every_record_in_one_call,
	.what = "one read() of every record, with a ring",
	.idle = control_read_unread,
	.idle_what = "the same on small files",
	.prepare = prepare_unread_then_ring,
	.run = run_read_in_one_call,
	.timed = true,
	.ops = "ms in read()")

/*
 * Up to half of a file's unread records may be cancelled without a sweep
 * (qt_read_sweep() waits until they outnumber the others), and the half
 * that fired first leads the queue: a read() of one record works through
 * all of them.  Half of 10^6 fire first, the other half after, all on the
 * victim's CPU; the first half is cancelled.
 */
static void prepare_ghosts_ahead(struct __test_metadata *_metadata,
				 FIXTURE_DATA(latency) *self)
{
	__s64 now = t_now(CLOCK_MONOTONIC);
	long half = self->n / 2;
	int fd = t_open(0);

	ASSERT_LE(0, fd);
	self->fds[0] = fd;
	ASSERT_EQ(0, arm_range(self, fd, 0, half, self->cpu,
			       now - 2 * NSEC_PER_MSEC, NSEC_PER_MSEC));
	ASSERT_EQ(0, arm_range(self, fd, half, self->n - half, self->cpu,
			       now - NSEC_PER_MSEC, NSEC_PER_MSEC));
	ASSERT_EQ(1, t_wait_pending(fd, self->n, 120 * 1000))
		TH_LOG("not all %ld fired within 120 s", self->n);
	cancel_ids(_metadata, fd, self->ids, half, QTIMER_CANCEL_QUEUED);
	ASSERT_EQ(self->n - half, t_fdinfo_get(fd, QT_FI_PENDING));
	TH_LOG("%ld cancelled records ahead of %ld unread ones", half,
	       self->n - half);
}

/* On the victim's CPU, a read() of one record: the first one not cancelled. */
static void run_read_past_ghosts(struct __test_metadata *_metadata,
				 FIXTURE_DATA(latency) *self)
{
	struct qtimer_record rec;

	ASSERT_EQ((ssize_t)sizeof(rec), read(self->fds[0], &rec, sizeof(rec)));
	EXPECT_LE(self->n / 2, (long)rec.cookie);
}

ATTACK_TEST(read_frees_leading_cancelled_records,
	.what = "read() behind cancelled records",
	.idle = control_cancel_queued,
	.idle_what = "CANCELs on small files",
	.prepare = prepare_ghosts_ahead,
	.run = run_read_past_ghosts,
	.timed = true,
	.ops = "ms in read()")

TEST_HARNESS_MAIN
