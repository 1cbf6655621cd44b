// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * qtimerctl end to end, stats: the table, one row per possible CPU; the
 * --json document's shape; fired timers, armed timers and the lateness
 * histogram counting what the raw ioctls did; heap entries; and --watch
 * (ctl.h: how the qtimerctl_*_test suites run the tool).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/qtimer.h>

#include "kselftest_harness.h"
#include "ctl.h"

/* --- reading stats --json ---------------------------------------------- */

static int count_substr(const char *hay, const char *needle)
{
	int n = 0;

	while ((hay = strstr(hay, needle))) {
		n++;
		hay += strlen(needle);
	}
	return n;
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

TEST_HARNESS_MAIN
