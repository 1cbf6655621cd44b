// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * The latency suites' measuring side (latency.h): the SCHED_FIFO victim,
 * its windows of wakeups and their figures, the irqsoff tracer, and the
 * scattered expiries of the attacks' timers.
 */
#define _GNU_SOURCE
#include <sched.h>

#include "latency.h"

static void *victim_fn(void *arg)
{
	struct victim *v = arg;

	while (!v->stop) {
		__s64 target = t_now(CLOCK_MONOTONIC) + LAT_SLEEP_NS;
		struct timespec ts = {
			.tv_sec = target / NSEC_PER_SEC,
			.tv_nsec = target % NSEC_PER_SEC,
		};
		struct lat_window *w;
		__s64 late;

		v->sleeping_until = target;
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
			;
		late = t_now(CLOCK_MONOTONIC) - target;
		w = v->win;
		if (w) {
			size_t i = w->nr;

			if (i < MAX_SAMPLES) {
				w->ns[i] = late;
				w->nr = i + 1;
			}
		}
		v->sleeping_until = 0;
		v->wakeups++;
	}
	return NULL;
}

/*
 * Start a thread of @fn(@arg) on @cpu only, at SCHED_FIFO priority @fifo
 * if that is not 0.  0, or -errno (-EPERM without CAP_SYS_NICE).
 */
int start_on_cpu(pthread_t *thread, int cpu, int fifo, void *(*fn)(void *),
		 void *arg)
{
	struct sched_param sp = { .sched_priority = fifo };
	pthread_attr_t attr;
	cpu_set_t set;
	int ret;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	pthread_attr_init(&attr);
	if (fifo) {
		pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED);
		pthread_attr_setschedpolicy(&attr, SCHED_FIFO);
		pthread_attr_setschedparam(&attr, &sp);
	}
	pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
	ret = pthread_create(thread, &attr, fn, arg);
	pthread_attr_destroy(&attr);
	return -ret;
}

/* 0, or -errno (-EPERM without CAP_SYS_NICE). */
int victim_start(struct victim *v, int cpu)
{
	int ret = start_on_cpu(&v->thread, cpu, 50, victim_fn, v);

	v->running = !ret;
	return ret;
}

void victim_stop(struct victim *v)
{
	if (!v->running)
		return;
	v->stop = true;
	pthread_join(v->thread, NULL);
	v->running = false;
}

void window_begin(struct victim *v, struct lat_window *w)
{
	w->nr = 0;
	v->win = w;
}

/*
 * Close the window after the victim's next two wakeups, so that a wakeup
 * the attack held up is in it.  A victim not awake after 10 s counts as
 * that late.
 */
void window_end(struct victim *v, struct lat_window *w)
{
	__s64 deadline = t_now(CLOCK_MONOTONIC) + 10 * NSEC_PER_SEC, until;
	long seen = v->wakeups;
	size_t i;

	while (v->wakeups < seen + 2 && t_now(CLOCK_MONOTONIC) < deadline)
		t_sleep_ms(1);
	v->win = NULL;
	until = v->sleeping_until;
	i = w->nr;
	if (v->wakeups < seen + 2 && until && i < MAX_SAMPLES) {
		w->ns[i] = t_now(CLOCK_MONOTONIC) - until;
		w->nr = i + 1;
	}
}

static int cmp_s64(const void *a, const void *b)
{
	__s64 x = *(const __s64 *)a, y = *(const __s64 *)b;

	return x < y ? -1 : x > y;
}

/* Sorts the window: the victim no longer writes to it. */
void window_stats(struct lat_window *w, struct lat_stats *s)
{
	size_t n = w->nr;

	memset(s, 0, sizeof(*s));
	if (!n)
		return;
	qsort(w->ns, n, sizeof(w->ns[0]), cmp_s64);
	s->nr = n;
	s->p50 = w->ns[(n - 1) / 2];
	s->p99 = w->ns[(n * 99 + 99) / 100 - 1];
	s->worst = w->ns[n - 1];
	s->worst_but_one = w->ns[n > 1 ? n - 2 : 0];
}


/*
 * The kernel's irqsoff latency tracer, where the kernel has it (debug-6.1):
 * the longest section with interrupts off while it was on, and where that
 * section started and ended.  Reported, not judged: the tracer costs time
 * on every interrupt toggle, so it runs over both windows alike.
 */
const char *irqsoff_root(void)
{
	const char *root = t_tracefs_root();
	char path[80], buf[512];

	if (!root)
		return NULL;
	snprintf(path, sizeof(path), "%s/available_tracers", root);
	if (t_read_str(path, buf, sizeof(buf)) || !strstr(buf, "irqsoff"))
		return NULL;
	return root;
}

void irqsoff_write(const char *root, const char *file, const char *val)
{
	char path[96];

	snprintf(path, sizeof(path), "%s/%s", root, file);
	t_write_str(path, val);
}

/* Start (again) from no maximum. */
void irqsoff_begin(const char *root)
{
	if (!root)
		return;
	irqsoff_write(root, "current_tracer", "nop");
	irqsoff_write(root, "tracing_max_latency", "0");
	irqsoff_write(root, "current_tracer", "irqsoff");
}

/*
 * Timer @k's expiry: @base plus up to @span_ns, in an order unrelated to
 * k, as real timers come: so heap order, and the order in which they fire,
 * scatter over the timers' memory.
 */
__s64 scattered(__s64 base, __s64 span_ns, long k)
{
	return base + (__s64)(((uint64_t)k * 0x9e3779b97f4a7c15ULL) >> 20) % span_ns;
}
