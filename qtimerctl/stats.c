// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * qtimerctl stats: one sample is the kernel's per-CPU dump followed by its
 * totals; each is shown as a table (with the expiry lateness histogram)
 * or as one line of JSON, once or every -w SECONDS.
 */

#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <libmnl/libmnl.h>
#include <linux/genetlink.h>

#include <linux/qtimer_netlink.h>

#include "netlink.h"
#include "subcommands.h"
#include "util.h"

#ifndef CLOCK_BOOTTIME
#define CLOCK_BOOTTIME 7
#endif

/* Histogram buckets and heaps one message may carry; more are ignored. */
#define MAX_BUCKETS		64
#define MAX_HEAPS		8

struct heap {
	uint32_t clockid;
	uint64_t entries;
	uint64_t dead;
};

struct bucket {
	uint64_t min_ns;
	uint64_t count;
};

struct stats {
	bool has_cpu;
	uint32_t cpu;
	uint64_t armed, fired, cancelled, modified, coalesced;
	uint64_t deferred_runs, max_run_ns;
	struct heap heaps[MAX_HEAPS];
	unsigned int nr_heaps;
	struct bucket buckets[MAX_BUCKETS];
	unsigned int nr_buckets;
};

struct stats_set {
	struct stats *cpus;
	unsigned int nr_cpus;
	unsigned int cap_cpus;
	struct stats total;
};

/*
 * Where the attributes of each set go: a known attribute's type, and the
 * u32 or u64 field of the struct it fills (nested sets fill none here).
 * An attribute with no type in the table, padding or a newer kernel's, is
 * skipped.
 */
struct attr_field {
	enum mnl_attr_data_type type;
	size_t offset;
};

#define ATTR_U32(s, f)	{ MNL_TYPE_U32, offsetof(struct s, f) }
#define ATTR_U64(s, f)	{ MNL_TYPE_U64, offsetof(struct s, f) }

static const struct attr_field stats_fields[QTIMER_A_STATS_MAX + 1] = {
	[QTIMER_A_STATS_CPU]		= ATTR_U32(stats, cpu),
	[QTIMER_A_STATS_ARMED]		= ATTR_U64(stats, armed),
	[QTIMER_A_STATS_FIRED]		= ATTR_U64(stats, fired),
	[QTIMER_A_STATS_CANCELLED]	= ATTR_U64(stats, cancelled),
	[QTIMER_A_STATS_MODIFIED]	= ATTR_U64(stats, modified),
	[QTIMER_A_STATS_COALESCED]	= ATTR_U64(stats, coalesced),
	[QTIMER_A_STATS_DEFERRED_RUNS]	= ATTR_U64(stats, deferred_runs),
	[QTIMER_A_STATS_MAX_RUN_NS]	= ATTR_U64(stats, max_run_ns),
	[QTIMER_A_STATS_HEAP]		= { MNL_TYPE_NESTED },
	[QTIMER_A_STATS_LATENESS]	= { MNL_TYPE_NESTED },
};

static const struct attr_field heap_fields[QTIMER_A_HEAP_MAX + 1] = {
	[QTIMER_A_HEAP_CLOCK]		= ATTR_U32(heap, clockid),
	[QTIMER_A_HEAP_ENTRIES]		= ATTR_U64(heap, entries),
	[QTIMER_A_HEAP_DEAD]		= ATTR_U64(heap, dead),
};

static const struct attr_field bucket_fields[QTIMER_A_BUCKET_MAX + 1] = {
	[QTIMER_A_BUCKET_MIN_NS]	= ATTR_U64(bucket, min_ns),
	[QTIMER_A_BUCKET_COUNT]		= ATTR_U64(bucket, count),
};

