// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * The expiry storm (dos.h): 10^6 timers due at the same instant, all
 * delivered once while a probe's spawns stay prompt, and unread tickers of
 * a 1 ns period that cost one expiry each and then nothing.
 */
#define _GNU_SOURCE
#include <sys/resource.h>
#include <sys/wait.h>

#include "dos.h"

/*
 * How long a spawned /bin/true may take while the kernel is under load: a
 * second, or under TCG (10-50x slower, and at the mercy of the host's
 * scheduler) five; never less than 20 times what it takes on the idle
 * machine (a KASAN/lockdep kernel under TCG takes half a second idle).  A
 * CPU monopolized by expiry work would hold the spawn for the whole storm,
 * tens of seconds here.
 */
static __s64 spawn_bound_ns(void)
{
	__s64 bound = (t_fast_machine() ? 1 : 5) * NSEC_PER_SEC, idle = INT64_MAX;
	int i;

	for (i = 0; i < 3; i++) {
		__s64 ns = t_spawn_true_ns();

		if (ns > 0 && ns < idle)
			idle = ns;
	}
	if (idle != INT64_MAX && 20 * idle > bound)
		bound = 20 * idle;
	return bound;
}

/* Where arm_at() puts timer k: absolute @when, its batch's CPU. */
struct arm_at {
	int clockid, nr_cpus;
	__s64 when;
	__u64 cookie0;
};

static void arm_at_op(struct qtimer_op *op, long k, void *arg)
{
	const struct arm_at *a = arg;

	*op = t_op(a->clockid, QTIMER_F_ABSTIME | QTIMER_F_CPU, a->when, 0,
		    a->cookie0 + k);
	op->cpu = k / QTIMER_SUBMIT_MAX % a->nr_cpus;
}

/*
 * Arm @n one-shots at absolute @when on @clockid, round robin over the
 * CPUs a SUBMIT batch at a time.
 */
static int arm_at(int fd, int clockid, long n, __s64 when, __u64 cookie0,
		  int nr_cpus)
{
	struct arm_at a = {
		.clockid = clockid, .nr_cpus = nr_cpus, .when = when,
		.cookie0 = cookie0,
	};

	return t_arm_many(fd, n, arm_at_op, &a, NULL, 0);
}

/*
 * The expirer's totals over all CPUs from the netlink stats, through
 * qtimerctl (in the guest's /bin): runs handed to the worker by the
 * callback's budget, and the longest callback run.  0, or -1 if unread.
 */
static int expirer_totals(unsigned long long *deferred_runs,
			  unsigned long long *max_run_ns)
{
	const char *buf = t_stats_json(), *total;

	if (!buf)
		return -1;
	total = strstr(buf, "\"total\":");
	if (!total || !strstr(total, "\"deferred_runs\":") ||
	    sscanf(strstr(total, "\"deferred_runs\":"), "\"deferred_runs\":%llu",
		   deferred_runs) != 1 ||
	    !strstr(total, "\"max_run_ns\":") ||
	    sscanf(strstr(total, "\"max_run_ns\":"), "\"max_run_ns\":%llu",
		   max_run_ns) != 1)
		return -1;
	return 0;
}

struct probe {
	_Atomic int stop;
	_Atomic long spawns;
	_Atomic __s64 worst_ns;
	_Atomic int error;
};

/*
 * A child that waits until @start and then spawns /bin/true over and over
 * until told to stop, keeping the worst latency.  At least one spawn.
 */
static pid_t start_probe(struct probe *p, __s64 start)
{
	pid_t pid = fork();

	if (pid)
		return pid;
	{
		struct timespec ts = {
			.tv_sec = start / NSEC_PER_SEC,
			.tv_nsec = start % NSEC_PER_SEC,
		};

		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
			;
	}
	do {
		__s64 ns = t_spawn_true_ns();

		if (ns < 0) {
			p->error = (int)-ns;
			_exit(1);
		}
		if (ns > p->worst_ns)
			p->worst_ns = ns;
		p->spawns++;
	} while (!p->stop);
	_exit(0);
}

