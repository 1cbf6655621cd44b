// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * Denial-of-service bounds: what one user can make the kernel do.
 *
 *  - 10^6 timers due at the same instant, spread over every CPU's heap, are
 *    all delivered exactly once, while a process started meanwhile keeps
 *    spawning /bin/true and each spawn completes within a second (five
 *    under TCG, where the guest runs 10-50x slower and unevenly): the
 *    expiry work must leave hard-irq context and yield.  The VM's console
 *    scanner fails the run on any lockup or stall report.
 *  - Tickers with a 1 ns period that nobody reads cost one expiry each and
 *    then nothing: the CPUs stay idle and the machine responsive, and the
 *    one pending record counts every period that passed.
 *  - The per-file and per-user caps hold exactly under concurrent arming,
 *    and another user is not affected by one at its cap.
 *  - In a memory cgroup (memory.max 16M), timer memory is charged to the
 *    cgroup: arming until failure ends in -ENOMEM for the arming task,
 *    which is exempt from the OOM killer (no kernel OOM panic, no victim
 *    anywhere; the memcg OOM report on the console is expected),
 *    memory.current grows with the timers and falls back when the file is
 *    closed.
 *  - A cgroup's bill holds its own timers and not the growth of a heap
 *    another tenant filled (memcg_pays_no_other_tenants_heap_growth).
 *
 * QT_DOS_TIMERS sets the size of the storm (default 1000000; 32768 on a
 * debug kernel, where each operation costs 10-20 times more under TCG:
 * still 128 times what one callback may fire, so the budget engages).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "helpers.h"

#define PARAM_FD	QT_PARAMS "max_timers_per_fd"
#define PARAM_USER	QT_PARAMS "max_timers_per_user"

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

