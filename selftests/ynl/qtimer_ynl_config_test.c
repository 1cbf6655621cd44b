// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * The family's ops and config through the kernel's YNL CLI against
 * qtimerctl (qtimer_ynl.h): cli.py loads the spec and lists the ops;
 * get-config agrees field by field, as root and as nobody; set-config
 * works as root, is refused as nobody, out of range and without
 * attributes, and changes nothing then.
 */
#define _GNU_SOURCE
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <linux/qtimer.h>
#include <linux/qtimer_netlink.h>

#include "kselftest_harness.h"
#include "qtimer_ynl.h"

/* What the caps are now, through qtimerctl; false if it failed. */
static bool config_now(struct fields *cfg)
{
	static struct t_run r;

	if (QTIMERCTL(&r, 0, "config", "get", "--json") || r.status ||
	    fields_of(r.out, "", cfg)) {
		show_run("qtimerctl config get --json", &r);
		return false;
	}
	qtimerctl_to_spec_names(cfg);
	return true;
}

/*
 * Does cli.py --list-ops list @op with @mode?  Its lines are "name  [ modes ]",
 * the modes in the order of a Python set, which changes from run to run.
 */
static bool lists_op(const char *out, const char *op, const char *mode)
{
	char line[256], last[64], more[64];
	const char *p = out;

	snprintf(last, sizeof(last), " %s ]", mode);
	snprintf(more, sizeof(more), " %s,", mode);
	while (sscanf(p, "%255[^\n]", line) == 1) {
		size_t len = strlen(op);

		if (!strncmp(line, op, len) && line[len] == ' ' &&
		    (strstr(line, last) || strstr(line, more)))
			return true;
		p = strchr(p, '\n');
		if (!p)
			break;
		p++;
	}
	return false;
}

/*
 * cli.py loads the spec and, by default, checks it against
 * Documentation/netlink/genetlink-c.yaml (with jsonschema) before it
 * resolves the family: a spec the schema refuses fails here first.
 */
TEST(spec_loads_and_lists_the_ops)
{
	static struct t_run r;

	NEED_TOOLS();
	ASSERT_EQ(0, YNL(&r, 0, "--list-ops"));
	if (r.status)
		show_run("cli.py --list-ops", &r);
	ASSERT_EQ(0, r.status);
	EXPECT_TRUE(lists_op(r.out, "get-stats", "do"));
	EXPECT_TRUE(lists_op(r.out, "get-stats", "dump"));
	EXPECT_TRUE(lists_op(r.out, "get-config", "do"));
	EXPECT_FALSE(lists_op(r.out, "get-config", "dump"));
	EXPECT_TRUE(lists_op(r.out, "set-config", "do"));
	EXPECT_FALSE(lists_op(r.out, "set-config", "dump"));
	if (_metadata->passed == 0)
		show_run("cli.py --list-ops", &r);
}

TEST(get_config_agrees)
{
	static struct fields ynl, ctl;
	static struct t_run r;

	NEED_TOOLS();
	ASSERT_TRUE(config_now(&ctl));
	ASSERT_EQ(0, YNL(&r, 0, "--do", "get-config"));
	if (r.status)
		show_run("cli.py --do get-config", &r);
	ASSERT_EQ(0, r.status);
	ASSERT_EQ(0, fields_of(r.out, "", &ynl));
	EXPECT_EQ(2, ynl.nr);
	EXPECT_TRUE(fields_agree("get-config", &ynl, &ctl));
	EXPECT_EQ(t_param_get("max_timers_per_fd"),
		  field(&ynl, "max-timers-per-fd"));
	EXPECT_EQ(t_param_get("max_timers_per_user"),
		  field(&ynl, "max-timers-per-user"));
}

/* Any user may read the caps (the op has no admin-perm). */
TEST(get_config_as_nobody)
{
	static struct fields ynl, ctl;
	static struct t_run r;

	NEED_TOOLS();
	ASSERT_TRUE(config_now(&ctl));
	ASSERT_EQ(0, YNL(&r, NOBODY, "--do", "get-config"));
	if (r.status)
		show_run("cli.py --do get-config (nobody)", &r);
	ASSERT_EQ(0, r.status);
	ASSERT_EQ(0, fields_of(r.out, "", &ynl));
	EXPECT_TRUE(fields_agree("get-config as nobody", &ynl, &ctl));
}

/* The caps, put back after each test that sets them. */
FIXTURE(caps) {
	struct t_knob per_fd, per_user;
};

FIXTURE_SETUP(caps)
{
	static const char *const names[] = { "max_timers_per_fd",
					      "max_timers_per_user" };
	struct t_knob *knobs[] = { &self->per_fd, &self->per_user };
	char path[160], now[32];
	int i;

	NEED_TOOLS();
	/* Writing the current value back arms the restore. */
	for (i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), QT_PARAMS "%s", names[i]);
		ASSERT_EQ(0, t_read_str(path, now, sizeof(now)));
		ASSERT_EQ(0, t_knob_set(knobs[i], path, now));
	}
}

FIXTURE_TEARDOWN(caps)
{
	t_knob_restore(&self->per_fd);
	t_knob_restore(&self->per_user);
}

