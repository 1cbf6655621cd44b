/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * The race stress (race_stress_test.c) in two halves: the owners (the
 * worker threads and their children, race_stress_worker.c) arm, cancel,
 * modify and close, recording each schedule in a table in shared memory
 * (race_stress_table.c); the readers (race_stress.c) drain the shared
 * files and account every record against that table, counting each
 * violation of the rules the test lists.
 */
#ifndef _QT_RACE_STRESS_H
#define _QT_RACE_STRESS_H

#include <stdatomic.h>
#include <stdint.h>

#include "helpers.h"

#define NR_WORKERS_DEF	4
#define NR_READERS	2
#define PER_WORKER	4096		/* table slots per worker */
#define MAX_LIVE	384		/* timers a worker keeps at once */
#define MAXV		8		/* schedules per timer (ARM + 7 MODIFY) */
#define FORK_TIMERS	8

enum { K_ONESHOT, K_PERIODIC };
/* Per schedule. */
enum {
	F_UNUSED,
	F_LIVE,		/* current: at most one record (exactly one at the end) */
	F_PREVENTED,	/* CANCEL/MODIFY returned a mask: never delivered */
	F_VOID,		/* MODIFY returned -ENOENT: this schedule never existed */
	F_GONE,		/* CANCEL/MODIFY said it was read: exactly one record */
	F_CLOSED,	/* its file was closed: at most one record */
	F_ENDED,	/* ticker cancelled: records only from earlier reads */
	F_AFTER_LAST,	/* MODIFY returned 0: its record (LAST) was being read */
};
/* Owner's view of a table slot. */
enum { O_FREE, O_LIVE, O_WAIT };
/* File classes. */
enum { FD_S0, FD_S1, FD_PRIV };

/* Violations, each counted and the first few described. */
enum {
	V_COOKIE, V_STALE, V_EXPIRY, V_EARLY, V_PREVENTED, V_AFTER, V_DOUBLE,
	V_FLAGS, V_ERRNO, V_MISSING, V_ID, V_TICKS, V_ENOENT_LIVE, V_CHILD,
	V_FDINFO, V_RESURRECT, V_ZERO, NR_V
};

struct ent {
	_Atomic uint32_t gen;
	uint32_t kind;
	uint32_t clock;
	uint32_t fdk;
	_Atomic uint64_t id;
	uint64_t period;
	_Atomic uint32_t nsched;
	uint32_t cur;			/* owner: current schedule */
	_Atomic uint32_t ostate;
	int64_t lo[MAXV], hi[MAXV];	/* expiry range of each schedule */
	_Atomic uint64_t ended[MAXV];	/* ticket after the ending call */
	_Atomic uint8_t fate[MAXV];
	_Atomic uint32_t delivered[MAXV];
	_Atomic uint32_t records;
	_Atomic uint64_t rec_id;
	_Atomic uint64_t count_sum;
	int64_t cancel_ns;		/* ticker: its clock when cancelled */
};

struct shared {
	_Atomic uint64_t ticket;
	_Atomic uint64_t inflight[NR_READERS];	/* reader's ticket, or ~0 */
	_Atomic uint64_t violations[NR_V];
	_Atomic int diag_budget;
	_Atomic uint64_t ops, arms, cancels, modifies, submits, reads,
			 records, forks, closes, dups;
	_Atomic int stop;		/* workers stop */
	_Atomic int stop_readers;
	int fds[2];			/* the shared files */
	int nr_workers;
	int nr_cpus;
	struct ent tbl[];
};

extern struct shared *sh;
extern const char *const v_names[NR_V];

#define IDLE	(~0ULL)

struct reader_arg {
	int idx;
	uint64_t seed;
};

extern const int clocks[3];
uint64_t ticket(void);
/* Counts a violation of rule @v; describes the first few. */
void __attribute__((format(printf, 2, 3))) violation(int v, const char *fmt, ...);
uint32_t ent_idx(const struct ent *e);
uint64_t ent_cookie(struct ent *e);
int drain(int fd, struct t_rng *rng, int reader);
void *reader_fn(void *p);

/* --- the owner's side ----------------------------------------------------- */

struct worker {
	int idx;
	struct t_rng rng;
	uint32_t base;			/* first table slot */
	uint32_t free[PER_WORKER];
	int nr_free;
	uint32_t live[PER_WORKER];	/* O_LIVE and O_WAIT slots */
	int nr_live;
	int priv;			/* private file */
	int priv_dup;			/* a dup of it, or -1 */
	int sdup;			/* a dup of a shared file, or -1 */
	int sdup_k;
	int nr_periodic;
	bool in_child;
};

/* The table, as its owner keeps it (race_stress_table.c). */
int fd_of(struct worker *w, int fdk);
struct ent *ent_alloc(struct worker *w);
void ent_free(struct worker *w, struct ent *e);
void ent_verify(struct ent *e, bool final);
bool oneshot_over(struct ent *e);
void live_remove(struct worker *w, int i);
void reap(struct worker *w, int budget);
void prep_arm(struct worker *w, struct ent *e, struct qtimer_op *op,
	      bool periodic, int fdk);
void arm_done(struct worker *w, struct ent *e, const struct qtimer_op *op,
	      int ret);
void prep_modify(struct worker *w, struct ent *e, struct qtimer_op *op);
void modify_done(struct ent *e, int ret, uint64_t t);
void cancel_done(struct ent *e, int ret, uint64_t t);
struct ent *pick_live(struct worker *w, bool oneshot_only);

/* A worker thread (race_stress_worker.c). */
void *worker_fn(void *p);

#endif /* _QT_RACE_STRESS_H */
