// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * qtimerctl end to end: runs the tool as a user would, against the module's
 * generic netlink family, and checks what it prints against what the raw
 * ioctls did and against /sys/module/qtimer/parameters.
 *
 * The tool is $QTIMERCTL, else ../bin/qtimerctl next to this program (the
 * guest layout), else qtimerctl on PATH.  Without the module (the build
 * host, where it is never loaded) only the usage and "module not loaded"
 * tests run; the others skip.
 */

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include <linux/qtimer.h>
#include <linux/qtimer_netlink.h>

#include "kselftest_harness.h"
#include "helpers.h"

#define QT_MODULE	"/sys/module/qtimer"
#define NOBODY		65534

/* --- running qtimerctl -------------------------------------------------- */

static const char *qtimerctl_path(void)
{
	static char path[PATH_MAX + 32];
	char self[PATH_MAX], *slash;
	ssize_t len;

	if (getenv("QTIMERCTL"))
		return getenv("QTIMERCTL");
	len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (len > 0) {
		self[len] = '\0';
		slash = strrchr(self, '/');
		if (slash) {
			*slash = '\0';
			snprintf(path, sizeof(path), "%s/../bin/qtimerctl", self);
			if (!access(path, X_OK))
				return path;
		}
	}
	return "qtimerctl";
}

enum { AS_ROOT, AS_NOBODY, IN_NEW_NETNS };

/*
 * Run qtimerctl with @args (NULL-terminated, without argv[0]) and collect
 * its exit status, stdout and stderr.  Returns 0, or -errno when the child
 * could not be set up.
 */
static int run_as(struct t_run *r, int how, const char *const *args)
{
	const char *argv[32] = { qtimerctl_path() };
	int i;

	for (i = 0; args[i] && i < 30; i++)
		argv[i + 1] = args[i];
	argv[i + 1] = NULL;
	return t_run(r, how == AS_NOBODY ? NOBODY : 0,
		      how == IN_NEW_NETNS ? CLONE_NEWNET : 0, (char *const *)argv);
}

#define RUN(r, ...) run_as(r, AS_ROOT, (const char *const []){ __VA_ARGS__, NULL })

static bool module_loaded(void)
{
	return !access(QT_MODULE, F_OK);
}

#define NEED_MODULE() do {						\
	if (!module_loaded())						\
		SKIP(return, "qtimer module not loaded");		\
} while (0)

/* --- reading qtimerctl's output ----------------------------------------- */

/*
 * A strict JSON syntax check (RFC 8259 values, no extensions), so that a
 * test can say "--json output parses" without a JSON library in the guest.
 * Returns the end of the value, or NULL.
 */
static const char *json_ws(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
		p++;
	return p;
}

static const char *json_value(const char *p, int depth);

static const char *json_string(const char *p)
{
	if (*p++ != '"')
		return NULL;
	while (*p != '"') {
		if ((unsigned char)*p < 0x20)
			return NULL;
		if (*p == '\\') {
			p++;
			if (!strchr("\"\\/bfnrtu", *p))
				return NULL;
		}
		p++;
	}
	return p + 1;
}

static const char *json_number(const char *p)
{
	const char *start;

	if (*p == '-')
		p++;
	if (*p == '0') {
		p++;
	} else if (*p >= '1' && *p <= '9') {
		while (*p >= '0' && *p <= '9')
			p++;
	} else {
		return NULL;
	}
	if (*p == '.') {
		start = ++p;
		while (*p >= '0' && *p <= '9')
			p++;
		if (p == start)
			return NULL;
	}
	if (*p == 'e' || *p == 'E') {
		p++;
		if (*p == '+' || *p == '-')
			p++;
		start = p;
		while (*p >= '0' && *p <= '9')
			p++;
		if (p == start)
			return NULL;
	}
	return p;
}

static const char *json_value(const char *p, int depth)
{
	if (depth > 32)
		return NULL;
	p = json_ws(p);
	switch (*p) {
	case '{':
		p = json_ws(p + 1);
		if (*p == '}')
			return p + 1;
		for (;;) {
			p = json_string(json_ws(p));
			if (!p)
				return NULL;
			p = json_ws(p);
			if (*p++ != ':')
				return NULL;
			p = json_value(p, depth + 1);
			if (!p)
				return NULL;
			p = json_ws(p);
			if (*p == '}')
				return p + 1;
			if (*p++ != ',')
				return NULL;
		}
	case '[':
		p = json_ws(p + 1);
		if (*p == ']')
			return p + 1;
		for (;;) {
			p = json_value(p, depth + 1);
			if (!p)
				return NULL;
			p = json_ws(p);
			if (*p == ']')
				return p + 1;
			if (*p++ != ',')
				return NULL;
		}
	case '"':
		return json_string(p);
	case 't':
		return strncmp(p, "true", 4) ? NULL : p + 4;
	case 'f':
		return strncmp(p, "false", 5) ? NULL : p + 5;
	case 'n':
		return strncmp(p, "null", 4) ? NULL : p + 4;
	}
	return json_number(p);
}

