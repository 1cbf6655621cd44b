// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * CPU hotplug under an expiry storm: while CPUs 1-3 go offline and online
 * over and over, threads keep arming one-shots pinned to those CPUs (with
 * QTIMER_F_CPU) and unpinned, cancel and modify some, and a reader drains
 * the records; tickers pinned to each CPU keep running.  Exact accounting:
 * every schedule not prevented by a CANCEL/MODIFY result is delivered once,
 * none early and none twice; a pinned ARM may fail only with -EINVAL (its
 * CPU was offline); each ticker's periods add up with no gap and no double
 * count (the latest expiry of its last record is first + (sum - 1) *
 * period).  Splats (WARN, lockdep, KASAN) fail the run on the console.
 * Needs root and hot-pluggable CPUs; the run lasts QT_STRESS_SECONDS
 * (default 5).
 */
#define _GNU_SOURCE
#include <pthread.h>

#include "kselftest_harness.h"
#include "helpers.h"

#define MAX_TIMERS	(1 << 19)
#define NR_ARMERS	2
#define MAX_HP_CPUS	3

enum { F_NONE, F_LIVE, F_PREVENTED, F_VOID, F_GONE };

struct ht {
	__s64 exp[2];
	_Atomic int fate[2];
	_Atomic int delivered[2];
	_Atomic int cur;
	_Atomic int armed;
	_Atomic int zero;	/* MODIFY returned 0: a read had its LAST record */
	__u64 id;
};

struct ticker {
	__u64 id;
	__s64 first;
	__u64 period;
	_Atomic __u64 sum;
	_Atomic __s64 last;
	_Atomic int bad;
};

static struct {
	int fd;
	struct ht *t;
	_Atomic long next;		/* next free cookie */
	struct ticker tick[1 + MAX_HP_CPUS];
	int nr_ticks;
	int cpus[MAX_HP_CPUS];
	int nr_cpus;			/* hot-pluggable ones */
	int nr_all;			/* 0..nr_all-1 exist */
	_Atomic int stop, stop_reader;
	_Atomic long early, bad_expiry, doubles, bad_flags, errors, einval,
		     records, toggles, zero, cancels, modifies, resurrected;
} g;

static void *reader_fn(void *arg)
{
	struct qtimer_record recs[256];

	while (!g.stop_reader) {
		__s64 now;
		int n, i;

		if (t_wait_readable(g.fd, 20) != 1)
			continue;
		n = t_read(g.fd, recs, 256);
		now = t_now(CLOCK_MONOTONIC);
		if (n < 0) {
			if (n != -EAGAIN)
				g.errors++;
			continue;
		}
		for (i = 0; i < n; i++) {
			const struct qtimer_record *r = &recs[i];
			struct ht *t;
			int v;

			g.records++;
			if (now < r->expires_ns) {
				g.early++;
				t_diag("early: cookie %llu expires %lld read %lld",
					(unsigned long long)r->cookie,
					(long long)r->expires_ns, (long long)now);
			}
			if (r->cookie >= (1ULL << 62)) {
				struct ticker *k = &g.tick[r->cookie - (1ULL << 62)];

				if (r->cookie - (1ULL << 62) >= (__u64)g.nr_ticks ||
				    r->flags || !r->count ||
				    (r->expires_ns - k->first) % k->period)
					k->bad++;
				k->sum += r->count;
				if (r->expires_ns > k->last)
					k->last = r->expires_ns;
				continue;
			}
			if (r->cookie >= MAX_TIMERS) {
				g.bad_expiry++;
				continue;
			}
			t = &g.t[r->cookie];
			v = r->expires_ns == t->exp[0] ? 0 :
			    r->expires_ns == t->exp[1] ? 1 : -1;
			if (v < 0) {
				g.bad_expiry++;
				t_diag("cookie %llu expires %lld: no such schedule",
					(unsigned long long)r->cookie,
					(long long)r->expires_ns);
				continue;
			}
			if (r->flags != QTIMER_REC_LAST || r->count != 1)
				g.bad_flags++;
			if (t->fate[v] == F_VOID && v == 1 && t->zero) {
				g.resurrected++;
				t_diag("cookie %llu: record after its LAST record (MODIFY returned 0 yet re-armed it)",
					(unsigned long long)r->cookie);
			} else if (t->fate[v] == F_PREVENTED || t->fate[v] == F_VOID) {
				g.doubles++;
			}
			if (t->delivered[v]++)
				g.doubles++;
		}
	}
	return NULL;
}

