// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * Microbenchmark of the heap core against a plain binary heap of the same
 * 16-byte entries, at a million timers: push, pop, cancel (the engine marks
 * a timer dead in O(1) and qt_heap_filter() sweeps once a quarter of the
 * heap is dead, so the cost of a cancel is the sweep's cost per removed
 * entry) and modify-later (the top's key grows and qt_heap_replace_top()
 * re-sifts it).  Natively it prints ns/op; with --callgrind, run under
 * valgrind --tool=callgrind --collect-atstart=no, it collects exactly one
 * phase per dump so callgrind.sh can turn the dumps into instructions per
 * operation.  It reports figures and asserts nothing about speed.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../native.h"
#include "heap.h"

typedef unsigned long long u64;

/* The kernel's spelling; checkpatch's advice to use it is moot here. */
#define noinline	__attribute__((__noinline__))

#define NR_TIMERS	1000000u	/* heap size every phase starts from */
#define NR_OPS		100000u		/* operations per push/pop/modify phase */
#define KEY_SPREAD	1000000000	/* timeouts up to 1 s, in ns */

/* ---------------------------------------------------------------------- */
/* The comparison: a textbook binary heap (hole sifts, no alignment games) */

struct bin_heap {
	struct qt_heap_entry *v;
	u32 nr, cap;
};

/* noinline: the heap core is a separate object too, so both pay a call. */
static noinline void bin_push(struct bin_heap *h, s64 key, void *timer)
{
	struct qt_heap_entry *v = h->v;
	unsigned long i = h->nr++;

	while (i) {
		unsigned long parent = (i - 1) / 2;

		if (v[parent].key <= key)
			break;
		v[i] = v[parent];
		i = parent;
	}
	v[i].key = key;
	v[i].timer = timer;
}

static void bin_sift_down(struct qt_heap_entry *v, unsigned long n,
			  unsigned long i, s64 key, void *timer)
{
	for (;;) {
		unsigned long c = 2 * i + 1;

		if (c >= n)
			break;
		if (c + 1 < n && v[c + 1].key < v[c].key)
			c++;
		if (v[c].key >= key)
			break;
		v[i] = v[c];
		i = c;
	}
	v[i].key = key;
	v[i].timer = timer;
}

static noinline void bin_pop(struct bin_heap *h)
{
	unsigned long n = --h->nr;

	if (n)
		bin_sift_down(h->v, n, 0, h->v[n].key, h->v[n].timer);
}

static noinline void bin_replace_top(struct bin_heap *h, s64 key)
{
	bin_sift_down(h->v, h->nr, 0, key, h->v[0].timer);
}

static noinline u32 bin_filter(struct bin_heap *h,
			       bool (*keep)(const struct qt_heap_entry *e, void *arg),
			       void (*drop)(void *timer, void *arg), void *arg)
{
	struct qt_heap_entry *v = h->v;
	u32 n = h->nr, kept = 0, i;

	for (i = 0; i < n; i++) {
		if (keep(&v[i], arg))
			v[kept++] = v[i];
		else
			drop(v[i].timer, arg);
	}
	h->nr = kept;
	if (kept != n && kept > 1)
		for (i = (kept - 2) / 2 + 1; i-- > 0; )
			bin_sift_down(v, kept, i, v[i].key, v[i].timer);
	return n - kept;
}

/* ---------------------------------------------------------------------- */

/* What the engine's timers look like to a filter: a dead flag per timer. */
struct bench_timer {
	bool dead;
	char pad[63];	/* one timer per cache line, like a real struct */
};

static bool timer_alive(const struct qt_heap_entry *e, void *arg)
{
	return !((struct bench_timer *)e->timer)->dead;
}

static void timer_drop(void *timer, void *arg)
{
	(*(u64 *)arg)++;
}

static s64 rng_key(u64 *s)
{
	return (s64)((bench_rng_next(s) >> 32) * KEY_SPREAD >> 32);
}

enum phase { PUSH, POP, MODIFY, CANCEL, NR_PHASES };

static const char *const phase_name[NR_PHASES] = {
	"push", "pop", "modify-later", "cancel",
};

/* Inputs shared by both heaps so they do exactly the same work. */
struct workload {
	struct bench_timer *timers;	/* NR_TIMERS + NR_OPS of them */
	s64 *fill_keys;			/* NR_TIMERS */
	s64 *push_keys;			/* NR_OPS, relative to the top */
	s64 *delays;			/* NR_OPS, added to the top's key */
	u32 *present;			/* scratch for mark_quarter_dead() */
};

struct result {
	struct bench_phase phase[NR_PHASES];
};

static void phase_end(const char *heap, enum phase p, double start, u64 ops,
		      struct result *r)
{
	bench_phase_end(&r->phase[p], heap, phase_name[p], ops, start);
}

/*
 * Kill exactly a quarter of the timers in the heap, picked at random with a
 * fixed seed from the timers sorted by address, so both heaps (holding the
 * same timers) lose the same ones.
 */
static void mark_quarter_dead(struct workload *w, const struct qt_heap_entry *v, u32 nr)
{
	u64 rng = 0x2545f4914f6cdd1dull;
	u32 i, n = 0;

	for (i = 0; i < nr; i++)
		((struct bench_timer *)v[i].timer)->dead = true;
	for (i = 0; i < NR_TIMERS + NR_OPS; i++) {
		if (w->timers[i].dead)
			w->present[n++] = i;
		w->timers[i].dead = false;
	}
	for (i = 0; i < nr / 4; i++) {
		u32 j = i + bench_rng_below(&rng, n - i);
		u32 tmp = w->present[j];

		w->present[j] = w->present[i];
		w->present[i] = tmp;
		w->timers[tmp].dead = true;
	}
}

