// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * Timers in a memory cgroup (dos.h): charged to it and contained by its
 * limit, and a cgroup's bill holds its own timers, not the growth of a
 * heap another tenant filled.
 */
#define _GNU_SOURCE
#include <sys/stat.h>
#include <sys/wait.h>

#include "dos.h"

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