struct armer {
	struct t_rng rng;
	long mine[4096];
	int nr_mine;
};

static int pick_cpu(struct t_rng *rng)
{
	unsigned int p = t_rand_below(rng, 100);

	if (p < 40)
		return -1;	/* unpinned */
	if (p < 50 || !g.nr_cpus)
		return 0;
	return g.cpus[t_rand_below(rng, g.nr_cpus)];
}

static void arm_batch(struct armer *a)
{
	struct qtimer_op ops[64];
	long first = atomic_fetch_add(&g.next, 64);
	int i, ret;

	if (first + 64 > MAX_TIMERS)
		return;
	for (i = 0; i < 64; i++) {
		struct ht *t = &g.t[first + i];
		int cpu = pick_cpu(&a->rng);

		t->exp[0] = t_now(CLOCK_MONOTONIC) +
			    t_rand_below(&a->rng, 300 * NSEC_PER_MSEC);
		t->fate[0] = F_LIVE;
		ops[i] = t_op(CLOCK_MONOTONIC, QTIMER_F_ABSTIME, t->exp[0], 0,
			       first + i);
		ops[i].opcode = QTIMER_OP_ARM;
		if (cpu >= 0) {
			ops[i].flags |= QTIMER_F_CPU;
			ops[i].cpu = cpu;
		}
	}
	ret = t_submit(g.fd, ops, 64, 0, NULL);
	if (ret != 64) {
		g.errors++;
		t_diag("SUBMIT: %d", ret);
		return;
	}
	for (i = 0; i < 64; i++) {
		struct ht *t = &g.t[first + i];

		if (ops[i].result == -EINVAL && (ops[i].flags & QTIMER_F_CPU) &&
		    ops[i].cpu) {
			/* Its CPU was offline: never armed. */
			t->fate[0] = F_VOID;
			g.einval++;
			continue;
		}
		if (ops[i].result) {
			t->fate[0] = F_VOID;
			g.errors++;
			t_diag("ARM on cpu %u: %d", ops[i].cpu, ops[i].result);
			continue;
		}
		t->id = ops[i].id;
		t->armed = 1;
		if (a->nr_mine < 4096)
			a->mine[a->nr_mine++] = first + i;
	}
}

static void cancel_or_modify(struct armer *a)
{
	int k = t_rand_below(&a->rng, a->nr_mine), ret, v;
	struct ht *t = &g.t[a->mine[k]];

	a->mine[k] = a->mine[--a->nr_mine];
	v = t->cur;
	if (v == 0 && t_chance(&a->rng, 50)) {
		t->exp[1] = t_now(CLOCK_MONOTONIC) +
			    t_rand_below(&a->rng, 200 * NSEC_PER_MSEC) + 1;
		if (t->exp[1] == t->exp[0])
			t->exp[1]++;
		t->fate[1] = F_LIVE;
		ret = t_modify(g.fd, t->id, QTIMER_F_ABSTIME, t->exp[1], 0, 0);
		g.modifies++;
		if (ret > 0) {
			t->fate[0] = F_PREVENTED;
			t->cur = 1;
		} else if (ret == -ENOENT || ret == 0) {
			/* Read, or being read: its LAST record ends it. */
			t->zero = !ret;
			t->fate[0] = F_GONE;
			t->fate[1] = F_VOID;
			if (!ret) {
				g.zero++;
				t_diag("MODIFY of one-shot %d returned 0, not -ENOENT",
					(int)(t - g.t));
			}
		} else {
			g.errors++;
			t_diag("MODIFY: %d", ret);
		}
		return;
	}
	ret = t_cancel(g.fd, t->id);
	g.cancels++;
	if (ret > 0)
		t->fate[v] = F_PREVENTED;
	else if (ret == -ENOENT || ret == 0) {
		if (!ret) {
			g.zero++;
			t_diag("CANCEL of one-shot %d returned 0, not -ENOENT",
				(int)(t - g.t));
		}
		t->fate[v] = F_GONE;
	} else {
		g.errors++;
		t_diag("CANCEL: %d", ret);
	}
}

