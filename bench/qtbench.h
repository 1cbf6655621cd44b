/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * qtbench: timer benchmarks shaped like the Go runtime's (arm, reset, stop,
 * fire, ticker, a steady mix), run against every timer mechanism Linux user
 * space has: /dev/qtimer (single ioctls and SUBMIT batches), libtimerdev,
 * timerfd + epoll, POSIX timers, io_uring timeouts and libuv's in-process
 * heap.  Every mechanism is driven through the same small table of
 * operations (struct mech) by the same workload code, so that the numbers
 * differ only by what the mechanism itself costs.
 */
#ifndef _QTBENCH_H
#define _QTBENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#define NSEC_PER_SEC	1000000000LL
#define NSEC_PER_MSEC	1000000LL

/* What the workload code asks a mechanism to do, one entry per timer op. */
enum mop_code {
	MOP_ARM = 1,
	MOP_MODIFY,
	MOP_CANCEL,
};

struct mop {
	uint32_t code;		/* MOP_* */
	uint32_t idx;		/* the timer: an index into the mechanism's table */
	int64_t when;		/* ARM/MODIFY: absolute CLOCK_MONOTONIC ns */
	int64_t period;		/* ARM: 0 for one-shot */
};

struct run;

/*
 * A timer mechanism.  open() does the handshake and sets up state for
 * r->n timers; submit() runs nr ops in order (batching them as the
 * mechanism does, r->batch at a time); wait() blocks up to timeout_ms for
 * expirations and reports each one with run_expired(), returning how many
 * it reported.  Everything returns -errno on failure.
 */
struct mech {
	const char *name;
	bool batched;		/* r->batch means something */
	bool kernel_timers;	/* the timers live in the kernel: measure memory */
	bool engine_stats;	/* /dev/qtimer underneath: qtimerctl has stats */
	int (*open)(struct run *r);
	void (*close)(struct run *r);
	int (*submit)(struct run *r, const struct mop *ops, size_t nr);
	int (*wait)(struct run *r, int timeout_ms);
	/*
	 * Optional: set up r to use @owner's file (one file, many threads),
	 * with state of its own; close(r) then leaves the file open, and
	 * @owner is closed last.
	 */
	int (*share)(struct run *r, const struct run *owner);
	/*
	 * Optional: kernel memory the timers hold that /proc/meminfo does
	 * not show (the timer table's pages), in bytes.
	 */
	int64_t (*hidden_bytes)(struct run *r);
};

extern const struct mech mech_qtimer, mech_qtimer_batch, mech_qtimer_ring, mech_qtimer_table,
	mech_libtimerdev, mech_libtimerdev_table,
	mech_timerfd, mech_posix, mech_io_uring, mech_libuv;

/* One benchmark run: one mechanism, one workload, one N, one batch size. */
struct run {
	const struct mech *mech;
	const char *workload;
	size_t n;
	unsigned int batch;
	bool deliver;		/* expirations will be waited for */
	void *priv;		/* the mechanism's state */

	/* Expiry bookkeeping, filled by run_expired(). */
	int64_t *sched;		/* per timer: first scheduled expiry */
	int64_t period;		/* ticker period, 0 for one-shot */
	uint64_t *counted;	/* per timer: expirations counted so far */
	int64_t *late;		/* per record lateness, ns */
	size_t nr_late, max_late;
	uint64_t delivered;	/* expirations counted */
	uint64_t records;	/* records (deliveries) */
	uint64_t early;		/* deliveries before their scheduled time */
	uint64_t unexpected;	/* records for idle timers, duplicates */
	uint64_t mismatched;	/* kernel-reported schedule != ours */
	bool counting;		/* false: deliveries are drained, not counted */
	int64_t stop_at;	/* ticker: records after this are not counted */
};

