// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * The qtimer family driven by the kernel's own YNL CLI (tools/net/ynl/cli.py
 * of Linux 6.12) from Documentation/netlink/specs/qtimer.yaml, and checked
 * against qtimerctl, which speaks the family through the C uapi header.
 * Where the two tools disagree, the spec and the header disagree (or the
 * spec and the kernel do), so every field of every reply is compared, by
 * name, in order.  cli.py also checks the spec against the kernel's
 * genetlink-c schema before it sends anything.
 *
 * The CLI, its python3 and the spec sit in /usr/local/lib/ynl in the guest
 * (selftests/ynl/pack-ynl.sh); $QT_YNL_ROOT names another such tree.
 * Without the module or the tree, the tests skip.
 */

#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/qtimer.h>
#include <linux/qtimer_netlink.h>

#include "kselftest_harness.h"
#include "helpers.h"

#define NOBODY		65534
#define MAX_FIELDS	1024

/* --- running the two tools ---------------------------------------------- */

static const char *ynl_root(void)
{
	const char *root = getenv("QT_YNL_ROOT");

	return root ? root : "/usr/local/lib/ynl";
}

/*
 * cli.py --spec qtimer.yaml --output-json, then @args.  Byte code is not
 * written: the tree is shared by the root and nobody runs.
 */