/* attr, of a set whose types go up to max, into its field of obj. */
static int attr_fill(const struct nlattr *attr, void *obj,
		     const struct attr_field *fields, unsigned int max)
{
	unsigned int type = mnl_attr_get_type(attr);
	char *field;

	/* Newer kernels may add attributes: skip what is unknown. */
	if (type > max || !fields[type].type)
		return MNL_CB_OK;
	if (mnl_attr_validate(attr, fields[type].type) < 0)
		return MNL_CB_ERROR;
	field = (char *)obj + fields[type].offset;
	if (fields[type].type == MNL_TYPE_U32)
		*(uint32_t *)field = mnl_attr_get_u32(attr);
	else if (fields[type].type == MNL_TYPE_U64)
		*(uint64_t *)field = mnl_attr_get_u64(attr);
	return MNL_CB_OK;
}

static int heap_attr_cb(const struct nlattr *attr, void *data)
{
	return attr_fill(attr, data, heap_fields, QTIMER_A_HEAP_MAX);
}

static int bucket_attr_cb(const struct nlattr *attr, void *data)
{
	return attr_fill(attr, data, bucket_fields, QTIMER_A_BUCKET_MAX);
}

/*
 * A heap's or a bucket's nested set, read by cb into slot, the next of
 * the *nr used so far; those past max are ignored.
 */
static int stats_nested(const struct nlattr *attr, mnl_attr_cb_t cb,
			void *slot, unsigned int *nr, unsigned int max)
{
	if (*nr == max)
		return MNL_CB_OK;
	if (mnl_attr_parse_nested(attr, cb, slot) < 0)
		return MNL_CB_ERROR;
	(*nr)++;
	return MNL_CB_OK;
}

static int stats_attr_cb(const struct nlattr *attr, void *data)
{
	struct stats *s = data;

	if (attr_fill(attr, s, stats_fields, QTIMER_A_STATS_MAX) != MNL_CB_OK)
		return MNL_CB_ERROR;
	switch (mnl_attr_get_type(attr)) {
	case QTIMER_A_STATS_CPU:
		s->has_cpu = true;
		break;
	case QTIMER_A_STATS_HEAP:
		return stats_nested(attr, heap_attr_cb, &s->heaps[s->nr_heaps],
				    &s->nr_heaps, MAX_HEAPS);
	case QTIMER_A_STATS_LATENESS:
		return stats_nested(attr, bucket_attr_cb,
				    &s->buckets[s->nr_buckets], &s->nr_buckets,
				    MAX_BUCKETS);
	}
	return MNL_CB_OK;
}

static int stats_parse(const struct nlmsghdr *nlh, struct stats *s)
{
	memset(s, 0, sizeof(*s));
	if (mnl_attr_parse(nlh, sizeof(struct genlmsghdr), stats_attr_cb, s) < 0) {
		errno = EBADMSG;
		return MNL_CB_ERROR;
	}
	return MNL_CB_OK;
}

static int stats_cpu_cb(const struct nlmsghdr *nlh, void *data)
{
	struct stats_set *set = data;

	if (set->nr_cpus == set->cap_cpus) {
		unsigned int cap = set->cap_cpus ? set->cap_cpus * 2 : 16;
		struct stats *cpus = realloc(set->cpus, cap * sizeof(*cpus));

		if (!cpus) {
			errno = ENOMEM;
			return MNL_CB_ERROR;
		}
		set->cpus = cpus;
		set->cap_cpus = cap;
	}
	if (stats_parse(nlh, &set->cpus[set->nr_cpus]) != MNL_CB_OK)
		return MNL_CB_ERROR;
	set->nr_cpus++;
	return MNL_CB_OK;
}

static int stats_total_cb(const struct nlmsghdr *nlh, void *data)
{
	struct stats_set *set = data;

	return stats_parse(nlh, &set->total);
}

/* One sample: the per-CPU dump, then the kernel's totals. */
static int stats_fetch(struct nl *nl, struct stats_set *set)
{
	struct nlmsghdr *nlh;

	set->nr_cpus = 0;
	nlh = nl_start(nl, nl->family, QTIMER_CMD_GET_STATS, NLM_F_DUMP,
		       QTIMER_GENL_VERSION);
	if (nl_talk(nl, nlh, stats_cpu_cb, set) < 0)
		return -1;
	nlh = nl_start(nl, nl->family, QTIMER_CMD_GET_STATS, 0,
		       QTIMER_GENL_VERSION);
	return nl_talk(nl, nlh, stats_total_cb, set);
}

