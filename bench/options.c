// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * qtbench's command line: the defaults, the usage text, and what the
 * options make of them.  It fills the driver's plan (which mechanisms,
 * workloads and sizes to run) and the options the workloads read (struct
 * opts); it runs nothing.  An unknown option or a --reps out of range is
 * a usage error (exit 2); the usage text shows the values in force when it
 * is printed, so "--mech timerfd --help" shows timerfd.
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "qtbench.h"

struct opts opts = {
	.budget_ns = 45 * NSEC_PER_SEC,
	.window_ns = NSEC_PER_SEC,
	.ticker_period_ns = 100 * NSEC_PER_MSEC,
	.ticker_ns = 3 * NSEC_PER_SEC,
	.reset_ns = 4 * NSEC_PER_SEC,
	.reset_timeout_ns = 2 * NSEC_PER_SEC,
	.uring_batch = 512,
	.tune = true,
};

/*
 * A list of sizes ("10k,100k,1M"): anything that is not a whole number of
 * at least 1, with an optional k or M, is an error (exit 2), not a size
 * quietly left out.
 */
static size_t parse_list(const char *arg, size_t *out, size_t max)
{
	char *copy = strdup(arg), *tok, *save;
	size_t nr = 0;

	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *end;
		double v = strtod(tok, &end);

		if (end != tok && (*end == 'k' || *end == 'K'))
			v *= 1e3, end++;
		else if (end != tok && (*end == 'M' || *end == 'm'))
			v *= 1e6, end++;
		if (end == tok || *end || !(v >= 1 && v <= 1e9) || v != (double)(size_t)v) {
			fprintf(stderr, "qtbench: '%s' in '%s' is not a size (e.g. 10k, 1M)\n", tok, arg);
			exit(2);
		}
		if (nr == max) {
			fprintf(stderr, "qtbench: '%s' has more than %zu entries\n", arg, max);
			exit(2);
		}
		out[nr++] = (size_t)v;
	}
	free(copy);
	return nr;
}

static void sort_sizes(size_t *v, size_t nr)
{
	size_t i, k;

	for (i = 1; i < nr; i++)
		for (k = i; k > 0 && v[k - 1] > v[k]; k--) {
			size_t t = v[k];

			v[k] = v[k - 1];
			v[k - 1] = t;
		}
}

/* Every entry of the comma-separated @list is one of @known (exit 2 if not). */
static void check_names(const char *what, const char *list, const char *const *known)
{
	char *copy = strdup(list), *tok, *save;
	int i;

	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		for (i = 0; known[i] && strcmp(known[i], tok); i++)
			;
		if (!known[i]) {
			fprintf(stderr, "qtbench: unknown %s '%s'\n", what, tok);
			exit(2);
		}
	}
	free(copy);
}

bool in_list(const char *list, const char *name)
{
	size_t len = strlen(name);
	const char *p = list;

	while ((p = strstr(p, name))) {
		if ((p == list || p[-1] == ',') && (p[len] == ',' || !p[len]))
			return true;
		p += len;
	}
	return false;
}

static void usage(const struct plan *p, int status)
{
	fprintf(status ? stderr : stdout,
		"usage: qtbench [options]\n"
		"  --kernel NAME        name to put in the kernel column (default: uname -r)\n"
		"  --n LIST             timer counts (default 10k,100k,1M)\n"
		"  --quick              --n 10k,100k --ticker-k 1k\n"
		"  --big LIST           also run the qtimer mechanisms at these N (e.g. 5M,10M)\n"
		"  --mech LIST          %s\n"
		"  --workloads LIST     %s\n"
		"  --batches LIST       qtimer SUBMIT sizes (default 64,512,4096)\n"
		"  --uring-batch N      SQEs per io_uring submit (default %u)\n"
		"  --ticker-k LIST      ticker timer counts (default 1k,10k)\n"
		"  --ticker-period-ms N (default %lld)  --ticker-secs N (default %lld)\n"
		"  --budget SECS        time limit of each timed phase (default %lld)\n"
		"  --seed N\n"
		"  --reps N             run each workload N times (at most %d) and take\n"
		"                       the median (default: 3 up to 100k timers, else 1;\n"
		"                       a run that runs out of its budget is not repeated)\n"
		"  --no-warmup          skip the untimed warm-up round\n"
		"  --no-tune            leave sysctls, /sys and module parameters alone\n"
		"                       (for trying it outside the VM; memory figures get noisy)\n",
		p->mech_list, p->workloads, opts.uring_batch,
		(long long)(opts.ticker_period_ns / NSEC_PER_MSEC),
		(long long)(opts.ticker_ns / NSEC_PER_SEC),
		(long long)(opts.budget_ns / NSEC_PER_SEC), MAX_REPS);
	exit(status);
}

/*
 * The plan from the defaults and argv: n_list comes out ascending and
 * max_n is the largest N of any run, --big included.
 */
