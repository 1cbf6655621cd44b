// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * read() through io_uring and readv().  The file does reads through
 * read_iter() and honours IOCB_NOWAIT, so io_uring's IORING_OP_READ on a
 * blocking qtimer file waits for EPOLLIN like on a socket, instead of
 * parking an io-wq worker thread in a blocking read(), and so does the
 * READ of an O_NONBLOCK file; and readv() fills every iovec it is given.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <liburing.h>
#include <sys/uio.h>

#include "kselftest_harness.h"
#include "helpers.h"

#define REC	sizeof(struct qtimer_record)

FIXTURE(uring)
{
	int fd;		/* blocking */
	struct io_uring ring;
	struct qtimer_record recs[4];
};

FIXTURE_SETUP(uring)
{
	int ret;

	self->fd = t_open(0);
	ASSERT_LE(0, self->fd);
	ret = io_uring_queue_init(8, &self->ring, 0);
	if (ret == -ENOSYS || ret == -EPERM)
		SKIP(return, "io_uring is not available: %s", strerror(-ret));
	ASSERT_EQ(0, ret);
}

FIXTURE_TEARDOWN(uring)
{
	io_uring_queue_exit(&self->ring);
	close(self->fd);
}

/* This process's io-wq worker threads ("iou-wrk-<tid>"). */
static int nr_io_workers(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int nr = 0;

	if (!d)
		return -1;
	while ((e = readdir(d))) {
		char path[300], comm[32];

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
		if (!t_read_str(path, comm, sizeof(comm)) && !strncmp(comm, "iou-wrk-", 8))
			nr++;
	}
	closedir(d);
	return nr;
}

static void submit_read(struct io_uring *ring, int fd, void *buf, unsigned int len)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

	io_uring_prep_read(sqe, fd, buf, len, 0);
	io_uring_sqe_set_data64(sqe, 0x5ead);
}

/* The CQE of the one request in flight, within @ms; its res, or -ETIME. */
static int wait_res(struct io_uring *ring, int ms)
{
	struct __kernel_timespec ts = {
		.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * NSEC_PER_MSEC,
	};
	struct io_uring_cqe *cqe;
	int ret = io_uring_wait_cqe_timeout(ring, &cqe, &ts);

	if (ret)
		return ret;
	ret = cqe->res;
	io_uring_cqe_seen(ring, cqe);
	return ret;
}

/*
 * The read waits for the record without a worker thread, and completes with
 * it once the timer fires, not before.
 */
TEST_F(uring, read_waits_for_epollin_not_in_a_worker)
{
	__s64 deadline;
	__u64 id;
	int res;

	submit_read(&self->ring, self->fd, self->recs, sizeof(self->recs));
	ASSERT_EQ(1, io_uring_submit(&self->ring));
	/* Nothing pending: no completion yet, and nobody blocked in read(). */
	EXPECT_EQ(-ETIME, wait_res(&self->ring, 200));
	EXPECT_EQ(0, nr_io_workers()) {
		TH_LOG("the read was handed to an io-wq worker to block in");
	}
	deadline = t_now(CLOCK_MONOTONIC) + 50 * NSEC_PER_MSEC;
	ASSERT_EQ(0, t_arm(self->fd, CLOCK_MONOTONIC, QTIMER_F_ABSTIME,
			    deadline, 0, 0xc0ffee, &id));
	res = wait_res(&self->ring, 10000);
	ASSERT_EQ((int)REC, res);
	EXPECT_GE(t_now(CLOCK_MONOTONIC), deadline);
	EXPECT_EQ(id, self->recs[0].id);
	EXPECT_EQ(0xc0ffee, self->recs[0].cookie);
	EXPECT_EQ(deadline, self->recs[0].expires_ns);
	EXPECT_EQ(1, self->recs[0].count);
	EXPECT_EQ(0, nr_io_workers());
}

/* A read of a pending record completes inline. */
TEST_F(uring, read_of_pending_record_completes)
{
	struct qtimer_record rec;
	__u64 id;

	ASSERT_EQ(0, t_arm(self->fd, CLOCK_MONOTONIC, 0, 0, 0, 7, &id));
	ASSERT_EQ(1, t_wait_pending(self->fd, 1, QT_ARRIVE_MS));
	submit_read(&self->ring, self->fd, &rec, sizeof(rec));
	ASSERT_EQ(1, io_uring_submit(&self->ring));
	ASSERT_EQ((int)REC, wait_res(&self->ring, 10000));
	EXPECT_EQ(id, rec.id);
	EXPECT_EQ(7, rec.cookie);
}

/*
 * io_uring does not take O_NONBLOCK on a file that supports IOCB_NOWAIT as
 * "fail": it waits for EPOLLIN as on a socket (and did so before read_iter(),
 * trusting ->read() to honour O_NONBLOCK).
 */
TEST_F(uring, nonblocking_file_waits_too)
{
	int nfd = t_open(O_NONBLOCK);
	__u64 id;

	ASSERT_LE(0, nfd);
	submit_read(&self->ring, nfd, self->recs, sizeof(self->recs));
	ASSERT_EQ(1, io_uring_submit(&self->ring));
	EXPECT_EQ(-ETIME, wait_res(&self->ring, 200));
	ASSERT_EQ(0, t_arm(nfd, CLOCK_MONOTONIC, 0, 10 * NSEC_PER_MSEC, 0, 9, &id));
	EXPECT_EQ((int)REC, wait_res(&self->ring, 10000));
	EXPECT_EQ(id, self->recs[0].id);
	EXPECT_EQ(0, nr_io_workers());
	close(nfd);
}

/* readv() goes on into the next iovec; a record may straddle two. */
TEST_F(uring, readv_fills_every_iovec)
{
	unsigned char buf[3 * REC];
	struct qtimer_record rec[3];
	struct iovec iov[2] = {
		{ .iov_base = buf, .iov_len = REC + REC / 2 },
		{ .iov_base = buf + REC + REC / 2, .iov_len = REC + REC / 2 },
	};
	__s64 now = t_now(CLOCK_MONOTONIC);
	__u64 id[3];
	int i;

	/* Three records, in deadline order. */
	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, t_arm(self->fd, CLOCK_MONOTONIC, QTIMER_F_ABSTIME,
				    now + i, 0, 10 + i, &id[i]));
	ASSERT_EQ(1, t_wait_pending(self->fd, 3, QT_ARRIVE_MS));
	ASSERT_EQ((ssize_t)sizeof(buf), readv(self->fd, iov, 2));
	memcpy(rec, buf, sizeof(rec));
	for (i = 0; i < 3; i++) {
		EXPECT_EQ(id[i], rec[i].id);
		EXPECT_EQ(10 + i, rec[i].cookie);
	}
}

TEST_HARNESS_MAIN
