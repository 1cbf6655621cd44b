// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * The workloads, after the Go runtime's timer benchmarks, written once
 * against struct mech:
 *
 *   arm/modify/cancel  arm N far-future timers (random expiries one to two
 *                      hours out, in index order), move each one later once
 *                      (a heartbeat reset), in random order, then cancel
 *                      them all, in another random order.  Wall ns per op,
 *                      and the kernel memory the armed timers hold.
 *   fire               N one-shot timers spread evenly over a one-second
 *                      window that opens only after all of them are armed;
 *                      every delivery is timed on its own, against the same
 *                      clock the expiries were given on.
 *   ticker             K periodic timers for T seconds: expirations counted
 *                      against the schedule, lateness of each record.
 *   mixed              a steady population of N timers under a random mix
 *                      of modify (half the picks) and cancel + re-arm.
 *
 * Ops are generated a chunk at a time outside the timed region, so the
 * clock sees only what the mechanism does with them.  Every timed phase has
 * a budget; a phase that runs out stops early and says so (partial), which
 * keeps a quadratic mechanism from eating the whole run.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "helpers.h"
#include "qtbench.h"

/*
 * Ops per submit() call, and so how often the budget is checked: a whole
 * number of the mechanism's batches, and small enough that a mechanism that
 * takes milliseconds per op cannot overshoot its budget by minutes.
 */
#define MIN_CHUNK	256
#define FAR_NS		(3600 * NSEC_PER_SEC)
#define STALL_NS	(5 * NSEC_PER_SEC)

/*
 * One delivered record: @count expirations of timer @idx, which the
 * mechanism says were scheduled for @kernel_when (INT64_MIN: it does not
 * say).  The clock is read here, once per record, as the consumer gets to
 * it; an expiry whose scheduled time is still ahead of that clock was
 * delivered early, since the kernel handed it over before this read.
 */
void run_expired(struct run *r, uint32_t idx, uint64_t count, int64_t kernel_when)
{
	int64_t now = t_now(CLOCK_MONOTONIC), sched;
	uint64_t cum;

	if (!r->counting)
		return;
	if (!r->sched) {
		r->unexpected++;
		return;
	}
	if (r->stop_at && now > r->stop_at)
		return;
	if (idx >= r->n || !count || (!r->period && r->counted[idx])) {
		r->unexpected++;
		return;
	}
	cum = r->counted[idx] + count;
	sched = r->sched[idx] + (int64_t)(cum - 1) * r->period;
	if (kernel_when != INT64_MIN && kernel_when != sched)
		r->mismatched++;
	if (now < sched)
		r->early++;
	if (r->nr_late < r->max_late)
		r->late[r->nr_late++] = now - sched;
	r->counted[idx] = cum;
	r->delivered += count;
	r->records++;
}

void result_init(const struct run *r, struct result *res, const char *workload)
{
	memset(res, 0, sizeof(*res));
	snprintf(res->mechanism, sizeof(res->mechanism), "%s", r->mech->name);
	snprintf(res->workload, sizeof(res->workload), "%s", workload);
	res->n = r->n;
	res->batch = r->mech->batched ? r->batch : 0;
}

