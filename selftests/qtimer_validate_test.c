// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * Input validation, one check per test: each test starts from a valid
 * request and breaks exactly one thing, so the check under test is the one
 * that fires.  A rejected call must change nothing (a rejected MODIFY or
 * CANCEL leaves its timer armed as before; a rejected or faulting read
 * loses no record), and the file must keep working afterwards, which the
 * fixture's teardown checks after every test.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdint.h>
#include <sys/wait.h>
#include <termios.h>

#include "kselftest_harness.h"
#include "helpers.h"

FIXTURE(validate)
{
	int fd;
	__u64 victim;	/* a live timer 20 s away, for CANCEL and MODIFY */
};

FIXTURE_SETUP(validate)
{
	self->fd = t_open(O_NONBLOCK);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, t_arm(self->fd, CLOCK_MONOTONIC, 0, 20 * NSEC_PER_SEC,
			    0, 0xdead, &self->victim));
}

FIXTURE_TEARDOWN(validate)
{
	struct qtimer_record rec;
	__u64 id = 0;

	/* Rejected calls changed nothing: the victim is armed as before... */
	EXPECT_EQ(QTIMER_CANCEL_ARMED, t_cancel(self->fd, self->victim));
	/* ... and the file still works. */
	EXPECT_EQ(0, t_arm(self->fd, CLOCK_MONOTONIC, 0, 0, 0, 0xf00d, &id));
	EXPECT_EQ(1, t_collect(self->fd, &rec, 1, QT_ARRIVE_MS));
	EXPECT_EQ(id, rec.id);
	EXPECT_EQ(0xf00d, rec.cookie);
	close(self->fd);
}

/* A valid ARM that would fire at once if it were (wrongly) accepted. */
static struct qtimer_op good_arm(void)
{
	return t_op(CLOCK_MONOTONIC, 0, 0, 0, 1);
}

/* Nothing was armed by the rejected ARMs of expiry 0 above. */
#define EXPECT_NOTHING_ARMED(fd) do {			\
	t_sleep_ms(100);				\
	EXPECT_EQ(0, t_nothing_pending(fd));		\
} while (0)

TEST_F(validate, arm_valid_baseline)
{
	struct qtimer_op op = good_arm();
	struct qtimer_record rec;

	/* The baseline the other tests break: both opcode spellings work. */
	ASSERT_EQ(0, t_arm_op(self->fd, &op));
	op = good_arm();
	op.opcode = QTIMER_OP_ARM;
	ASSERT_EQ(0, t_arm_op(self->fd, &op));
	EXPECT_EQ(2, t_collect(self->fd, &rec, 1, QT_ARRIVE_MS) +
		     t_collect(self->fd, &rec, 1, QT_ARRIVE_MS));
}

TEST_F(validate, arm_unknown_flags)
{
	struct qtimer_op op;
	int bit;

	for (bit = 3; bit < 32; bit++) {
		op = good_arm();
		op.flags = 1U << bit;
		ASSERT_EQ(QTIMER_F_ALL & (1U << bit), 0);
		EXPECT_EQ(-EINVAL, t_arm_op(self->fd, &op)) {
			TH_LOG("flag bit %d", bit);
		}
	}
	EXPECT_NOTHING_ARMED(self->fd);
}

TEST_F(validate, arm_wrong_opcode)
{
	__u16 opcodes[] = { QTIMER_OP_CANCEL, QTIMER_OP_MODIFY, 4, 99, 0xffff };
	struct qtimer_op op;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(opcodes); i++) {
		op = good_arm();
		op.opcode = opcodes[i];
		EXPECT_EQ(-EINVAL, t_arm_op(self->fd, &op));
	}
	EXPECT_NOTHING_ARMED(self->fd);
}

TEST_F(validate, arm_nonzero_reserved)
{
	struct qtimer_op op = good_arm();

	op.reserved = 1;
	EXPECT_EQ(-EINVAL, t_arm_op(self->fd, &op));
	op.reserved = 1ULL << 63;
	EXPECT_EQ(-EINVAL, t_arm_op(self->fd, &op));
	EXPECT_NOTHING_ARMED(self->fd);
}