static int ynl_run(struct t_run *r, uid_t uid, const char *const *args)
{
	static char python[PATH_MAX], cli[PATH_MAX], spec[PATH_MAX];
	const char *argv[32] = { python, "-B", cli, "--spec", spec,
				 "--output-json" };
	int i, n = 6;

	snprintf(python, sizeof(python), "%s/bin/python3", ynl_root());
	snprintf(cli, sizeof(cli), "%s/tools/net/ynl/cli.py", ynl_root());
	snprintf(spec, sizeof(spec), "%s/Documentation/netlink/specs/qtimer.yaml",
		 ynl_root());
	for (i = 0; args[i] && n < 31; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	return t_run(r, uid, 0, (char *const *)argv);
}

static int qtimerctl_run(struct t_run *r, uid_t uid, const char *const *args)
{
	const char *argv[32] = { getenv("QTIMERCTL") ?: "qtimerctl" };
	int i, n = 1;

	for (i = 0; args[i] && n < 31; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	return t_run(r, uid, 0, (char *const *)argv);
}

#define YNL(r, uid, ...) ynl_run(r, uid, (const char *const []){ __VA_ARGS__, NULL })
#define QTIMERCTL(r, uid, ...) \
	qtimerctl_run(r, uid, (const char *const []){ __VA_ARGS__, NULL })

/* A failed run, for the log: what it printed. */
static void show_run(const char *what, const struct t_run *r)
{
	fprintf(stderr, "# %s: status %d\n# stdout: %.2000s\n# stderr: %.2000s\n",
		what, r->status, r->out, r->err);
}

#define NEED_TOOLS() do {						\
	char path[PATH_MAX];						\
									\
	if (access("/sys/module/qtimer", F_OK))				\
		SKIP(return, "qtimer module not loaded");		\
	snprintf(path, sizeof(path), "%s/bin/python3", ynl_root());	\
	if (access(path, X_OK))						\
		SKIP(return, "no YNL CLI in %s (selftests/ynl/pack-ynl.sh)", \
		     ynl_root());					\
} while (0)

/* --- comparing JSON replies, field by field ----------------------------- */

/*
 * A JSON document flattened to its scalars in document order, each named by
 * the path of object keys to it ("heap.entries"); arrays add nothing to the
 * path, so a multi-attr's elements and a dump's messages come one after the
 * other.  Two replies agree when their lists are equal.
 */
struct field {
	char key[64];
	bool number;
	unsigned long long value;
};

struct fields {
	struct field f[MAX_FIELDS];
	int nr;
};

static const char *skip_ws(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
		p++;
	return p;
}

/* A string without escapes (neither tool needs them for these replies). */
static const char *parse_string(const char *p, char *buf, size_t len)
{
	const char *end;

	if (*p != '"')
		return NULL;
	end = strchr(p + 1, '"');
	if (!end || memchr(p + 1, '\\', end - p - 1) || (size_t)(end - p) > len)
		return NULL;
	memcpy(buf, p + 1, end - p - 1);
	buf[end - p - 1] = '\0';
	return end + 1;
}

static const char *flatten(const char *p, char *path, struct fields *fs,
			   int depth)
{
	size_t plen = strlen(path);
	struct field *f;
	char key[64], *end;

	p = skip_ws(p);
	if (depth > 8)
		return NULL;
	if (*p == '{' || *p == '[') {
		char close = *p == '{' ? '}' : ']';

		p = skip_ws(p + 1);
		if (*p == close)
			return p + 1;
		for (;;) {
			if (close == '}') {
				p = parse_string(skip_ws(p), key, sizeof(key));
				if (!p || plen + strlen(key) + 2 > 64)
					return NULL;
				p = skip_ws(p);
				if (*p++ != ':')
					return NULL;
				sprintf(path + plen, "%s%s", plen ? "." : "", key);
			}
			p = flatten(p, path, fs, depth + 1);
			path[plen] = '\0';
			if (!p)
				return NULL;
			p = skip_ws(p);
			if (*p == close)
				return p + 1;
			if (*p++ != ',')
				return NULL;
		}
	}
	if (fs->nr == MAX_FIELDS)
		return NULL;
	f = &fs->f[fs->nr++];
	snprintf(f->key, sizeof(f->key), "%s", path);
	f->number = *p >= '0' && *p <= '9';
	if (f->number) {
		errno = 0;
		f->value = strtoull(p, &end, 10);
		return errno ? NULL : end;
	}
	if (*p == '"')
		return parse_string(p, key, sizeof(key));
	if (!strncmp(p, "null", 4) || !strncmp(p, "true", 4))
		return p + 4;
	if (!strncmp(p, "false", 5))
		return p + 5;
	return NULL;
}

/*
 * @text's fields below @prefix ("" for all), numbers only, with the prefix
 * taken off.  0, or -1 when @text is not the JSON it should be.
 */
static int fields_of(const char *text, const char *prefix, struct fields *out)
{
	static struct fields all;
	size_t len = strlen(prefix);
	char path[64] = "";
	int i;

	all.nr = 0;
	out->nr = 0;
	text = flatten(text, path, &all, 0);
	if (!text || *skip_ws(text))
		return -1;
	for (i = 0; i < all.nr; i++) {
		const char *key = all.f[i].key;

		if (!all.f[i].number || strncmp(key, prefix, len))
			continue;
		out->f[out->nr] = all.f[i];
		snprintf(out->f[out->nr].key, sizeof(out->f[0].key), "%s", key + len);
		out->nr++;
	}
	return 0;
}

/*
 * qtimerctl's JSON names, turned into the spec's: "_" for "-", a list of
 * heaps for the multi-attr heap, and the clock's id (its name is only
 * qtimerctl's way of showing it, and is no number).
 */
static void qtimerctl_to_spec_names(struct fields *fs)
{
	static const struct { const char *from, *to; } renames[] = {
		{ "heaps.clockid", "heap.clock" },
		{ "heaps.entries", "heap.entries" },
		{ "heaps.dead", "heap.dead" },
	};
	unsigned int i, j;
	char *c;

	for (i = 0; i < (unsigned int)fs->nr; i++) {
		for (j = 0; j < sizeof(renames) / sizeof(renames[0]); j++)
			if (!strcmp(fs->f[i].key, renames[j].from))
				strcpy(fs->f[i].key, renames[j].to);
		for (c = fs->f[i].key; *c; c++)
			if (*c == '_')
				*c = '-';
	}
}

/* Every field the same, by name and value and in the same order. */
static bool fields_agree(const char *what, const struct fields *ynl,
			 const struct fields *ctl)
{
	int i;

	for (i = 0; i < ynl->nr || i < ctl->nr; i++) {
		const struct field *a = i < ynl->nr ? &ynl->f[i] : NULL;
		const struct field *b = i < ctl->nr ? &ctl->f[i] : NULL;

		if (a && b && !strcmp(a->key, b->key) && a->value == b->value)
			continue;
		fprintf(stderr, "# %s, field %d: ynl %s=%llu, qtimerctl %s=%llu\n",
			what, i, a ? a->key : "(none)", a ? a->value : 0,
			b ? b->key : "(none)", b ? b->value : 0);
		return false;
	}
	return true;
}

/* By name and value: the bytes after a key's NUL are not compared. */
static bool fields_equal(const struct fields *a, const struct fields *b)
{
	int i;

	if (a->nr != b->nr)
		return false;
	for (i = 0; i < a->nr; i++)
		if (strcmp(a->f[i].key, b->f[i].key) ||
		    a->f[i].value != b->f[i].value)
			return false;
	return true;
}

/* For the log: the first field that differs between two readings. */
static void show_moved(const struct fields *a, const struct fields *b)
{
	int i;

	for (i = 0; i < a->nr && i < b->nr; i++) {
		if (!strcmp(a->f[i].key, b->f[i].key) &&
		    a->f[i].value == b->f[i].value)
			continue;
		fprintf(stderr, "# field %d moved: %s=%llu, then %s=%llu\n", i,
			a->f[i].key, a->f[i].value, b->f[i].key, b->f[i].value);
		return;
	}
	if (a->nr != b->nr)
		fprintf(stderr, "# %d fields, then %d\n", a->nr, b->nr);
}

static unsigned long long field(const struct fields *fs, const char *key)
{
	int i;

	for (i = 0; i < fs->nr; i++)
		if (!strcmp(fs->f[i].key, key))
			return fs->f[i].value;
	return ~0ULL;
}

/* --- tests ---------------------------------------------------------------- */

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

/* 6.1's harness runs the test body even when its setup skipped. */
#define RETURN_IF_SETUP_SKIPPED() do {					\
	if (_metadata->skip)						\
		return;							\
} while (0)

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

