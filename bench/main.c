// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * qtbench's driver.  It lifts the limits a million timers run into (open
 * files, epoll watches, pending signals, qtimer's caps), then runs every
 * (mechanism, workload, N) in a child process of its own, so that each run
 * starts with a clean process and fresh kernel caches and a run that
 * crashes or is killed takes nothing else down.  Results come back through
 * shared memory and are printed as CSV lines prefixed "qtbench-csv: ";
 * remarks as "qtbench-note: mech,workload,n,batch: text"; progress as
 * "qtbench: ".  bench/bench.sh collects all three from the guest.  What
 * to run (mechanisms, workloads, sizes) comes from options.c, as a plan.
 *
 * A mechanism whose open() fails (no /dev/qtimer, a placeholder module, a
 * failed handshake) is skipped with a note.  A phase that ran out of its
 * time budget at some N is not tried at a larger N, and neither is a run
 * whose projected kernel memory would not fit.  The exit status is non-zero
 * only when the benchmark itself broke: a crashed run or a mechanism that
 * returned an unexpected error mid-run.  Running out of time or of a
 * resource (ENOMEM, EMFILE...) makes a run partial; lost, late or early
 * expirations are data.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "helpers.h"
#include "qtbench.h"

#define MAX_CONFIGS	32

enum { W_ARM, W_FIRE, W_MIXED, W_TICKER, W_RESET, W_STARTSTOP, NR_WORKLOADS };
static const char *const workload_names[NR_WORKLOADS] = { "arm", "fire", "mixed", "ticker",
							  "reset", "startstop" };

static int workload_idx(const char *workload)
{
	int w;

	for (w = 0; w < NR_WORKLOADS; w++)
		if (!strcmp(workload, workload_names[w]))
			return w;
	return W_TICKER;
}

struct config {
	const struct mech *mech;
	unsigned int batch;
	bool fire;		/* runs fire and ticker too */
	bool big;		/* may run the --big N */
	bool broken;		/* open() failed: skip from now on */
	size_t allow[NR_WORKLOADS];	/* largest N each workload may still run at */
	size_t amc_partial_n;	/* modify/cancel ran out of budget at this N */
	double arm_ns;		/* last arm ns/op: sizes the fire lead */
	double bytes;		/* last bytes per timer */
};

/* What shared memory carries back from a run's child. */
struct shared {
	struct result res[3];
	int nr_res;
	bool open_failed;
};

static struct plan plan;
static struct config configs[MAX_CONFIGS];
static int nr_configs;
static bool broke;
static struct shared *shm;

static void add_config(const struct mech *m, unsigned int batch, bool fire, bool big)
{
	int w;

	if (nr_configs >= MAX_CONFIGS)
		return;
	configs[nr_configs] = (struct config){
		.mech = m, .batch = batch, .fire = fire, .big = big,
	};
	for (w = 0; w < NR_WORKLOADS; w++)
		configs[nr_configs].allow[w] = SIZE_MAX;
	nr_configs++;
}

/* The mechanisms that exist for the lazy workloads (the timer table). */
static bool lazy_mech(const struct mech *m)
{
#ifdef HAVE_LIBTIMERDEV
	if (m == &mech_libtimerdev_table)
		return true;
#endif
	return m == &mech_qtimer_table;
}

static void build_configs(void)
{
	unsigned int i, biggest = 0;

	for (i = 0; i < plan.nr_batches; i++)
		if (plan.batches[i] > biggest)
			biggest = plan.batches[i];
	if (in_list(plan.mech_list, "qtimer"))
		add_config(&mech_qtimer, 0, false, true);
	if (in_list(plan.mech_list, "qtimer-batch"))
		for (i = 0; i < plan.nr_batches; i++)
			add_config(&mech_qtimer_batch, plan.batches[i], plan.batches[i] == biggest, true);
	if (in_list(plan.mech_list, "qtimer-ring"))
		add_config(&mech_qtimer_ring, biggest, true, false);
	if (in_list(plan.mech_list, "qtimer-table"))
		add_config(&mech_qtimer_table, biggest, false, true);
#ifdef HAVE_LIBTIMERDEV
	if (in_list(plan.mech_list, "libtimerdev"))
		add_config(&mech_libtimerdev, biggest, true, false);
	if (in_list(plan.mech_list, "libtimerdev-table"))
		add_config(&mech_libtimerdev_table, biggest, false, false);
#endif
	if (in_list(plan.mech_list, "timerfd"))
		add_config(&mech_timerfd, 0, true, false);
	if (in_list(plan.mech_list, "posix"))
		add_config(&mech_posix, 0, true, false);
	if (in_list(plan.mech_list, "io_uring"))
		add_config(&mech_io_uring, opts.uring_batch, true, false);
	if (in_list(plan.mech_list, "libuv"))
		add_config(&mech_libuv, 0, true, false);
}

