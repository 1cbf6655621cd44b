// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * The per-file and per-user caps (module parameters, saved and restored by
 * the `caps` fixture of qtimer_lifecycle.h): -ENOSPC and -EDQUOT exactly
 * at the cap, values out of range refused, places given back by failed
 * SUBMIT arms, by reads and by close (a file closed with armed, queued and
 * periodic timers returns every one), per user, and shared by a user
 * namespace with its owner.
 */
#define _GNU_SOURCE
#include <sched.h>

#include "qtimer_lifecycle.h"

/* Arms n far-away one-shots in @fd; returns how many succeeded, or -errno
 * of the first failure if @first_err is set. */
static int arm_n(int fd, int n, int *first_err)
{
	int i, ret;

	for (i = 0; i < n; i++) {
		ret = t_arm(fd, CLOCK_MONOTONIC, 0, 20 * NSEC_PER_SEC, 0, i,
			     NULL);
		if (ret) {
			if (first_err)
				*first_err = ret;
			break;
		}
	}
	return i;
}

TEST_F(caps, per_fd_cap)
{
	struct qtimer_version v;
	struct qtimer_op ops[2];
	struct qtimer_record rec;
	__u64 id, oneshot;
	int fd, fd2, err = 0;

	REQUIRE_CAPS();
	ASSERT_EQ(0, t_sysfs_write(QT_PARAMS "max_timers_per_fd", 100));
	fd = t_open(O_NONBLOCK);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, t_version(fd, &v));
	EXPECT_EQ(100, v.max_timers_per_fd);

	ASSERT_EQ(100, arm_n(fd, 100, NULL));
	EXPECT_EQ(0, arm_n(fd, 1, &err));
	EXPECT_EQ(-ENOSPC, err);

	/* The cap holds in a batch too, op by op. */
	ops[0] = t_op(CLOCK_MONOTONIC, 0, 20 * NSEC_PER_SEC, 0, 1);
	ops[0].opcode = QTIMER_OP_ARM;
	ops[1] = ops[0];
	EXPECT_EQ(2, t_submit(fd, ops, 2, 0, NULL));
	EXPECT_EQ(-ENOSPC, ops[0].result);
	EXPECT_EQ(-ENOSPC, ops[1].result);

	/* Another file has its own cap. */
	fd2 = t_open(O_NONBLOCK);
	ASSERT_LE(0, fd2);
	EXPECT_EQ(100, arm_n(fd2, 101, &err));
	EXPECT_EQ(-ENOSPC, err);
	close(fd2);

	/* A cancelled timer no longer counts (in a fresh file of 100). */
	close(fd);
	fd = t_open(O_NONBLOCK);
	ASSERT_LE(0, fd);
	ASSERT_EQ(99, arm_n(fd, 99, NULL));
	ASSERT_EQ(0, t_arm(fd, CLOCK_MONOTONIC, 0, 20 * NSEC_PER_SEC, 0, 1,
			    &id));
	EXPECT_EQ(-ENOSPC, t_arm(fd, CLOCK_MONOTONIC, 0, 0, 0, 1, NULL));
	EXPECT_EQ(QTIMER_CANCEL_ARMED, t_cancel(fd, id));
	/* Nor does a one-shot whose record was read. */
	ASSERT_EQ(0, t_arm(fd, CLOCK_MONOTONIC, 0, 0, 0, 0x100, &oneshot));
	ASSERT_EQ(1, t_collect(fd, &rec, 1, QT_ARRIVE_MS));
	EXPECT_EQ(oneshot, rec.id);
	EXPECT_EQ(0, t_arm(fd, CLOCK_MONOTONIC, 0, 20 * NSEC_PER_SEC, 0, 1,
			    NULL));
	EXPECT_EQ(-ENOSPC, t_arm(fd, CLOCK_MONOTONIC, 0, 0, 0, 1, NULL));
	close(fd);
}

/*
 * The parameters take the range the netlink config enforces: 0 (which
 * would refuse every ARM) and values above the limit are -EINVAL, through
 * sysfs as through netlink, and leave the cap as it was.
 */
