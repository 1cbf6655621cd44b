// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * Runs the examples in the VM, so that they keep working: each is a real
 * program that checks itself and exits 0 only when all is well.  Their
 * output is passed on as TAP diagnostics ("# " lines).  The event-loop
 * examples (io_uring, libuv) also log every record they read, and the log
 * is judged here on its own (delivery_log.c): each timer delivered exactly
 * once, never early, and late only within a generous bound.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "delivery_log.h"
#include "helpers.h"

/*
 * Run argv[0] (bundled beside this suite, else found on PATH: t_program())
 * and return its wait status.
 */
static int run(char *const argv[])
{
	char line[512];
	int pipefd[2], status;
	FILE *out;
	pid_t pid;

	if (pipe(pipefd))
		return -errno;
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		dup2(pipefd[1], STDOUT_FILENO);
		dup2(pipefd[1], STDERR_FILENO);
		close(pipefd[0]);
		close(pipefd[1]);
		execvp(t_program(argv[0]), argv);
		fprintf(stderr, "cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(pipefd[1]);
	out = fdopen(pipefd[0], "r");
	while (out && fgets(line, sizeof(line), out))
		printf("#   %s", line);
	fflush(stdout);
	if (out)
		fclose(out);
	if (waitpid(pid, &status, 0) != pid)
		return -errno;
	return status;
}

FIXTURE(example) {
	int unused;
};

FIXTURE_SETUP(example)
{
}

FIXTURE_TEARDOWN(example)
{
}

#define EXPECT_RUNS_CLEAN(...) do {					\
	char *const argv[] = { __VA_ARGS__, NULL };			\
	struct timespec a, b;						\
	int status;							\
									\
	clock_gettime(CLOCK_MONOTONIC, &a);				\
	status = run(argv);						\
	clock_gettime(CLOCK_MONOTONIC, &b);				\
	printf("# %s ran for %ld ms\n", argv[0],			\
	       (long)((b.tv_sec - a.tv_sec) * 1000 +			\
		      (b.tv_nsec - a.tv_nsec) / 1000000));		\
	/* The harness ends a test with _exit(): flush, or it is lost. */ \
	fflush(stdout);							\
	ASSERT_TRUE(WIFEXITED(status)) TH_LOG("%s: status %#x", argv[0], status); \
	ASSERT_EQ(0, WEXITSTATUS(status)) TH_LOG("%s failed", argv[0]);	\
} while (0)

/*
 * The debug kernel (KASAN, lockdep, kmemleak) under TCG delivered 61440 of
 * the 100k idle timeouts in 44 s, 24 s late at worst, where the stock
 * kernels take about a second, and armed idle_server's 100k in 7 s of its
 * 11: there the examples show the same loops on fewer connections, so
 * that the delivery checks stay strict and the suite short.
 */
static bool debug_kernel(void)
{
	return !access("/sys/kernel/debug/kmemleak", F_OK) ||
	       !access("/sys/kernel/debug/failslab", F_OK);
}

/* Debug kernels under TCG are many times slower: generous timeouts. */
/* The minimal example of libtimerdev(7): a one-shot, a ticker, a cancel. */
TEST_F_TIMEOUT(example, hello, 60)
{
	EXPECT_RUNS_CLEAN("hello");
}

TEST_F_TIMEOUT(example, idle_server, 300)
{
	if (debug_kernel())
		EXPECT_RUNS_CLEAN("idle_server", "-n", "20000");
	else
		EXPECT_RUNS_CLEAN("idle_server");
}

TEST_F_TIMEOUT(example, idle_server_small_and_short, 120)
{
	EXPECT_RUNS_CLEAN("idle_server", "-n", "1000", "-t", "50", "-S", "0",
			  "-d", "300", "-s", "7");
}

TEST_F_TIMEOUT(example, ticker, 120)
{
	EXPECT_RUNS_CLEAN("ticker");
}

TEST_F_TIMEOUT(example, epoll_mix, 120)
{
	EXPECT_RUNS_CLEAN("epoll_mix");
}

/*
 * How late a record may arrive after its due time.  Generous: the VM may
 * be emulated (TCG), and a loop of 100k timeouts may find thousands due at
 * once; what matters is that lateness stays bounded, not how small it is.
 */
#define MAX_LATE_NS	5000000000LL

/*
 * The example's log, judged: every cookie 0..nr-1 once, in time.  To see
 * it fail where the example's own checks cannot, make the example skip or
 * repeat one line of its log (delivery_log_test does the same natively).
 */
#define EXPECT_DELIVERED_ONCE(path, nr) do {				\
	struct delivery_summary sum;					\
	char why[256];							\
	int ret = delivery_log_check(path, nr, MAX_LATE_NS, &sum, why,	\
				     sizeof(why));			\
									\
	printf("# %s: %lu records, %lu cookies once, %lu missing, "	\
	       "%lu repeated, %lu unknown, %lu early, %lu too late; "	\
	       "latest %.1f ms after due\n", path, sum.lines, sum.once,	\
	       sum.missing, sum.repeated, sum.unknown, sum.early,	\
	       sum.too_late, sum.max_late_ns / 1e6);			\
	fflush(stdout);							\
	unlink(path);							\
	ASSERT_EQ(0, ret) TH_LOG("%s: %s", path, ret < 0 && !why[0] ?	\
				 strerror(-ret) : why);			\
	ASSERT_EQ(nr, sum.once);					\
} while (0)

TEST_F_TIMEOUT(example, uring_mix, 120)
{
	EXPECT_RUNS_CLEAN("uring_mix", "-n", "20000", "-o", "/tmp/uring_mix.log");
	EXPECT_DELIVERED_ONCE("/tmp/uring_mix.log", 20000);
}

/* The same, with the ring kept: multishot poll and td_ring_peek, no READ. */
TEST_F_TIMEOUT(example, uring_mix_keep_ring, 120)
{
	EXPECT_RUNS_CLEAN("uring_mix", "-r", "-n", "20000", "-o",
			  "/tmp/uring_mix_ring.log");
	EXPECT_DELIVERED_ONCE("/tmp/uring_mix_ring.log", 20000);
}

TEST_F_TIMEOUT(example, uv_idle, 300)
{
	unsigned long nr = debug_kernel() ? 2000 : 100000;
	char n[32];

	snprintf(n, sizeof(n), "%lu", nr);
	EXPECT_RUNS_CLEAN("uv_idle", "-n", n, "-o", "/tmp/uv_idle.log");
	EXPECT_DELIVERED_ONCE("/tmp/uv_idle.log", nr);
}

TEST_HARNESS_MAIN