/* Raise what a million timers of every kind run into.  Best effort. */
static void lift_limits(size_t max_n)
{
	unsigned long long want = max_n + 4096;
	struct rlimit rl;

	if (!opts.tune) {
		/* As far as the hard limits allow, touching nothing global. */
		if (!getrlimit(RLIMIT_NOFILE, &rl)) {
			rl.rlim_cur = rl.rlim_max;
			setrlimit(RLIMIT_NOFILE, &rl);
		}
		if (!getrlimit(RLIMIT_SIGPENDING, &rl)) {
			rl.rlim_cur = rl.rlim_max;
			setrlimit(RLIMIT_SIGPENDING, &rl);
		}
		progress("--no-tune: system limits left alone");
		return;
	}
	if (read_sysctl("/proc/sys/fs/nr_open") < want)
		t_sysfs_write("/proc/sys/fs/nr_open", want);
	if (read_sysctl("/proc/sys/fs/file-max") < 2 * want)
		t_sysfs_write("/proc/sys/fs/file-max", 2 * want);
	if (read_sysctl("/proc/sys/fs/epoll/max_user_watches") < want)
		t_sysfs_write("/proc/sys/fs/epoll/max_user_watches", want);
	rl.rlim_cur = rl.rlim_max = read_sysctl("/proc/sys/fs/nr_open");
	if (setrlimit(RLIMIT_NOFILE, &rl))
		progress("warning: RLIMIT_NOFILE stays low: %s", strerror(errno));
	rl.rlim_cur = rl.rlim_max = RLIM_INFINITY;
	if (setrlimit(RLIMIT_SIGPENDING, &rl))
		progress("warning: RLIMIT_SIGPENDING stays low: %s", strerror(errno));
	setrlimit(RLIMIT_MEMLOCK, &rl);
	if (read_sysctl("/sys/module/qtimer/parameters/max_timers_per_fd") < max_n)
		t_sysfs_write("/sys/module/qtimer/parameters/max_timers_per_fd", max_n);
	if (read_sysctl("/sys/module/qtimer/parameters/max_timers_per_user") < max_n)
		t_sysfs_write("/sys/module/qtimer/parameters/max_timers_per_user", max_n);
	progress("limits: nr_open %llu, file-max %llu, epoll watches %llu, qtimer per fd %llu, per user %llu",
		 read_sysctl("/proc/sys/fs/nr_open"), read_sysctl("/proc/sys/fs/file-max"),
		 read_sysctl("/proc/sys/fs/epoll/max_user_watches"),
		 read_sysctl("/sys/module/qtimer/parameters/max_timers_per_fd"),
		 read_sysctl("/sys/module/qtimer/parameters/max_timers_per_user"));
}

static long long mem_available(void)
{
	char line[256];
	long long kb = -1;
	FILE *f = fopen("/proc/meminfo", "re");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "MemAvailable: %lld kB", &kb) == 1)
			break;
	fclose(f);
	return kb < 0 ? -1 : kb * 1024;
}