/*
 * Timers on two CPUs' heaps, of every clock, so that no counter of the
 * comparison is zero everywhere: some fired (and so in the lateness
 * histogram), one cancelled, one modified twice, and the rest armed an
 * hour ahead, so that nothing fires while the tools read.  The counters
 * differ from each other, so that a spec that swaps two shows.
 */
FIXTURE(activity) {
	int fd;
};

FIXTURE_SETUP(activity)
{
	static const int clocks[] = { CLOCK_REALTIME, CLOCK_MONOTONIC,
				      CLOCK_BOOTTIME };
	struct qtimer_record recs[8];
	int cpu, used = 0, i;
	__u64 id;

	self->fd = -1;
	NEED_TOOLS();
	self->fd = t_open(0);
	ASSERT_LE(0, self->fd);
	for (cpu = 0; cpu < t_nr_cpus() && used < 2; cpu++) {
		if (!t_cpu_online(cpu))
			continue;
		used++;
		for (i = 0; i < 3; i++)
			ASSERT_EQ(0, t_arm_cpu(self->fd, clocks[i], 0,
						3600 * NSEC_PER_SEC, 0, 0, cpu, &id));
		for (i = 0; i < 2; i++)
			ASSERT_EQ(QTIMER_CANCEL_ARMED,
				  t_modify(self->fd, id, 0,
					    (7200 + i) * NSEC_PER_SEC, 0, 0));
		ASSERT_EQ(0, t_arm_cpu(self->fd, CLOCK_MONOTONIC, 0,
					3600 * NSEC_PER_SEC, 0, 0, cpu, &id));
		ASSERT_EQ(QTIMER_CANCEL_ARMED, t_cancel(self->fd, id));
		for (i = 0; i < 3; i++)
			ASSERT_EQ(0, t_arm_cpu(self->fd, CLOCK_MONOTONIC, 0,
						NSEC_PER_MSEC, 0, i, cpu, NULL));
	}
	ASSERT_EQ(3 * used, t_collect(self->fd, recs, 3 * used, QT_ARRIVE_MS));
}

FIXTURE_TEARDOWN(activity)
{
	if (self->fd >= 0)
		close(self->fd);
}

/*
 * One reading of both tools: qtimerctl (its dump and its totals), then
 * cli.py's do and dump, then qtimerctl again.  The counters may move
 * between the runs (a stale heap entry of an earlier suite dropped when it
 * falls due, say), so a reading counts only when qtimerctl read the same
 * before and after: then nothing moved in between, and cli.py must have
 * read exactly that too.  Returns 1 for such a reading, 0 for one to
 * take again, -1 when a tool failed.
 */
struct stats_reading {
	struct fields ctl_total, ctl_cpus, again_total, again_cpus;
	struct fields ynl_do, ynl_dump;
};