TEST_F(caps, out_of_range_caps_rejected)
{
	static const struct {
		const char *name;
		const char *val;
	} bad[] = {
		{ "max_timers_per_fd", "0" },
		{ "max_timers_per_fd", "16777217" },		/* LIMIT + 1 */
		{ "max_timers_per_fd", "-1" },
		{ "max_timers_per_fd", "lots" },
		{ "max_timers_per_user", "0" },
		{ "max_timers_per_user", "4294967296" },	/* LIMIT + 1 */
		{ "max_timers_per_user", "9223372036854775808" }, /* LONG_MAX + 1 */
	};
	unsigned long long before, after;
	char path[128];
	unsigned int i;
	int fd;

	REQUIRE_CAPS();
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		snprintf(path, sizeof(path), QT_PARAMS "%s", bad[i].name);
		ASSERT_EQ(0, t_sysfs_read(path, &before));
		EXPECT_EQ(-EINVAL, t_write_str(path, bad[i].val))
			TH_LOG("%s = %s", bad[i].name, bad[i].val);
		ASSERT_EQ(0, t_sysfs_read(path, &after));
		EXPECT_EQ(before, after) TH_LOG("%s = %s", bad[i].name, bad[i].val);
	}
	/* The limits themselves are fine, and an ARM still works. */
	EXPECT_EQ(0, t_sysfs_write(QT_PARAMS "max_timers_per_fd", 1ULL << 24));
	EXPECT_EQ(0, t_sysfs_write(QT_PARAMS "max_timers_per_user",
				    0xffffffffULL));
	fd = t_open(O_NONBLOCK);
	ASSERT_LE(0, fd);
	EXPECT_EQ(1, arm_n(fd, 1, NULL));
	close(fd);
}

TEST_F(caps, per_user_cap)
{
	struct qtimer_version v;
	int a, b, err = 0;
	__u64 id;

	REQUIRE_CAPS();
	ASSERT_EQ(0, t_sysfs_write(QT_PARAMS "max_timers_per_user", 150));
	a = t_open(O_NONBLOCK);
	b = t_open(O_NONBLOCK);
	ASSERT_LE(0, a);
	ASSERT_LE(0, b);
	ASSERT_EQ(0, t_version(a, &v));
	EXPECT_EQ(150, v.max_timers_per_user);

	ASSERT_EQ(100, arm_n(a, 100, NULL));
	ASSERT_EQ(49, arm_n(b, 49, NULL));
	ASSERT_EQ(0, t_arm(b, CLOCK_MONOTONIC, 0, 20 * NSEC_PER_SEC, 0, 1,
			    &id));
	EXPECT_EQ(0, arm_n(b, 1, &err));
	EXPECT_EQ(-EDQUOT, err);
	err = 0;
	EXPECT_EQ(0, arm_n(a, 1, &err));
	EXPECT_EQ(-EDQUOT, err);

	/* A cancel frees one; closing a frees its hundred. */
	EXPECT_EQ(QTIMER_CANCEL_ARMED, t_cancel(b, id));
	EXPECT_EQ(1, arm_n(b, 1, NULL));
	EXPECT_EQ(-EDQUOT, t_arm(b, CLOCK_MONOTONIC, 0, 0, 0, 1, NULL));
	close(a);
	EXPECT_EQ(100, arm_n(b, 101, &err));
	EXPECT_EQ(-EDQUOT, err);
	close(b);
}

/*
 * SUBMIT counts a whole chunk of ARMs under the per-user cap at once; the
 * places of those that fail for another reason (here the per-file cap)
 * must come back, in a chunk within the cap and in one that crosses it.
 */
TEST_F(caps, failed_submit_arms_give_back_their_places)
{
	enum { N = 16 };
	struct qtimer_op ops[N];
	int a, b, c, i, err = 0;
	__u32 done;

	REQUIRE_CAPS();
	ASSERT_EQ(0, t_sysfs_write(QT_PARAMS "max_timers_per_fd", 10));
	ASSERT_EQ(0, t_sysfs_write(QT_PARAMS "max_timers_per_user", 25));
	a = t_open(O_NONBLOCK);
	b = t_open(O_NONBLOCK);
	c = t_open(O_NONBLOCK);
	ASSERT_LE(0, a);
	ASSERT_LE(0, b);
	ASSERT_LE(0, c);

	for (i = 0; i < N; i++) {
		ops[i] = t_op(CLOCK_MONOTONIC, 0, 20 * NSEC_PER_SEC, 0, i);
		ops[i].opcode = QTIMER_OP_ARM;
	}
	/* 0 + 16 places fit under 25; 10 + 16 do not. */
	ASSERT_EQ(N, t_submit(a, ops, N, 0, &done));
	for (i = 0; i < N; i++)
		EXPECT_EQ(i < 10 ? 0 : -ENOSPC, ops[i].result);
	ASSERT_EQ(N, t_submit(b, ops, N, 0, &done));
	for (i = 0; i < N; i++)
		EXPECT_EQ(i < 10 ? 0 : -ENOSPC, ops[i].result);

	/* 20 counted: 5 more fit, and only 5. */
	EXPECT_EQ(5, arm_n(c, 6, &err));
	EXPECT_EQ(-EDQUOT, err);
	close(a);
	close(b);
	close(c);
}

