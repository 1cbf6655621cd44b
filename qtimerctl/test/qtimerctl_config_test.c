// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * qtimerctl end to end, config: get against the module's parameters, in
 * text and JSON; set of each cap taking effect on the device, a sysfs
 * write seen through netlink, ranges, and what nobody may and may not do
 * (ctl.h: how the qtimerctl_*_test suites run the tool).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <linux/qtimer.h>

#include "kselftest_harness.h"
#include "ctl.h"

TEST(config_get)
{
	static struct t_run r;
	char want[128];

	NEED_MODULE();
	ASSERT_EQ(0, RUN(&r, "config", "get"));
	ASSERT_EQ(0, r.status) TH_LOG("stderr: %s", r.err);
	snprintf(want, sizeof(want), "max_timers_per_fd: %lld\nmax_timers_per_user: %lld\n",
		 t_param_get("max_timers_per_fd"), t_param_get("max_timers_per_user"));
	EXPECT_STREQ(want, r.out);

	ASSERT_EQ(0, RUN(&r, "config", "get", "max_timers_per_user"));
	ASSERT_EQ(0, r.status);
	snprintf(want, sizeof(want), "%lld\n", t_param_get("max_timers_per_user"));
	EXPECT_STREQ(want, r.out);

	ASSERT_EQ(0, RUN(&r, "config", "get", "--json"));
	ASSERT_EQ(0, r.status);
	EXPECT_EQ(1, json_lines(r.out));
	EXPECT_EQ(t_param_get("max_timers_per_fd"),
		  json_num_after(r.out, "max_timers_per_fd"));
}

/* Config changes are global: put the parameters back whatever happens. */
FIXTURE(caps) {
	long long per_fd;
	long long per_user;
};

FIXTURE_SETUP(caps)
{
	if (!module_loaded())
		SKIP(return, "qtimer module not loaded");
	if (geteuid())
		SKIP(return, "changing the caps needs root");
	self->per_fd = t_param_get("max_timers_per_fd");
	self->per_user = t_param_get("max_timers_per_user");
	ASSERT_LT(0, self->per_fd);
	ASSERT_LT(0, self->per_user);
}

/* 6.1's harness runs the test body even when its setup skipped. */
#define RETURN_IF_SETUP_SKIPPED() do {					\
	if (_metadata->skip)						\
		return;							\
} while (0)

FIXTURE_TEARDOWN(caps)
{
	if (self->per_fd > 0)
		EXPECT_EQ(0, t_param_set("max_timers_per_fd", self->per_fd));
	if (self->per_user > 0)
		EXPECT_EQ(0, t_param_set("max_timers_per_user", self->per_user));
}

TEST_F(caps, set_per_fd_takes_effect)
{
	RETURN_IF_SETUP_SKIPPED();
	static struct t_run r;
	struct qtimer_version v;
	int fd, i;

	ASSERT_EQ(0, RUN(&r, "config", "set", "max_timers_per_fd", "3"));
	ASSERT_EQ(0, r.status) TH_LOG("stderr: %s", r.err);
	EXPECT_EQ(0, r.out[0]);
	EXPECT_EQ(3, t_param_get("max_timers_per_fd"));

	fd = t_open(0);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ioctl(fd, QTIMER_IOC_VERSION, &v));
	EXPECT_EQ(3, v.max_timers_per_fd);
	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, t_arm(fd, CLOCK_MONOTONIC, 0, 3600 * NSEC_PER_SEC, 0, 0, NULL));
	EXPECT_EQ(-ENOSPC, t_arm(fd, CLOCK_MONOTONIC, 0, 3600 * NSEC_PER_SEC, 0, 0, NULL));
	close(fd);
}

TEST_F(caps, set_per_user_takes_effect)
{
	RETURN_IF_SETUP_SKIPPED();
	static struct t_run r;
	int fd1, fd2;

	ASSERT_EQ(0, RUN(&r, "config", "set", "max_timers_per_user", "2"));
	ASSERT_EQ(0, r.status) TH_LOG("stderr: %s", r.err);
	EXPECT_EQ(2, t_param_get("max_timers_per_user"));
	ASSERT_EQ(0, RUN(&r, "config", "get", "max_timers_per_user"));
	EXPECT_STREQ("2\n", r.out);

	fd1 = t_open(0);
	fd2 = t_open(0);
	ASSERT_LE(0, fd1);
	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, t_arm(fd1, CLOCK_MONOTONIC, 0, 3600 * NSEC_PER_SEC, 0, 0, NULL));
	ASSERT_EQ(0, t_arm(fd2, CLOCK_MONOTONIC, 0, 3600 * NSEC_PER_SEC, 0, 0, NULL));
	EXPECT_EQ(-EDQUOT, t_arm(fd1, CLOCK_MONOTONIC, 0, 3600 * NSEC_PER_SEC, 0, 0, NULL));
	close(fd1);
	close(fd2);
}