TEST_F(validate, arm_bad_clock)
{
	/* Everything but REALTIME (0), MONOTONIC (1) and BOOTTIME (7). */
	__u16 clocks[] = {
		CLOCK_PROCESS_CPUTIME_ID, CLOCK_THREAD_CPUTIME_ID,
		CLOCK_MONOTONIC_RAW, CLOCK_REALTIME_COARSE,
		CLOCK_MONOTONIC_COARSE, 8 /* REALTIME_ALARM */,
		9 /* BOOTTIME_ALARM */, 11 /* TAI */, 12, 16, 99, 0xffff,
	};
	struct qtimer_op op;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(clocks); i++) {
		op = good_arm();
		op.clockid = clocks[i];
		EXPECT_EQ(-EINVAL, t_arm_op(self->fd, &op)) {
			TH_LOG("clock %u", clocks[i]);
		}
	}
	EXPECT_NOTHING_ARMED(self->fd);
}

TEST_F(validate, arm_negative_relative_expiry)
{
	struct qtimer_op op = good_arm();

	op.expires_ns = -1;
	EXPECT_EQ(-EINVAL, t_arm_op(self->fd, &op));
	op.expires_ns = INT64_MIN;
	EXPECT_EQ(-EINVAL, t_arm_op(self->fd, &op));
	EXPECT_NOTHING_ARMED(self->fd);
}

TEST_F(validate, arm_relative_expiry_overflows)
{
	struct qtimer_op op;

	op = good_arm();
	op.expires_ns = INT64_MAX;
	EXPECT_EQ(-EOVERFLOW, t_arm_op(self->fd, &op));
	/* Only just past the end once "now" is added. */
	op = good_arm();
	op.expires_ns = INT64_MAX - t_now(CLOCK_MONOTONIC) / 2;
	EXPECT_EQ(-EOVERFLOW, t_arm_op(self->fd, &op));
	/* Relative CLOCK_REALTIME is an interval on the monotonic clock. */
	op = good_arm();
	op.clockid = CLOCK_REALTIME;
	op.expires_ns = INT64_MAX - t_now(CLOCK_MONOTONIC) / 2;
	EXPECT_EQ(-EOVERFLOW, t_arm_op(self->fd, &op));
	EXPECT_NOTHING_ARMED(self->fd);
}

TEST_F(validate, arm_period_overflows)
{
	struct qtimer_op op;

	op = good_arm();
	op.period_ns = UINT64_MAX;
	EXPECT_EQ(-EOVERFLOW, t_arm_op(self->fd, &op));
	op = good_arm();
	op.period_ns = (__u64)INT64_MAX + 1;
	EXPECT_EQ(-EOVERFLOW, t_arm_op(self->fd, &op));
	EXPECT_NOTHING_ARMED(self->fd);
}

TEST_F(validate, arm_slack_above_max)
{
	struct qtimer_op op = good_arm();
	__u64 id;

	op.slack_ns = QTIMER_SLACK_MAX_NS + 1;
	EXPECT_EQ(-EINVAL, t_arm_op(self->fd, &op));
	op.slack_ns = UINT64_MAX;
	EXPECT_EQ(-EINVAL, t_arm_op(self->fd, &op));
	EXPECT_NOTHING_ARMED(self->fd);
	/* The limit itself is allowed. */
	op = good_arm();
	op.expires_ns = 20 * NSEC_PER_SEC;
	op.slack_ns = QTIMER_SLACK_MAX_NS;
	ASSERT_EQ(0, t_arm_op(self->fd, &op));
	id = op.id;
	EXPECT_EQ(QTIMER_CANCEL_ARMED, t_cancel(self->fd, id));
}

TEST_F(validate, cancel_on_set_needs_realtime)
{
	struct qtimer_op op = good_arm();

	op.flags = QTIMER_F_ABSTIME | QTIMER_F_CANCEL_ON_SET;
	op.expires_ns = 1;
	EXPECT_EQ(-EINVAL, t_arm_op(self->fd, &op));
	op.clockid = CLOCK_BOOTTIME;
	EXPECT_EQ(-EINVAL, t_arm_op(self->fd, &op));
	EXPECT_NOTHING_ARMED(self->fd);
}

TEST_F(validate, cancel_on_set_needs_abstime)
{
	struct qtimer_op op = good_arm();
	__u64 id;

	op.clockid = CLOCK_REALTIME;
	op.flags = QTIMER_F_CANCEL_ON_SET;
	EXPECT_EQ(-EINVAL, t_arm_op(self->fd, &op));
	EXPECT_NOTHING_ARMED(self->fd);
	/* With both it is fine. */
	op.flags |= QTIMER_F_ABSTIME;
	op.expires_ns = t_now(CLOCK_REALTIME) + 20 * NSEC_PER_SEC;
	ASSERT_EQ(0, t_arm_op(self->fd, &op));
	id = op.id;
	EXPECT_EQ(QTIMER_CANCEL_ARMED, t_cancel(self->fd, id));
}

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