/* A note about a run the parent decides on, in note()'s format. */
static void __attribute__((format(printf, 4, 5)))
config_note(const struct config *c, const char *workload, size_t n, const char *fmt, ...)
{
	char text[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (c->mech->batched)
		printf("qtbench-note: %s,%s,%zu,%u: %s\n", c->mech->name, workload, n, c->batch, text);
	else
		printf("qtbench-note: %s,%s,%zu,: %s\n", c->mech->name, workload, n, text);
}

/*
 * A fixed CPU-bound loop: how fast this run's CPU is compared with the
 * best seen.  Under emulation on a shared host the answer varies a lot,
 * and a run that happens on a busy host says so in a note.
 */
static double calibrate(void)
{
	static double best;
	volatile uint64_t x = 1;
	int64_t t0 = t_now(CLOCK_MONOTONIC);
	double t;
	int i;

	for (i = 0; i < 5000000; i++)
		x = x * 6364136223846793005ULL + (x >> 7);
	t = t_now(CLOCK_MONOTONIC) - t0;
	if (!best || t < best)
		best = t;
	return t / best;
}

/* ns per call of @read_clock, over a few thousand calls. */
static double clock_read_ns(int (*read_clock)(clockid_t, struct timespec *))
{
	struct timespec ts;
	int64_t t0 = t_now(CLOCK_MONOTONIC);
	int i;

	for (i = 0; i < 4096; i++)
		read_clock(CLOCK_MONOTONIC, &ts);
	return (t_now(CLOCK_MONOTONIC) - t0) / 4096.0;
}

static int clock_gettime_syscall(clockid_t clock, struct timespec *ts)
{
	return syscall(SYS_clock_gettime, clock, ts);
}

/*
 * Per-record timestamps cost a clock read each, so say what one costs: a
 * clocksource without a vDSO mode (the HPET, or a TSC found unstable)
 * turns every read into a system call.
 */
static void show_clocksource(void)
{
	double vdso = clock_read_ns(clock_gettime), sys = clock_read_ns(clock_gettime_syscall);
	char cs[64] = "";
	FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "re");

	if (f) {
		if (!fgets(cs, sizeof(cs), f))
			cs[0] = 0;
		fclose(f);
	}
	cs[strcspn(cs, "\n")] = 0;
	progress("clocksource %s: clock_gettime() %.0f ns, the system call %.0f ns",
		 *cs ? cs : "unknown", vdso, sys);
	if (vdso > sys / 2)
		note(NULL, "clocksource %s: clock reads are system calls (no vDSO; %.0f ns each), in the kernel and here alike",
		     *cs ? cs : "unknown", vdso);
}

static void print_csv(const struct result *res)
{
	char b[5][32], cpu[32], bytes[32], batch[16];

	snprintf(batch, sizeof(batch), res->batch ? "%u" : "", res->batch);
	snprintf(b[0], 32, res->has_ns_per_op ? "%.1f" : "", res->ns_per_op);
	snprintf(cpu, 32, res->has_cpu ? "%.0f" : "", res->cpu_ns_per_expiry);
	snprintf(b[1], 32, res->has_late ? "%lld" : "", (long long)res->late_p50);
	snprintf(b[2], 32, res->has_late ? "%lld" : "", (long long)res->late_p99);
	snprintf(b[3], 32, res->has_late ? "%lld" : "", (long long)res->late_max);
	snprintf(b[4], 32, res->has_early ? "%llu" : "", (unsigned long long)res->early);
	snprintf(bytes, 32, res->has_bytes ? "%.1f" : "", res->bytes_per_timer);
	printf("qtbench-csv: %s,%s,%s,%llu,%s,%s,%s,%s,%s,%s,%s,",
	       plan.kernel_name, res->mechanism, res->workload, (unsigned long long)res->n,
	       batch, b[0], cpu, b[1], b[2], b[3], b[4]);
	if (res->has_delivered)
		printf("%llu", (unsigned long long)res->delivered);
	printf(",%s\n", bytes);
	fflush(stdout);
}