/*
 * One read() that takes hundreds of one-shots gives back every place they
 * held under the per-file cap before it returns, not only the places of
 * its last chunk: read() ends what it consumed in batches, and the last
 * batch must not wait for the next call.
 */
TEST_F(caps, one_read_of_many_records_frees_every_place)
{
	enum { N = 600 };
	static struct qtimer_record recs[N];
	__s64 now = 0, later = 20 * NSEC_PER_SEC;
	ssize_t len;
	int fd, n;

	REQUIRE_CAPS();
	ASSERT_EQ(0, t_sysfs_write(QT_PARAMS "max_timers_per_fd", N));
	fd = t_open(O_NONBLOCK);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, t_arm_many(fd, N, t_fill_in_ns, &now, NULL, 0));
	ASSERT_EQ(1, t_wait_pending(fd, N, QT_ARRIVE_MS));
	len = read(fd, recs, sizeof(recs));
	ASSERT_LT(0, len);
	n = len / sizeof(recs[0]);
	TH_LOG("one read() took %d records", n);
	/* More than one batch of ends (QT_READ_END_EVERY, 256) to give back. */
	ASSERT_LT(2 * 256, n);
	/* N - n still count; n fit again, and not one more. */
	EXPECT_EQ(0, t_arm_many(fd, n, t_fill_in_ns, &later, NULL, 0));
	EXPECT_EQ(-ENOSPC, t_arm(fd, CLOCK_MONOTONIC, 0, 0, 0, 1, NULL));
	close(fd);
}

/* The per-user cap is per user: another uid has its own allowance. */
TEST_F(caps, per_user_cap_is_per_user)
{
	int a, err = 0;
	pid_t pid;

	REQUIRE_CAPS();
	ASSERT_EQ(0, t_sysfs_write(QT_PARAMS "max_timers_per_user", 50));
	a = t_open(O_NONBLOCK);
	ASSERT_LE(0, a);
	EXPECT_EQ(50, arm_n(a, 51, &err));
	EXPECT_EQ(-EDQUOT, err);

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		int fd, n;

		if (setgid(65534) || setuid(65534))
			_exit(100);
		fd = t_open(O_NONBLOCK);
		if (fd < 0) {
			fprintf(stderr, "# open as uid 65534: %s\n",
				strerror(-fd));
			_exit(101);
		}
		err = 0;
		n = arm_n(fd, 51, &err);
		_exit(n == 50 && err == -EDQUOT ? 0 : 102);
	}
	EXPECT_EQ(0, t_wait_child(pid));
	close(a);
}

/* One byte through a pipe, for the user-namespace test's handshakes. */
static int pipe_put(int fd, char c)
{
	return write(fd, &c, 1) == 1 ? 0 : -1;
}

static int pipe_get(int fd)
{
	char c;

	return read(fd, &c, 1) == 1 ? c : -1;
}

/*
 * The uids of a user namespace share its owner's allowance, as ucounts
 * limits do: uid 1000 creates a namespace mapping two uids (kuids 100000
 * and 100001); with the cap at 60, the first arms 40 and the second only
 * 20, and uid 1000 itself none while they hold them.  (Keyed on the kuid
 * alone, each mapped uid had a cap of its own: 40 and 40.)
 */