static int read_stats(struct stats_reading *s)
{
	static struct t_run r;

	if (QTIMERCTL(&r, 0, "stats", "--json") || r.status ||
	    fields_of(r.out, "total.", &s->ctl_total) ||
	    fields_of(r.out, "cpus.", &s->ctl_cpus)) {
		show_run("qtimerctl stats --json", &r);
		return -1;
	}
	if (YNL(&r, 0, "--do", "get-stats") || r.status ||
	    fields_of(r.out, "", &s->ynl_do)) {
		show_run("cli.py --do get-stats", &r);
		return -1;
	}
	if (YNL(&r, 0, "--dump", "get-stats") || r.status ||
	    fields_of(r.out, "", &s->ynl_dump)) {
		show_run("cli.py --dump get-stats", &r);
		return -1;
	}
	if (QTIMERCTL(&r, 0, "stats", "--json") || r.status ||
	    fields_of(r.out, "total.", &s->again_total) ||
	    fields_of(r.out, "cpus.", &s->again_cpus)) {
		show_run("qtimerctl stats --json", &r);
		return -1;
	}
	qtimerctl_to_spec_names(&s->ctl_total);
	qtimerctl_to_spec_names(&s->ctl_cpus);
	qtimerctl_to_spec_names(&s->again_total);
	qtimerctl_to_spec_names(&s->again_cpus);
	if (fields_equal(&s->ctl_total, &s->again_total) &&
	    fields_equal(&s->ctl_cpus, &s->again_cpus))
		return 1;
	show_moved(&s->ctl_total, &s->again_total);
	show_moved(&s->ctl_cpus, &s->again_cpus);
	return 0;
}

static int count_key(const struct fields *fs, const char *key)
{
	int i, n = 0;

	for (i = 0; i < fs->nr; i++)
		n += !strcmp(fs->f[i].key, key);
	return n;
}

static unsigned long long sum_key(const struct fields *fs, const char *key)
{
	unsigned long long sum = 0;
	int i;

	for (i = 0; i < fs->nr; i++)
		if (!strcmp(fs->f[i].key, key))
			sum += fs->f[i].value;
	return sum;
}

TEST_F(activity, get_stats_agrees)
{
	static struct stats_reading s;
	int tries, ret = 0;

	RETURN_IF_SETUP_SKIPPED();

	for (tries = 1; tries <= 5; tries++) {
		ret = read_stats(&s);
		if (ret)
			break;
		fprintf(stderr, "# the counters moved during reading %d: again\n",
			tries);
	}
	ASSERT_EQ(1, ret);
	/* The fields of a do: 7 counters, 3 per heap, 2 per bucket. */
	EXPECT_LE(7 + 3 * 3 + 2, s.ynl_do.nr);
	EXPECT_NE(0, field(&s.ynl_do, "fired"));
	EXPECT_NE(0, sum_key(&s.ynl_do, "heap.entries"));
	EXPECT_NE(0, sum_key(&s.ynl_do, "lateness.count"));
	EXPECT_TRUE(fields_agree("get-stats do", &s.ynl_do, &s.ctl_total));
	EXPECT_TRUE(fields_agree("get-stats dump", &s.ynl_dump, &s.ctl_cpus));
	/* A message per possible CPU: at least the two used above. */
	EXPECT_LE(2, count_key(&s.ynl_dump, "cpu"));
}

/*
 * GET_STATS has admin-perm (what the counters say of other users' timers
 * is for the administrator): both tools are refused it as nobody.
 */
TEST(get_stats_refused_as_nobody)
{
	static struct t_run r;

	NEED_TOOLS();
	ASSERT_EQ(0, YNL(&r, NOBODY, "--do", "get-stats"));
	EXPECT_EQ(1, r.status);
	EXPECT_NE(NULL, strstr(r.out, "Netlink error: Operation not permitted"));
	ASSERT_EQ(0, YNL(&r, NOBODY, "--dump", "get-stats"));
	EXPECT_EQ(1, r.status);
	EXPECT_NE(NULL, strstr(r.out, "Netlink error: Operation not permitted"));
	ASSERT_EQ(0, QTIMERCTL(&r, NOBODY, "stats"));
	EXPECT_EQ(1, r.status);
}

TEST_HARNESS_MAIN