static const char *clock_name(uint32_t clockid)
{
	switch (clockid) {
	case CLOCK_REALTIME:
		return "realtime";
	case CLOCK_MONOTONIC:
		return "monotonic";
	case CLOCK_BOOTTIME:
		return "boottime";
	}
	return "unknown";
}

/* "0/12/3": one number per heap, in the kernel's clock order. */
static void heap_column(const struct stats *s, bool dead, char *buf,
			size_t len)
{
	size_t off = 0;
	unsigned int i;

	buf[0] = '\0';
	for (i = 0; i < s->nr_heaps && off < len; i++)
		off += snprintf(buf + off, len - off, "%s%" PRIu64, i ? "/" : "",
				dead ? s->heaps[i].dead : s->heaps[i].entries);
}

static void print_row(const char *label, const struct stats *s)
{
	char heap[64], dead[64];

	heap_column(s, false, heap, sizeof(heap));
	heap_column(s, true, dead, sizeof(dead));
	printf("%-6s %12" PRIu64 " %12" PRIu64 " %12" PRIu64 " %10" PRIu64
	       " %10" PRIu64 " %9" PRIu64 " %11.1f %16s %12s\n",
	       label, s->armed, s->fired, s->cancelled, s->modified,
	       s->coalesced, s->deferred_runs, s->max_run_ns / 1000.0, heap,
	       dead);
}

/* 1024 -> "1.02us": three significant digits. */
static void format_ns(uint64_t ns, char *buf, size_t len)
{
	static const char *const units[] = { "ns", "us", "ms", "s" };
	double v = ns;
	unsigned int u = 0;

	while (v >= 1000 && u < 3) {
		v /= 1000;
		u++;
	}
	if (!u || v >= 100)
		snprintf(buf, len, "%.0f%s", v, units[u]);
	else if (v >= 10)
		snprintf(buf, len, "%.1f%s", v, units[u]);
	else
		snprintf(buf, len, "%.2f%s", v, units[u]);
}

static void print_lateness(const struct stats *s)
{
	char lo[16], hi[16];
	unsigned int i;

	printf("\nexpiry lateness (all CPUs)\n");
	for (i = 0; i < s->nr_buckets; i++) {
		format_ns(s->buckets[i].min_ns, lo, sizeof(lo));
		if (i + 1 < s->nr_buckets) {
			format_ns(s->buckets[i + 1].min_ns, hi, sizeof(hi));
			printf("  %7s .. %-7s %12" PRIu64 "\n", lo, hi,
			       s->buckets[i].count);
		} else {
			printf("  %7s .. %-7s %12" PRIu64 "\n", lo, "",
			       s->buckets[i].count);
		}
	}
}

static void print_table(const struct stats_set *set)
{
	char label[16], clocks[64] = "";
	const struct stats *t = &set->total;
	size_t off = 0;
	unsigned int i;

	for (i = 0; i < t->nr_heaps && off < sizeof(clocks); i++)
		off += snprintf(clocks + off, sizeof(clocks) - off, "%s%.4s",
				i ? "/" : "", clock_name(t->heaps[i].clockid));
	printf("%-6s %12s %12s %12s %10s %10s %9s %11s %16s %12s\n", "CPU",
	       "ARMED", "FIRED", "CANCELLED", "MODIFIED", "COALESCED",
	       "DEFERRED", "MAX_RUN_US", "HEAP", "DEAD");
	printf("%-6s %12s %12s %12s %10s %10s %9s %11s %16s %12s\n", "", "",
	       "", "", "", "", "", "", clocks, clocks);
	for (i = 0; i < set->nr_cpus; i++) {
		snprintf(label, sizeof(label), "%u", set->cpus[i].cpu);
		print_row(label, &set->cpus[i]);
	}
	print_row("total", t);
	print_lateness(t);
}

