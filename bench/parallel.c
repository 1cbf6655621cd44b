// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * The parallel workloads, shaped like Go's RunParallel timer benchmarks: T
 * threads, each pinned to its own CPU, share N timers between them, and the
 * figure is the aggregate wall time per timer (N over the time from the
 * common start to the last thread's end), so that perfect scaling halves it
 * from one thread to two.
 *
 *   startstop  each thread arms its N/T far-future timers and cancels them
 *   reset      each thread moves each of its armed timers later once, in a
 *              random order (arming and the final cancel are not timed)
 *   fire       each thread arms N/T one-shots spread over a one-second
 *              window that opens once all are armed, and waits for its own
 *
 * Each runs with a file (ring, loop, epoll set) per thread, and, for the
 * /dev/qtimer mechanisms, with one file that every thread uses: the shape
 * where one per-file lock would show.  The shared file's records go to
 * whichever thread reads them, so the shared fire workload is not run.
 *
 * Output, one line per figure:
 *   qtbench-par: kernel,mechanism,batch,fds,threads,workload,n,ns_per_timer,
 *                late_p99_ns,early,delivered
 * with fds "thread" or "shared" (ns_per_timer empty for fire, lateness only
 * for fire); report.py prints the table and the plot.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helpers.h"
#include "qtbench.h"

#define PAR_MAX_THREADS	4
#define PAR_CHUNK	1024		/* ops a submit() call */
#define PAR_FAR_NS	(3600 * NSEC_PER_SEC)
#define PAR_STALL_NS	(5 * NSEC_PER_SEC)
/* Per timed phase: io_uring's timeout update walks a list (O(n) a MODIFY). */
#define PAR_BUDGET_NS	(15 * NSEC_PER_SEC)

enum { P_STARTSTOP, P_RESET, P_FIRE, NR_PAR };
static const char *const par_names[NR_PAR] = { "startstop", "reset", "fire" };

struct par;

struct par_thread {
	struct par *par;
	pthread_t tid;
	int idx;
	struct run r;
	size_t n;			/* this thread's timers */
	struct mop *ops;		/* PAR_CHUNK of them */
	uint32_t *order;		/* reset: a permutation of the armed */
	int64_t start[NR_PAR], end[NR_PAR];
	int syncs;			/* barriers passed */
	bool opened;
	int ret;
	bool partial;
};

struct par {
	const struct mech *mech;
	unsigned int batch;
	int threads;
	bool shared;
	size_t n;
	int64_t window_start;		/* fire: set by thread 0 */
	pthread_barrier_t barrier;
	struct par_thread t[PAR_MAX_THREADS];
};

/*
 * Every thread passes the same barriers, PAR_SYNCS of them (PAR_SYNCS_FIRE
 * more when fire runs) and then one before the shared file's owner closes
 * it, a failed thread too: at its end it makes up those it skipped, so that
 * the others do not wait for it forever.
 */
#define PAR_SYNCS	4
#define PAR_SYNCS_FIRE	3

static void par_sync(struct par_thread *t)
{
	t->syncs++;
	pthread_barrier_wait(&t->par->barrier);
}

/*
 * Runs @nr ops made by @fill(t, ops, first, nr) in chunks; stops after the
 * chunk that crosses the time budget.
 */
static int par_phase(struct par_thread *t, size_t nr,
		     void (*fill)(struct par_thread *, struct mop *, size_t, size_t))
{
	int64_t budget_end = t_now(CLOCK_MONOTONIC) + PAR_BUDGET_NS;
	size_t k, len;
	int ret;

	for (k = 0; k < nr; k += len) {
		len = nr - k < PAR_CHUNK ? nr - k : PAR_CHUNK;
		fill(t, t->ops, k, len);
		ret = t->par->mech->submit(&t->r, t->ops, len);
		if (ret < 0)
			return ret;
		if (t_now(CLOCK_MONOTONIC) > budget_end) {
			t->partial = true;
			return k + len;
		}
	}
	return nr;
}

/* An hour out, spread over a second so that the heaps have an order. */
static void fill_arm(struct par_thread *t __attribute__((unused)), struct mop *ops,
		     size_t first, size_t nr)
{
	int64_t base = t_now(CLOCK_MONOTONIC) + PAR_FAR_NS;
	size_t i;

	for (i = 0; i < nr; i++)
		ops[i] = (struct mop){ .code = MOP_ARM, .idx = first + i,
				       .when = base + (int64_t)((first + i) % 1000) * NSEC_PER_MSEC };
}

static void fill_cancel(struct par_thread *t __attribute__((unused)), struct mop *ops,
			size_t first, size_t nr)
{
	size_t i;

	for (i = 0; i < nr; i++)
		ops[i] = (struct mop){ .code = MOP_CANCEL, .idx = first + i };
}

/* reset: each armed timer once, in the order of t->order. */
static void fill_modify(struct par_thread *t, struct mop *ops, size_t first, size_t nr)
{
	int64_t base = t_now(CLOCK_MONOTONIC) + 2 * PAR_FAR_NS;
	size_t i;

	for (i = 0; i < nr; i++)
		ops[i] = (struct mop){ .code = MOP_MODIFY,
				       .idx = t->order[first + i],
				       .when = base + (int64_t)i * NSEC_PER_MSEC };
}

/* fire: thread t's timer i is the window's (i * T + t)-th of N. */
static void fill_fire(struct par_thread *t, struct mop *ops, size_t first, size_t nr)
{
	struct par *par = t->par;
	size_t i;

	for (i = 0; i < nr; i++) {
		size_t k = (first + i) * par->threads + t->idx;
		int64_t when = par->window_start +
			(int64_t)((double)k * opts.window_ns / par->n);

		t->r.sched[first + i] = when;
		ops[i] = (struct mop){ .code = MOP_ARM, .idx = first + i, .when = when };
	}
}

static int par_fire(struct par_thread *t)
{
	struct par *par = t->par;
	struct run *r = &t->r;
	int64_t now, last, end;
	int ret;

	r->sched = xcalloc(t->n, sizeof(*r->sched));
	memset(r->counted, 0, t->n * sizeof(*r->counted));
	r->max_late = t->n;
	r->late = xcalloc(t->n, sizeof(*r->late));
	r->deliver = true;
	par_sync(t);
	if (t->idx == 0) {
		/*
		 * Every thread arms its N/T timers before the window: leave
		 * twice the time startstop took to arm and cancel as many.
		 */
		int64_t lead = 0;
		int i;

		for (i = 0; i < par->threads; i++)
			if (par->t[i].end[P_STARTSTOP] - par->t[i].start[P_STARTSTOP] > lead)
				lead = par->t[i].end[P_STARTSTOP] - par->t[i].start[P_STARTSTOP];
		par->window_start = t_now(CLOCK_MONOTONIC) + 2 * lead + NSEC_PER_SEC;
	}
	par_sync(t);
	ret = par_phase(t, t->n, fill_fire);
	if (ret < 0)
		return ret;
	par_sync(t);
	t->start[P_FIRE] = par->window_start;
	if (t_now(CLOCK_MONOTONIC) > par->window_start)
		note(r, "fire: thread %d still arming when the window opened", t->idx);
	r->counting = true;
	last = now = t_now(CLOCK_MONOTONIC);
	end = par->window_start + opts.window_ns + PAR_BUDGET_NS;
	while (r->delivered < t->n) {
		ret = par->mech->wait(r, 100);
		now = t_now(CLOCK_MONOTONIC);
		if (ret < 0)
			return ret;
		if (ret > 0)
			last = now;
		if (now > par->window_start + opts.window_ns && now - last > PAR_STALL_NS)
			break;
		if (now > end) {
			t->partial = true;
			break;
		}
	}
	r->counting = false;
	t->end[P_FIRE] = last;
	return 0;
}

static void *par_thread_main(void *arg)
{
	struct par_thread *t = arg;
	struct par *par = t->par;
	struct run *r = &t->r;
	cpu_set_t set;
	struct t_rng rng;
	int ret, armed;
	bool owner;

	CPU_ZERO(&set);
	CPU_SET(t->idx, &set);
	sched_setaffinity(0, sizeof(set), &set);
	t->ops = xcalloc(PAR_CHUNK, sizeof(*t->ops));
	r->counted = xcalloc(t->n, sizeof(*r->counted));

	/*
	 * Each thread opens its own file (io_uring's SINGLE_ISSUER ring wants
	 * its creator to submit); with one shared file, thread 0 opens it and
	 * the others take it up once it exists.
	 */
	owner = !par->shared || !t->idx;
	ret = owner ? par->mech->open(r) : 0;
	t->opened = ret >= 0 && owner;
	par_sync(t);
	if (!owner) {
		ret = par->t[0].opened ? par->mech->share(r, &par->t[0].r) : -EBADF;
		t->opened = ret >= 0;
	}
	if (ret < 0)
		goto out;

	/* startstop: cancel what was armed, all of it unless out of time */
	par_sync(t);
	t->start[P_STARTSTOP] = t_now(CLOCK_MONOTONIC);
	ret = armed = par_phase(t, t->n, fill_arm);
	if (ret >= 0)
		ret = par_phase(t, armed, fill_cancel);
	t->end[P_STARTSTOP] = t_now(CLOCK_MONOTONIC);
	if (ret < 0)
		goto out;

	/* reset */
	ret = armed = par_phase(t, t->n, fill_arm);
	if (ret < 0)
		goto out;
	t_rng_seed(&rng, 0x9e3779b97f4a7c15ULL * (t->idx + 1));
	t->order = permutation_from(&rng, armed);
	par_sync(t);
	t->start[P_RESET] = t_now(CLOCK_MONOTONIC);
	ret = par_phase(t, armed, fill_modify);
	t->end[P_RESET] = t_now(CLOCK_MONOTONIC);
	if (ret >= 0)
		ret = par_phase(t, armed, fill_cancel);
	if (ret < 0)
		goto out;

	/* fire: not with a shared file (see the top of the file) */
	par_sync(t);
	if (!par->shared)
		ret = par_fire(t);
out:
	while (t->syncs < PAR_SYNCS + (par->shared ? 0 : PAR_SYNCS_FIRE))
		par_sync(t);
	t->ret = ret < 0 ? ret : 0;
	/* The owner of a shared file closes it last. */
	if (t->opened && (!par->shared || t->idx))
		par->mech->close(r);
	par_sync(t);
	if (t->opened && par->shared && !t->idx)
		par->mech->close(r);
	return NULL;
}

static double par_ns_per_timer(const struct par *par, int w)
{
	int64_t start = INT64_MAX, end = 0;
	int i;

	for (i = 0; i < par->threads; i++) {
		if (par->t[i].start[w] < start)
			start = par->t[i].start[w];
		if (par->t[i].end[w] > end)
			end = par->t[i].end[w];
	}
	return (double)(end - start) / par->n;
}

static void par_print(const struct par *par, const char *kernel, int w,
		      double ns, const char *late, unsigned long long early,
		      const char *delivered)
{
	char batch[16] = "", nsbuf[32] = "";

	if (par->mech->batched)
		snprintf(batch, sizeof(batch), "%u", par->batch);
	if (ns >= 0)
		snprintf(nsbuf, sizeof(nsbuf), "%.1f", ns);
	printf("qtbench-par: %s,%s,%s,%s,%d,%s,%zu,%s,%s,%llu,%s\n", kernel,
	       par->mech->name, batch, par->shared ? "shared" : "thread",
	       par->threads, par_names[w], par->n, nsbuf, late, early, delivered);
}

/* One mechanism, one sharing mode, one thread count: the child's work. */
static int par_run(const struct mech *m, unsigned int batch, int threads,
		   bool shared, size_t n, const char *kernel)
{
	struct par *par = xcalloc(1, sizeof(*par));
	unsigned long long early = 0, delivered = 0;
	int64_t *late = NULL;
	size_t nr_late = 0;
	bool partial = false, lost = false;
	int i, ret = 0;

	par->mech = m;
	par->batch = batch;
	par->threads = threads;
	par->shared = shared;
	par->n = n;
	pthread_barrier_init(&par->barrier, NULL, threads);
	for (i = 0; i < threads; i++) {
		struct par_thread *t = &par->t[i];

		t->par = par;
		t->idx = i;
		t->n = n / threads + ((size_t)i < n % threads);
		t->r = (struct run){ .mech = m, .workload = "parallel", .n = t->n,
				     .batch = batch };
		pthread_create(&t->tid, NULL, par_thread_main, t);
	}
	for (i = 0; i < threads; i++) {
		pthread_join(par->t[i].tid, NULL);
		if (par->t[i].ret < 0) {
			note(&par->t[i].r, "parallel: thread %d failed: %s", i,
			     strerror(-par->t[i].ret));
			ret = par->t[i].ret;
		}
		partial |= par->t[i].partial;
	}
	if (!ret) {
		char p99[32] = "", del[32];

		par_print(par, kernel, P_STARTSTOP, par_ns_per_timer(par, P_STARTSTOP),
			  "", 0, "");
		par_print(par, kernel, P_RESET, par_ns_per_timer(par, P_RESET),
			  "", 0, "");
		for (i = 0; i < threads && !shared; i++) {
			struct run *r = &par->t[i].r;

			late = realloc(late, (nr_late + r->nr_late) * sizeof(*late));
			memcpy(late + nr_late, r->late, r->nr_late * sizeof(*late));
			nr_late += r->nr_late;
			early += r->early + r->unexpected + r->mismatched;
			delivered += r->delivered;
		}
		if (!shared) {
			int64_t p50 = 0, p99v = 0, max = 0;

			if (nr_late)
				quantiles(late, nr_late, &p50, &p99v, &max);
			snprintf(p99, sizeof(p99), "%lld", (long long)p99v);
			snprintf(del, sizeof(del), "%llu", delivered);
			par_print(par, kernel, P_FIRE, -1, p99, early, del);
			lost = delivered != n && !partial;
			if (lost)
				note(&par->t[0].r, "LOST: %llu of %zu expirations delivered (%d threads)",
				     delivered, n, threads);
			if (early)
				note(&par->t[0].r, "EARLY or unexpected: %llu records (%d threads)",
				     early, threads);
		}
		if (partial)
			note(&par->t[0].r, "partial: %d threads ran out of time", threads);
	}
	fflush(stdout);
	/* A lost or early expiry is a broken mechanism, not a slow one. */
	return ret < 0 || early || lost ? 1 : 0;
}

int run_parallel(const struct mech *m, unsigned int batch, size_t n,
		 const char *kernel)
{
	static const int thread_counts[] = { 1, 2, 4 };
	int cpus = sysconf(_SC_NPROCESSORS_ONLN), shared, k, failed = 0;

	for (shared = 0; shared <= (m->share != NULL); shared++) {
		for (k = 0; k < 3; k++) {
			int threads = thread_counts[k], status;
			pid_t pid;

			if (threads > cpus || threads > PAR_MAX_THREADS)
				continue;
			progress("%s: parallel, %d thread%s, %s, N=%zu", m->name,
				 threads, threads > 1 ? "s" : "",
				 shared ? "one shared file" : "a file per thread", n);
			fflush(stdout);
			pid = fork();
			if (pid < 0) {
				progress("fork: %s", strerror(errno));
				return 1;
			}
			if (!pid)
				_exit(par_run(m, batch, threads, shared, n, kernel));
			if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) ||
			    WEXITSTATUS(status)) {
				progress("  parallel failed (see notes)");
				failed = 1;
			}
		}
	}
	return failed;
}