static void sleep_until(int64_t when)
{
	struct timespec ts = {
		.tv_sec = when / NSEC_PER_SEC,
		.tv_nsec = when % NSEC_PER_SEC,
	};

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

/*
 * A timed phase of nr ops, built by gen() a chunk at a time.  Returns the
 * number of ops done (fewer than nr when the budget ran out) or -errno,
 * and the time the mechanism spent in *spent.
 */
typedef void (*gen_fn)(struct run *r, struct mop *ops, size_t first, size_t nr, void *arg);

bool resource_error_of(int err)
{
	return err == -ENOMEM || err == -EMFILE || err == -ENFILE || err == -ENOSPC ||
	       err == -EDQUOT || err == -EAGAIN || err == -ENOBUFS;
}

static long long timed_phase(struct run *r, size_t nr, gen_fn gen, void *arg,
			     int64_t *spent, const char *what)
{
	size_t chunk = r->mech->batched && r->batch > MIN_CHUNK ? r->batch : MIN_CHUNK;
	struct mop *ops = xcalloc(chunk, sizeof(*ops));
	int64_t start = t_now(CLOCK_MONOTONIC), deadline = start + opts.budget_ns;
	size_t done = 0;
	int ret = 0;

	/* A mark for bench/bench.sh --profile to start or stop on. */
	if (!opts.quiet)
		progress("  phase %s", what);
	*spent = 0;
	while (done < nr) {
		size_t len = nr - done < chunk ? nr - done : chunk;
		int64_t t0, t1;

		gen(r, ops, done, len, arg);
		t0 = t_now(CLOCK_MONOTONIC);
		ret = r->mech->submit(r, ops, len);
		t1 = t_now(CLOCK_MONOTONIC);
		*spent += t1 - t0;
		if (ret < 0 && resource_error_of(ret)) {
			/* A limit of the machine, not a broken mechanism: data. */
			note(r, "partial: %s ran out of resources after %zu of %zu ops: %s",
			     what, done, nr, strerror(-ret));
			ret = 0;
			break;
		}
		if (ret < 0) {
			note(r, "%s failed after %zu of %zu ops: %s", what, done, nr,
			     strerror(-ret));
			break;
		}
		done += len;
		if (t1 > deadline && done < nr) {
			note(r, "partial: %s stopped after %zu of %zu ops (budget %lld s)",
			     what, done, nr, (long long)(opts.budget_ns / NSEC_PER_SEC));
			break;
		}
		/* Hopeless (three budgets or more at this rate): say so early. */
		if (t1 - start > opts.budget_ns / 6 && done < nr &&
		    (double)(t1 - start) * nr / done > 3.0 * opts.budget_ns) {
			note(r, "partial: %s stopped after %zu of %zu ops (%.0f s projected, budget %lld s)",
			     what, done, nr, (double)(t1 - start) * nr / done / 1e9,
			     (long long)(opts.budget_ns / NSEC_PER_SEC));
			break;
		}
	}
	free(ops);
	return ret < 0 ? ret : (long long)done;
}

/* arm / modify / cancel */

struct amc {
	int64_t *when;
	uint32_t *order;
};

static void gen_arm(struct run *r, struct mop *ops, size_t first, size_t nr, void *arg)
{
	struct amc *a = arg;
	size_t k;

	(void)r;
	for (k = 0; k < nr; k++) {
		uint32_t i = first + k;

		ops[k] = (struct mop){ .code = MOP_ARM, .idx = i, .when = a->when[i] };
	}
}

static void gen_modify(struct run *r, struct mop *ops, size_t first, size_t nr, void *arg)
{
	struct amc *a = arg;
	size_t k;

	(void)r;
	for (k = 0; k < nr; k++) {
		uint32_t i = a->order[first + k];

		a->when[i] += FAR_NS;
		ops[k] = (struct mop){ .code = MOP_MODIFY, .idx = i, .when = a->when[i] };
	}
}

static void gen_cancel(struct run *r, struct mop *ops, size_t first, size_t nr, void *arg)
{
	struct amc *a = arg;
	size_t k;

	(void)r;
	for (k = 0; k < nr; k++)
		ops[k] = (struct mop){ .code = MOP_CANCEL, .idx = a->order[first + k] };
}

static void phase_result(struct result *res, long long done, size_t want, int64_t spent)
{
	if (done > 0) {
		res->has_ns_per_op = true;
		res->ns_per_op = (double)spent / done;
	}
	res->partial = done >= 0 && (size_t)done < want;
	res->failed = done < 0;
}

/* Fills res[0..2] with the arm, modify and cancel results. */
int workload_arm(struct run *r, struct result *res, bool arm_only)
{
	struct amc a = { .when = xcalloc(r->n, sizeof(int64_t)) };
	int64_t base = t_now(CLOCK_MONOTONIC) + FAR_NS, spent, mem0 = -1, mem1;
	long long armed, done;
	size_t i;

	result_init(r, &res[0], "arm");
	result_init(r, &res[1], "modify");
	result_init(r, &res[2], "cancel");
	for (i = 0; i < r->n; i++)
		a.when[i] = base + (int64_t)t_rand_below(&bench_rng, FAR_NS);

	if (r->mech->kernel_timers) {
		shrink_slabs();
		mem0 = kernel_mem_bytes();
	}
	armed = timed_phase(r, r->n, gen_arm, &a, &spent, "arm");
	phase_result(&res[0], armed, r->n, spent);
	if (armed <= 0)
		goto out;
	if (mem0 >= 0) {
		mem1 = kernel_mem_bytes();
		if (mem1 >= 0 && r->mech->hidden_bytes)
			mem1 += r->mech->hidden_bytes(r);
		if (mem1 >= 0) {
			res[0].has_bytes = true;
			res[0].bytes_per_timer = (double)(mem1 - mem0) / armed;
		}
	}

	if (arm_only) {
		res[1].skip = res[2].skip = true;
		goto out;
	}
	/* Modify and cancel what was armed, each in its own random order. */
	a.order = permutation(armed);
	done = timed_phase(r, armed, gen_modify, &a, &spent, "modify");
	phase_result(&res[1], done, r->n, spent);
	free(a.order);
	if (done < 0)
		goto out;

	a.order = permutation(armed);
	done = timed_phase(r, armed, gen_cancel, &a, &spent, "cancel");
	phase_result(&res[2], done, r->n, spent);
	free(a.order);
	/* A cancelled timer must stay silent. */
	if (done > 0 && r->mech->wait) {
		int ret;

		r->counting = true;
		ret = r->mech->wait(r, 0);
		if (ret > 0 || r->unexpected) {
			note(r, "%d records read after cancelling every timer", ret);
			res[2].failed = true;
		}
	}
out:
	free(a.when);
	return res[0].failed || res[1].failed || res[2].failed ? -1 : 0;
}

/* fire and ticker */

struct fire {
	int64_t period;
};

static void gen_fire(struct run *r, struct mop *ops, size_t first, size_t nr, void *arg)
{
	struct fire *f = arg;
	size_t k;

	for (k = 0; k < nr; k++) {
		uint32_t i = first + k;

		ops[k] = (struct mop){ .code = MOP_ARM, .idx = i, .when = r->sched[i],
				       .period = f->period };
	}
}

/*
 * The window must open after the last timer is armed, or the first
 * expiries would queue behind arming and look late.  Arming takes seconds
 * for 1M timers under emulation, so start is set from the arm rate this
 * mechanism showed in the arm workload (or a pessimistic guess), and a
 * start that arming overran is reported.
 */
static int64_t fire_lead(const struct run *r, double arm_ns_hint)
{
	double per = arm_ns_hint > 0 ? arm_ns_hint : 50000;

	return (int64_t)(per * 2 * r->n) + r->n * 100LL + 500 * NSEC_PER_MSEC;
}

/*
 * Arms r->n timers for the window; on failure says why in @res and returns
 * -ETIME when not all could be armed (a skip, not a broken mechanism) or
 * another -errno when arming failed.
 */
static int arm_window(struct run *r, struct result *res, double arm_ns_hint, int64_t span,
		      int64_t period, int64_t *start_out)
{
	struct fire f = { .period = period };
	uint32_t *slot = permutation(r->n);
	int64_t start = t_now(CLOCK_MONOTONIC) + fire_lead(r, arm_ns_hint), spent, armed_at;
	long long done;
	size_t i;

	/* Slot k of n is due at start + k * span / n; slots go to timers at random. */
	for (i = 0; i < r->n; i++)
		r->sched[i] = start + (int64_t)((__int128)slot[i] * span / r->n);
	free(slot);

	done = timed_phase(r, r->n, gen_fire, &f, &spent, "arm for the window");
	if (done < 0) {
		note(r, "arming failed: %s", strerror(-done));
		res->failed = true;
		return done;
	}
	if ((size_t)done < r->n) {
		note(r, "skipped: could not arm all %zu timers (time budget or resources)", r->n);
		res->skip = res->partial = true;
		return -ETIME;
	}
	armed_at = t_now(CLOCK_MONOTONIC);
	if (armed_at > start)
		note(r, "arming overran the window start by %.1f ms: early expiries wait behind it",
		     (armed_at - start) / 1e6);
	else if (armed_at < start - 20 * NSEC_PER_MSEC)
		sleep_until(start - 20 * NSEC_PER_MSEC);
	*start_out = start;
	return 0;
}

/*
 * What the deliveries of a fire or ticker run showed: lateness, early and
 * delivered counts, and the system's CPU time per expiry from the busy
 * times @cpu0 and @cpu1 (either negative: unknown) around the deliveries.
 */
static void delivery_result(struct run *r, struct result *res, int64_t cpu0, int64_t cpu1)
{
	if (r->delivered && cpu0 >= 0 && cpu1 >= 0) {
		res->has_cpu = true;
		res->cpu_ns_per_expiry = (double)(cpu1 - cpu0) / r->delivered;
	}
	res->has_late = r->nr_late > 0;
	quantiles(r->late, r->nr_late, &res->late_p50, &res->late_p99, &res->late_max);
	res->has_early = res->has_delivered = true;
	res->early = r->early;
	res->delivered = r->delivered;
	if (r->early)
		note(r, "EARLY: %llu expirations delivered before their time",
		     (unsigned long long)r->early);
	if (r->unexpected)
		note(r, "%llu unexpected records (duplicates or unknown timers)",
		     (unsigned long long)r->unexpected);
	if (r->mismatched)
		note(r, "%llu records carry a scheduled time other than the one armed",
		     (unsigned long long)r->mismatched);
}

static void track_setup(struct run *r, size_t max_late)
{
	r->sched = xcalloc(r->n, sizeof(*r->sched));
	r->counted = xcalloc(r->n, sizeof(*r->counted));
	r->max_late = max_late;
	r->late = xcalloc(max_late, sizeof(*r->late));
}

int workload_fire(struct run *r, struct result *res, double arm_ns_hint)
{
	int64_t start, end, cpu0, cpu1, pc0, pc1, last = 0, now;
	struct engine_stats es0, es1;
	bool have_es, gave_up = false;
	int ret;

	result_init(r, res, "fire");
	track_setup(r, r->n);
	/*
	 * The engine's counters are read by running qtimerctl, which takes a
	 * while under emulation: before arming (which fires nothing), so that
	 * neither its time nor its CPU lands in the window.
	 */
	have_es = r->mech->engine_stats && !engine_stats(&es0);
	ret = arm_window(r, res, arm_ns_hint, opts.window_ns, 0, &start);
	if (ret)
		return ret == -ETIME ? 0 : -1;
	if (!opts.quiet)
		progress("  fire: the window opens");
	cpu0 = sys_busy_ns();
	pc0 = t_now(CLOCK_PROCESS_CPUTIME_ID);
	r->counting = true;
	now = last = t_now(CLOCK_MONOTONIC);
	while (r->delivered < r->n) {
		ret = r->mech->wait(r, 100);
		now = t_now(CLOCK_MONOTONIC);
		if (ret < 0) {
			note(r, "waiting for expiries failed: %s", strerror(-ret));
			res->failed = true;
			break;
		}
		if (ret > 0)
			last = now;
		if (now > start + opts.window_ns && now - last > STALL_NS)
			break;
		if (now > start + opts.window_ns + opts.budget_ns) {
			gave_up = true;
			break;
		}
	}
	end = t_now(CLOCK_MONOTONIC);
	cpu1 = sys_busy_ns();
	pc1 = t_now(CLOCK_PROCESS_CPUTIME_ID);
	r->counting = false;
	/*
	 * An expirer run adds to the counters when it ends, which can be just
	 * after the last record it queued was read: give it time to finish.
	 * (The CPU and lateness figures were taken above.)
	 */
	if (have_es)
		usleep(200 * 1000);
	if (have_es && !engine_stats(&es1) && es1.fired > es0.fired)
		note(r, "engine: %llu fired, %.0f%% sharing an expirer run, %llu runs deferred to the worker, longest run %.0f us%s",
		     es1.fired - es0.fired,
		     100.0 * (es1.coalesced - es0.coalesced) / (es1.fired - es0.fired),
		     es1.deferred - es0.deferred, es1.max_run_us,
		     es1.max_run_us > es0.max_run_us ? "" : " (before this run)");

	delivery_result(r, res, cpu0, cpu1);
	if (res->has_cpu)
		note(r, "cpu: system %.0f ns/expiry, this process %.0f ns/expiry; last delivery %.1f ms after the window opened",
		     res->cpu_ns_per_expiry, (double)(pc1 - pc0) / r->delivered,
		     (end - start) / 1e6);
	/*
	 * Still arriving when the budget ran out is slowness (the figures cover
	 * what was delivered); nothing arriving for STALL_NS is loss.
	 */
	if (gave_up) {
		note(r, "partial: delivery was still going %lld s after the window, %llu of %zu delivered",
		     (long long)(opts.budget_ns / NSEC_PER_SEC),
		     (unsigned long long)r->delivered, r->n);
		res->partial = true;
	} else if (r->delivered != r->n) {
		note(r, "LOST: %llu of %zu expirations delivered (none for %lld s)",
		     (unsigned long long)r->delivered, r->n,
		     (long long)(STALL_NS / NSEC_PER_SEC));
	}
	return res->failed ? -1 : 0;
}

int workload_ticker(struct run *r, struct result *res, double arm_ns_hint)
{
	int64_t start, cpu0, cpu1, expected = 0;
	size_t i;
	int ret;

	result_init(r, res, "ticker");
	/* One record per period at most per timer, and some slack. */
	track_setup(r, r->n * (opts.ticker_ns / opts.ticker_period_ns + 2));
	r->period = opts.ticker_period_ns;
	ret = arm_window(r, res, arm_ns_hint, r->period, r->period, &start);
	if (ret)
		return ret == -ETIME ? 0 : -1;
	r->stop_at = start + opts.ticker_ns;
	cpu0 = sys_busy_ns();
	r->counting = true;
	while (t_now(CLOCK_MONOTONIC) < r->stop_at) {
		ret = r->mech->wait(r, 50);
		if (ret < 0) {
			note(r, "waiting for expiries failed: %s", strerror(-ret));
			res->failed = true;
			break;
		}
	}
	cpu1 = sys_busy_ns();
	r->counting = false;

	for (i = 0; i < r->n; i++)
		if (r->sched[i] <= r->stop_at)
			expected += (r->stop_at - r->sched[i]) / r->period + 1;
	delivery_result(r, res, cpu0, cpu1);
	note(r, "%llu of %lld expirations due in %.1f s counted (%.1f%%), %llu records",
	     (unsigned long long)r->delivered, (long long)expected, opts.ticker_ns / 1e9,
	     expected ? 100.0 * r->delivered / expected : 0.0,
	     (unsigned long long)r->records);
	if (r->delivered > (uint64_t)expected) {
		note(r, "TOO MANY: more expirations than the schedule allows");
	}
	return res->failed ? -1 : 0;
}

/* mixed */

struct mixed {
	uint32_t *order;
	uint8_t *pick;		/* per op: 0 modify, 1 cancel, 2 re-arm */
	uint32_t *target;
	int64_t base;
};

static void gen_mixed(struct run *r, struct mop *ops, size_t first, size_t nr, void *arg)
{
	struct mixed *m = arg;
	size_t k;

	(void)r;
	for (k = 0; k < nr; k++) {
		size_t j = first + k;
		int64_t when = m->base + (int64_t)t_rand_below(&bench_rng, FAR_NS);

		switch (m->pick[j]) {
		case 0:
			ops[k] = (struct mop){ .code = MOP_MODIFY, .idx = m->target[j], .when = when };
			break;
		case 1:
			ops[k] = (struct mop){ .code = MOP_CANCEL, .idx = m->target[j] };
			break;
		default:
			ops[k] = (struct mop){ .code = MOP_ARM, .idx = m->target[j], .when = when };
			break;
		}
	}
}

int workload_mixed(struct run *r, struct result *res)
{
	struct amc a = { .when = xcalloc(r->n, sizeof(int64_t)) };
	struct mixed m;
	size_t i, nr_ops = 0, picks = r->n;
	int64_t spent;
	long long done;

	result_init(r, res, "mixed");
	m.base = t_now(CLOCK_MONOTONIC) + FAR_NS;
	for (i = 0; i < r->n; i++)
		a.when[i] = m.base + (int64_t)t_rand_below(&bench_rng, FAR_NS);
	done = timed_phase(r, r->n, gen_arm, &a, &spent, "arming the population");
	free(a.when);
	if (done < 0 || (size_t)done < r->n) {
		res->failed = done < 0;
		res->partial = true;
		note(r, "population not armed: no mixed phase");
		return done < 0 ? -1 : 0;
	}

	/*
	 * N picks, each a distinct timer within any N consecutive ones (so a
	 * batch never names a timer twice): half modify it, half cancel it and
	 * arm it again.  Ops come out a third each of arm, modify and cancel.
	 */
	m.order = permutation(r->n);
	m.pick = xcalloc(picks * 2, 1);
	m.target = xcalloc(picks * 2, sizeof(uint32_t));
	for (i = 0; i < picks; i++) {
		uint32_t t = m.order[i];

		if (t_rand(&bench_rng) & 1) {
			m.pick[nr_ops] = 0;
			m.target[nr_ops++] = t;
		} else {
			m.pick[nr_ops] = 1;
			m.target[nr_ops++] = t;
			m.pick[nr_ops] = 2;
			m.target[nr_ops++] = t;
		}
	}
	done = timed_phase(r, nr_ops, gen_mixed, &m, &spent, "mixed");
	phase_result(res, done, nr_ops, spent);
	free(m.order);
	free(m.pick);
	free(m.target);
	return res->failed ? -1 : 0;
}
