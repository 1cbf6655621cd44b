// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * The family's statistics through the kernel's YNL CLI against qtimerctl
 * (qtimer_ynl.h): get-stats, do and dump, agrees field by field with
 * qtimerctl's totals and per-CPU heaps after timers of every clock fired,
 * were cancelled and modified; and both tools are refused it as nobody.
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