void parse_options(int argc, char **argv, struct plan *p)
{
	static const struct option longopts[] = {
		{ "kernel", required_argument, NULL, 'k' },
		{ "n", required_argument, NULL, 'n' },
		{ "quick", no_argument, NULL, 'q' },
		{ "big", required_argument, NULL, 'B' },
		{ "mech", required_argument, NULL, 'm' },
		{ "workloads", required_argument, NULL, 'w' },
		{ "batches", required_argument, NULL, 'b' },
		{ "uring-batch", required_argument, NULL, 'u' },
		{ "ticker-k", required_argument, NULL, 'K' },
		{ "ticker-period-ms", required_argument, NULL, 'P' },
		{ "ticker-secs", required_argument, NULL, 'T' },
		{ "budget", required_argument, NULL, 't' },
		{ "seed", required_argument, NULL, 's' },
		{ "no-tune", no_argument, NULL, 'N' },
		{ "no-warmup", no_argument, NULL, 'W' },
		{ "reps", required_argument, NULL, 'R' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	size_t tmp[MAX_LIST], i;
	struct utsname uts;
	int opt;

	*p = (struct plan){
		.mech_list = "qtimer,qtimer-batch,qtimer-ring,qtimer-table,libtimerdev,libtimerdev-table,timerfd,posix,io_uring,libuv",
		.workloads = "arm,fire,mixed,ticker,reset,startstop,parallel",
		.seed = 1,
		.warm = true,
	};
	p->nr_n = parse_list("10k,100k,1M", p->n_list, MAX_LIST);
	p->nr_ticker_k = parse_list("1k,10k", p->ticker_k, MAX_LIST);
	p->nr_batches = parse_list("64,512,4096", tmp, MAX_LIST);
	for (i = 0; i < p->nr_batches; i++)
		p->batches[i] = tmp[i];

	while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'k':
			p->kernel_name = optarg;
			break;
		case 'n':
			p->nr_n = parse_list(optarg, p->n_list, MAX_LIST);
			break;
		case 'q':
			p->nr_n = parse_list("10k,100k", p->n_list, MAX_LIST);
			p->nr_ticker_k = parse_list("1k", p->ticker_k, MAX_LIST);
			break;
		case 'B':
			p->nr_big = parse_list(optarg, p->big_n, MAX_LIST);
			break;
		case 'm':
			p->mech_list = optarg;
			break;
		case 'w':
			p->workloads = optarg;
			break;
		case 'b':
			p->nr_batches = parse_list(optarg, tmp, MAX_LIST);
			for (i = 0; i < p->nr_batches; i++)
				p->batches[i] = tmp[i] > 4096 ? 4096 : tmp[i];
			break;
		case 'u':
			opts.uring_batch = strtoul(optarg, NULL, 0) ?: 512;
			break;
		case 'K':
			p->nr_ticker_k = parse_list(optarg, p->ticker_k, MAX_LIST);
			break;
		case 'P':
			opts.ticker_period_ns = strtoll(optarg, NULL, 0) * NSEC_PER_MSEC ?: NSEC_PER_SEC / 10;
			break;
		case 'T':
			opts.ticker_ns = strtoll(optarg, NULL, 0) * NSEC_PER_SEC ?: 3 * NSEC_PER_SEC;
			break;
		case 't':
			opts.budget_ns = strtoll(optarg, NULL, 0) * NSEC_PER_SEC ?: 45 * NSEC_PER_SEC;
			break;
		case 's':
			p->seed = strtoull(optarg, NULL, 0);
			break;
		case 'N':
			opts.tune = false;
			break;
		case 'W':
			p->warm = false;
			break;
		case 'R':
			p->reps = strtoul(optarg, NULL, 0);
			if (p->reps < 1 || p->reps > MAX_REPS)
				usage(p, 2);
			break;
		case 'h':
			usage(p, 0);
			break;
		default:
			usage(p, 2);
		}
	}
	check_names("mechanism", p->mech_list, (const char *const[]){ "qtimer",
		    "qtimer-batch", "qtimer-ring", "qtimer-table", "libtimerdev", "libtimerdev-table", "timerfd",
		    "posix", "io_uring", "libuv", NULL });
	check_names("workload", p->workloads, (const char *const[]){ "arm", "fire",
		    "mixed", "ticker", "reset", "startstop", "parallel", NULL });
	if (!p->kernel_name)
		p->kernel_name = uname(&uts) ? "unknown" : strdup(uts.release);
	for (i = 0; i < p->nr_n; i++)
		if (p->n_list[i] > p->max_n)
			p->max_n = p->n_list[i];
	for (i = 0; i < p->nr_big; i++)
		if (p->big_n[i] > p->max_n)
			p->max_n = p->big_n[i];
	/* Ascending, so that smaller runs size and gate the bigger ones. */
	sort_sizes(p->n_list, p->nr_n);
	sort_sizes(p->big_n, p->nr_big);
}