TEST_F(caps, set_config_as_root)
{
	static struct fields before, after;
	unsigned long long fd_cap;
	static struct t_run r;
	char json[128];

	RETURN_IF_SETUP_SKIPPED();

	ASSERT_TRUE(config_now(&before));
	fd_cap = field(&before, "max-timers-per-fd") == 4321 ? 4322 : 4321;

	/* One cap: the other keeps its value. */
	snprintf(json, sizeof(json), "{\"max-timers-per-fd\": %llu}", fd_cap);
	ASSERT_EQ(0, YNL(&r, 0, "--do", "set-config", "--json", json));
	if (r.status)
		show_run("cli.py --do set-config", &r);
	ASSERT_EQ(0, r.status);
	ASSERT_TRUE(config_now(&after));
	EXPECT_EQ(fd_cap, field(&after, "max-timers-per-fd"));
	EXPECT_EQ(field(&before, "max-timers-per-user"),
		  field(&after, "max-timers-per-user"));
	EXPECT_EQ(fd_cap, t_param_get("max_timers_per_fd"));

	/* Both, the largest values the spec's checks allow. */
	ASSERT_EQ(0, YNL(&r, 0, "--do", "set-config", "--json",
			 "{\"max-timers-per-fd\": 16777216, "
			 "\"max-timers-per-user\": 4294967295}"));
	if (r.status)
		show_run("cli.py --do set-config (both, at the limits)", &r);
	ASSERT_EQ(0, r.status);
	ASSERT_TRUE(config_now(&after));
	EXPECT_EQ((unsigned long long)QTIMER_MAX_TIMERS_PER_FD_LIMIT,
		  field(&after, "max-timers-per-fd"));
	EXPECT_EQ((unsigned long long)QTIMER_MAX_TIMERS_PER_USER_LIMIT,
		  field(&after, "max-timers-per-user"));

	/* And back, through ynl too. */
	snprintf(json, sizeof(json),
		 "{\"max-timers-per-fd\": %llu, \"max-timers-per-user\": %llu}",
		 field(&before, "max-timers-per-fd"),
		 field(&before, "max-timers-per-user"));
	ASSERT_EQ(0, YNL(&r, 0, "--do", "set-config", "--json", json));
	ASSERT_EQ(0, r.status);
	ASSERT_TRUE(config_now(&after));
	EXPECT_TRUE(fields_equal(&before, &after));
}

/* Unprivileged: EPERM (admin-perm), and nothing changes. */
TEST_F(caps, set_config_refused_as_nobody)
{
	static struct fields before, after;
	static struct t_run r;

	RETURN_IF_SETUP_SKIPPED();

	ASSERT_TRUE(config_now(&before));
	ASSERT_EQ(0, YNL(&r, NOBODY, "--do", "set-config", "--json",
			 "{\"max-timers-per-fd\": 1}"));
	EXPECT_EQ(1, r.status);
	if (!strstr(r.out, "Netlink error: Operation not permitted"))
		show_run("cli.py --do set-config (nobody)", &r);
	EXPECT_NE(NULL, strstr(r.out, "Netlink error: Operation not permitted"));
	ASSERT_TRUE(config_now(&after));
	EXPECT_TRUE(fields_equal(&before, &after));

	/* qtimerctl is refused the same. */
	ASSERT_EQ(0, QTIMERCTL(&r, NOBODY, "config", "set", "max_timers_per_fd", "1"));
	EXPECT_EQ(1, r.status);
	EXPECT_NE(NULL, strstr(r.err, "permission denied"));
}

/*
 * The spec's checks are the kernel's policy: one past either end is ERANGE,
 * and the extended ack names the attribute, which cli.py finds by its
 * offset in the request and names by the spec.
 */
TEST_F(caps, set_config_out_of_range)
{
	static const char *const bad[] = {
		"{\"max-timers-per-fd\": 0}",
		"{\"max-timers-per-fd\": 16777217}",
		"{\"max-timers-per-user\": 0}",
		"{\"max-timers-per-user\": 4294967296}",
	};
	static struct fields before, after;
	static struct t_run r;
	unsigned int i;

	RETURN_IF_SETUP_SKIPPED();

	ASSERT_TRUE(config_now(&before));
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *attr = strstr(bad[i], "per-fd") ?
				   "'bad-attr': '.max-timers-per-fd'" :
				   "'bad-attr': '.max-timers-per-user'";

		ASSERT_EQ(0, YNL(&r, 0, "--do", "set-config", "--json", bad[i]));
		EXPECT_EQ(1, r.status);
		if (!strstr(r.out, "Numerical result out of range") ||
		    !strstr(r.out, attr))
			show_run(bad[i], &r);
		EXPECT_NE(NULL, strstr(r.out, "Numerical result out of range"));
		EXPECT_NE(NULL, strstr(r.out, attr));
	}
	ASSERT_TRUE(config_now(&after));
	EXPECT_TRUE(fields_equal(&before, &after));
}

TEST(set_config_without_attributes)
{
	static struct t_run r;

	NEED_TOOLS();
	ASSERT_EQ(0, YNL(&r, 0, "--do", "set-config"));
	EXPECT_EQ(1, r.status);
	EXPECT_NE(NULL, strstr(r.out, "Netlink error: Invalid argument"));
	EXPECT_NE(NULL, strstr(r.out, "no configuration attribute given"));
}

TEST_HARNESS_MAIN