/* Checks that the victim is untouched by a rejected MODIFY: still 20 s out. */
#define EXPECT_VICTIM_UNCHANGED() do {				\
	t_sleep_ms(100);					\
	EXPECT_EQ(0, t_nothing_pending(self->fd));		\
} while (0)

/* A valid MODIFY of the victim to fire at once (if it were accepted). */
static struct qtimer_op good_modify(__u64 id)
{
	struct qtimer_op op;

	memset(&op, 0, sizeof(op));
	op.id = id;
	return op;
}

TEST_F(validate, modify_nonzero_clockid)
{
	struct qtimer_op op = good_modify(self->victim);

	op.clockid = CLOCK_MONOTONIC;
	EXPECT_EQ(-EINVAL, t_ioctl(self->fd, QTIMER_IOC_MODIFY, &op));
	EXPECT_VICTIM_UNCHANGED();
}

TEST_F(validate, modify_nonzero_cookie)
{
	struct qtimer_op op = good_modify(self->victim);

	op.cookie = 1;
	EXPECT_EQ(-EINVAL, t_ioctl(self->fd, QTIMER_IOC_MODIFY, &op));
	EXPECT_VICTIM_UNCHANGED();
}

TEST_F(validate, modify_nonzero_cpu)
{
	struct qtimer_op op = good_modify(self->victim);

	op.cpu = 1;
	EXPECT_EQ(-EINVAL, t_ioctl(self->fd, QTIMER_IOC_MODIFY, &op));
	EXPECT_VICTIM_UNCHANGED();
}

TEST_F(validate, modify_cpu_flag)
{
	struct qtimer_op op = good_modify(self->victim);

	op.flags = QTIMER_F_CPU;	/* ARM only */
	EXPECT_EQ(-EINVAL, t_ioctl(self->fd, QTIMER_IOC_MODIFY, &op));
	EXPECT_VICTIM_UNCHANGED();
}

TEST_F(validate, modify_unknown_flags)
{
	struct qtimer_op op = good_modify(self->victim);

	op.flags = 1U << 3;
	EXPECT_EQ(-EINVAL, t_ioctl(self->fd, QTIMER_IOC_MODIFY, &op));
	op.flags = 1U << 31;
	EXPECT_EQ(-EINVAL, t_ioctl(self->fd, QTIMER_IOC_MODIFY, &op));
	EXPECT_VICTIM_UNCHANGED();
}

TEST_F(validate, modify_nonzero_reserved)
{
	struct qtimer_op op = good_modify(self->victim);

	op.reserved = 1;
	EXPECT_EQ(-EINVAL, t_ioctl(self->fd, QTIMER_IOC_MODIFY, &op));
	EXPECT_VICTIM_UNCHANGED();
}

TEST_F(validate, modify_wrong_opcode)
{
	struct qtimer_op op = good_modify(self->victim);

	op.opcode = QTIMER_OP_ARM;
	EXPECT_EQ(-EINVAL, t_ioctl(self->fd, QTIMER_IOC_MODIFY, &op));
	op.opcode = QTIMER_OP_CANCEL;
	EXPECT_EQ(-EINVAL, t_ioctl(self->fd, QTIMER_IOC_MODIFY, &op));
	op.opcode = 99;
	EXPECT_EQ(-EINVAL, t_ioctl(self->fd, QTIMER_IOC_MODIFY, &op));
	EXPECT_VICTIM_UNCHANGED();
}

TEST_F(validate, modify_negative_relative_expiry)
{
	struct qtimer_op op = good_modify(self->victim);

	op.expires_ns = -1;
	EXPECT_EQ(-EINVAL, t_ioctl(self->fd, QTIMER_IOC_MODIFY, &op));
	EXPECT_VICTIM_UNCHANGED();
}