static void describe(const struct result *res)
{
	char line[256];
	int len = 0;

	if (res->has_ns_per_op)
		len += snprintf(line + len, sizeof(line) - len, " %.0f ns/op", res->ns_per_op);
	if (res->has_bytes)
		len += snprintf(line + len, sizeof(line) - len, ", %.0f B/timer", res->bytes_per_timer);
	if (res->has_delivered)
		len += snprintf(line + len, sizeof(line) - len, " delivered %llu",
				(unsigned long long)res->delivered);
	if (res->has_late)
		len += snprintf(line + len, sizeof(line) - len, ", late p50 %.3f p99 %.3f max %.3f ms",
				res->late_p50 / 1e6, res->late_p99 / 1e6, res->late_max / 1e6);
	if (res->has_cpu)
		len += snprintf(line + len, sizeof(line) - len, ", cpu %.0f ns/expiry",
				res->cpu_ns_per_expiry);
	if (res->has_early && res->early)
		len += snprintf(line + len, sizeof(line) - len, ", EARLY %llu",
				(unsigned long long)res->early);
	progress("  %s:%s%s", res->workload, line, res->partial ? " (partial)" : "");
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/*
 * The child: runs the workload, into shm.  A phase over up to 100k timers
 * lasts well under a second, which a busy emulator's noise swamps (and the
 * growth from 100k to 1M divides by it), so those runs (all but the ticker)
 * go three times, each on a freshly opened mechanism, and report the median
 * of each figure: ns/op, CPU per expiry and each lateness quantile.  Memory
 * comes from the first; early expiries add up; delivered is the smallest of
 * the three.  A run that ran out of its time budget is not repeated: its
 * figures are the first's, and repeating would only spend the budget again.
 */
static int child(struct config *c, const char *workload, size_t n)
{
	bool repeat = strcmp(workload, "ticker");
	int reps = repeat && n <= 100000 ? 3 : 1, rep, i, f, ret = 0;
	double samples[3][5][MAX_REPS];	/* result, field, repeat */
	struct result res[3];

	if (repeat && plan.reps)
		reps = plan.reps;
	for (rep = 0; rep < reps; rep++) {
		struct run r = {
			.mech = c->mech, .workload = workload, .n = n, .batch = c->batch,
			.deliver = !strcmp(workload, "fire") || !strcmp(workload, "ticker"),
		};

		t_rng_seed(&bench_rng,
			    plan.seed * 0x9e3779b97f4a7c15ULL ^ n ^ ((uint64_t)rep << 40));
		ret = c->mech->open(&r);
		if (ret < 0) {
			if (!rep) {
				note(&r, "SKIP %s: cannot open: %s", c->mech->name, strerror(-ret));
				shm->open_failed = true;
				return 0;
			}
			note(&r, "repeat %d: cannot open: %s", rep, strerror(-ret));
			return 1;
		}
		if (!strcmp(workload, "arm")) {
			if (c->amc_partial_n && n > c->amc_partial_n && !rep)
				note(&r, "skipped modify and cancel: they ran out of time at N=%zu",
				     c->amc_partial_n);
			ret = workload_arm(&r, res, c->amc_partial_n && n > c->amc_partial_n);
			shm->nr_res = 3;
		} else if (!strcmp(workload, "fire")) {
			ret = workload_fire(&r, res, c->arm_ns);
			shm->nr_res = 1;
		} else if (!strcmp(workload, "ticker")) {
			ret = workload_ticker(&r, res, c->arm_ns);
			shm->nr_res = 1;
		} else if (!strcmp(workload, "reset")) {
			ret = workload_reset(&r, res);
			shm->nr_res = 1;
		} else if (!strcmp(workload, "startstop")) {
			ret = workload_startstop(&r, res);
			shm->nr_res = 1;
		} else {
			ret = workload_mixed(&r, res);
			shm->nr_res = 1;
		}
		c->mech->close(&r);
		for (i = 0; i < shm->nr_res; i++) {
			struct result *sr = &shm->res[i];

			if (!rep) {
				*sr = res[i];
			} else {
				sr->partial |= res[i].partial;
				sr->failed |= res[i].failed;
				sr->skip |= res[i].skip;
				sr->early += res[i].early;
				if (res[i].delivered < sr->delivered)
					sr->delivered = res[i].delivered;
			}
			samples[i][0][rep] = res[i].has_ns_per_op ? res[i].ns_per_op : -1;
			samples[i][1][rep] = res[i].has_cpu ? res[i].cpu_ns_per_expiry : -1;
			samples[i][2][rep] = res[i].has_late ? res[i].late_p50 : -1;
			samples[i][3][rep] = res[i].has_late ? res[i].late_p99 : -1;
			samples[i][4][rep] = res[i].has_late ? res[i].late_max : -1;
		}
		if (ret < 0)
			break;
		for (i = 0; i < shm->nr_res; i++)
			if (res[i].partial)
				break;
		if (i < shm->nr_res)
			break;
	}
	/* The median of each figure; any repeat missing one leaves the first's. */
	for (i = 0; i < shm->nr_res && rep == reps && reps > 1; i++) {
		struct result *sr = &shm->res[i];
		double med[5];

		for (f = 0; f < 5; f++) {
			qsort(samples[i][f], reps, sizeof(double), cmp_double);
			med[f] = samples[i][f][0] >= 0 ? samples[i][f][reps / 2] : -1;
		}
		if (med[0] >= 0)
			sr->ns_per_op = med[0];
		if (med[1] >= 0)
			sr->cpu_ns_per_expiry = med[1];
		if (med[2] >= 0) {
			sr->late_p50 = med[2];
			sr->late_p99 = med[3];
			sr->late_max = med[4];
		}
	}
	fflush(stdout);
	return ret < 0 ? 1 : 0;
}

/*
 * Wait for the last run's teardown to finish in the background: files whose
 * last reference went at exit are freed after an RCU grace period, and
 * io_uring tears a ring down in a worker.  Until kernel memory stops
 * shrinking, the next run's memory delta and timings would carry it.
 */
static void settle(void)
{
	int64_t prev = kernel_mem_bytes(), cur;
	int64_t deadline = t_now(CLOCK_MONOTONIC) + 10 * NSEC_PER_SEC;

	while (prev >= 0 && t_now(CLOCK_MONOTONIC) < deadline) {
		usleep(100 * 1000);
		cur = kernel_mem_bytes();
		if (cur < 0 || llabs(cur - prev) < 256 * 1024)
			break;
		prev = cur;
	}
}

/* Runs one workload in a child; false when the mechanism could not open. */
static bool run_one(struct config *c, const char *workload, size_t n)
{
	double slow = calibrate();
	int64_t t0 = t_now(CLOCK_MONOTONIC);
	int status, i, w;
	pid_t pid;

	if (slow > 2)
		config_note(c, workload, n, "host busy: a fixed CPU loop ran %.1fx slower than its best",
			    slow);
	progress("%s%s%.0u %s N=%zu ...", c->mech->name, c->batch && c->mech->batched ? "/b" : "",
		 c->mech->batched ? c->batch : 0, workload, n);
	memset(shm, 0, sizeof(*shm));
	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		progress("fork: %s", strerror(errno));
		broke = true;
		return true;
	}
	if (!pid)
		_exit(child(c, workload, n));
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	settle();
	if (shm->open_failed) {
		c->broken = true;
		return false;
	}
	for (i = 0; i < shm->nr_res && i < 3; i++) {
		if (shm->res[i].skip)
			continue;
		print_csv(&shm->res[i]);
		describe(&shm->res[i]);
	}
	w = workload_idx(workload);
	if (WIFSIGNALED(status)) {
		config_note(c, workload, n, "CRASHED: killed by signal %d (%s)",
			    WTERMSIG(status), strsignal(WTERMSIG(status)));
		broke = true;
		c->allow[w] = n - 1;
	} else if (WEXITSTATUS(status)) {
		progress("  %s failed (see notes)", workload);
		broke = true;
		c->allow[w] = n - 1;
	}
	/*
	 * What ran out of budget (or resources) at N will not finish at a
	 * larger N: stop it there.  An arm phase that could not arm N timers
	 * also rules out fire and mixed at N; modify and cancel going partial
	 * only drop those two phases from the arm workload at larger N.
	 */
	if (w == W_ARM && shm->nr_res == 3) {
		if (shm->res[0].has_ns_per_op && !shm->res[0].partial)
			c->arm_ns = shm->res[0].ns_per_op;
		if (shm->res[0].has_bytes)
			c->bytes = shm->res[0].bytes_per_timer;
		if (shm->res[0].partial || shm->res[0].failed)
			c->allow[W_ARM] = c->allow[W_FIRE] = c->allow[W_MIXED] = n - 1;
		if (!c->amc_partial_n && (shm->res[1].partial || shm->res[2].partial))
			c->amc_partial_n = n;
	} else if (shm->nr_res && (shm->res[0].partial || shm->res[0].failed)) {
		c->allow[w] = n - 1;
	}
	progress("  (%.1f s)", (t_now(CLOCK_MONOTONIC) - t0) / 1e9);
	return true;
}

