/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * Latency under attack: no operation a user can trigger may work through
 * all of a file's or a heap's timers in one go with interrupts off (or,
 * in a task, without a rescheduling point), so that no number of timers
 * lets one user hold up the highest-priority task of a CPU.  In each test
 * a SCHED_FIFO thread pinned to the attacked CPU sleeps 1 ms over and over
 * and keeps how late each wakeup was, first with the machine idle, then
 * while one attack on 10^6 timers runs on that CPU.  One suite a path the
 * attacks take, each test named for its attack:
 *
 *  - latency_compact_test.c: heap compaction, by close() and by MODIFY;
 *  - latency_read_test.c: the ready queue: CANCEL's sweep, close(), and
 *    read() of every record or behind cancelled ones, with a ring or not;
 *  - latency_parked_test.c: what read()s parked by userfaultfd consumed,
 *    ended by a read() or by the expirer;
 *  - latency_clockset_test.c: clock sets walking files and waking
 *    watchers;
 *  - latency_offline_test.c: a CPU with 3 x 10^6 timers going offline;
 *  - latency_ring_test.c: the mapped ring's read() and the expirer's
 *    upkeep of many rings.
 *
 * Each attack is sized from the module's thresholds, not from the time it
 * is given, so that a slow host reaches the walk too; the compaction,
 * which runs in a work item, is checked in the heap statistics.  Those
 * that keep the victim's CPU busy are judged against the same operations
 * on CONTROL_TIMERS timers, where no walk is long, rather than an idle
 * CPU: under TCG a busy vCPU competes for the host's CPUs where an idle
 * one sleeps, so against an idle baseline a loaded host looks like an
 * attack.
 *
 * The attack's worst wakeup may be LAT_FACTOR times as late as the
 * baseline's worst (leaving out its single worst wakeup, one hiccup of the
 * host), and never less than LAT_FACTOR * LAT_FLOOR_NS (40 ms): under TCG
 * the idle worst alone is 5-15 ms, as the host takes virtual CPUs away now
 * and then.  Where 10^6 entries are worked through in one irq-off hold, the
 * victim waited 130-900 ms under TCG (stock 6.1); the same attacks on 1024
 * timers, which is what work in chunks of about a thousand with the lock
 * dropped and a rescheduling point in between amounts to, kept it within
 * 10 ms (22 ms for the clock sets, 47 ms for the offline).  A bound
 * exceeded is measured again from scratch, and the test fails only if the
 * attack exceeds it both times.  On PREEMPT_RT these locks leave
 * interrupts on and the victim preempts their holder, so there the
 * attacks cannot delay it in any case.
 *
 * QT_LATENCY_TIMERS sets the number of timers: 10^6 by default, fewer if
 * arming them takes over ARM_BUDGET_NS, which the log says.  On a debug
 * kernel (KASAN, lockdep, kmemleak) arming is hundreds of times slower
 * under TCG, so there the default is 4096: the tests exercise the paths
 * (and a fix's chunks) under the checkers, but only the walks that free
 * timers are slow enough at that size to hold the CPU past the bound,
 * which is based on twice the floor there (its own clock sets hold a CPU
 * for up to 30 ms).
 * Each test takes 4-15 s on a stock kernel under TCG.  Needs root
 * (SCHED_FIFO, the module parameters, the clock, hotplug) and two online
 * CPUs (three for the offline).
 *
 * The victim, its windows and the irqsoff tracer are latency.c's.  The
 * `latency` fixture, the attack runner and ATTACK_TEST() are below,
 * declared only where kselftest_harness.h was included first, so that
 * latency.c can include this header too; each suite expands them once.
 */
#ifndef _QT_LATENCY_H
#define _QT_LATENCY_H

#include <pthread.h>

#include "helpers.h"

#define PARAM_FD	QT_PARAMS "max_timers_per_fd"
#define PARAM_USER	QT_PARAMS "max_timers_per_user"

#define LAT_FACTOR	4
#define LAT_FLOOR_NS	(10 * NSEC_PER_MSEC)
#define LAT_SLEEP_NS	NSEC_PER_MSEC
#define IDLE_NS		(1 * NSEC_PER_SEC)
#define ATTACK_NS	(2 * NSEC_PER_SEC)
#define ARM_BUDGET_NS	(15 * NSEC_PER_SEC)
#define ARM_STEP	65536
#define FAR_NS		(3600 * NSEC_PER_SEC)
#define MAX_SAMPLES	(1 << 16)
#define ROUNDS		2
#define CONTROL_TIMERS	1024	/* the MODIFY attack's baseline heap */

/* The victim's wakeups during one measurement. */
struct lat_window {
	__s64 ns[MAX_SAMPLES];
	_Atomic size_t nr;
};

struct lat_stats {
	size_t nr;
	__s64 p50, p99, worst;
	__s64 worst_but_one;	/* the worst, if there is only one */
};

/*
 * A SCHED_FIFO thread on one CPU, sleeping LAT_SLEEP_NS at a time; the
 * lateness of each wakeup goes into the open window, if any.
 */
struct victim {
	pthread_t thread;
	bool running;
	_Atomic bool stop;
	_Atomic(struct lat_window *) win;
	_Atomic __s64 sleeping_until;	/* 0 while awake */
	_Atomic long wakeups;
};


int start_on_cpu(pthread_t *thread, int cpu, int fifo, void *(*fn)(void *),
		 void *arg);
/* 0, or -errno (-EPERM without CAP_SYS_NICE). */
int victim_start(struct victim *v, int cpu);
void victim_stop(struct victim *v);
void window_begin(struct victim *v, struct lat_window *w);
void window_end(struct victim *v, struct lat_window *w);
void window_stats(struct lat_window *w, struct lat_stats *s);

#define MS(ns)	((double)(ns) / NSEC_PER_MSEC)

const char *irqsoff_root(void);
void irqsoff_write(const char *root, const char *file, const char *val);
void irqsoff_begin(const char *root);

__s64 scattered(__s64 base, __s64 span_ns, long k);

#ifdef __KSELFTEST_HARNESS_H

/* Log the maximum so far and say whether qtimer's code is in its trace. */
static void irqsoff_report(struct __test_metadata *_metadata, const char *root,
			   const char *window)
{
	static char trace[1 << 16];
	char path[96], max[32], *at;
	const char *site = "?";
	ssize_t n;
	int fd;

	if (!root)
		return;
	snprintf(path, sizeof(path), "%s/tracing_max_latency", root);
	if (t_read_str(path, max, sizeof(max)))
		return;
	snprintf(path, sizeof(path), "%s/trace", root);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	n = fd < 0 ? 0 : read(fd, trace, sizeof(trace) - 1);
	if (fd >= 0)
		close(fd);
	trace[n > 0 ? n : 0] = 0;
	at = strstr(trace, "=> started at:");
	if (at) {
		site = at + strlen("=> started at:");
		at = strchr(at, '\n');
		if (at)
			*at = 0;
	}
	TH_LOG("irqsoff tracer, %s: longest section %s us, started at%s%s",
	       window, max, site, strstr(at ? at + 1 : "", "qt_") ? " (qtimer in its trace)" : "");
}

FIXTURE(latency)
{
	struct t_knob knobs[2];
	int nr_knobs;
	int nr_online;
	int cpu;		/* the victim's, which the attacks run on */
	int home_cpu;		/* where the rest runs */
	int doomed_cpu;		/* the CPU that goes offline */
	int offline;		/* a CPU to bring back online, or -1 */
	long n;			/* timers per file */
	__s64 floor_ns;		/* the least idle worst a bound is based on */
	int fds[3];
	__u64 *ids;
	long nr_ids;
	struct t_ring ring;	/* fds[0]'s, for the ring's attack */
	__u64 left_cookie;	/* the record the ring's attack leaves to read() */
	long ops;		/* what the attack did, for the log */
	struct victim victim;
	struct lat_window *idle, *attack;
	char skip[96];
};

FIXTURE_SETUP(latency)
{
	struct qtimer_version v;
	int cpu, fd, i;

	for (i = 0; i < 3; i++)
		self->fds[i] = -1;
	self->offline = -1;
	self->n = t_tunable("QT_LATENCY_TIMERS", t_debug_kernel() ? 4096 : 1000000);
	if (self->n < 1)
		self->n = 1;
	self->floor_ns = LAT_FLOOR_NS;
	if (t_debug_kernel()) {
		/* Its own clock sets took 30 ms with next to no timers. */
		self->floor_ns = 2 * LAT_FLOOR_NS;
		TH_LOG("a debug kernel: %ld timers, too few for all but freeing to be slow",
		       self->n);
	}
	for (cpu = 0; cpu < t_nr_cpus(); cpu++) {
		if (!t_cpu_online(cpu))
			continue;
		self->nr_online++;
		self->cpu = cpu;
	}
	self->home_cpu = 0;
	self->doomed_cpu = self->cpu;
	if (geteuid()) {
		snprintf(self->skip, sizeof(self->skip),
			 "needs root (SCHED_FIFO, module parameters)");
		return;
	}
	if (self->nr_online < 2 || !self->cpu) {
		snprintf(self->skip, sizeof(self->skip),
			 "needs two online CPUs, the victim's and one for the rest");
		return;
	}
	self->idle = mmap(NULL, sizeof(*self->idle), PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	self->attack = mmap(NULL, sizeof(*self->attack), PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	ASSERT_NE(MAP_FAILED, self->idle);
	ASSERT_NE(MAP_FAILED, self->attack);
	self->nr_ids = self->n + 1;
	self->ids = calloc(self->nr_ids, sizeof(*self->ids));
	ASSERT_NE(NULL, self->ids);

	fd = t_open(0);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, t_version(fd, &v));
	close(fd);
	/* n and an attack's own timer in a file; three such files at most. */
	if (v.max_timers_per_fd < (unsigned long long)self->n + 1) {
		char buf[32];

		snprintf(buf, sizeof(buf), "%ld", self->n + 1);
		ASSERT_EQ(0, t_knob_set(&self->knobs[self->nr_knobs++], PARAM_FD, buf));
	}
	if (v.max_timers_per_user < 3ULL * self->n + 3) {
		char buf[32];

		snprintf(buf, sizeof(buf), "%ld", 3 * self->n + 3);
		ASSERT_EQ(0, t_knob_set(&self->knobs[self->nr_knobs++], PARAM_USER, buf));
	}
	/* Everything but the attack itself runs off the victim's CPU. */
	ASSERT_EQ(0, t_pin_self(self->home_cpu));
}

/* The attack's files; fds[0]'s ring first, as a mapping keeps its file. */
static void close_files(FIXTURE_DATA(latency) *self)
{
	int i;

	t_ring_unmap(&self->ring);
	for (i = 0; i < 3; i++) {
		if (self->fds[i] >= 0)
			close(self->fds[i]);
		self->fds[i] = -1;
	}
}

FIXTURE_TEARDOWN(latency)
{
	const char *tracer = irqsoff_root();
	int i;

	/* A failed assertion may have left the tracer on. */
	if (tracer)
		irqsoff_write(tracer, "current_tracer", "nop");
	victim_stop(&self->victim);
	t_pin_self(0);
	if (self->offline >= 0)
		EXPECT_EQ(0, t_cpu_set_online(self->offline, 1));
	close_files(self);
	for (i = self->nr_knobs - 1; i >= 0; i--)
		EXPECT_EQ(0, t_knob_restore(&self->knobs[i]));
	free(self->ids);
	if (self->idle && self->idle != MAP_FAILED)
		munmap(self->idle, sizeof(*self->idle));
	if (self->attack && self->attack != MAP_FAILED)
		munmap(self->attack, sizeof(*self->attack));
}

/*
 * Arm timers [first, first + n) of @fd on @cpu, absolute CLOCK_MONOTONIC
 * over [@base, @base + @span_ns); their ids into self->ids as far as it
 * goes.  Returns 0 or the first error.
 */
struct arm_range {
	long first;
	int cpu;
	__s64 base, span_ns;
};

static void arm_range_op(struct qtimer_op *op, long k, void *arg)
{
	const struct arm_range *r = arg;

	k += r->first;
	*op = t_op(CLOCK_MONOTONIC, QTIMER_F_ABSTIME | QTIMER_F_CPU,
		    scattered(r->base, r->span_ns, k), 0, k);
	op->cpu = r->cpu;
}

static int arm_range(FIXTURE_DATA(latency) *self, int fd, long first, long n,
		     int cpu, __s64 base, __s64 span_ns)
{
	struct arm_range r = {
		.first = first, .cpu = cpu, .base = base, .span_ns = span_ns,
	};

	return t_arm_many(fd, n, arm_range_op, &r, self->ids + first,
			   self->nr_ids - first);
}

/*
 * Arm self->n timers (see arm_range()) into a new file in self->fds[@slot],
 * or as many as ARM_BUDGET_NS allows on a machine slower than expected.
 * Returns how many.
 */
static inline long arm_file(struct __test_metadata *_metadata,
			    FIXTURE_DATA(latency) *self, int slot, int cpu,
			    __s64 base, __s64 span_ns)
{
	__s64 t = t_now(CLOCK_MONOTONIC), took = 0;
	long n = 0;
	int fd;

	fd = t_open(0);
	ASSERT_LE(0, fd);
	self->fds[slot] = fd;
	while (n < self->n && took < ARM_BUDGET_NS) {
		long step = self->n - n < ARM_STEP ? self->n - n : ARM_STEP;

		ASSERT_EQ(0, arm_range(self, fd, n, step, cpu, base, span_ns));
		n += step;
		took = t_now(CLOCK_MONOTONIC) - t;
	}
	TH_LOG("%ld timers on CPU %d armed in %.2f s%s", n, cpu,
	       (double)took / NSEC_PER_SEC,
	       n < self->n ? ": arming took too long for more" : "");
	return n;
}

/*
 * A baseline's file, in self->fds[1]: CONTROL_TIMERS timers on the
 * victim's CPU over [@base, @base + FAR_NS).  The baseline closes it
 * (control_end()) before the attack's timers are armed.
 */
static inline int control_file(struct __test_metadata *_metadata,
			       FIXTURE_DATA(latency) *self, __s64 base)
{
	int fd = t_open(0);

	ASSERT_LE(0, fd);
	self->fds[1] = fd;
	ASSERT_EQ(0, arm_range(self, fd, 0, CONTROL_TIMERS, self->cpu, base,
			       FAR_NS));
	return fd;
}

static inline void control_end(FIXTURE_DATA(latency) *self)
{
	close(self->fds[1]);
	self->fds[1] = -1;
}

/* One way to hold up a CPU, and what it needs. */
struct attack {
	const char *what;
	/*
	 * If set, first: sets self->skip if the machine lacks what the
	 * attack needs, or else may choose other CPUs for the victim and
	 * the rest.
	 */
	void (*setup)(struct __test_metadata *_metadata,
		      FIXTURE_DATA(latency) *self);
	/* Builds the timers, with the victim not measuring. */
	void (*prepare)(struct __test_metadata *_metadata,
			FIXTURE_DATA(latency) *self);
	/* If set, what the idle measurement does, before prepare(). */
	void (*idle)(struct __test_metadata *_metadata,
		     FIXTURE_DATA(latency) *self);
	const char *idle_what;	/* what the log calls it ("idle") */
	/* Runs on the victim's CPU; counts in self->ops what it did. */
	void (*run)(struct __test_metadata *_metadata,
		    FIXTURE_DATA(latency) *self);
	bool timed;		/* if so, self->ops is the ms run() took */
	/* If set, puts things back after the measurement. */
	void (*restore)(struct __test_metadata *_metadata,
			FIXTURE_DATA(latency) *self);
	const char *ops;	/* what self->ops counts */
};

/*
 * Print the figures of a round and judge them: true when the worst wakeup
 * under attack is within LAT_FACTOR times the idle worst, or the floor.
 * The idle worst leaves out the single worst wakeup: one wakeup is one
 * hiccup of the host, which must not make the bound meaningless.
 */
static bool judge(struct __test_metadata *_metadata,
		  FIXTURE_DATA(latency) *self, const struct attack *a,
		  int round)
{
	struct lat_stats idle, attack;
	__s64 bound;

	window_stats(self->idle, &idle);
	window_stats(self->attack, &attack);
	bound = LAT_FACTOR * (idle.worst_but_one > self->floor_ns ?
			      idle.worst_but_one : self->floor_ns);
	TH_LOG("round %d, victim on CPU %d, %s: %zu wakeups, late p50 %.2f p99 %.2f worst %.2f ms (but one: %.2f)",
	       round, self->cpu, a->idle_what ? a->idle_what : "idle", idle.nr,
	       MS(idle.p50), MS(idle.p99),
	       MS(idle.worst), MS(idle.worst_but_one));
	TH_LOG("round %d, %s (%ld %s): %zu wakeups, late p50 %.2f p99 %.2f worst %.2f ms, bound %.1f ms",
	       round, a->what, self->ops, a->ops, attack.nr, MS(attack.p50),
	       MS(attack.p99), MS(attack.worst), MS(bound));
	EXPECT_LT(0, idle.nr);
	EXPECT_LT(0, attack.nr);
	return idle.nr && attack.nr && attack.worst <= bound;
}

static void run_attack(struct __test_metadata *_metadata,
		       FIXTURE_DATA(latency) *self, const struct attack *a)
{
	const char *tracer = irqsoff_root();
	int round, ret;
	__s64 t;

	if (!self->skip[0] && a->setup)
		a->setup(_metadata, self);
	if (self->skip[0])
		SKIP(return, "%s", self->skip);
	ret = victim_start(&self->victim, self->cpu);
	if (ret == -EPERM)
		SKIP(return, "no SCHED_FIFO here");
	ASSERT_EQ(0, ret) TH_LOG("SCHED_FIFO thread: %s", strerror(-ret));

	for (round = 1; round <= ROUNDS; round++) {
		if (!a->idle)
			a->prepare(_metadata, self);
		t_sleep_ms(100);
		irqsoff_begin(tracer);
		window_begin(&self->victim, self->idle);
		if (a->idle)
			a->idle(_metadata, self);
		t_sleep_ns(IDLE_NS);
		window_end(&self->victim, self->idle);
		irqsoff_report(_metadata, tracer, "idle");
		if (a->idle)
			a->prepare(_metadata, self);

		self->ops = 0;
		irqsoff_begin(tracer);
		window_begin(&self->victim, self->attack);
		ASSERT_EQ(0, t_pin_self(self->cpu));
		t = t_now(CLOCK_MONOTONIC);
		a->run(_metadata, self);
		t = t_now(CLOCK_MONOTONIC) - t;
		if (a->timed)
			self->ops = t / NSEC_PER_MSEC;
		ASSERT_EQ(0, t_pin_self(self->home_cpu));
		window_end(&self->victim, self->attack);
		irqsoff_report(_metadata, tracer, a->what);
		if (tracer)
			irqsoff_write(tracer, "current_tracer", "nop");
		if (a->restore)
			a->restore(_metadata, self);
		close_files(self);

		if (judge(_metadata, self, a, round))
			return;
		if (round < ROUNDS)
			TH_LOG("over the bound: once more from scratch, in case the host took the CPU away");
	}
	EXPECT_TRUE(0) TH_LOG("%s held the victim's CPU beyond the bound in all %d rounds",
			      a->what, ROUNDS);
}

/*
 * A test of one attack, which its fields describe: defines the attack and
 * the test that runs it.
 */
#define ATTACK_TEST(test_name, ...)					\
	static const struct attack test_name##_attack = { __VA_ARGS__ };\
	TEST_F_TIMEOUT(latency, test_name, 300)				\
	{								\
		run_attack(_metadata, self, &test_name##_attack);	\
	}

/*
 * CANCEL @ids[0, n) of @fd in SUBMIT batches; each must say @expect.
 */
static inline void cancel_ids(struct __test_metadata *_metadata, int fd,
			      const __u64 *ids, long n, int expect)
{
	static struct qtimer_op ops[QTIMER_SUBMIT_MAX];
	long done = 0, bad = 0;

	while (done < n) {
		long left = n - done;
		int b = left < QTIMER_SUBMIT_MAX ? left : QTIMER_SUBMIT_MAX, i;

		for (i = 0; i < b; i++) {
			memset(&ops[i], 0, sizeof(ops[i]));
			ops[i].opcode = QTIMER_OP_CANCEL;
			ops[i].id = ids[done + i];
		}
		ASSERT_EQ(b, t_submit(fd, ops, b, 0, NULL));
		for (i = 0; i < b; i++)
			bad += ops[i].result != expect;
		done += b;
	}
	ASSERT_EQ(0, bad) TH_LOG("%ld of %ld CANCELs did not say %d", bad, n, expect);
}

/* 10^6 timers an hour or two ahead on the victim's CPU. */
static inline void prepare_far(struct __test_metadata *_metadata,
			       FIXTURE_DATA(latency) *self)
{
	self->n = arm_file(_metadata, self, 0, self->cpu,
			   t_now(CLOCK_MONOTONIC) + FAR_NS, FAR_NS);
}

#endif /* __KSELFTEST_HARNESS_H */

#endif /* _QT_LATENCY_H */