TEST_F(validate, modify_overflows)
{
	struct qtimer_op op = good_modify(self->victim);

	op.expires_ns = INT64_MAX;
	EXPECT_EQ(-EOVERFLOW, t_ioctl(self->fd, QTIMER_IOC_MODIFY, &op));
	op = good_modify(self->victim);
	op.period_ns = UINT64_MAX;
	EXPECT_EQ(-EOVERFLOW, t_ioctl(self->fd, QTIMER_IOC_MODIFY, &op));
	EXPECT_VICTIM_UNCHANGED();
}

TEST_F(validate, modify_slack_above_max)
{
	struct qtimer_op op = good_modify(self->victim);

	op.slack_ns = QTIMER_SLACK_MAX_NS + 1;
	EXPECT_EQ(-EINVAL, t_ioctl(self->fd, QTIMER_IOC_MODIFY, &op));
	EXPECT_VICTIM_UNCHANGED();
}

/* The victim is MONOTONIC: CANCEL_ON_SET cannot be added by MODIFY. */
TEST_F(validate, modify_cancel_on_set_needs_realtime)
{
	struct qtimer_op op = good_modify(self->victim);

	op.flags = QTIMER_F_ABSTIME | QTIMER_F_CANCEL_ON_SET;
	op.expires_ns = 1;
	EXPECT_EQ(-EINVAL, t_ioctl(self->fd, QTIMER_IOC_MODIFY, &op));
	EXPECT_VICTIM_UNCHANGED();
}

TEST_F(validate, modify_valid_baseline)
{
	struct qtimer_op op = good_modify(self->victim);
	struct qtimer_record rec;

	op.opcode = QTIMER_OP_MODIFY;
	op.expires_ns = 20 * NSEC_PER_SEC;
	EXPECT_EQ(QTIMER_CANCEL_ARMED,
		  t_ioctl(self->fd, QTIMER_IOC_MODIFY, &op));
	/* Both opcode spellings. */
	op = good_modify(self->victim);
	op.expires_ns = 20 * NSEC_PER_SEC;
	EXPECT_EQ(QTIMER_CANCEL_ARMED,
		  t_ioctl(self->fd, QTIMER_IOC_MODIFY, &op));
	EXPECT_EQ(0, t_collect(self->fd, &rec, 1, 50));
}