/*
 * Under TCG the first execution of any code path, in the kernel or here,
 * pays for translating it, and whichever mechanism ran first would carry
 * that.  So every mechanism first runs small arm/modify/cancel and fire
 * rounds, untimed and unreported, in a child of its own.
 */
static void warm_up(void)
{
	int c, status;

	progress("warming up every mechanism (untimed)");
	for (c = 0; c < nr_configs; c++) {
		pid_t pid;

		fflush(stdout);
		pid = fork();
		if (!pid) {
			opts.quiet = true;
			opts.window_ns = 100 * NSEC_PER_MSEC;
			child(&configs[c], "arm", 2000);
			if (configs[c].fire && !shm->open_failed)
				child(&configs[c], "fire", 2000);
			_exit(0);
		}
		if (pid > 0)
			while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
				;
	}
	memset(shm, 0, sizeof(*shm));
	settle();
}

static bool may_run(struct config *c, const char *workload, size_t n)
{
	long long avail, need;

	if (c->broken)
		return false;
	if (n > c->allow[workload_idx(workload)]) {
		config_note(c, workload, n, "skipped: a smaller run ran out of time or broke");
		return false;
	}
	avail = mem_available();
	need = (long long)(c->bytes * n) + (long long)n * 64;
	if (c->bytes > 0 && avail > 0 && need > avail * 8 / 10) {
		config_note(c, workload, n, "skipped: needs ~%lld MB, %lld MB available",
			    need >> 20, avail >> 20);
		return false;
	}
	return true;
}

