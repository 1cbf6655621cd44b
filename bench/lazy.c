// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * The lazy workloads, after Go's timer benchmarks of the status protocol
 * (1.14's BenchmarkReset and BenchmarkStartStop), where most timers never
 * fire:
 *
 *   reset      N timers of timeout T (opts.reset_timeout_ns, 2 s), each
 *              pushed to now + T pass after pass, in index order, for
 *              opts.reset_ns (4 s, so that the entries of the first
 *              deadlines surface in the kernel's heaps within it): an idle
 *              timeout kept alive by traffic.  A mechanism whose pass (or
 *              arming, the first pass) takes longer than T sees timers
 *              fire under the pushes, and its run is partial.
 *   startstop  N timers armed an hour out, then each stopped, in index
 *              order: a request timeout that the reply beats.
 *
 * Both report the caller's CPU time per operation (per reset; per timer,
 * its arm and its stop, for startstop) as ns_per_op, and the CPU time of
 * all CPUs per operation, the kernel's work on other CPUs (an expirer
 * re-keying a pushed timer, a worker) included, from /proc/stat, as the
 * cpu column.  Under TCG both are coarse (ticks of 4 ms): the phases last
 * seconds.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "helpers.h"
#include "qtbench.h"

#define LAZY_CHUNK	4096
#define HOUR_NS		(3600 * NSEC_PER_SEC)

static int64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

/* Runs ops[0..nr) through the mechanism in chunks; 0 or -errno. */
static int lazy_submit(struct run *r, struct mop *ops, size_t nr)
{
	size_t done;
	int ret;

	for (done = 0; done < nr; done += LAZY_CHUNK) {
		size_t len = nr - done < LAZY_CHUNK ? nr - done : LAZY_CHUNK;

		ret = r->mech->submit(r, ops + done, len);
		if (ret < 0)
			return ret;
	}
	return 0;
}

/*
 * Submits @code for timers [@i, @i + LAZY_CHUNK) (fewer at the end), due
 * at now + @t: how many, or -errno.
 */
static long lazy_chunk(struct run *r, struct mop *ops, uint32_t code, size_t i, int64_t t)
{
	size_t len = r->n - i < LAZY_CHUNK ? r->n - i : LAZY_CHUNK, k;
	int64_t when = t_now(CLOCK_MONOTONIC) + t;
	int ret;

	for (k = 0; k < len; k++)
		ops[k] = (struct mop){ .code = code, .idx = i + k, .when = when };
	ret = r->mech->submit(r, ops, len);
	return ret < 0 ? ret : (long)len;
}

/* The figures of a phase of @ops operations. */
static void lazy_figures(struct result *res, long long ops, int64_t cpu, int64_t busy)
{
	if (ops <= 0)
		return;
	res->has_ns_per_op = true;
	res->ns_per_op = (double)cpu / ops;
	if (busy >= 0) {
		res->has_cpu = true;
		res->cpu_ns_per_expiry = (double)busy / ops;
	}
}

int workload_reset(struct run *r, struct result *res)
{
	struct mop *ops = xcalloc(LAZY_CHUNK, sizeof(*ops));
	int64_t t = opts.reset_timeout_ns, cpu0, busy0, end, busy1;
	long long done = 0;
	long ret = 0;
	size_t i;

	result_init(r, res, "reset");
	for (i = 0; i < r->n && ret >= 0; i += LAZY_CHUNK)
		ret = lazy_chunk(r, ops, MOP_ARM, i, t);
	if (ret < 0) {
		note(r, "reset: arming failed: %s", strerror(-ret));
		res->failed = !resource_error_of(ret);
		res->partial = !res->failed;
		goto out;
	}
	if (!opts.quiet)
		progress("  phase reset");
	busy0 = sys_busy_ns();
	cpu0 = thread_cpu_ns();
	end = t_now(CLOCK_MONOTONIC) + opts.reset_ns;
	for (i = 0; t_now(CLOCK_MONOTONIC) < end; i = i + LAZY_CHUNK < r->n ? i + LAZY_CHUNK : 0) {
		ret = lazy_chunk(r, ops, MOP_MODIFY, i, t);
		if (ret < 0) {
			/* A pass slower than T: timers fired under the pushes. */
			note(r, "reset: a push failed after %lld: %s", done, strerror(-ret));
			res->partial = true;
			break;
		}
		done += ret;
	}
	lazy_figures(res, done, thread_cpu_ns() - cpu0,
		     busy0 >= 0 && (busy1 = sys_busy_ns()) >= 0 ? busy1 - busy0 : -1);
out:
	free(ops);
	return res->failed ? -1 : 0;
}

int workload_startstop(struct run *r, struct result *res)
{
	struct mop *ops = xcalloc(r->n, sizeof(*ops));
	int64_t when = t_now(CLOCK_MONOTONIC) + HOUR_NS, cpu0, busy0, busy1;
	size_t i;
	int ret;

	result_init(r, res, "startstop");
	for (i = 0; i < r->n; i++)
		ops[i] = (struct mop){ .code = MOP_ARM, .idx = i, .when = when };
	if (!opts.quiet)
		progress("  phase startstop");
	busy0 = sys_busy_ns();
	cpu0 = thread_cpu_ns();
	ret = lazy_submit(r, ops, r->n);
	if (!ret) {
		for (i = 0; i < r->n; i++)
			ops[i] = (struct mop){ .code = MOP_CANCEL, .idx = i };
		ret = lazy_submit(r, ops, r->n);
	}
	if (ret < 0) {
		note(r, "startstop failed: %s", strerror(-ret));
		res->failed = !resource_error_of(ret);
		res->partial = !res->failed;
	} else {
		lazy_figures(res, r->n, thread_cpu_ns() - cpu0,
			     busy0 >= 0 && (busy1 = sys_busy_ns()) >= 0 ? busy1 - busy0 : -1);
	}
	free(ops);
	return res->failed ? -1 : 0;
}
