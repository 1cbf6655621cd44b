// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2025 The qtimer authors.
 *
 * Proves the test rig end to end: the module the VM loaded registered
 * /dev/qtimer, and a test program can open and close it.  If this suite
 * fails, no other result from the same run means anything.
 */

#include <fcntl.h>
#include <time.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <linux/qtimer.h>

#include "kselftest_harness.h"

#define QT_DEV "/dev/qtimer"

TEST(device_node_exists)
{
	struct stat st;

	ASSERT_EQ(0, stat(QT_DEV, &st)) TH_LOG("stat %s: %m", QT_DEV);
}

TEST(device_node_is_char_device)
{
	struct stat st;

	ASSERT_EQ(0, stat(QT_DEV, &st));
	EXPECT_TRUE(S_ISCHR(st.st_mode));
	/* A misc device: major 10, dynamic minor. */
	EXPECT_EQ(10, major(st.st_rdev));
}

TEST(device_node_is_world_accessible)
{
	struct stat st;

	ASSERT_EQ(0, stat(QT_DEV, &st));
	EXPECT_EQ(0666, st.st_mode & 0777);
}

TEST(open_close)
{
	int fd = open(QT_DEV, O_RDWR | O_CLOEXEC);

	ASSERT_LE(0, fd) TH_LOG("open %s: %m", QT_DEV);
	EXPECT_EQ(FD_CLOEXEC, fcntl(fd, F_GETFD));
	EXPECT_EQ(0, close(fd));
}

TEST(two_opens_are_independent)
{
	struct stat st;
	int a, b;

	a = open(QT_DEV, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, a);
	b = open(QT_DEV, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, b);
	EXPECT_NE(a, b);

	/* Closing one leaves the other open and usable. */
	EXPECT_EQ(0, close(a));
	EXPECT_EQ(0, fstat(b, &st));
	EXPECT_TRUE(S_ISCHR(st.st_mode));
	EXPECT_EQ(0, close(b));
}

/*
 * Leaves behind, on purpose, a process in a session of its own that holds
 * /dev/qtimer open with a timer armed, as a test that outlived its harness
 * would.  The VM's init must kill it once the kselftest runner is done:
 * otherwise the rmmod at the end of the run fails, and with it the run.
 * It lets go of its output, the runner's pipe: holding that would keep
 * the runner waiting for this suite's end, in any CI (a different
 * failure, which the init's bound on the runner catches).
 */
TEST(stray_process_is_reaped_by_the_rig)
{
	int ready[2];
	char c;
	pid_t pid;

	ASSERT_EQ(0, pipe(ready));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		int fd;

		setsid();
		fd = open("/dev/null", O_WRONLY);
		if (fd >= 0) {
			dup2(fd, STDOUT_FILENO);
			dup2(fd, STDERR_FILENO);
			close(fd);
		}
		fd = open(QT_DEV, O_RDWR);
		if (fd >= 0) {
			struct qtimer_op op = {
				.clockid = CLOCK_MONOTONIC,
				.expires_ns = 3600LL * 1000000000LL,
			};

			ioctl(fd, QTIMER_IOC_ARM, &op);
		}
		c = fd >= 0 ? 'y' : 'n';
		if (write(ready[1], &c, 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(ready[1]);
	ASSERT_EQ(1, read(ready[0], &c, 1));
	EXPECT_EQ('y', c);
}

TEST_HARNESS_MAIN