static int stop_probe(struct probe *p, pid_t pid)
{
	int status;

	p->stop = 1;
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/*
 * All timers absolute CLOCK_REALTIME an hour ahead; once every one is
 * armed, the clock is stepped past them, so that they are all due at the
 * very same instant however long arming took.  (Without CAP_SYS_TIME:
 * CLOCK_MONOTONIC, aimed at an estimate of when arming will be done.)
 */
TEST_F_TIMEOUT(dos, million_due_at_once, 1800)
{
	long n = t_tunable("QT_DOS_TIMERS", t_debug_kernel() ? 32768 : 1000000);
	long got = 0, i;
	int fd, nr_cpus = 0, probe_rc, clockid = CLOCK_REALTIME;
	size_t cap = 4096;
	struct qtimer_record *recs = calloc(cap, sizeof(*recs));
	uint8_t *seen = calloc(n, 1);
	struct qtimer_version v;
	__s64 t, t0, when, storm, last_ns = 0, bound = spawn_bound_ns();
	struct probe *p = shared_map(sizeof(*p));
	unsigned long long deferred0, deferred1, max_run0, max_run1;
	struct timespec ts;
	pid_t pid;

	ASSERT_NE(NULL, recs);
	ASSERT_NE(NULL, seen);
	ASSERT_NE(NULL, p);
	while (nr_cpus < t_nr_cpus() && t_cpu_online(nr_cpus))
		nr_cpus++;
	fd = t_open(0);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, t_version(fd, &v));
	if (v.max_timers_per_fd < (unsigned long long)n ||
	    v.max_timers_per_user < (unsigned long long)n) {
		if (!self->root)
			SKIP(return, "the caps are below %ld and this is not root", n);
		ASSERT_EQ(0, set_param(self, PARAM_FD, n));
		ASSERT_EQ(0, set_param(self, PARAM_USER, n));
	}

	clock_gettime(CLOCK_REALTIME, &ts);
	if (clock_settime(CLOCK_REALTIME, &ts)) {
		/* No CAP_SYS_TIME: estimate the arming time from a sample. */
		int probe_fd = t_open(0);

		clockid = CLOCK_MONOTONIC;
		ASSERT_LE(0, probe_fd);
		t = t_now(CLOCK_MONOTONIC);
		ASSERT_EQ(0, arm_at(probe_fd, clockid, 16384,
				    t + 3600 * NSEC_PER_SEC, 0, nr_cpus));
		close(probe_fd);
		when = t_now(CLOCK_MONOTONIC) + NSEC_PER_SEC +
		       (t_now(CLOCK_MONOTONIC) - t) * (n / 16384 + 1) * 3;
	} else {
		self->real_offset = t_now(CLOCK_REALTIME) - t_now(CLOCK_MONOTONIC);
		when = t_now(CLOCK_REALTIME) + 3600 * NSEC_PER_SEC;
	}
	ASSERT_EQ(0, expirer_totals(&deferred0, &max_run0))
		TH_LOG("qtimerctl stats --json gave no totals");
	t = t_now(CLOCK_MONOTONIC);
	ASSERT_EQ(0, arm_at(fd, clockid, n, when, 0, nr_cpus));
	t0 = t_now(CLOCK_MONOTONIC);
	TH_LOG("%ld timers over %d CPUs armed in %.1f s", n, nr_cpus,
	       (double)(t0 - t) / NSEC_PER_SEC);

	if (clockid == CLOCK_REALTIME) {
		pid = start_probe(p, t0);
		ASSERT_LE(0, pid);
		/* Now they are all due. */
		storm = t_now(CLOCK_MONOTONIC);
		self->stepped = true;
		ASSERT_EQ(0, t_set_realtime(when + NSEC_PER_MSEC));
	} else {
		storm = when;
		if (t0 > when)
			TH_LOG("arming overran the expiry by %.1f s: the storm started early",
			       (double)(t0 - when) / NSEC_PER_SEC);
		pid = start_probe(p, when);
		ASSERT_LE(0, pid);
	}
	while (got < n) {
		int r;

		if (t_wait_readable(fd, 60 * 1000) != 1)
			break;
		r = t_read(fd, recs, cap);
		if (r <= 0)
			break;
		t = t_now(clockid);
		for (i = 0; i < r; i++) {
			__u64 c = recs[i].cookie;

			if (c >= (__u64)n || seen[c] ||
			    recs[i].expires_ns != when ||
			    recs[i].flags != QTIMER_REC_LAST ||
			    recs[i].count != 1 || t < when) {
				EXPECT_TRUE(0) TH_LOG("bad record: cookie %llu (seen %d) expires %lld (want %lld) flags %#x count %u",
					(unsigned long long)c,
					c < (__u64)n ? seen[c] : -1,
					(long long)recs[i].expires_ns,
					(long long)when, recs[i].flags,
					recs[i].count);
				goto out;
			}
			seen[c] = 1;
		}
		got += r;
		last_ns = t_now(CLOCK_MONOTONIC);
	}
out:
	probe_rc = stop_probe(p, pid);
	if (self->stepped) {
		EXPECT_EQ(0, t_set_realtime(t_now(CLOCK_MONOTONIC) + self->real_offset));
		self->stepped = false;
	}
	EXPECT_EQ(n, got);
	TH_LOG("%ld delivered within %.2f s; %ld spawns meanwhile, the slowest %.3f s (bound %.0f s)",
	       got, (double)(last_ns - storm) / NSEC_PER_SEC, (long)p->spawns,
	       (double)p->worst_ns / NSEC_PER_SEC, (double)bound / NSEC_PER_SEC);
	EXPECT_EQ(0, probe_rc) TH_LOG("spawn error %d", p->error);
	EXPECT_LT(0, p->spawns);
	EXPECT_GT(bound, p->worst_ns);
	EXPECT_EQ(0, t_nothing_pending(fd));
	/*
	 * The callback's budget engaged: a million timers due at one instant
	 * are far more than one callback may fire (QT_IRQ_BUDGET, 256), so
	 * runs went to the worker; and no callback ran for long.  A budget
	 * that did not hold shows as no deferral and a callback of seconds.
	 * The bound allows for TCG and a busy host (a budget's worth takes
	 * about a millisecond there), ten times more on a debug kernel.
	 */
	ASSERT_EQ(0, expirer_totals(&deferred1, &max_run1));
	TH_LOG("deferred runs %llu, longest callback %.1f ms (%.1f ms before the storm)",
	       deferred1 - deferred0, max_run1 / 1e6, max_run0 / 1e6);
	EXPECT_LT(0, deferred1 - deferred0);
	EXPECT_GT((t_debug_kernel() ? 2000 : 200) * NSEC_PER_MSEC, (__s64)max_run1);
	t = t_now(CLOCK_MONOTONIC);
	close(fd);
	TH_LOG("closed in %.2f s", (double)(t_now(CLOCK_MONOTONIC) - t) / NSEC_PER_SEC);
	free(recs);
	free(seen);
	munmap(p, sizeof(*p));
}