int main(int argc, char **argv)
{
	int64_t t0 = t_now(CLOCK_MONOTONIC);
	size_t i;
	int c;

	setvbuf(stdout, NULL, _IOLBF, 0);
	parse_options(argc, argv, &plan);

	shm = mmap(NULL, sizeof(*shm), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (shm == MAP_FAILED) {
		perror("mmap");
		return 2;
	}
	build_configs();
	lift_limits(plan.max_n);
	show_clocksource();
	for (i = 0; i < 5; i++)
		calibrate();
	progress("kernel %s, %ld CPUs, %lld MB available", plan.kernel_name,
		 sysconf(_SC_NPROCESSORS_ONLN), mem_available() >> 20);
	printf("qtbench-par: kernel,mechanism,batch,fds,threads,workload,n,ns_per_timer,"
	       "late_p99_ns,early,delivered\n");
	printf("qtbench-csv: kernel,mechanism,workload,n,batch,ns_per_op,cpu_ns_per_expiry,"
	       "late_p50_ns,late_p99_ns,late_max_ns,early,delivered,bytes_per_timer\n");
	if (plan.warm)
		warm_up();

	/* Every N of --n, then those of --big above them (qtimer only). */
	for (i = 0; i < plan.nr_n + plan.nr_big; i++) {
		bool big = i >= plan.nr_n;
		size_t n = big ? plan.big_n[i - plan.nr_n] : plan.n_list[i];

		if (big && plan.nr_n && n <= plan.n_list[plan.nr_n - 1])
			continue;
		for (c = 0; c < nr_configs; c++) {
			struct config *cf = &configs[c];

			if (big && !cf->big)
				continue;
			if (in_list(plan.workloads, "arm") && may_run(cf, "arm", n) &&
			    !run_one(cf, "arm", n))
				continue;
			if (cf->fire && in_list(plan.workloads, "fire") && may_run(cf, "fire", n) &&
			    !run_one(cf, "fire", n))
				continue;
			if (in_list(plan.workloads, "mixed") && may_run(cf, "mixed", n))
				run_one(cf, "mixed", n);
			/* The lazy workloads (lazy.c): one batch size of qtimer-batch. */
			if (cf->mech->batched && !cf->fire && !lazy_mech(cf->mech))
				continue;
			if (in_list(plan.workloads, "reset") && may_run(cf, "reset", n))
				run_one(cf, "reset", n);
			if (in_list(plan.workloads, "startstop") && may_run(cf, "startstop", n))
				run_one(cf, "startstop", n);
		}
	}
	if (in_list(plan.workloads, "ticker"))
		for (i = 0; i < plan.nr_ticker_k; i++)
			for (c = 0; c < nr_configs; c++)
				if (configs[c].fire && may_run(&configs[c], "ticker", plan.ticker_k[i]))
					run_one(&configs[c], "ticker", plan.ticker_k[i]);

	/*
	 * The parallel workloads (parallel.c): the issue-20 shape, N = 400k
	 * (100k with --quick), once per mechanism.
	 */
	if (in_list(plan.workloads, "parallel")) {
		size_t par_n = plan.max_n >= 1000000 ? 400000 : 100000;

		for (c = 0; c < nr_configs; c++) {
			struct config *cf = &configs[c];

			/* One batch size of qtimer-batch: the one fire uses. */
			if (cf->broken || (cf->mech->batched && !cf->fire) ||
			    cf->mech == &mech_posix)
				continue;
			if (run_parallel(cf->mech, cf->batch, par_n, plan.kernel_name))
				broke = true;
		}
	}

	progress("done in %.1f s%s", (t_now(CLOCK_MONOTONIC) - t0) / 1e9,
		 broke ? "; SOME RUNS BROKE (see the notes)" : "");
	return broke ? 1 : 0;
}
