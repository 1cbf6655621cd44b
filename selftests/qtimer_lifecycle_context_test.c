// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * A context lives until the last close of its file: across dup and fork,
 * its timers fire once and are read by whoever reads first; contexts are
 * independent of each other; and a close racing expiries is safe.
 */
#define _GNU_SOURCE

#include "kselftest_harness.h"
#include "helpers.h"

/* Child process helper: exit code 0 on success, else the failing step. */
static int child_collects(int fd, __u64 id, __u64 cookie, int want)
{
	struct qtimer_record recs[4];
	int n = t_collect(fd, recs, want ? want : 1, want ? QT_ARRIVE_MS : 500);

	if (n != want)
		return 10 + (n < 0 ? 9 : n);
	if (want && (recs[0].id != id || recs[0].cookie != cookie))
		return 2;
	t_sleep_ms(100);
	if (t_nothing_pending(fd))
		return 3;
	return 0;
}

/*
 * Opens a file, arms a one-shot of @cookie due in 100 ms on it and forks,
 * so that parent and child share the file: the fork's pid (0 in the
 * child), the file in *fd and the timer's id in *id.
 */
static pid_t fork_with_timer(struct __test_metadata *_metadata, int *fd,
			     __u64 cookie, __u64 *id)
{
	pid_t pid;

	*fd = t_open(O_NONBLOCK);
	ASSERT_LE(0, *fd);
	ASSERT_EQ(0, t_arm(*fd, CLOCK_MONOTONIC, 0, 100 * NSEC_PER_MSEC, 0,
			    cookie, id));
	pid = fork();
	ASSERT_LE(0, pid);
	return pid;
}

TEST(fork_parent_closes_child_reads)
{
	pid_t pid;
	__u64 id;
	int fd;

	pid = fork_with_timer(_metadata, &fd, 0xc1, &id);
	if (!pid)
		_exit(child_collects(fd, id, 0xc1, 1));
	close(fd);	/* the child's reference keeps the context alive */
	EXPECT_EQ(0, t_wait_child(pid));
}

TEST(fork_child_closes_parent_reads)
{
	struct qtimer_record rec;
	pid_t pid;
	__u64 id;
	int fd;

	pid = fork_with_timer(_metadata, &fd, 0xc2, &id);
	if (!pid) {
		close(fd);
		_exit(0);
	}
	EXPECT_EQ(0, t_wait_child(pid));
	ASSERT_EQ(1, t_collect(fd, &rec, 1, QT_ARRIVE_MS));
	EXPECT_EQ(id, rec.id);
	t_sleep_ms(100);
	EXPECT_EQ(0, t_nothing_pending(fd));
	close(fd);
}

/* Both processes read: the one record goes to exactly one of them. */
TEST(fork_both_read_record_delivered_once)
{
	struct qtimer_record recs[4];
	int fd = t_open(O_NONBLOCK);
	int i, mine, theirs;
	pid_t pid;

	ASSERT_LE(0, fd);
	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, t_arm(fd, CLOCK_MONOTONIC, 0,
				    (100 + 30 * i) * NSEC_PER_MSEC, 0, i, NULL));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(t_collect(fd, recs, 4, 1000));
	mine = t_collect(fd, recs, 4, 1000);
	theirs = t_wait_child(pid);
	EXPECT_EQ(3, mine + theirs);
	close(fd);
}

TEST(dup_keeps_context_alive)
{
	struct qtimer_record rec;
	int fd = t_open(O_NONBLOCK), fd2;
	__u64 id;

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, t_arm(fd, CLOCK_MONOTONIC, 0, 50 * NSEC_PER_MSEC, 0, 3,
			    &id));
	fd2 = dup(fd);
	ASSERT_LE(0, fd2);
	close(fd);
	ASSERT_EQ(1, t_collect(fd2, &rec, 1, QT_ARRIVE_MS));
	EXPECT_EQ(id, rec.id);
	/* Same context: ids are valid through either descriptor. */
	ASSERT_EQ(0, t_arm(fd2, CLOCK_MONOTONIC, 0, 20 * NSEC_PER_SEC, 0, 4,
			    &id));
	EXPECT_EQ(QTIMER_CANCEL_ARMED, t_cancel(fd2, id));
	close(fd2);
}

TEST(many_files_are_independent)
{
	enum { N = 200 };
	static int fds[N];
	static __u64 ids[N];
	struct qtimer_record rec;
	int i;

	for (i = 0; i < N; i++) {
		fds[i] = t_open(O_NONBLOCK);
		ASSERT_LE(0, fds[i]);
		ASSERT_EQ(0, t_arm(fds[i], CLOCK_MONOTONIC, 0,
				    (50 + i % 20) * NSEC_PER_MSEC, 0, 1000 + i,
				    &ids[i]));
	}
	/* Every other file closes with its timer armed. */
	for (i = 1; i < N; i += 2)
		close(fds[i]);
	for (i = 0; i < N; i += 2) {
		ASSERT_EQ(1, t_collect(fds[i], &rec, 1, QT_ARRIVE_MS));
		EXPECT_EQ(ids[i], rec.id);
		EXPECT_EQ(1000 + i, rec.cookie);
	}
	t_sleep_ms(100);
	for (i = 0; i < N; i += 2) {
		EXPECT_EQ(0, t_nothing_pending(fds[i]));
		close(fds[i]);
	}
}

/* Close while timers are expiring, again and again. */
TEST(close_races_with_expiry)
{
	enum { N = 512, ROUNDS = 20 };
	static struct qtimer_op ops[N];
	__u32 done;
	int r, i, fd;

	srand(getpid());
	for (r = 0; r < ROUNDS; r++) {
		fd = t_open(O_NONBLOCK);
		ASSERT_LE(0, fd);
		for (i = 0; i < N; i++) {
			ops[i] = t_op(CLOCK_MONOTONIC, QTIMER_F_CPU,
				       (rand() % 20) * NSEC_PER_MSEC,
				       i % 4 ? 0 : NSEC_PER_MSEC, i);
			ops[i].opcode = QTIMER_OP_ARM;
			ops[i].cpu = i % t_nr_cpus();
		}
		ASSERT_EQ(N, t_submit(fd, ops, N, QTIMER_SUBMIT_STOP_ON_ERROR,
				       &done));
		t_sleep_ms(rand() % 20);
		close(fd);
	}
}

TEST_HARNESS_MAIN