/* Busy fraction of all CPUs over @ms, from /proc/stat. */
static double cpu_busy(int ms)
{
	unsigned long long busy0, total0, busy1, total1;

	if (t_cpu_ticks(-1, &busy0, &total0))
		return -1;
	t_sleep_ms(ms);
	if (t_cpu_ticks(-1, &busy1, &total1))
		return -1;
	return total1 > total0 ? (double)(busy1 - busy0) / (total1 - total0) : 0;
}

TEST_F_TIMEOUT(dos, unread_nanosecond_tickers_stay_idle, 120)
{
	enum { NR = 256 };
	int fd = t_open(O_NONBLOCK), i, n, nr_cpus = t_nr_cpus(), pass;
	__u64 ids[NR];
	struct qtimer_record recs[NR];
	__s64 armed, now, spawn, bound = spawn_bound_ns();
	double busy;

	ASSERT_LE(0, fd);
	armed = t_now(CLOCK_MONOTONIC);
	for (i = 0; i < NR; i++) {
		int cpu = i % nr_cpus;

		if (!t_cpu_online(cpu))
			cpu = 0;
		ASSERT_EQ(0, t_arm_cpu(fd, CLOCK_MONOTONIC, 0, 0, 1, i, cpu,
					&ids[i]));
	}
	for (pass = 0; pass < 2; pass++) {
		t_sleep_ms(300);
		busy = cpu_busy(1000);
		spawn = t_spawn_true_ns();
		TH_LOG("pass %d: CPUs %.1f%% busy, a spawn took %.3f s", pass,
		       busy * 100, (double)spawn / NSEC_PER_SEC);
		/* One expiry each, then nothing until read: idle CPUs. */
		EXPECT_LE(0, busy);
		EXPECT_GT(0.25, busy);
		EXPECT_LT(0, spawn);
		EXPECT_GT(bound, spawn);

		n = t_collect(fd, recs, NR, QT_ARRIVE_MS);
		now = t_now(CLOCK_MONOTONIC);
		ASSERT_EQ(NR, n);
		for (i = 0; i < n; i++) {
			ASSERT_LT(recs[i].cookie, (__u64)NR);
			EXPECT_EQ(ids[recs[i].cookie], recs[i].id);
			EXPECT_EQ(0, recs[i].flags);
			/* ~10^9 a second; at least a tenth of the time passed. */
			EXPECT_LT(100000000U, recs[i].count);
			EXPECT_GE(now, recs[i].expires_ns);
			if (!pass)
				EXPECT_GE((__u64)(now - armed), recs[i].count - 1ULL);
		}
	}
	close(fd);
}

TEST_HARNESS_MAIN