static void json_stats(const struct stats *s)
{
	unsigned int i;

	putchar('{');
	if (s->has_cpu)
		printf("\"cpu\":%u,", s->cpu);
	printf("\"armed\":%" PRIu64 ",\"fired\":%" PRIu64
	       ",\"cancelled\":%" PRIu64 ",\"modified\":%" PRIu64
	       ",\"coalesced\":%" PRIu64 ",\"deferred_runs\":%" PRIu64
	       ",\"max_run_ns\":%" PRIu64 ",\"heaps\":[",
	       s->armed, s->fired, s->cancelled, s->modified, s->coalesced,
	       s->deferred_runs, s->max_run_ns);
	for (i = 0; i < s->nr_heaps; i++)
		printf("%s{\"clock\":\"%s\",\"clockid\":%u,\"entries\":%" PRIu64
		       ",\"dead\":%" PRIu64 "}", i ? "," : "",
		       clock_name(s->heaps[i].clockid), s->heaps[i].clockid,
		       s->heaps[i].entries, s->heaps[i].dead);
	printf("],\"lateness\":[");
	for (i = 0; i < s->nr_buckets; i++)
		printf("%s{\"min_ns\":%" PRIu64 ",\"count\":%" PRIu64 "}",
		       i ? "," : "", s->buckets[i].min_ns, s->buckets[i].count);
	printf("]}");
}

/* One JSON object per sample, on one line (JSON Lines with -w). */
static void print_json(const struct stats_set *set)
{
	unsigned int i;

	printf("{\"cpus\":[");
	for (i = 0; i < set->nr_cpus; i++) {
		if (i)
			putchar(',');
		json_stats(&set->cpus[i]);
	}
	printf("],\"total\":");
	json_stats(&set->total);
	printf("}\n");
}

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = 1;
}

int cmd_stats(struct nl *nl, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "watch", required_argument, NULL, 'w' },
		{ "count", required_argument, NULL, 'c' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	struct stats_set set = {};
	double interval = 0;
	uint64_t count = 0, n;
	bool json = false;
	struct timespec ts;
	char *end;
	int c;

	/* argv[0] is "stats": getopt starts after it. */
	optind = 1;
	while ((c = getopt_long(argc, argv, "+w:c:jh", opts, NULL)) != -1) {
		switch (c) {
		case 'w':
			interval = strtod(optarg, &end);
			if (*end || !(interval > 0) || interval > 86400) {
				err_msg("stats: -w wants a number of seconds, not '%s'",
					optarg);
				return EXIT_USAGE;
			}
			break;
		case 'c':
			if (parse_u64(optarg, &count) || !count) {
				err_msg("stats: -c wants a positive count, not '%s'",
					optarg);
				return EXIT_USAGE;
			}
			break;
		case 'j':
			json = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind != argc) {
		err_msg("stats: unexpected argument '%s'", argv[optind]);
		return EXIT_USAGE;
	}
	if (!interval)
		count = 1;
	if (nl_open(nl) < 0)
		return EXIT_FAIL;

	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	for (n = 0; !stop && (!count || n < count); n++) {
		if (n) {
			ts.tv_sec = (time_t)interval;
			ts.tv_nsec = (long)((interval - ts.tv_sec) * 1e9);
			while (nanosleep(&ts, &ts) && errno == EINTR && !stop)
				;
			if (stop)
				break;
		}
		if (stats_fetch(nl, &set) < 0) {
			report_request_error(nl, "stats");
			free(set.cpus);
			return EXIT_FAIL;
		}
		if (json) {
			print_json(&set);
		} else {
			if (n)
				putchar('\n');
			if (interval) {
				time_t now = time(NULL);
				char when[32];

				strftime(when, sizeof(when), "%F %T",
					 localtime(&now));
				printf("# %s\n", when);
			}
			print_table(&set);
		}
		fflush(stdout);
	}
	free(set.cpus);
	return 0;
}