/* CANCEL: only opcode and id may be non-zero. */
#define CANCEL_FIELD_TEST(name, field, value)				\
TEST_F(validate, cancel_nonzero_##name)					\
{									\
	struct qtimer_op op = good_modify(self->victim);		\
									\
	op.field = value;						\
	EXPECT_EQ(-EINVAL, t_ioctl(self->fd, QTIMER_IOC_CANCEL, &op));	\
}

CANCEL_FIELD_TEST(expires, expires_ns, 1)
CANCEL_FIELD_TEST(negative_expires, expires_ns, -1)
CANCEL_FIELD_TEST(flags, flags, QTIMER_F_ABSTIME)
CANCEL_FIELD_TEST(clockid, clockid, CLOCK_MONOTONIC)
CANCEL_FIELD_TEST(period, period_ns, 1)
CANCEL_FIELD_TEST(slack, slack_ns, 1)
CANCEL_FIELD_TEST(cookie, cookie, 1)
CANCEL_FIELD_TEST(cpu, cpu, 1)
CANCEL_FIELD_TEST(reserved, reserved, 1)
CANCEL_FIELD_TEST(opcode, opcode, QTIMER_OP_ARM)

TEST_F(validate, cancel_valid_baseline)
{
	struct qtimer_op op = good_modify(self->victim);
	__u64 id;

	op.opcode = QTIMER_OP_CANCEL;
	EXPECT_EQ(QTIMER_CANCEL_ARMED,
		  t_ioctl(self->fd, QTIMER_IOC_CANCEL, &op));
	/* Re-arm a victim for the teardown's check. */
	ASSERT_EQ(0, t_arm(self->fd, CLOCK_MONOTONIC, 0, 20 * NSEC_PER_SEC,
			    0, 0, &id));
	self->victim = id;
}

/* Bad argument pointers: every command, NULL and an unmapped page. */
TEST_F(validate, null_and_unmapped_arg)
{
	unsigned long cmds[] = {
		QTIMER_IOC_VERSION, QTIMER_IOC_ARM, QTIMER_IOC_CANCEL,
		QTIMER_IOC_MODIFY, QTIMER_IOC_SUBMIT,
	};
	void *hole = t_unmapped_page();
	unsigned int i;

	ASSERT_NE(NULL, hole);
	for (i = 0; i < ARRAY_SIZE(cmds); i++) {
		EXPECT_EQ(-EFAULT, t_ioctl(self->fd, cmds[i], NULL)) {
			TH_LOG("cmd %#lx", cmds[i]);
		}
		EXPECT_EQ(-EFAULT, t_ioctl(self->fd, cmds[i], hole)) {
			TH_LOG("cmd %#lx", cmds[i]);
		}
	}
	/* Kernel addresses are user pointers that cannot be accessed. */
	EXPECT_EQ(-EFAULT, t_ioctl(self->fd, QTIMER_IOC_ARM,
				    (void *)0xffffffff81000000UL));
	EXPECT_NOTHING_ARMED(self->fd);
}

/*
 * A struct that can be read but not written: VERSION cannot answer, and an
 * ARM that cannot return its id must not leave a timer the caller cannot
 * name.
 */
TEST_F(validate, readonly_arg)
{
	struct qtimer_op arm = good_arm(), *op;

	op = t_readonly_copy(&arm, sizeof(arm));
	ASSERT_NE(NULL, op);
	EXPECT_EQ(-EFAULT, t_ioctl(self->fd, QTIMER_IOC_VERSION, op));
	EXPECT_EQ(-EFAULT, t_ioctl(self->fd, QTIMER_IOC_ARM, op));
	EXPECT_NOTHING_ARMED(self->fd);
	t_readonly_free(op);
}

TEST_F(validate, unknown_ioctl)
{
	struct qtimer_op op = good_arm();
	unsigned long cmds[] = {
		_IO(QTIMER_IOC_MAGIC, 0x00),	/* VERSION without its struct */
		_IOWR(QTIMER_IOC_MAGIC, 0x05, struct qtimer_op),
		_IOWR(QTIMER_IOC_MAGIC, 0x7f, struct qtimer_op),
		_IOWR(QTIMER_IOC_MAGIC, 0xff, struct qtimer_op),
		/* ARM's number with the wrong size or direction */
		_IOWR(QTIMER_IOC_MAGIC, 0x01, __u64),
		_IOWR(QTIMER_IOC_MAGIC, 0x01, struct qtimer_submit),
		_IOW(QTIMER_IOC_MAGIC, 0x01, struct qtimer_op),
		_IOR(QTIMER_IOC_MAGIC, 0x01, struct qtimer_op),
		_IO(QTIMER_IOC_MAGIC, 0x01),
		/* another driver's magic with ARM's number and size */
		_IOWR(QTIMER_IOC_MAGIC + 1, 0x01, struct qtimer_op),
		TCGETS,
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(cmds); i++) {
		EXPECT_EQ(-ENOTTY, t_ioctl(self->fd, cmds[i], &op)) {
			TH_LOG("cmd %#lx", cmds[i]);
		}
	}
	EXPECT_NOTHING_ARMED(self->fd);
}

/* Gets one record queued (expiry 0) and waits until poll reports it. */
static int queue_one(int fd, __u64 cookie)
{
	int ret = t_arm(fd, CLOCK_MONOTONIC, 0, 0, 0, cookie, NULL);

	if (ret)
		return ret;
	return t_wait_readable(fd, QT_ARRIVE_MS) == 1 ? 0 : -ETIME;
}

/* The record is still there after a failed read, and a good read gets it. */
#define EXPECT_RECORD_KEPT(fd, want_cookie) do {			\
	struct qtimer_record __r;					\
									\
	EXPECT_EQ(POLLIN, t_revents(fd) & POLLIN);			\
	EXPECT_EQ(1, t_read(fd, &__r, 1));				\
	EXPECT_EQ(want_cookie, __r.cookie);				\
	EXPECT_EQ(0, t_nothing_pending(fd));				\
} while (0)

TEST_F(validate, read_buffer_too_small)
{
	char buf[sizeof(struct qtimer_record)];

	ASSERT_EQ(0, queue_one(self->fd, 21));
	EXPECT_EQ(-1, read(self->fd, buf, sizeof(buf) - 1));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, read(self->fd, buf, 1));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, read(self->fd, buf, 0));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_RECORD_KEPT(self->fd, 21);
}

/* The size check is not hidden behind "nothing pending". */
TEST_F(validate, read_buffer_too_small_nothing_pending)
{
	char buf[sizeof(struct qtimer_record)];

	EXPECT_EQ(-1, read(self->fd, buf, sizeof(buf) - 1));
	EXPECT_EQ(EINVAL, errno);
}

