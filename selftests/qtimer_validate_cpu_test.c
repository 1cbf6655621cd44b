// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * Input validation of QTIMER_F_CPU (qtimer_validate.h): a CPU out of range
 * or without the flag, one outside the caller's affinity, and one isolated
 * from timers (nohz_full=, which scripts/check.sh boots for this suite).
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdint.h>
#include <sys/wait.h>

#include "qtimer_validate.h"

TEST_F(validate, arm_cpu_out_of_range)
{
	__u32 cpus[] = { t_nr_cpus(), 4096, 8192, INT32_MAX, UINT32_MAX };
	struct qtimer_op op;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(cpus); i++) {
		op = good_arm();
		op.flags = QTIMER_F_CPU;
		op.cpu = cpus[i];
		EXPECT_EQ(-EINVAL, t_arm_op(self->fd, &op)) {
			TH_LOG("cpu %u", cpus[i]);
		}
	}
	EXPECT_NOTHING_ARMED(self->fd);
}

/*
 * cpu is only read with QTIMER_F_CPU; a non-zero cpu without the flag is a
 * field the caller set that the kernel would ignore, so it is rejected like
 * any other unused non-zero field (the reading a reviewer expects; the
 * header does not spell it out).
 */
TEST_F(validate, arm_cpu_without_flag)
{
	struct qtimer_op op = good_arm();

	op.cpu = 1;
	EXPECT_EQ(-EINVAL, t_arm_op(self->fd, &op));
	EXPECT_NOTHING_ARMED(self->fd);
}

/*
 * The child of arm_cpu_outside_affinity, as nobody (no CAP_SYS_NICE),
 * pinned to CPU 0: returns the number of the first check that failed, or 0.
 */
static int arm_cpu_as_user(int fd)
{
	cpu_set_t two;
	__u64 id;

	if (setgid(65534) || setuid(65534) || t_pin_self(0))
		return 1;
	/* CPU 1 is outside its affinity: refused, and nothing armed. */
	if (t_arm_cpu(fd, CLOCK_MONOTONIC, 0, 0, 0, 2, 1, NULL) != -EINVAL)
		return 2;
	/* Its own CPU is fine. */
	if (t_arm_cpu(fd, CLOCK_MONOTONIC, 0, 60 * NSEC_PER_SEC, 0, 3, 0,
		       &id) || t_cancel(fd, id) != QTIMER_CANCEL_ARMED)
		return 3;
	/* So is CPU 1 once the thread may run there. */
	CPU_ZERO(&two);
	CPU_SET(0, &two);
	CPU_SET(1, &two);
	if (sched_setaffinity(0, sizeof(two), &two) ||
	    t_arm_cpu(fd, CLOCK_MONOTONIC, 0, 60 * NSEC_PER_SEC, 0, 4, 1,
		       &id) || t_cancel(fd, id) != QTIMER_CANCEL_ARMED)
		return 4;
	return 0;
}

/*
 * QTIMER_F_CPU puts work on another CPU: without CAP_SYS_NICE only on a CPU
 * the caller may run on itself (its affinity, which the scheduler keeps
 * inside its cpuset), the way it could not escape its cpuset by moving.
 */
TEST_F(validate, arm_cpu_outside_affinity)
{
	cpu_set_t saved;
	int status;
	pid_t pid;
	__u64 id;

	if (t_nr_cpus() < 2)
		SKIP(return, "needs two CPUs");
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(arm_cpu_as_user(self->fd));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status)) {
		TH_LOG("check %d of the unprivileged child failed",
		       WEXITSTATUS(status));
	}
	EXPECT_NOTHING_ARMED(self->fd);

	/* With CAP_SYS_NICE (root here), any online CPU. */
	ASSERT_EQ(0, sched_getaffinity(0, sizeof(saved), &saved));
	ASSERT_EQ(0, t_pin_self(0));
	EXPECT_EQ(0, t_arm_cpu(self->fd, CLOCK_MONOTONIC, 0,
				60 * NSEC_PER_SEC, 0, 5, 1, &id));
	EXPECT_EQ(QTIMER_CANCEL_ARMED, t_cancel(self->fd, id));
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(saved), &saved));
}

/* The first CPU of a sysfs CPU list ("3", "2-3", "1,3"), or -1. */
static int first_listed_cpu(const char *path)
{
	char buf[256];
	int cpu;

	if (t_read_str(path, buf, sizeof(buf)) || sscanf(buf, "%d", &cpu) != 1)
		return -1;
	return cpu;
}

/*
 * A CPU the admin isolated from timers (nohz_full=) takes none through
 * QTIMER_F_CPU, not even from root.  scripts/check.sh boots one kernel with
 * nohz_full= for this test; booted without it, the test skips.
 */
TEST_F(validate, arm_cpu_isolated_from_timers)
{
	int cpu = first_listed_cpu("/sys/devices/system/cpu/nohz_full");
	cpu_set_t saved, all;
	struct qtimer_op op;
	int i;

	if (cpu < 0) {
		ASSERT_EQ(-1, t_tunable("nohz_full", -1)) {
			TH_LOG("booted with nohz_full=, yet sysfs lists no CPU");
		}
		SKIP(return, "no CPU isolated from timers (boot with nohz_full=)");
	}
	/* Its affinity allows every CPU: only the isolation can refuse. */
	ASSERT_EQ(0, sched_getaffinity(0, sizeof(saved), &saved));
	CPU_ZERO(&all);
	for (i = 0; i < t_nr_cpus(); i++)
		CPU_SET(i, &all);
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(all), &all));
	op = good_arm();
	op.flags = QTIMER_F_CPU;
	op.cpu = cpu;
	EXPECT_EQ(-EINVAL, t_arm_op(self->fd, &op)) {
		TH_LOG("cpu %d is isolated from timers", cpu);
	}
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(saved), &saved));
	EXPECT_NOTHING_ARMED(self->fd);
}

TEST_HARNESS_MAIN