/* @len bytes shared with the children forked after: zeroed, or NULL. */
static void *shared_map(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* Raise the caps if they are below @n (root only); restore in teardown. */
FIXTURE(dos)
{
	struct t_knob knobs[4];
	int nr_knobs;
	bool root;
	__s64 real_offset;	/* CLOCK_REALTIME - CLOCK_MONOTONIC to restore */
	bool stepped;
};

FIXTURE_SETUP(dos)
{
	self->root = !geteuid() && !access(PARAM_FD, W_OK);
}

FIXTURE_TEARDOWN(dos)
{
	int i;

	if (self->stepped)
		EXPECT_EQ(0, t_set_realtime(t_now(CLOCK_MONOTONIC) + self->real_offset));
	for (i = self->nr_knobs - 1; i >= 0; i--)
		EXPECT_EQ(0, t_knob_restore(&self->knobs[i]));
}

static int set_param(FIXTURE_DATA(dos) *self, const char *path,
		     unsigned long long val)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%llu", val);
	return t_knob_set(&self->knobs[self->nr_knobs++], path, buf);
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

struct armer {
	int fd;
	long ok;
	long other;
	int want_err;
	int last_err;
	pthread_barrier_t *bar;
};

/* Arms until the expected error; counts successes and anything else. */
static void *armer_fn(void *p)
{
	struct armer *a = p;
	int ret;

	pthread_barrier_wait(a->bar);
	for (;;) {
		ret = t_arm(a->fd, CLOCK_MONOTONIC, 0, 3600 * NSEC_PER_SEC, 0,
			     0, NULL);
		if (!ret) {
			a->ok++;
			continue;
		}
		a->last_err = ret;
		if (ret != a->want_err)
			a->other++;
		break;
	}
	return NULL;
}

static long run_armers(int *fds, int nr, int want_err, long *other)
{
	pthread_t th[8];
	struct armer a[8];
	pthread_barrier_t bar;
	long ok = 0;
	int i;

	pthread_barrier_init(&bar, NULL, nr);
	for (i = 0; i < nr; i++) {
		a[i] = (struct armer){ .fd = fds[i], .want_err = want_err, .bar = &bar };
		pthread_create(&th[i], NULL, armer_fn, &a[i]);
	}
	*other = 0;
	for (i = 0; i < nr; i++) {
		pthread_join(th[i], NULL);
		ok += a[i].ok;
		*other += a[i].other;
	}
	pthread_barrier_destroy(&bar);
	return ok;
}

TEST_F(dos, per_file_cap_is_exact_under_concurrency)
{
	enum { CAP = 2000 };
	int fds[8], i;
	struct t_fdinfo fi;
	long other;

	if (!self->root)
		SKIP(return, "needs root for the module parameters");
	ASSERT_EQ(0, set_param(self, PARAM_FD, CAP));
	fds[0] = t_open(0);
	ASSERT_LE(0, fds[0]);
	for (i = 1; i < 8; i++)
		fds[i] = fds[0];
	EXPECT_EQ(CAP, run_armers(fds, 8, -ENOSPC, &other));
	EXPECT_EQ(0, other);
	ASSERT_EQ(0, t_fdinfo(fds[0], &fi));
	EXPECT_EQ(CAP, fi.timers);
	EXPECT_EQ(CAP, fi.user_timers);
	EXPECT_EQ(-ENOSPC, t_arm(fds[0], CLOCK_MONOTONIC, 0, 0, 0, 1, NULL));
	/* Another file is not full. */
	fds[1] = t_open(0);
	ASSERT_LE(0, fds[1]);
	EXPECT_EQ(0, t_arm(fds[1], CLOCK_MONOTONIC, 0, 0, 0, 1, NULL));
	close(fds[1]);
	close(fds[0]);
}

TEST_F(dos, per_file_cap_frees_up)
{
	enum { CAP = 100 };
	int fd = t_open(0), i;
	__u64 ids[CAP];

	if (!self->root)
		SKIP(return, "needs root for the module parameters");
	ASSERT_EQ(0, set_param(self, PARAM_FD, CAP));
	ASSERT_LE(0, fd);
	for (i = 0; i < CAP; i++)
		ASSERT_EQ(0, t_arm(fd, CLOCK_MONOTONIC, 0, 3600 * NSEC_PER_SEC,
				    0, i, &ids[i]));
	EXPECT_EQ(-ENOSPC, t_arm(fd, CLOCK_MONOTONIC, 0, 0, 0, 0, NULL));
	EXPECT_EQ(QTIMER_CANCEL_ARMED, t_cancel(fd, ids[0]));
	EXPECT_EQ(0, t_arm(fd, CLOCK_MONOTONIC, 0, 3600 * NSEC_PER_SEC, 0, 0,
			    &ids[0]));
	EXPECT_EQ(-ENOSPC, t_arm(fd, CLOCK_MONOTONIC, 0, 0, 0, 0, NULL));
	close(fd);
}

struct bad_submitter {
	int fd;
	volatile int stop;
	long submits;
	long not_einval;	/* ops whose result was not -EINVAL */
};

/* SUBMITs of 16 ARMs that are all invalid (clockid 99), until told. */
static void *bad_submitter_fn(void *p)
{
	struct bad_submitter *b = p;
	struct qtimer_op ops[16];
	__u32 done;
	int i;

	while (!b->stop) {
		for (i = 0; i < 16; i++) {
			ops[i] = t_op(CLOCK_MONOTONIC, 0, 3600 * NSEC_PER_SEC, 0, i);
			ops[i].opcode = QTIMER_OP_ARM;
			ops[i].clockid = 99;
		}
		if (t_submit(b->fd, ops, 16, 0, &done) != 16)
			b->not_einval++;
		for (i = 0; i < 16; i++)
			if (ops[i].result != -EINVAL)
				b->not_einval++;
		b->submits++;
	}
	return NULL;
}

/*
 * A file 16 below its cap, one thread SUBMITting chunks of 16 invalid ARMs
 * and another arming and cancelling one timer at a time, with a pause
 * between (so that chunks start while it holds no place): the invalid ARMs
 * create nothing, so the valid ARM never finds the file full.  (A chunk
 * used to take places under the caps for all its ARMs before checking
 * them, so the valid ARM got ENOSPC whenever it landed inside a chunk.)
 */
TEST_F(dos, submit_of_invalid_arms_takes_no_places)
{
	enum { CAP = 64, ROUNDS = 3000 };
	struct bad_submitter b = { 0 };
	long enospc = 0, other = 0, i;
	pthread_t th;
	__u64 id;
	int ret;

	if (!self->root)
		SKIP(return, "needs root for the module parameters");
	ASSERT_EQ(0, set_param(self, PARAM_FD, CAP));
	b.fd = t_open(0);
	ASSERT_LE(0, b.fd);
	for (i = 0; i < CAP - 16; i++)
		ASSERT_EQ(0, t_arm(b.fd, CLOCK_MONOTONIC, 0, 3600 * NSEC_PER_SEC,
				    0, i, NULL));
	ASSERT_EQ(0, pthread_create(&th, NULL, bad_submitter_fn, &b));
	for (i = 0; i < ROUNDS; i++) {
		ret = t_arm(b.fd, CLOCK_MONOTONIC, 0, 3600 * NSEC_PER_SEC, 0,
			     0, &id);
		if (!ret) {
			if (t_cancel(b.fd, id) != QTIMER_CANCEL_ARMED)
				other++;
		} else if (ret == -ENOSPC) {
			enospc++;
		} else {
			other++;
		}
		usleep(20);
	}
	b.stop = 1;
	pthread_join(th, NULL);
	TH_LOG("%ld ARMs, %ld of them ENOSPC, against %ld SUBMITs", (long)ROUNDS,
	       enospc, b.submits);
	EXPECT_EQ(0, enospc);
	EXPECT_EQ(0, other);
	EXPECT_EQ(0, b.not_einval);
	close(b.fd);
}

TEST_F(dos, per_user_cap_is_exact_and_per_user)
{
	enum { CAP = 3000 };
	int fds[8], i, status;
	struct t_fdinfo fi;
	long other;
	pid_t pid;

	if (!self->root)
		SKIP(return, "needs root for the module parameters");
	ASSERT_EQ(0, set_param(self, PARAM_USER, CAP));
	for (i = 0; i < 8; i++) {
		fds[i] = t_open(0);
		ASSERT_LE(0, fds[i]);
	}
	EXPECT_EQ(CAP, run_armers(fds, 8, -EDQUOT, &other));
	EXPECT_EQ(0, other);
	ASSERT_EQ(0, t_fdinfo(fds[0], &fi));
	EXPECT_EQ(CAP, fi.user_timers);
	EXPECT_EQ(-EDQUOT, t_arm(fds[0], CLOCK_MONOTONIC, 0, 0, 0, 0, NULL));

	/* Another user has a quota of its own. */
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		int fd, k;

		if (setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
			_exit(10);
		fd = t_open(0);
		if (fd < 0)
			_exit(11);
		for (k = 0; k < 100; k++)
			if (t_arm(fd, CLOCK_MONOTONIC, 0, 3600 * NSEC_PER_SEC,
				   0, k, NULL))
				_exit(12);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
		TH_LOG("status %#x", status);

	/* A closed file gives its timers back (one that has some). */
	for (i = 7; i > 0; i--) {
		ASSERT_EQ(0, t_fdinfo(fds[i], &fi));
		if (fi.timers)
			break;
	}
	ASSERT_LT(0, i) TH_LOG("all %d timers in one file", CAP);
	close(fds[i]);
	fds[i] = -1;
	EXPECT_EQ(0, t_arm(fds[0], CLOCK_MONOTONIC, 0, 3600 * NSEC_PER_SEC,
			    0, 0, NULL));
	for (i = 0; i < 8; i++)
		if (fds[i] >= 0)
			close(fds[i]);
}

/* --- memory cgroup ---------------------------------------------------------- */

#define CGROOT	"/sys/fs/cgroup/"

static long long cg_read(const char *cg, const char *file)
{
	char path[256], buf[64];

	snprintf(path, sizeof(path), "%s/%s", cg, file);
	if (t_read_str(path, buf, sizeof(buf)))
		return -1;
	return strtoll(buf, NULL, 10);
}

struct cg_report {
	long long base, mid, peak, closed, after, settle_ms;
	long mid_timers, timers;
	int fail_err;
	_Atomic int stage;	/* child: 1 at the peak, 2 after close */
	_Atomic int go;		/* parent: measured stage n */
};

/*
 * At the limit the child cannot even open memory.current (the struct file
 * is charged too): it stops at each stage and the parent, outside the
 * cgroup, measures.  Flags in a shared page and nanosleep: no allocation.
 */
static void cg_stop(struct cg_report *r, int stage)
{
	r->stage = stage;
	while (r->go < stage)
		t_sleep_ms(1);
}

/* Waits for the child to reach @stage; false if it died first. */
static bool cg_wait_stage(struct cg_report *r, int stage, pid_t pid)
{
	while (r->stage < stage) {
		siginfo_t si = { .si_pid = 0 };

		/* Died: leave it to the caller's waitpid() to say how. */
		if (!waitid(P_PID, pid, &si, WEXITED | WNOHANG | WNOWAIT) &&
		    si.si_pid == pid)
			return false;
		t_sleep_ms(1);
	}
	return true;
}

static void cg_measure(struct cg_report *r, const char *cg, int stage,
		       long long *val, pid_t pid)
{
	if (!cg_wait_stage(r, stage, pid))
		return;
	*val = cg_read(cg, "memory.current");
	r->go = stage;
}

/* Back near where it started, up to this long after the close. */
#define CG_SLACK	(4LL * 1024 * 1024)
#define CG_SETTLE_MS	30000

/*
 * After the close: the heaps' dead entries go, and with them the timers'
 * charges, in a compact work queued by the close, which on a debug kernel
 * under TCG may take seconds to get through a hundred thousand.  Measure
 * until the charge is back near base or CG_SETTLE_MS pass; a leak stays.
 */
static void cg_settle(struct cg_report *r, const char *cg, pid_t pid)
{
	__s64 t0;

	if (!cg_wait_stage(r, 2, pid))
		return;
	t0 = t_now(CLOCK_MONOTONIC);
	r->closed = r->after = cg_read(cg, "memory.current");
	while (r->after >= r->base + CG_SLACK && r->settle_ms < CG_SETTLE_MS) {
		t_sleep_ms(50);
		r->after = cg_read(cg, "memory.current");
		r->settle_ms = (t_now(CLOCK_MONOTONIC) - t0) / 1000000;
	}
	/* The child stays in the cgroup until now. */
	r->go = 2;
}

/*
 * In the cgroup: arm 50000 timers and measure, then arm until failure, then
 * close.  Unkillable by the OOM killer, so that a charge the cgroup cannot
 * take fails with -ENOMEM instead of killing us.
 */
static int cg_child(const char *cg, struct cg_report *r)
{
	static struct qtimer_op ops[1024];
	char pid[32];
	int fd, i;

	snprintf(pid, sizeof(pid), "%d", getpid());
	{
		char path[256];

		snprintf(path, sizeof(path), "%s/cgroup.procs", cg);
		if (t_write_str(path, pid))
			return 1;
	}
	if (t_write_str("/proc/self/oom_score_adj", "-1000"))
		return 2;
	fd = t_open(0);
	if (fd < 0)
		return 3;
	r->base = cg_read(cg, "memory.current");
	for (;;) {
		int ret;

		for (i = 0; i < 1024; i++) {
			ops[i] = t_op(CLOCK_MONOTONIC, 0, 3600 * NSEC_PER_SEC,
				       0, r->timers + i);
			ops[i].opcode = QTIMER_OP_ARM;
		}
		ret = t_submit(fd, ops, 1024, QTIMER_SUBMIT_STOP_ON_ERROR, NULL);
		if (ret < 0) {
			r->fail_err = ret;
			break;
		}
		r->timers += ret;
		if (ret < 1024 || ops[ret - 1].result) {
			r->timers--;
			r->fail_err = ops[ret - 1].result;
			break;
		}
		if (!r->mid_timers && r->timers >= 50000) {
			r->mid_timers = r->timers;
			r->mid = cg_read(cg, "memory.current");
		}
		if (r->timers > 20000000)
			return 4;
	}
	cg_stop(r, 1);
	close(fd);
	/* Each close lets the per-CPU heaps shrink by half. */
	for (i = 0; i < 40; i++) {
		fd = t_open(0);
		if (fd >= 0)
			close(fd);
	}
	sleep(1);	/* RCU-freed contexts */
	cg_stop(r, 2);
	return 0;
}

/*
 * Make the cgroup CGROOT"qtimer-@what-<pid>" in @cg, with the memory
 * controller on for it (*@added if this turned it on).  0, or 1 when the
 * test is skipped or failed.
 */
static int cg_create(struct __test_metadata *_metadata, char *cg, size_t len,
		     const char *what, bool *added)
{
	char buf[256];

	*added = false;
	if (geteuid())
		SKIP(return 1, "needs root for cgroups");
	if (t_read_str(CGROOT "cgroup.controllers", buf, sizeof(buf)) ||
	    !strstr(buf, "memory"))
		SKIP(return 1, "no cgroup2 memory controller at " CGROOT);
	ASSERT_EQ(0, t_read_str(CGROOT "cgroup.subtree_control", buf, sizeof(buf)))
		return 1;
	if (!strstr(buf, "memory")) {
		ASSERT_EQ(0, t_write_str(CGROOT "cgroup.subtree_control", "+memory"))
			return 1;
		*added = true;
	}
	snprintf(cg, len, CGROOT "qtimer-%s-%d", what, getpid());
	ASSERT_EQ(0, mkdir(cg, 0755))
		return 1;
	return 0;
}

static void cg_remove(struct __test_metadata *_metadata, const char *cg,
		      bool added)
{
	EXPECT_EQ(0, rmdir(cg));
	if (added)
		t_write_str(CGROOT "cgroup.subtree_control", "-memory");
}

TEST_F_TIMEOUT(dos, memcg_charges_and_contains, 600)
{
	char cg[128], buf[256];
	struct cg_report *r;
	bool added;
	int status;
	pid_t pid;

	if (cg_create(_metadata, cg, sizeof(cg), "hardening", &added))
		return;
	snprintf(buf, sizeof(buf), "%s/memory.max", cg);
	ASSERT_EQ(0, t_write_str(buf, "16M"));
	snprintf(buf, sizeof(buf), "%s/memory.swap.max", cg);
	t_write_str(buf, "0");

	r = shared_map(sizeof(*r));
	ASSERT_NE(NULL, r);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(cg_child(cg, r));
	cg_measure(r, cg, 1, &r->peak, pid);
	cg_settle(r, cg, pid);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	cg_remove(_metadata, cg, added);

	TH_LOG("base %lld, %ld timers %lld, failed at %ld timers with %d, peak %lld, after close %lld, %lld ms later %lld",
	       r->base, r->mid_timers, r->mid, r->timers, r->fail_err, r->peak,
	       r->closed, r->settle_ms, r->after);
	ASSERT_TRUE(WIFEXITED(status)) TH_LOG("child killed by signal %d",
					      WTERMSIG(status));
	ASSERT_EQ(0, WEXITSTATUS(status));
	EXPECT_EQ(-ENOMEM, r->fail_err);
	ASSERT_LT(0, r->mid_timers);
	/*
	 * Each timer costs 64 bytes of object (72 in a cgroup) and its id
	 * slot, 84 bytes in all; its heap entry is charged to no cgroup
	 * (kmod/storage.c).  The reading moves in the cgroup's charge
	 * batches of 256 KiB, 5 bytes a timer here: no less than the object.
	 */
	EXPECT_LE(64LL * r->mid_timers, r->mid - r->base);
	EXPECT_GE(2048LL * r->mid_timers, r->mid - r->base);
	EXPECT_LT(r->mid, r->peak);
	/* Back near where it started. */
	EXPECT_GT(r->base + CG_SLACK, r->after);
	munmap(r, sizeof(*r));
}

/*
 * A heap is every file's on its CPU and clock: the tenant whose ARM found
 * it full used to pay for its growth, an eighth of everyone's entries at
 * once (qt_storage_grow_cap()), in its own memory cgroup.  Now heap pages are
 * charged to no cgroup, and bounded by the timers, which are charged.
 *
 * Tenant A, outside any cgroup, fills CPU @cpu's monotonic heap with
 * GROWTH_BIG timers; tenant B, in a cgroup, arms GROWTH_CHUNK timers at a
 * time on that heap and reads its memory.current after each chunk, until
 * it has armed an eighth of A's and a bit: B's chunks then cross the
 * heap's capacity at least once (it had at most A's plus an eighth), and
 * the crossing chunk's growth, 16 bytes an entry for an eighth of A's,
 * went to B's bill.  A chunk of B's own costs it 100 bytes a timer, plus
 * the cgroup's charge batches (64 pages).
 */
#define GROWTH_BIG		1000000
#define GROWTH_CHUNK		256
#define GROWTH_CHUNK_MAX	(400 * 1024)	/* bytes a chunk may cost B */

struct growth_report {
	long timers;
	long long before, worst, total;
	int err;
};

/* Timer k of either tenant: an hour ahead, on the heap of CPU *@arg. */
static void growth_op(struct qtimer_op *op, long k, void *arg)
{
	*op = t_op(CLOCK_MONOTONIC, QTIMER_F_CPU, 3600 * NSEC_PER_SEC, 0, k);
	op->cpu = *(int *)arg;
}

static int growth_child(const char *cg, int cpu, long n,
			struct growth_report *r)
{
	static struct qtimer_op ops[GROWTH_CHUNK];
	char path[256], pid[32];
	long long prev, now;
	int fd, i;

	snprintf(pid, sizeof(pid), "%d", getpid());
	snprintf(path, sizeof(path), "%s/cgroup.procs", cg);
	if (t_write_str(path, pid))
		return 1;
	fd = t_open(0);
	if (fd < 0)
		return 2;
	prev = r->before = cg_read(cg, "memory.current");
	while (r->timers < n) {
		for (i = 0; i < GROWTH_CHUNK; i++) {
			growth_op(&ops[i], r->timers + i, &cpu);
			ops[i].opcode = QTIMER_OP_ARM;
		}
		i = t_submit(fd, ops, GROWTH_CHUNK, QTIMER_SUBMIT_STOP_ON_ERROR, NULL);
		if (i != GROWTH_CHUNK || ops[GROWTH_CHUNK - 1].result) {
			r->err = i < 0 ? i : ops[i - 1].result;
			return 3;
		}
		r->timers += GROWTH_CHUNK;
		now = cg_read(cg, "memory.current");
		if (now - prev > r->worst)
			r->worst = now - prev;
		prev = now;
	}
	r->total = prev - r->before;
	close(fd);
	return 0;
}

TEST_F_TIMEOUT(dos, memcg_pays_no_other_tenants_heap_growth, 600)
{
	long big = GROWTH_BIG, i;
	int cpu = t_nr_cpus() - 1, fd, status;
	struct growth_report *r;
	char cg[128];
	bool added;
	pid_t pid;

	/*
	 * A growth must stand out of the cgroup's 256 KiB charge batches,
	 * so A needs a heap of 10^5-10^6 timers: 3.5 minutes to arm under
	 * KASAN and TCG, for a charge that does not depend on the sanitizers.
	 */
	if (t_debug_kernel())
		SKIP(return, "a debug kernel: arming A's heap takes minutes");
	if (cg_create(_metadata, cg, sizeof(cg), "growth", &added))
		return;
	while (cpu > 0 && !t_cpu_online(cpu))
		cpu--;
	ASSERT_EQ(0, set_param(self, PARAM_FD, 2 * big));
	ASSERT_EQ(0, set_param(self, PARAM_USER, 4 * big));
	/* Heaps shrink to twice what they hold at a close (qt_base_trim()). */
	for (i = 0; i < 8; i++) {
		fd = t_open(0);
		ASSERT_LE(0, fd);
		close(fd);
		t_sleep_ms(50);
	}

	/* Tenant A. */
	fd = t_open(0);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, t_arm_many(fd, big, growth_op, &cpu, NULL, 0));

	/* Tenant B. */
	r = shared_map(sizeof(*r));
	ASSERT_NE(NULL, r);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(growth_child(cg, cpu, big / 8 + 16 * GROWTH_CHUNK, r));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	close(fd);
	cg_remove(_metadata, cg, added);

	TH_LOG("CPU %d: %ld timers of A's, then B armed %ld: %lld bytes in all, its worst chunk of %d cost %lld (bound %d)",
	       cpu, big, r->timers, r->total, GROWTH_CHUNK, r->worst,
	       GROWTH_CHUNK_MAX);
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status)) TH_LOG("B failed: %d", r->err);
	EXPECT_GE(GROWTH_CHUNK_MAX, r->worst)
		TH_LOG("B paid for a growth of the heap A filled");
	munmap(r, sizeof(*r));
}

TEST_HARNESS_MAIN