TEST_F(caps, user_namespace_shares_its_owners_cap)
{
	int p2c[2], c2p[2], res[3], i, err;
	char path[64];
	pid_t pid, owner;

	REQUIRE_CAPS();
	ASSERT_EQ(0, t_sysfs_write(QT_PARAMS "max_timers_per_user", 60));
	ASSERT_EQ(0, pipe(p2c));
	ASSERT_EQ(0, pipe(c2p));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		int fd1, fd2, n1, n2;

		if (setgid(1000) || setuid(1000))
			_exit(100);
		if (unshare(CLONE_NEWUSER)) {
			pipe_put(c2p[1], 'S');
			_exit(0);
		}
		pipe_put(c2p[1], 'U');
		if (pipe_get(p2c[0]) != 'M' || setresgid(0, 0, 0) ||
		    setresuid(0, 0, 0))
			_exit(101);
		fd1 = t_open(O_NONBLOCK);
		n1 = arm_n(fd1, 40, NULL);
		if (setresuid(1, 1, 1))
			_exit(102);
		fd2 = t_open(O_NONBLOCK);
		err = 0;
		n2 = arm_n(fd2, 40, &err);
		pipe_put(c2p[1], n1);
		pipe_put(c2p[1], n2);
		pipe_put(c2p[1], -err);
		/* Hold them until the owner has tried. */
		pipe_get(p2c[0]);
		_exit(fd1 >= 0 && fd2 >= 0 ? 0 : 103);
	}
	i = pipe_get(c2p[0]);
	if (i == 'S') {
		t_wait_child(pid);
		SKIP(return, "no user namespaces (CONFIG_USER_NS or sysctl)");
	}
	ASSERT_EQ('U', i);
	snprintf(path, sizeof(path), "/proc/%d/uid_map", pid);
	ASSERT_EQ(0, t_write_str(path, "0 100000 2\n"));
	snprintf(path, sizeof(path), "/proc/%d/gid_map", pid);
	ASSERT_EQ(0, t_write_str(path, "0 100000 2\n"));
	ASSERT_EQ(0, pipe_put(p2c[1], 'M'));
	for (i = 0; i < 3; i++)
		res[i] = pipe_get(c2p[0]);
	EXPECT_EQ(40, res[0]);
	EXPECT_EQ(20, res[1]);
	EXPECT_EQ(EDQUOT, res[2]);

	/* The owner, outside: its allowance is what the namespace used. */
	owner = fork();
	ASSERT_LE(0, owner);
	if (!owner) {
		int fd;

		if (setgid(1000) || setuid(1000))
			_exit(100);
		fd = t_open(O_NONBLOCK);
		err = 0;
		_exit(fd >= 0 && arm_n(fd, 1, &err) == 0 && err == -EDQUOT ?
		      0 : 104);
	}
	EXPECT_EQ(0, t_wait_child(owner));
	pipe_put(p2c[1], 'D');
	EXPECT_EQ(0, t_wait_child(pid));
	close(p2c[0]);
	close(p2c[1]);
	close(c2p[0]);
	close(c2p[1]);
}

/*
 * Closing a file (or exiting) with armed, queued-unread and periodic
 * timers gives every one back: with the per-user cap at exactly one
 * round's worth, each round can arm the full amount again.
 */
TEST_F(caps, close_with_live_timers_leaks_nothing)
{
	enum { EACH = 100, ROUNDS = 4 };
	int r, fd, err;
	pid_t pid;

	REQUIRE_CAPS();
	ASSERT_EQ(0, t_sysfs_write(QT_PARAMS "max_timers_per_user",
				    3 * EACH));
	for (r = 0; r < ROUNDS; r++) {
		int i;

		fd = t_open(O_NONBLOCK);
		ASSERT_LE(0, fd);
		for (i = 0; i < EACH; i++) {
			/* armed, fires-and-stays-queued, periodic */
			ASSERT_EQ(0, t_arm(fd, CLOCK_MONOTONIC, 0,
					    20 * NSEC_PER_SEC, 0, i, NULL));
			ASSERT_EQ(0, t_arm(fd, CLOCK_BOOTTIME, 0, 0, 0, i,
					    NULL));
			ASSERT_EQ(0, t_arm(fd, CLOCK_REALTIME, 0,
					    NSEC_PER_MSEC, NSEC_PER_MSEC, i,
					    NULL));
		}
		err = 0;
		EXPECT_EQ(0, arm_n(fd, 1, &err));
		EXPECT_EQ(-EDQUOT, err);
		ASSERT_EQ(1, t_wait_readable(fd, QT_ARRIVE_MS));
		t_sleep_ms(50);
		if (r % 2) {
			close(fd);
			continue;
		}
		/* Even rounds: the last reference goes with a process exit. */
		pid = fork();
		ASSERT_LE(0, pid);
		if (!pid)
			_exit(0);	/* holds fd until exit */
		close(fd);
		EXPECT_EQ(0, t_wait_child(pid));
	}
}

TEST_HARNESS_MAIN
