/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * What the native benchmarks of the timer structures (heap/heap_bench.c,
 * wheel/wheel_bench.c) share: the random numbers their workloads draw,
 * the clock, and the bracket around a timed phase that, under callgrind,
 * collects only inside it and dumps it under its own name for the
 * bench/callgrind.sh to find.  Each benchmark is one file that includes
 * this header once, so the mode below is that program's own (as
 * kselftest.h keeps its counts).
 */
#ifndef _QT_BENCH_NATIVE_H
#define _QT_BENCH_NATIVE_H

#include <stdbool.h>
#include <stdio.h>
#include <time.h>
#include <valgrind/callgrind.h>

/* xorshift64*: fast, and the same sequence on every machine. */
static inline unsigned long long bench_rng_next(unsigned long long *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dull;
}

/* Uniform in [0, n). */
static inline unsigned int bench_rng_below(unsigned long long *s, unsigned int n)
{
	return (unsigned int)((bench_rng_next(s) >> 32) * n >> 32);
}

static inline double bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/*
 * --callgrind: the program runs under valgrind --tool=callgrind
 * --collect-atstart=no, and each phase is collected and dumped on its own.
 */
static bool bench_callgrind;

/* What a benchmark keeps of a timed phase for its table. */
struct bench_phase {
	double ns;			/* wall time */
	unsigned long long ops;
};

static inline double bench_ns_per_op(const struct bench_phase *ph)
{
	return ph->ns / ph->ops;
}

/* Start a timed phase; returns its start for bench_phase_end(). */
static inline double bench_phase_begin(void)
{
	if (bench_callgrind) {
		CALLGRIND_ZERO_STATS;
		CALLGRIND_TOGGLE_COLLECT;
	}
	return bench_now_ns();
}

/*
 * End the phase @what @phase of @ops operations begun at @start, and keep
 * its wall time and @ops in @ph.  Under callgrind its counts are dumped as
 * "<what> <phase>" and its op count printed as "ops <what> <phase> N".
 */
static inline void bench_phase_end(struct bench_phase *ph, const char *what,
				   const char *phase, unsigned long long ops,
				   double start)
{
	double ns = bench_now_ns() - start;
	char name[64];

	if (bench_callgrind) {
		CALLGRIND_TOGGLE_COLLECT;
		snprintf(name, sizeof(name), "%s %s", what, phase);
		CALLGRIND_DUMP_STATS_AT(name);
		printf("ops %s %llu\n", name, ops);
	}
	ph->ns = ns;
	ph->ops = ops;
}

#endif /* _QT_BENCH_NATIVE_H */
