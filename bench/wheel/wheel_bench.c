// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * The timing wheel (wheel.c) against the 4-ary heap core (kmod/heap.c,
 * unchanged, through selftests/heap's shim) on the seeds' start/stop
 * shape: timers armed with random deadlines up to a second out, most
 * cancelled before they fire (as network timeouts are), the rest fired in
 * order.  Each run fills the structure with P live timers, then times
 * three phases at that population:
 *
 *   arm     K more timers (K = P/10; 100k under callgrind);
 *   cancel  a quarter of all timers, at random: the heap does what the
 *           engine does (marks the timer dead and sweeps with
 *           qt_heap_filter() once more than a quarter of the heap is
 *           dead), so the window is exactly one sweep cycle and the
 *           sweep's cost is spread over the cancels that caused it;
 *   fire    advance the clock and fire the earliest K of the rest: the
 *           heap pops in exact order, the wheel jumps bucket to bucket.
 *
 * The wheel's tick is 2^20 ns (1.05 ms, the kernel's jiffy at HZ=1000 near
 * enough).  Every expiry is checked: never early, heap in order, wheel
 * within its bound; the worst lateness is printed.  With --callgrind,
 * under valgrind --tool=callgrind --collect-atstart=no, each phase is
 * collected and dumped on its own for callgrind.sh.  Usage:
 * wheel_bench [--callgrind] P.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../native.h"
#include "heap.h"
#include "wheel.h"

#define TICK_SHIFT	20
#define SPREAD		1000000000	/* deadlines up to 1 s out, in ns */
#define CALLGRIND_OPS	100000u

/* One timer per cache line, like a real struct; either structure's use. */
struct bench_timer {
	struct qt_wheel_timer node;	/* the wheel's links and tick */
	s64 deadline;			/* ns */
	bool dead;			/* the heap's: cancelled, not yet swept */
	char pad[64 - sizeof(struct qt_wheel_timer) - sizeof(s64) - sizeof(bool)];
};

struct workload {
	u32 pop, ops, nr_cancel;
	struct bench_timer *timers;	/* pop + ops */
	s64 *deadlines;			/* pop + ops */
	u32 *victims;			/* nr_cancel distinct indices */
};

enum phase { ARM, CANCEL, FIRE, NR_PHASES };

static const char *const phase_name[NR_PHASES] = { "arm", "cancel", "fire" };

struct result {
	struct bench_phase phase[NR_PHASES];
	s64 max_late;		/* ns */
	u64 early, disorder;	/* each must stay 0 */
};

static void phase_end(const char *what, enum phase p, double start, u64 ops,
		      struct result *r)
{
	bench_phase_end(&r->phase[p], what, phase_name[p], ops, start);
}

static void workload_init(struct workload *w, u32 pop)
{
	u64 rng = 0x9e3779b97f4a7c15ull;
	u32 n, i, *perm;

	w->pop = pop;
	w->ops = pop / 10;
	if (bench_callgrind && w->ops > CALLGRIND_OPS)
		w->ops = CALLGRIND_OPS;
	n = pop + w->ops;
	/* The heap sweeps when more than a quarter of its entries are dead. */
	w->nr_cancel = n / 4 + 1;
	w->timers = malloc((size_t)n * sizeof(*w->timers));
	w->deadlines = malloc((size_t)n * sizeof(*w->deadlines));
	perm = malloc((size_t)n * sizeof(*perm));
	if (!w->timers || !w->deadlines || !perm)
		abort();
	for (i = 0; i < n; i++) {
		w->deadlines[i] = (s64)bench_rng_below(&rng, SPREAD);
		perm[i] = i;
	}
	for (i = 0; i < w->nr_cancel; i++) {
		u32 j = i + bench_rng_below(&rng, n - i), tmp = perm[j];

		perm[j] = perm[i];
		perm[i] = tmp;
	}
	w->victims = perm;	/* the first nr_cancel of a shuffle */
}

static void timers_reset(struct workload *w)
{
	memset(w->timers, 0, (size_t)(w->pop + w->ops) * sizeof(*w->timers));
}

static bool timer_alive(const struct qt_heap_entry *e, void *arg)
{
	return !((struct bench_timer *)e->timer)->dead;
}

static void timer_drop(void *timer, void *arg)
{
	(*(u64 *)arg)++;
}