/* One JSON document per line: true if every line of @text parses. */
static int json_lines(const char *text)
{
	int lines = 0;

	while (*text) {
		const char *end = json_value(text, 0);

		if (!end || *end != '\n')
			return -1;
		text = end + 1;
		lines++;
	}
	return lines;
}

static int count_substr(const char *hay, const char *needle)
{
	int n = 0;

	while ((hay = strstr(hay, needle))) {
		n++;
		hay += strlen(needle);
	}
	return n;
}

/* The number after "key": at or after @from; -1 if absent. */
static long long json_num_after(const char *from, const char *key)
{
	char pat[64];
	const char *p;

	snprintf(pat, sizeof(pat), "\"%s\":", key);
	p = strstr(from, pat);
	return p ? strtoll(p + strlen(pat), NULL, 10) : -1;
}

/* The kernel's totals object; it comes last in the document. */
static const char *json_total(const char *doc)
{
	const char *p = strstr(doc, "\"total\":{");

	return p ? p + strlen("\"total\":") : "";
}

/* Sum of the histogram's counts in the object starting at @obj. */
static long long json_lateness_sum(const char *obj)
{
	const char *p = strstr(obj, "\"lateness\":[");
	const char *end = p ? strchr(p, ']') : NULL;
	long long sum = 0;

	if (!p || !end)
		return -1;
	while ((p = strstr(p, "\"count\":")) && p < end) {
		p += strlen("\"count\":");
		sum += strtoll(p, NULL, 10);
	}
	return sum;
}

/* Entries in the totals' heap of @clock ("realtime", ...). */
static long long json_heap_entries(const char *obj, const char *clock)
{
	char pat[64];
	const char *p;

	snprintf(pat, sizeof(pat), "\"clock\":\"%s\"", clock);
	p = strstr(obj, pat);
	return p ? json_num_after(p, "entries") : -1;
}

static int possible_cpus(void)
{
	char buf[256], *p = buf;
	int n = 0, lo, hi;
	FILE *f = fopen("/sys/devices/system/cpu/possible", "r");

	if (!f)
		return -1;
	if (!fgets(buf, sizeof(buf), f)) {
		fclose(f);
		return -1;
	}
	fclose(f);
	/* "0-3,5,7-8" */
	while (*p && *p != '\n') {
		lo = strtol(p, &p, 10);
		hi = lo;
		if (*p == '-')
			hi = strtol(p + 1, &p, 10);
		n += hi - lo + 1;
		if (*p == ',')
			p++;
	}
	return n;
}

static long long total_fired(void)
{
	static struct t_run r;

	if (RUN(&r, "stats", "--json") || r.status)
		return -1;
	return json_num_after(json_total(r.out), "fired");
}

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

TEST(stats_table)
{
	static struct t_run r;
	int cpus = possible_cpus();
	char label[16];
	int cpu;

	NEED_MODULE();
	ASSERT_LT(0, cpus);
	ASSERT_EQ(0, RUN(&r, "stats"));
	ASSERT_EQ(0, r.status) TH_LOG("stderr: %s", r.err);
	EXPECT_EQ(0, strncmp(r.out, "CPU ", 4));
	EXPECT_NE(NULL, strstr(r.out, "FIRED"));
	EXPECT_NE(NULL, strstr(r.out, "real/mono/boot"));
	EXPECT_NE(NULL, strstr(r.out, "\ntotal "));
	EXPECT_NE(NULL, strstr(r.out, "\nexpiry lateness"));
	/* One row per possible CPU, in order. */
	for (cpu = 0; cpu < cpus; cpu++) {
		snprintf(label, sizeof(label), "\n%-6d ", cpu);
		EXPECT_NE(NULL, strstr(r.out, label)) TH_LOG("no row for CPU %d", cpu);
	}
	EXPECT_EQ(0, r.err[0]);
}