static void *armer_fn(void *p)
{
	struct armer *a = p;

	while (!g.stop) {
		arm_batch(a);
		while (a->nr_mine > 256 || (a->nr_mine && t_chance(&a->rng, 30)))
			cancel_or_modify(a);
		t_sleep_ns(t_rand_below(&a->rng, 5 * NSEC_PER_MSEC));
	}
	return NULL;
}

static void *hotplug_fn(void *p)
{
	struct t_rng *rng = p;

	while (!g.stop) {
		int cpu = g.cpus[t_rand_below(rng, g.nr_cpus)];
		int ret = t_cpu_set_online(cpu, !t_cpu_online(cpu));

		if (ret) {
			g.errors++;
			t_diag("cpu%d online: %d", cpu, ret);
			t_sleep_ms(100);
		} else {
			g.toggles++;
		}
		t_sleep_ns(t_rand_below(rng, 30 * NSEC_PER_MSEC));
	}
	return NULL;
}

FIXTURE(hp)
{
	bool ok;
};

FIXTURE_SETUP(hp)
{
	char path[96];
	int cpu;

	memset(&g, 0, sizeof(g));
	g.nr_all = t_nr_cpus();
	for (cpu = 1; cpu < g.nr_all && g.nr_cpus < MAX_HP_CPUS; cpu++) {
		unsigned long long v;

		if (!t_sysfs_read(t_cpu_online_path(cpu, path, sizeof(path)), &v) &&
		    v == 1 && !access(path, W_OK))
			g.cpus[g.nr_cpus++] = cpu;
	}
	self->ok = !geteuid() && g.nr_cpus;
}

FIXTURE_TEARDOWN(hp)
{
	int i;

	for (i = 0; i < g.nr_cpus; i++)
		if (!t_cpu_online(g.cpus[i]))
			EXPECT_EQ(0, t_cpu_set_online(g.cpus[i], 1));
	if (g.t)
		munmap(g.t, MAX_TIMERS * sizeof(*g.t));
}