TEST_F(validate, read_null_buffer)
{
	void *volatile null = NULL;	/* hidden from -Wnonnull */

	ASSERT_EQ(0, queue_one(self->fd, 22));
	EXPECT_EQ(-1, read(self->fd, null, sizeof(struct qtimer_record)));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_RECORD_KEPT(self->fd, 22);
}

TEST_F(validate, read_unmapped_buffer)
{
	void *hole = t_unmapped_page();

	ASSERT_NE(NULL, hole);
	ASSERT_EQ(0, queue_one(self->fd, 23));
	EXPECT_EQ(-1, read(self->fd, hole, sizeof(struct qtimer_record)));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_RECORD_KEPT(self->fd, 23);
}

TEST_F(validate, read_readonly_buffer)
{
	long page = sysconf(_SC_PAGESIZE);
	void *ro = mmap(NULL, page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS,
			-1, 0);

	ASSERT_NE(MAP_FAILED, ro);
	ASSERT_EQ(0, queue_one(self->fd, 24));
	EXPECT_EQ(-1, read(self->fd, ro, sizeof(struct qtimer_record)));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_RECORD_KEPT(self->fd, 24);
	munmap(ro, page);
}

/*
 * Two records pending, room for the first only before a read-only page:
 * read returns the one record delivered, and the second stays pending.
 */
TEST_F(validate, read_partial_fault)
{
	const size_t rs = sizeof(struct qtimer_record);
	long page = sysconf(_SC_PAGESIZE);
	struct qtimer_record *first;
	char *map;

	map = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, map);
	ASSERT_EQ(0, mprotect(map + page, page, PROT_READ));
	first = (struct qtimer_record *)(map + page - rs);
	ASSERT_EQ(0, t_arm_cpu(self->fd, CLOCK_MONOTONIC, 0, 0, 0, 25, 0,
				NULL));
	ASSERT_EQ(1, t_wait_readable(self->fd, QT_ARRIVE_MS));
	ASSERT_EQ(0, queue_one(self->fd, 26));
	ASSERT_EQ(1, t_wait_pending(self->fd, 2, QT_ARRIVE_MS));
	EXPECT_EQ((ssize_t)rs, read(self->fd, first, 2 * rs));
	EXPECT_EQ(25, first->cookie);
	EXPECT_RECORD_KEPT(self->fd, 26);
	munmap(map, 2 * page);
}

/*
 * The fault falls inside a record: that record was not delivered (a reader
 * cannot use half a record), so it stays pending.  One record, cut: -EFAULT.
 */
TEST_F(validate, read_fault_inside_only_record)
{
	const size_t rs = sizeof(struct qtimer_record);
	long page = sysconf(_SC_PAGESIZE);
	char *map;

	map = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, map);
	ASSERT_EQ(0, mprotect(map + page, page, PROT_READ));
	ASSERT_EQ(0, queue_one(self->fd, 27));
	EXPECT_EQ(-1, read(self->fd, map + page - rs / 2, rs));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_RECORD_KEPT(self->fd, 27);
	munmap(map, 2 * page);
}

/* Two records, the second cut by the fault: one delivered, one kept. */
TEST_F(validate, read_fault_inside_second_record)
{
	const size_t rs = sizeof(struct qtimer_record);
	long page = sysconf(_SC_PAGESIZE);
	struct qtimer_record first;
	char *map, *buf;

	map = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, map);
	ASSERT_EQ(0, mprotect(map + page, page, PROT_READ));
	buf = map + page - rs - rs / 2;
	ASSERT_EQ(0, t_arm_cpu(self->fd, CLOCK_MONOTONIC, 0, 0, 0, 28, 0,
				NULL));
	ASSERT_EQ(1, t_wait_readable(self->fd, QT_ARRIVE_MS));
	ASSERT_EQ(0, queue_one(self->fd, 29));
	ASSERT_EQ(1, t_wait_pending(self->fd, 2, QT_ARRIVE_MS));
	EXPECT_EQ((ssize_t)rs, read(self->fd, buf, 2 * rs));
	memcpy(&first, buf, rs);
	EXPECT_EQ(28, first.cookie);
	EXPECT_RECORD_KEPT(self->fd, 29);
	munmap(map, 2 * page);
}

TEST_HARNESS_MAIN
