// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * qtimerctl end to end, what needs no module or no family: usage errors,
 * --help and --version, the "module not loaded" message, and the message
 * in a network namespace that cannot see the family (ctl.h: how the
 * qtimerctl_*_test suites run the tool).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <linux/qtimer.h>

#include "kselftest_harness.h"
#include "ctl.h"

/* --- tests that need no module ------------------------------------------ */

TEST(usage_errors)
{
	static struct t_run r;

	ASSERT_EQ(0, run_as(&r, AS_ROOT, (const char *const []){ NULL }));
	EXPECT_EQ(2, r.status);
	EXPECT_NE(NULL, strstr(r.err, "usage:"));
	ASSERT_EQ(0, RUN(&r, "bogus"));
	EXPECT_EQ(2, r.status);
	EXPECT_NE(NULL, strstr(r.err, "unknown command 'bogus'"));
	ASSERT_EQ(0, RUN(&r, "stats", "-w", "0"));
	EXPECT_EQ(2, r.status);
	ASSERT_EQ(0, RUN(&r, "stats", "extra"));
	EXPECT_EQ(2, r.status);
	ASSERT_EQ(0, RUN(&r, "config"));
	EXPECT_EQ(2, r.status);
	ASSERT_EQ(0, RUN(&r, "config", "get", "no_such_key"));
	EXPECT_EQ(2, r.status);
	EXPECT_NE(NULL, strstr(r.err, "unknown key 'no_such_key'"));
	ASSERT_EQ(0, RUN(&r, "config", "set", "max_timers_per_fd"));
	EXPECT_EQ(2, r.status);
	ASSERT_EQ(0, RUN(&r, "config", "set", "max_timers_per_fd", "12x"));
	EXPECT_EQ(2, r.status);
	EXPECT_NE(NULL, strstr(r.err, "not a number"));
	ASSERT_EQ(0, RUN(&r, "config", "set", "max_timers_per_fd", "-1"));
	EXPECT_EQ(2, r.status);
}

TEST(help_and_version)
{
	static struct t_run r;

	ASSERT_EQ(0, RUN(&r, "--help"));
	EXPECT_EQ(0, r.status);
	EXPECT_NE(NULL, strstr(r.out, "usage:"));
	EXPECT_NE(NULL, strstr(r.out, "max_timers_per_user"));
	ASSERT_EQ(0, RUN(&r, "--version"));
	EXPECT_EQ(0, r.status);
	EXPECT_EQ(0, strncmp(r.out, "qtimerctl ", 10));
}

TEST(module_not_loaded_message)
{
	static const char msg[] =
		"qtimer module not loaded: generic netlink family 'qtimer' not found";
	static struct t_run r;

	if (module_loaded())
		SKIP(return, "the module is loaded (see other_netns_message)");
	ASSERT_EQ(0, RUN(&r, "stats"));
	EXPECT_EQ(1, r.status);
	EXPECT_NE(NULL, strstr(r.err, msg));
	EXPECT_EQ(0, r.out[0]);
	ASSERT_EQ(0, RUN(&r, "config", "get"));
	EXPECT_EQ(1, r.status);
	EXPECT_NE(NULL, strstr(r.err, msg));
	ASSERT_EQ(0, RUN(&r, "config", "set", "max_timers_per_fd", "10"));
	EXPECT_EQ(1, r.status);
	EXPECT_NE(NULL, strstr(r.err, msg));
}

/* --- tests against the module ------------------------------------------- */

/* The family is host-global, so other network namespaces do not see it. */
TEST(other_netns_message)
{
	static struct t_run r;

	NEED_MODULE();
	if (geteuid())
		SKIP(return, "needs root to unshare the network namespace");
	ASSERT_EQ(0, run_as(&r, IN_NEW_NETNS, (const char *const []){ "stats", NULL }));
	if (r.status == 126)
		SKIP(return, "cannot create a network namespace");
	EXPECT_EQ(1, r.status);
	EXPECT_NE(NULL, strstr(r.err, "generic netlink family 'qtimer' not found"));
	EXPECT_NE(NULL, strstr(r.err, "initial network namespace"));
}

TEST_HARNESS_MAIN