/* Results of one run, passed from the child to the parent. */
struct result {
	char mechanism[24];
	char workload[12];
	uint64_t n;
	uint32_t batch;
	bool has_ns_per_op, has_cpu, has_late, has_early, has_delivered,
	     has_bytes;
	double ns_per_op;
	double cpu_ns_per_expiry;
	int64_t late_p50, late_p99, late_max;
	uint64_t early;
	uint64_t delivered;
	double bytes_per_timer;
	bool partial;		/* ran out of time: numbers cover a prefix */
	bool failed;		/* the mechanism broke: see the notes */
	bool skip;		/* nothing measured: no CSV row */
};

/* Options that shape the workloads. */
struct opts {
	int64_t budget_ns;	/* per timed phase */
	int64_t window_ns;	/* fire: the window expiries are spread over */
	int64_t ticker_period_ns;
	int64_t ticker_ns;
	unsigned int uring_batch;
	unsigned int fire_batch; /* qtimer-batch: batch used to arm for fire */
	int64_t reset_ns;	/* reset: how long the pushes go on */
	int64_t reset_timeout_ns; /* reset: the timeout T pushed to now + T */
	bool tune;		/* may write sysctls and /sys (in the VM only) */
	bool quiet;		/* no notes (warming up) */
};

extern struct opts opts;

#define MAX_LIST	16	/* entries of a list option */
#define MAX_REPS	9	/* --reps */

/* What the driver runs, from the command line. */
struct plan {
	const char *kernel_name;	/* the CSV's kernel column */
	size_t n_list[MAX_LIST], nr_n;	/* ascending */
	size_t big_n[MAX_LIST], nr_big;	/* --big: the qtimer mechanisms only; ascending */
	size_t max_n;			/* the largest N of any run */
	size_t ticker_k[MAX_LIST], nr_ticker_k;
	unsigned int batches[MAX_LIST], nr_batches;
	const char *mech_list;		/* comma-separated names */
	const char *workloads;		/* comma-separated names */
	uint64_t seed;
	bool warm;			/* the untimed warm-up round first */
	int reps;			/* --reps, 0: the default */
};

/* options.c */
void parse_options(int argc, char **argv, struct plan *p);
bool in_list(const char *list, const char *name);

/* util.c */
/* libqttest's PRNG (helpers.h), seeded by main.c before every run. */
extern struct t_rng bench_rng;
uint32_t *permutation(size_t n);
struct t_rng;
uint32_t *permutation_from(struct t_rng *rng, size_t n);
void *xcalloc(size_t nr, size_t size);
int64_t kernel_mem_bytes(void);
int64_t sys_busy_ns(void);
void shrink_slabs(void);
void quantiles(int64_t *v, size_t nr, int64_t *p50, int64_t *p99, int64_t *max);
void note(const struct run *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void progress(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
unsigned long long read_sysctl(const char *path);
int poll_in(int fd, int timeout_ms);
ssize_t read_or_wait(int fd, void *buf, size_t size, int timeout_ms);

/* The engine's counters, summed over CPUs, as "qtimerctl stats" shows them. */
struct engine_stats {
	unsigned long long fired, coalesced, deferred;
	double max_run_us;
};

int engine_stats(struct engine_stats *s);

/* workload.c */
void run_expired(struct run *r, uint32_t idx, uint64_t count, int64_t kernel_when);
int workload_arm(struct run *r, struct result *res3, bool arm_only);
int workload_fire(struct run *r, struct result *res, double arm_ns_hint);
int workload_ticker(struct run *r, struct result *res, double arm_ns_hint);
int workload_mixed(struct run *r, struct result *res);
/* @res, empty, for @r's mechanism, N and batch, and @workload. */
void result_init(const struct run *r, struct result *res, const char *workload);
/* A limit of the machine (memory, files, caps), not a broken mechanism. */
bool resource_error_of(int err);

/* lazy.c */
int workload_reset(struct run *r, struct result *res);
int workload_startstop(struct run *r, struct result *res);

/* parallel.c: the parallel workloads of @m at @n timers; 0, or 1 if any broke. */
int run_parallel(const struct mech *m, unsigned int batch, size_t n,
		 const char *kernel);

#endif /* _QTBENCH_H */