/* A sysfs write is seen through netlink: the same variable. */
TEST_F(caps, get_follows_sysfs)
{
	RETURN_IF_SETUP_SKIPPED();
	static struct t_run r;

	ASSERT_EQ(0, t_param_set("max_timers_per_fd", 4242));
	ASSERT_EQ(0, RUN(&r, "config", "get", "max_timers_per_fd"));
	ASSERT_EQ(0, r.status);
	EXPECT_STREQ("4242\n", r.out);
}

TEST_F(caps, set_rejects_out_of_range)
{
	RETURN_IF_SETUP_SKIPPED();
	static const struct {
		const char *key, *value;
	} bad[] = {
		{ "max_timers_per_fd", "0" },
		{ "max_timers_per_fd", "16777217" },
		{ "max_timers_per_user", "0" },
		{ "max_timers_per_user", "4294967296" },
	};
	static struct t_run r;
	unsigned int i;

	ASSERT_EQ(0, t_param_set("max_timers_per_fd", 100));
	ASSERT_EQ(0, t_param_set("max_timers_per_user", 200));
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ASSERT_EQ(0, RUN(&r, "config", "set", bad[i].key, bad[i].value));
		EXPECT_EQ(1, r.status) TH_LOG("%s %s accepted", bad[i].key, bad[i].value);
		EXPECT_NE(NULL, strstr(r.err, "out of range")) TH_LOG("stderr: %s", r.err);
	}
	EXPECT_EQ(100, t_param_get("max_timers_per_fd"));
	EXPECT_EQ(200, t_param_get("max_timers_per_user"));

	/* The limits themselves are fine. */
	ASSERT_EQ(0, RUN(&r, "config", "set", "max_timers_per_fd", "16777216"));
	EXPECT_EQ(0, r.status) TH_LOG("stderr: %s", r.err);
	EXPECT_EQ(16777216, t_param_get("max_timers_per_fd"));
	ASSERT_EQ(0, RUN(&r, "config", "set", "max_timers_per_user", "4294967295"));
	EXPECT_EQ(0, r.status) TH_LOG("stderr: %s", r.err);
	EXPECT_EQ(4294967295LL, t_param_get("max_timers_per_user"));
	ASSERT_EQ(0, RUN(&r, "config", "set", "max_timers_per_fd", "1"));
	EXPECT_EQ(0, r.status);
	EXPECT_EQ(1, t_param_get("max_timers_per_fd"));
}

TEST_F(caps, set_as_nobody_is_denied)
{
	RETURN_IF_SETUP_SKIPPED();
	static struct t_run r;

	ASSERT_EQ(0, t_param_set("max_timers_per_fd", 77));
	ASSERT_EQ(0, run_as(&r, AS_NOBODY, (const char *const []){
		"config", "set", "max_timers_per_fd", "5", NULL }));
	EXPECT_EQ(1, r.status);
	EXPECT_NE(NULL, strstr(r.err, "permission denied")) TH_LOG("stderr: %s", r.err);
	EXPECT_NE(NULL, strstr(r.err, "CAP_SYS_ADMIN"));
	EXPECT_EQ(77, t_param_get("max_timers_per_fd"));

	ASSERT_EQ(0, run_as(&r, AS_NOBODY, (const char *const []){
		"config", "set", "max_timers_per_user", "5", NULL }));
	EXPECT_EQ(1, r.status);
	EXPECT_NE(NULL, strstr(r.err, "permission denied"));
}

/*
 * The caps are for everyone to read; the per-CPU stats are not (they would
 * tell one user when another's timers fire), not even one CPU's dump.
 */
TEST_F(caps, read_as_nobody)
{
	RETURN_IF_SETUP_SKIPPED();
	static struct t_run r;

	ASSERT_EQ(0, run_as(&r, AS_NOBODY, (const char *const []){ "stats", "--json", NULL }));
	EXPECT_EQ(1, r.status) TH_LOG("stdout: %s", r.out);
	EXPECT_NE(NULL, strstr(r.err, "not permitted")) TH_LOG("stderr: %s", r.err);
	EXPECT_EQ(0, json_lines(r.out));
	ASSERT_EQ(0, run_as(&r, AS_NOBODY, (const char *const []){
		"config", "get", "max_timers_per_fd", NULL }));
	EXPECT_EQ(0, r.status) TH_LOG("stderr: %s", r.err);
	EXPECT_EQ(self->per_fd, strtoll(r.out, NULL, 10));
}

TEST_HARNESS_MAIN