TEST(stats_json_shape)
{
	static struct t_run r;
	const char *total;
	int cpus = possible_cpus();

	NEED_MODULE();
	ASSERT_EQ(0, RUN(&r, "stats", "--json"));
	ASSERT_EQ(0, r.status) TH_LOG("stderr: %s", r.err);
	ASSERT_EQ(1, json_lines(r.out)) TH_LOG("not one JSON document: %s", r.out);
	EXPECT_EQ(0, strncmp(r.out, "{\"cpus\":[{\"cpu\":0,", 18));
	EXPECT_EQ(cpus, count_substr(r.out, "\"cpu\":"));
	/* Per CPU and in the totals: three heaps, sixteen buckets. */
	EXPECT_EQ(3 * (cpus + 1), count_substr(r.out, "\"clock\":"));
	EXPECT_EQ(cpus + 1, count_substr(r.out, "\"clock\":\"boottime\",\"clockid\":7"));
	EXPECT_EQ(16 * (cpus + 1), count_substr(r.out, "\"min_ns\":"));
	EXPECT_EQ(cpus + 1, count_substr(r.out, "{\"min_ns\":0,"));
	EXPECT_EQ(cpus + 1, count_substr(r.out, "{\"min_ns\":16777216,"));
	total = json_total(r.out);
	EXPECT_EQ(NULL, strstr(total, "\"cpu\":"));
	EXPECT_LE(0, json_num_after(total, "armed"));
	EXPECT_LE(0, json_num_after(total, "max_run_ns"));
	EXPECT_LE(0, json_num_after(total, "deferred_runs"));
}

TEST(stats_count_fired_timers)
{
	static struct t_run r;
	const long long nr = 8;
	struct qtimer_record recs[8];
	long long before, fired = -1, armed_before, lateness;
	const char *total;
	int fd, i, waited;

	NEED_MODULE();
	ASSERT_EQ(0, RUN(&r, "stats", "--json"));
	ASSERT_EQ(0, r.status) TH_LOG("stderr: %s", r.err);
	before = json_num_after(json_total(r.out), "fired");
	armed_before = json_num_after(json_total(r.out), "armed");
	ASSERT_LE(0, before);

	fd = t_open(0);
	ASSERT_LE(0, fd);
	for (i = 0; i < nr; i++)
		ASSERT_EQ(0, t_arm(fd, CLOCK_MONOTONIC, 0, 1000000 + i * 100000,
				    0, 0, NULL));
	ASSERT_EQ(nr, t_collect(fd, recs, nr, QT_ARRIVE_MS));

	/*
	 * The expirer adds to "fired" after it queued the records, so a fast
	 * reader may ask a moment before the count lands.
	 */
	for (waited = 0; waited < QT_ARRIVE_MS; waited += 50) {
		fired = total_fired();
		if (fired >= before + nr)
			break;
		t_sleep_ms(50);
	}
	EXPECT_LE(before + nr, fired);

	ASSERT_EQ(0, RUN(&r, "stats", "--json"));
	total = json_total(r.out);
	EXPECT_LE(armed_before + nr, json_num_after(total, "armed"));
	/* Every timer the expirers popped went into one lateness bucket. */
	lateness = json_lateness_sum(total);
	EXPECT_EQ(json_num_after(total, "fired"), lateness);
	close(fd);
}

TEST(stats_heap_entries)
{
	static struct t_run r;
	int fd, i;

	NEED_MODULE();
	fd = t_open(0);
	ASSERT_LE(0, fd);
	for (i = 0; i < 5; i++)
		ASSERT_EQ(0, t_arm(fd, CLOCK_BOOTTIME, 0, 3600 * NSEC_PER_SEC, 0, 0, NULL));
	ASSERT_EQ(0, RUN(&r, "stats", "--json"));
	ASSERT_EQ(0, r.status);
	EXPECT_LE(5, json_heap_entries(json_total(r.out), "boottime"));
	close(fd);
}

TEST(stats_watch)
{
	static struct t_run r;

	NEED_MODULE();
	ASSERT_EQ(0, RUN(&r, "stats", "-w", "0.2", "-c", "3"));
	ASSERT_EQ(0, r.status) TH_LOG("stderr: %s", r.err);
	EXPECT_EQ(3, count_substr(r.out, "\ntotal "));
	EXPECT_EQ(3, count_substr(r.out, "# "));
	ASSERT_EQ(0, RUN(&r, "stats", "--watch", "0.2", "--count", "2", "--json"));
	ASSERT_EQ(0, r.status) TH_LOG("stderr: %s", r.err);
	EXPECT_EQ(2, json_lines(r.out)) TH_LOG("not two JSON lines: %s", r.out);
}

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