static void clear_dead(struct workload *w)
{
	u32 i;

	for (i = 0; i < NR_TIMERS + NR_OPS; i++)
		w->timers[i].dead = false;
}

static void run_4ary(struct workload *w, struct result *r)
{
	u32 cap = NR_TIMERS + NR_OPS;
	struct qt_heap h = {};
	void *mem = malloc(qt_heap_storage_size(cap));
	u64 dropped = 0;
	double t;
	u32 i;

	if (!mem)
		abort();
	qt_heap_attach(&h, mem, cap);
	for (i = 0; i < NR_TIMERS; i++)
		qt_heap_push(&h, w->fill_keys[i], &w->timers[i]);

	t = bench_phase_begin();
	for (i = 0; i < NR_OPS; i++)
		qt_heap_push(&h, qt_heap_top(&h)->key + w->push_keys[i],
			     &w->timers[NR_TIMERS + i]);
	phase_end("4-ary", PUSH, t, NR_OPS, r);

	t = bench_phase_begin();
	for (i = 0; i < NR_OPS; i++)
		qt_heap_pop(&h);
	phase_end("4-ary", POP, t, NR_OPS, r);

	t = bench_phase_begin();
	for (i = 0; i < NR_OPS; i++)
		qt_heap_replace_top(&h, qt_heap_top(&h)->key + w->delays[i]);
	phase_end("4-ary", MODIFY, t, NR_OPS, r);

	mark_quarter_dead(w, h.v, h.nr);
	t = bench_phase_begin();
	qt_heap_filter(&h, timer_alive, timer_drop, &dropped);
	phase_end("4-ary", CANCEL, t, dropped, r);
	clear_dead(w);

	free(qt_heap_attach(&h, NULL, 0));
}

static void run_binary(struct workload *w, struct result *r)
{
	struct bin_heap h = { .cap = NR_TIMERS + NR_OPS };
	u64 dropped = 0;
	double t;
	u32 i;

	h.v = malloc(h.cap * sizeof(*h.v));
	if (!h.v)
		abort();
	for (i = 0; i < NR_TIMERS; i++)
		bin_push(&h, w->fill_keys[i], &w->timers[i]);

	t = bench_phase_begin();
	for (i = 0; i < NR_OPS; i++)
		bin_push(&h, h.v[0].key + w->push_keys[i], &w->timers[NR_TIMERS + i]);
	phase_end("binary", PUSH, t, NR_OPS, r);

	t = bench_phase_begin();
	for (i = 0; i < NR_OPS; i++)
		bin_pop(&h);
	phase_end("binary", POP, t, NR_OPS, r);

	t = bench_phase_begin();
	for (i = 0; i < NR_OPS; i++)
		bin_replace_top(&h, h.v[0].key + w->delays[i]);
	phase_end("binary", MODIFY, t, NR_OPS, r);

	mark_quarter_dead(w, h.v, h.nr);
	t = bench_phase_begin();
	bin_filter(&h, timer_alive, timer_drop, &dropped);
	phase_end("binary", CANCEL, t, dropped, r);
	clear_dead(w);

	free(h.v);
}

static void workload_init(struct workload *w)
{
	u64 rng = 0x9e3779b97f4a7c15ull;
	u32 i;

	w->timers = calloc(NR_TIMERS + NR_OPS, sizeof(*w->timers));
	w->fill_keys = malloc(NR_TIMERS * sizeof(*w->fill_keys));
	w->push_keys = malloc(NR_OPS * sizeof(*w->push_keys));
	w->delays = malloc(NR_OPS * sizeof(*w->delays));
	w->present = malloc((NR_TIMERS + NR_OPS) * sizeof(*w->present));
	if (!w->timers || !w->fill_keys || !w->push_keys || !w->delays || !w->present)
		abort();
	for (i = 0; i < NR_TIMERS; i++)
		w->fill_keys[i] = rng_key(&rng);
	for (i = 0; i < NR_OPS; i++) {
		w->push_keys[i] = rng_key(&rng);
		w->delays[i] = rng_key(&rng);
	}
}

static void keep_best(struct result *best, const struct result *r, bool first)
{
	int p;

	for (p = 0; p < NR_PHASES; p++)
		if (first || bench_ns_per_op(&r->phase[p]) < bench_ns_per_op(&best->phase[p]))
			best->phase[p] = r->phase[p];
}

int main(int argc, char **argv)
{
	struct result best[2], r;
	struct workload w;
	int rounds = 5, round, p;

	bench_callgrind = argc > 1 && !strcmp(argv[1], "--callgrind");
	if (bench_callgrind)
		rounds = 1;
	workload_init(&w);

	/* Natively, the best of a few rounds, alternating the heaps. */
	for (round = 0; round < rounds; round++) {
		run_4ary(&w, &r);
		keep_best(&best[0], &r, !round);
		run_binary(&w, &r);
		keep_best(&best[1], &r, !round);
	}
	if (bench_callgrind)
		return 0;

	printf("ns/op at %u entries, best of %d rounds\n", NR_TIMERS, rounds);
	printf("%-14s %10s %10s\n", "op", "4-ary", "binary");
	for (p = 0; p < NR_PHASES; p++)
		printf("%-14s %10.1f %10.1f\n", phase_name[p],
		       bench_ns_per_op(&best[0].phase[p]), bench_ns_per_op(&best[1].phase[p]));
	return 0;
}