static void run_heap(struct workload *w, struct result *r)
{
	u32 n = w->pop + w->ops, i, nr_dead = 0;
	struct qt_heap h = {};
	void *mem = malloc(qt_heap_storage_size(n));
	u64 dropped = 0, fired = 0;
	s64 last = S64_MIN;
	double t;

	if (!mem)
		abort();
	timers_reset(w);
	qt_heap_attach(&h, mem, n);
	for (i = 0; i < w->pop; i++)
		qt_heap_push(&h, w->deadlines[i], &w->timers[i]);

	t = bench_phase_begin();
	for (i = w->pop; i < n; i++)
		qt_heap_push(&h, w->deadlines[i], &w->timers[i]);
	phase_end("heap", ARM, t, w->ops, r);

	t = bench_phase_begin();
	for (i = 0; i < w->nr_cancel; i++) {
		w->timers[w->victims[i]].dead = true;
		if (++nr_dead * 4 > h.nr) {
			qt_heap_filter(&h, timer_alive, timer_drop, &dropped);
			nr_dead = 0;
		}
	}
	phase_end("heap", CANCEL, t, w->nr_cancel, r);

	/* The clock jumps to each deadline in turn; dead entries are skipped. */
	t = bench_phase_begin();
	while (fired < w->ops && !qt_heap_empty(&h)) {
		const struct qt_heap_entry *top = qt_heap_top(&h);
		struct bench_timer *timer = top->timer;
		s64 now = top->key;

		qt_heap_pop(&h);
		if (timer->dead) {
			nr_dead--;
			continue;
		}
		r->disorder += now < last;
		last = now;
		fired++;
	}
	phase_end("heap", FIRE, t, fired, r);
	r->max_late = 0;

	free(qt_heap_attach(&h, NULL, 0));
}

static u64 to_tick(s64 ns)
{
	return ((u64)ns + (1ull << TICK_SHIFT) - 1) >> TICK_SHIFT;
}

static void run_wheel(struct workload *w, struct result *r)
{
	struct qt_wheel *wheel = malloc(sizeof(*wheel));
	u32 n = w->pop + w->ops, i;
	u64 fired = 0;
	double t;

	if (!wheel)
		abort();
	timers_reset(w);
	qt_wheel_init(wheel, 0);
	for (i = 0; i < w->pop; i++) {
		w->timers[i].deadline = w->deadlines[i];
		qt_wheel_add(wheel, &w->timers[i].node, to_tick(w->deadlines[i]));
	}

	t = bench_phase_begin();
	for (i = w->pop; i < n; i++) {
		w->timers[i].deadline = w->deadlines[i];
		qt_wheel_add(wheel, &w->timers[i].node, to_tick(w->deadlines[i]));
	}
	phase_end("wheel", ARM, t, w->ops, r);

	t = bench_phase_begin();
	for (i = 0; i < w->nr_cancel; i++)
		qt_wheel_del(wheel, &w->timers[w->victims[i]].node);
	phase_end("wheel", CANCEL, t, w->nr_cancel, r);

	/* The clock jumps to each bucket that comes due, as NOHZ would. */
	t = bench_phase_begin();
	r->max_late = 0;
	while (fired < w->ops) {
		struct qt_wheel_timer *list = qt_wheel_expire_next(wheel, U64_MAX - 1);
		s64 now = (s64)((wheel->clk - 1) << TICK_SHIFT);

		if (!list)
			break;
		for (; list; list = list->next) {
			struct bench_timer *timer = (struct bench_timer *)list;
			s64 late = now - timer->deadline;

			r->early += late < 0;
			if (late > r->max_late)
				r->max_late = late;
			fired++;
		}
	}
	phase_end("wheel", FIRE, t, fired, r);

	free(wheel);
}

int main(int argc, char **argv)
{
	struct result heap = {}, wheel = {};
	struct workload w;
	int arg = 1, p;
	long pop;

	if (arg < argc && !strcmp(argv[arg], "--callgrind")) {
		bench_callgrind = true;
		arg++;
	}
	pop = arg < argc ? strtol(argv[arg], NULL, 0) : 1000000;
	if (pop < 10 || pop > 100000000) {
		fprintf(stderr, "usage: %s [--callgrind] LIVE_TIMERS\n", argv[0]);
		return 2;
	}
	workload_init(&w, pop);
	run_heap(&w, &heap);
	run_wheel(&w, &wheel);

	if (heap.early || heap.disorder || wheel.early) {
		fprintf(stderr, "wheel_bench: heap %llu early, %llu out of order; wheel %llu early\n",
			heap.early, heap.disorder, wheel.early);
		return 1;
	}
	if (bench_callgrind)
		return 0;
	printf("ns/op at %ld live timers (%u arms, %u cancels, %llu/%llu fired), one run\n",
	       pop, w.ops, w.nr_cancel, heap.phase[FIRE].ops, wheel.phase[FIRE].ops);
	printf("%-8s %10s %10s\n", "op", "heap", "wheel");
	for (p = 0; p < NR_PHASES; p++)
		printf("%-8s %10.1f %10.1f\n", phase_name[p],
		       bench_ns_per_op(&heap.phase[p]), bench_ns_per_op(&wheel.phase[p]));
	printf("max late %8.3f ms %7.3f ms (wheel tick %.3f ms)\n", heap.max_late / 1e6,
	       wheel.max_late / 1e6, (1 << TICK_SHIFT) / 1e6);
	return 0;
}