TEST_F_TIMEOUT(hp, storm, 3700)
{
	int secs = t_stress_seconds(5), i;
	uint64_t seed = t_tunable("QT_SEED", 0) ?: (uint64_t)t_now(CLOCK_REALTIME);
	static struct armer armers[NR_ARMERS];
	pthread_t at[NR_ARMERS], rt, ht;
	struct t_rng hrng;
	long missing = 0, prevented_delivered = 0, n;
	__s64 deadline;

	if (!self->ok)
		SKIP(return, "needs root and a hot-pluggable CPU among cpu1-cpu3");
	TH_LOG("%d s, CPUs toggled:%s%s%s, seed %llu (QT_SEED)", secs,
	       g.nr_cpus > 0 ? " 1" : "", g.nr_cpus > 1 ? " 2" : "",
	       g.nr_cpus > 2 ? " 3" : "", (unsigned long long)seed);
	g.t = mmap(NULL, MAX_TIMERS * sizeof(*g.t), PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, g.t);
	g.fd = t_open(O_NONBLOCK);
	ASSERT_LE(0, g.fd);

	/* A 10 ms ticker on CPU 0 and on each CPU that comes and goes. */
	for (i = 0; i <= g.nr_cpus; i++) {
		struct ticker *k = &g.tick[i];
		int cpu = i ? g.cpus[i - 1] : 0;

		k->period = 10 * NSEC_PER_MSEC;
		k->first = t_now(CLOCK_MONOTONIC) + 10 * NSEC_PER_MSEC;
		ASSERT_EQ(0, t_arm_cpu(g.fd, CLOCK_MONOTONIC, QTIMER_F_ABSTIME,
					k->first, k->period, (1ULL << 62) + i,
					cpu, &k->id));
		g.nr_ticks++;
	}

	ASSERT_EQ(0, pthread_create(&rt, NULL, reader_fn, NULL));
	for (i = 0; i < NR_ARMERS; i++) {
		t_rng_seed(&armers[i].rng, seed + i);
		ASSERT_EQ(0, pthread_create(&at[i], NULL, armer_fn, &armers[i]));
	}
	t_rng_seed(&hrng, seed + 100);
	ASSERT_EQ(0, pthread_create(&ht, NULL, hotplug_fn, &hrng));

	t_sleep_ns((__s64)secs * NSEC_PER_SEC);
	g.stop = 1;
	pthread_join(ht, NULL);
	for (i = 0; i < NR_ARMERS; i++)
		pthread_join(at[i], NULL);
	for (i = 0; i < g.nr_cpus; i++)
		if (!t_cpu_online(g.cpus[i]))
			ASSERT_EQ(0, t_cpu_set_online(g.cpus[i], 1));

	/* Everything armed is due within 300 ms; allow TCG a lot more. */
	deadline = t_now(CLOCK_MONOTONIC) + 15 * NSEC_PER_SEC;
	do {
		t_sleep_ms(100);
		missing = 0;
		n = g.next < MAX_TIMERS ? g.next : MAX_TIMERS;
		for (i = 0; i < n; i++) {
			struct ht *t = &g.t[i];
			int v;

			for (v = 0; v < 2 && t->armed; v++)
				if ((t->fate[v] == F_LIVE || t->fate[v] == F_GONE) &&
				    !t->delivered[v])
					missing++;
		}
	} while (missing && t_now(CLOCK_MONOTONIC) < deadline);

	/* The tickers: one last record each, then they go. */
	t_sleep_ms(50);
	/* 0 when the reader has the ticker's record just then. */
	for (i = 0; i < g.nr_ticks; i++)
		EXPECT_LE(0, t_cancel(g.fd, g.tick[i].id));
	t_sleep_ms(100);
	g.stop_reader = 1;
	pthread_join(rt, NULL);

	for (i = 0; i < n; i++) {
		struct ht *t = &g.t[i];
		int v;

		for (v = 0; v < 2 && t->armed; v++) {
			if ((t->fate[v] == F_PREVENTED || t->fate[v] == F_VOID) &&
			    t->delivered[v] && !(v == 1 && t->zero))
				prevented_delivered++;
			if ((t->fate[v] == F_LIVE || t->fate[v] == F_GONE) &&
			    !t->delivered[v])
				t_diag("cookie %d schedule %d (%lld) never delivered", i,
					v, (long long)t->exp[v]);
		}
	}
	TH_LOG("%ld timers, %ld records, %ld CPU toggles, %ld pinned arms to offline CPUs, %ld cancels, %ld modifies",
	       n, (long)g.records, (long)g.toggles, (long)g.einval,
	       (long)g.cancels, (long)g.modifies);
	EXPECT_EQ(0, missing);
	EXPECT_EQ(0, prevented_delivered);
	EXPECT_EQ(0, g.early);
	EXPECT_EQ(0, g.bad_expiry);
	EXPECT_EQ(0, g.doubles);
	EXPECT_EQ(0, g.bad_flags);
	EXPECT_EQ(0, g.resurrected)
		TH_LOG("one-shots re-armed by a MODIFY that returned 0 (their LAST record was being read)");
	EXPECT_EQ(0, g.errors);
	/* Once a read took a one-shot's record it is gone: -ENOENT, not 0. */
	EXPECT_EQ(0, g.zero);
	EXPECT_LT(0, g.toggles);
	for (i = 0; i < g.nr_ticks; i++) {
		struct ticker *k = &g.tick[i];

		EXPECT_EQ(0, k->bad);
		EXPECT_LT(0, k->sum);
		/* No period lost or counted twice, whatever CPU it was on. */
		EXPECT_EQ(k->first + (__s64)(k->sum - 1) * (__s64)k->period, k->last)
			TH_LOG("ticker %d: %llu periods, last %lld, first %lld", i,
			       (unsigned long long)k->sum, (long long)k->last,
			       (long long)k->first);
	}
	EXPECT_EQ(0, t_nothing_pending(g.fd));
	close(g.fd);
}

TEST_HARNESS_MAIN
