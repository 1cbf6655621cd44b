// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * Race stress with exact accounting.  Worker threads arm, cancel, modify
 * and SUBMIT timers on two shared files, on a private file each (which they
 * also read, dup and close with timers live) and on dups of the shared
 * files, and now and then fork a child that works on a shared file it
 * inherited; reader threads drain the shared files, while the timers expire
 * under them.  Every timer carries a unique cookie (a slot of a table in
 * shared memory, plus a generation), and every schedule of it (ARM, then
 * each MODIFY) a distinct expiry, so each record names exactly one schedule.
 * The rules checked, record by record and at the end:
 *
 *  - a one-shot schedule that no CANCEL or MODIFY prevented (result > 0) is
 *    delivered exactly once; a prevented one never;
 *  - a record is never early: its expires_ns is the schedule's expiry, and
 *    the clock read after read() returned is at or past it;
 *  - linearisation: a record is never returned by a read() that started
 *    after the CANCEL or MODIFY that ended its schedule returned (read()
 *    takes records at dequeue; a ticket counter orders the calls);
 *  - CANCEL/MODIFY of a one-shot return a non-zero mask when they
 *    prevented its record, else -ENOENT: it was read, or a read() has
 *    taken its record (and delivers it; never 0 for a one-shot), and no
 *    record of it comes after that LAST one;
 *  - a ticker's records are aligned to its period, never early, and count
 *    no more periods than elapsed;
 *  - nothing else: no unknown cookies, no stale generations, no errors.
 *
 * The run lasts QT_STRESS_SECONDS (default 5).  The deterministic cases
 * the stress can only hit by chance are race_copy_test.c.
 */
#define _GNU_SOURCE
#include <pthread.h>

#include "kselftest_harness.h"
#include "race_stress.h"

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

static int fd_of(struct worker *w, int fdk)
{
	if (fdk == FD_PRIV)
		return w->priv_dup >= 0 && t_chance(&w->rng, 50) ? w->priv_dup : w->priv;
	if (w->sdup >= 0 && w->sdup_k == fdk && t_chance(&w->rng, 50))
		return w->sdup;
	return sh->fds[fdk];
}

static struct ent *ent_alloc(struct worker *w)
{
	struct ent *e;
	int i;

	if (!w->nr_free || w->nr_live >= MAX_LIVE)
		return NULL;
	e = &sh->tbl[w->free[--w->nr_free]];
	atomic_fetch_add(&e->gen, 1);
	e->nsched = 0;
	e->cur = 0;
	e->id = 0;
	e->records = 0;
	e->rec_id = 0;
	e->count_sum = 0;
	e->cancel_ns = 0;
	for (i = 0; i < MAXV; i++) {
		e->ended[i] = 0;
		e->fate[i] = F_UNUSED;
		e->delivered[i] = 0;
	}
	return e;
}

static void ent_free(struct worker *w, struct ent *e)
{
	atomic_store(&e->ostate, O_FREE);
	w->free[w->nr_free++] = ent_idx(e);
}

/*
 * Verify a timer whose life is over (or the run is): every schedule got
 * what its fate says.
 */
static void ent_verify(struct ent *e, bool final)
{
	uint32_t v, nsched = atomic_load(&e->nsched), d;
	uint64_t cookie = ent_cookie(e);

	if (atomic_load(&e->records) && atomic_load(&e->rec_id) != atomic_load(&e->id))
		violation(V_ID, "cookie %#llx: id %#llx, record id %#llx",
			  (unsigned long long)cookie,
			  (unsigned long long)atomic_load(&e->id),
			  (unsigned long long)atomic_load(&e->rec_id));
	if (e->kind == K_PERIODIC) {
		uint64_t sum = atomic_load(&e->count_sum);

		if (e->cancel_ns &&
		    sum > (uint64_t)(e->cancel_ns - e->lo[0]) / e->period + 1)
			violation(V_TICKS, "ticker %#llx: %llu periods in %lld ns of %llu",
				  (unsigned long long)cookie,
				  (unsigned long long)sum,
				  (long long)(e->cancel_ns - e->lo[0]),
				  (unsigned long long)e->period);
		return;
	}
	for (v = 0; v < nsched; v++) {
		d = atomic_load(&e->delivered[v]);
		switch (atomic_load(&e->fate[v])) {
		case F_PREVENTED:
		case F_VOID:
			if (d)
				violation(V_PREVENTED, "one-shot %#llx schedule %u delivered %u times",
					  (unsigned long long)cookie, v, d);
			break;
		case F_AFTER_LAST:
			if (d)
				violation(V_RESURRECT, "one-shot %#llx schedule %u delivered %u times",
					  (unsigned long long)cookie, v, d);
			break;
		case F_GONE:
		case F_LIVE:
			if (d > 1)
				violation(V_DOUBLE, "one-shot %#llx schedule %u: %u",
					  (unsigned long long)cookie, v, d);
			else if (!d && final)
				violation(V_MISSING, "one-shot %#llx schedule %u (%s, expiry %lld..%lld on clock %u)",
					  (unsigned long long)cookie, v,
					  atomic_load(&e->fate[v]) == F_GONE ?
					  "CANCEL/MODIFY said it was read" : "never cancelled",
					  (long long)e->lo[v], (long long)e->hi[v],
					  e->clock);
			break;
		case F_CLOSED:
			if (d > 1)
				violation(V_DOUBLE, "one-shot %#llx schedule %u: %u",
					  (unsigned long long)cookie, v, d);
			break;
		}
	}
}

/* A one-shot is over when its current schedule is settled. */
static bool oneshot_over(struct ent *e)
{
	uint8_t f = atomic_load(&e->fate[e->cur]);
	uint32_t v;

	/* Records said to be in flight must have landed (MODIFY gave 0). */
	for (v = 0; v < e->cur; v++)
		if (atomic_load(&e->fate[v]) == F_GONE &&
		    !atomic_load(&e->delivered[v]))
			return false;
	if (f == F_PREVENTED || f == F_CLOSED)
		return true;
	return atomic_load(&e->delivered[e->cur]) > 0;
}

/*
 * MODIFY returned 0 for it: a record after its LAST one would be a bug, so
 * keep its slot (and generation) until the end, where it shows up as that
 * rather than as a stale generation.
 */
static bool after_last(struct ent *e)
{
	uint32_t v, n = atomic_load(&e->nsched);

	for (v = 0; v < n; v++)
		if (atomic_load(&e->fate[v]) == F_AFTER_LAST)
			return true;
	return false;
}

/* A cancelled ticker is over when no read that began before is running. */
static bool ticker_quiet(struct ent *e)
{
	uint64_t ended = atomic_load(&e->ended[0]);
	int r;

	if (e->fdk == FD_PRIV)
		return true;
	for (r = 0; r < NR_READERS; r++) {
		uint64_t t = atomic_load(&sh->inflight[r]);

		if (t != IDLE && t <= ended)
			return false;
	}
	return true;
}

static void live_remove(struct worker *w, int i)
{
	w->live[i] = w->live[--w->nr_live];
}

/* Retire finished timers; a few per call, round robin over the list. */
static void reap(struct worker *w, int budget)
{
	int i;

	for (i = 0; i < w->nr_live && budget > 0; budget--) {
		int j = t_rand_below(&w->rng, w->nr_live);
		struct ent *e = &sh->tbl[w->live[j]];
		bool over;

		if (e->kind == K_PERIODIC)
			over = atomic_load(&e->ostate) == O_WAIT && ticker_quiet(e);
		else
			over = oneshot_over(e) && !after_last(e);
		if (!over)
			continue;
		ent_verify(e, true);
		if (e->kind == K_PERIODIC)
			w->nr_periodic--;
		live_remove(w, j);
		ent_free(w, e);
	}
}

static __s64 pick_expiry(struct worker *w, int clockid, bool *abs)
{
	struct t_rng *r = &w->rng;
	unsigned int p = t_rand_below(r, 100);
	__s64 rel;

	if (p < 60)
		rel = t_rand_below(r, 20 * NSEC_PER_MSEC);
	else if (p < 85)
		rel = 20 * NSEC_PER_MSEC + t_rand_below(r, 180 * NSEC_PER_MSEC);
	else if (p < 95)
		rel = NSEC_PER_SEC + t_rand_below(r, 2 * NSEC_PER_SEC);
	else
		rel = -(__s64)t_rand_below(r, 10 * NSEC_PER_MSEC);	/* the past */
	*abs = rel < 0 || t_chance(r, 50);
	return *abs ? t_now(clockid) + rel : rel;
}

/* Fill @op for an ARM of @e; records the schedule. */
static void prep_arm(struct worker *w, struct ent *e, struct qtimer_op *op,
		     bool periodic, int fdk)
{
	int clockid = clocks[t_rand_below(&w->rng, 3)];
	bool abs;
	__s64 x;

	memset(op, 0, sizeof(*op));
	e->kind = periodic ? K_PERIODIC : K_ONESHOT;
	e->clock = clockid;
	e->fdk = fdk;
	e->period = 0;
	if (periodic) {
		e->period = NSEC_PER_MSEC + t_rand_below(&w->rng, 9 * NSEC_PER_MSEC);
		x = t_now(clockid) + t_rand_below(&w->rng, 10 * NSEC_PER_MSEC);
		abs = true;
	} else {
		x = pick_expiry(w, clockid, &abs);
	}
	op->opcode = QTIMER_OP_ARM;
	op->clockid = clockid;
	op->flags = abs ? QTIMER_F_ABSTIME : 0;
	op->expires_ns = x;
	op->period_ns = e->period;
	op->cookie = ent_cookie(e);
	if (t_chance(&w->rng, 15)) {
		op->flags |= QTIMER_F_CPU;
		op->cpu = t_rand_below(&w->rng, sh->nr_cpus);
	}
	if (t_chance(&w->rng, 20))
		op->slack_ns = t_rand_below(&w->rng, NSEC_PER_MSEC);
	if (abs) {
		e->lo[0] = e->hi[0] = x;
	} else {
		/* The kernel adds its now, taken inside the call. */
		e->lo[0] = t_now(clockid) + x;
		e->hi[0] = INT64_MAX;	/* set when the call returned */
	}
	e->fate[0] = F_LIVE;
	atomic_store(&e->nsched, 1);
	atomic_store(&e->ostate, O_LIVE);
}

static void arm_done(struct worker *w, struct ent *e, const struct qtimer_op *op,
		     int ret)
{
	if (!(op->flags & QTIMER_F_ABSTIME))
		e->hi[0] = t_now(e->clock) + op->expires_ns;
	if (ret) {
		violation(V_ERRNO, "ARM: %s", strerror(-ret));
		e->fate[0] = F_VOID;
		ent_free(w, e);
		return;
	}
	atomic_store(&e->id, op->id);
	if (e->kind == K_PERIODIC)
		w->nr_periodic++;
	w->live[w->nr_live++] = ent_idx(e);
	atomic_fetch_add(&sh->arms, 1);
}

/* A new schedule for MODIFY of a one-shot: distinct from the others. */
static void prep_modify(struct worker *w, struct ent *e, struct qtimer_op *op)
{
	uint32_t v = e->cur + 1, u;
	__s64 x = t_now(e->clock) + t_rand_below(&w->rng, 30 * NSEC_PER_MSEC);

	if (t_chance(&w->rng, 10))
		x += NSEC_PER_SEC;
	for (;;) {
		bool clash = false;

		for (u = 0; u < v; u++)
			if (x >= e->lo[u] && x <= e->hi[u])
				clash = true;
		if (!clash)
			break;
		x = (x > e->hi[0] ? x : e->hi[0]) + 1000;
	}
	memset(op, 0, sizeof(*op));
	op->opcode = QTIMER_OP_MODIFY;
	op->id = atomic_load(&e->id);
	op->flags = QTIMER_F_ABSTIME;
	op->expires_ns = x;
	if (t_chance(&w->rng, 20))
		op->slack_ns = t_rand_below(&w->rng, NSEC_PER_MSEC);
	e->lo[v] = e->hi[v] = x;
	e->fate[v] = F_LIVE;
	atomic_store(&e->nsched, v + 1);
}

static void modify_done(struct ent *e, int ret, uint64_t t)
{
	uint32_t v = e->cur;

	if (ret > 0 && !(ret & ~(QTIMER_CANCEL_ARMED | QTIMER_CANCEL_QUEUED))) {
		atomic_store(&e->ended[v], t);
		atomic_store(&e->fate[v], F_PREVENTED);
		e->cur = v + 1;
	} else if (ret == -ENOENT || ret == 0) {
		/*
		 * -ENOENT: it was read.  0: a read() has its record, which
		 * says LAST; either way the one-shot is over.
		 */
		atomic_store(&e->ended[v], t);
		atomic_store(&e->fate[v], F_GONE);
		atomic_store(&e->fate[v + 1], ret ? F_VOID : F_AFTER_LAST);
		atomic_store(&e->ostate, O_WAIT);
		if (!ret)
			violation(V_ZERO, "MODIFY of one-shot %#llx",
				  (unsigned long long)ent_cookie(e));
	} else {
		violation(V_ERRNO, "MODIFY: %d", ret);
		atomic_store(&e->fate[v + 1], F_VOID);
		atomic_store(&e->ostate, O_WAIT);
	}
	atomic_fetch_add(&sh->modifies, 1);
}

static void cancel_done(struct ent *e, int ret, uint64_t t)
{
	uint32_t v = e->cur;

	atomic_fetch_add(&sh->cancels, 1);
	atomic_store(&e->ostate, O_WAIT);
	if (e->kind == K_PERIODIC) {
		e->cancel_ns = t_now(e->clock);
		atomic_store(&e->ended[0], t);
		atomic_store(&e->fate[0], F_ENDED);
		if (ret == -ENOENT)
			violation(V_ENOENT_LIVE, "ticker %#llx", (unsigned long long)ent_cookie(e));
		else if (ret < 0)
			violation(V_ERRNO, "CANCEL of a ticker: %d", ret);
		return;
	}
	atomic_store(&e->ended[v], t);
	if (ret > 0 && !(ret & ~(QTIMER_CANCEL_ARMED | QTIMER_CANCEL_QUEUED))) {
		atomic_store(&e->fate[v], F_PREVENTED);
	} else if (ret == -ENOENT || ret == 0) {
		/* 0 would say a read() had its record: -ENOENT for one-shots. */
		atomic_store(&e->fate[v], F_GONE);
		if (!ret)
			violation(V_ZERO, "CANCEL of one-shot %#llx",
				  (unsigned long long)ent_cookie(e));
	} else {
		violation(V_ERRNO, "CANCEL: %d", ret);
	}
}

/* A random timer the worker can still cancel or modify, or NULL. */
static struct ent *pick_live(struct worker *w, bool oneshot_only)
{
	int tries;

	for (tries = 0; tries < 8 && w->nr_live; tries++) {
		struct ent *e = &sh->tbl[w->live[t_rand_below(&w->rng, w->nr_live)]];

		if (atomic_load(&e->ostate) != O_LIVE)
			continue;
		if (oneshot_only && (e->kind != K_ONESHOT || e->cur + 1 >= MAXV))
			continue;
		return e;
	}
	return NULL;
}

static int pick_fdk(struct worker *w)
{
	unsigned int p = t_rand_below(&w->rng, 100);

	return p < 35 ? FD_S0 : p < 70 ? FD_S1 : FD_PRIV;
}

static void op_arm(struct worker *w, bool periodic)
{
	struct ent *e = ent_alloc(w);
	struct qtimer_op op;
	int fdk = pick_fdk(w), ret;

	if (!e)
		return;
	prep_arm(w, e, &op, periodic, fdk);
	op.opcode = t_chance(&w->rng, 50) ? QTIMER_OP_ARM : 0;
	ret = t_arm_op(fd_of(w, fdk), &op);
	arm_done(w, e, &op, ret);
}

static void op_cancel(struct worker *w, struct ent *e)
{
	int ret;

	if (!e)
		return;
	ret = t_cancel(fd_of(w, e->fdk), atomic_load(&e->id));
	cancel_done(e, ret, ticket());
}

static void op_modify(struct worker *w, struct ent *e)
{
	struct qtimer_op op;
	int ret;

	if (!e)
		return;
	prep_modify(w, e, &op);
	op.opcode = 0;
	ret = t_ioctl(fd_of(w, e->fdk), QTIMER_IOC_MODIFY, &op);
	modify_done(e, ret, ticket());
}

/* A SUBMIT of up to 16 mixed ops on one file; each timer at most once. */
static void op_submit(struct worker *w)
{
	struct qtimer_op ops[16];
	struct ent *ents[16];
	int kinds[16], nr = 0, want = 1 + t_rand_below(&w->rng, 16), i, ret;
	int tries = 0;
	int fdk = pick_fdk(w);
	uint64_t t;

	while (nr < want && tries++ < 4 * want) {
		unsigned int p = t_rand_below(&w->rng, 100);
		struct ent *e = NULL;
		int j;

		if (p < 50) {
			e = ent_alloc(w);
			if (!e)
				continue;
			prep_arm(w, e, &ops[nr], false, fdk);
			kinds[nr] = QTIMER_OP_ARM;
		} else {
			e = pick_live(w, p >= 75);
			if (!e || e->fdk != fdk)
				continue;
			for (j = 0; j < nr; j++)
				if (ents[j] == e)
					break;
			if (j < nr)
				continue;
			if (p < 75) {
				memset(&ops[nr], 0, sizeof(ops[0]));
				ops[nr].opcode = QTIMER_OP_CANCEL;
				ops[nr].id = atomic_load(&e->id);
				kinds[nr] = QTIMER_OP_CANCEL;
			} else {
				prep_modify(w, e, &ops[nr]);
				kinds[nr] = QTIMER_OP_MODIFY;
			}
		}
		ops[nr].result = 0x5a5a5a5a;
		ents[nr++] = e;
	}
	if (!nr)
		return;
	ret = t_submit(fd_of(w, fdk), ops, nr, 0, NULL);
	t = ticket();
	atomic_fetch_add(&sh->submits, 1);
	if (ret != nr)
		violation(V_ERRNO, "SUBMIT of %d returned %d", nr, ret);
	for (i = 0; i < nr; i++) {
		int r = ret == nr ? ops[i].result : -EIO;

		switch (kinds[i]) {
		case QTIMER_OP_ARM:
			arm_done(w, ents[i], &ops[i], r);
			break;
		case QTIMER_OP_CANCEL:
			cancel_done(ents[i], r, t);
			break;
		case QTIMER_OP_MODIFY:
			modify_done(ents[i], r, t);
			break;
		}
	}
}

/* Close the private file (and its dup) with its timers live; reopen. */
static void op_close_private(struct worker *w)
{
	int i;

	if (w->priv_dup >= 0)
		close(w->priv_dup);
	w->priv_dup = -1;
	close(w->priv);
	for (i = 0; i < w->nr_live; ) {
		struct ent *e = &sh->tbl[w->live[i]];

		if (e->fdk != FD_PRIV) {
			i++;
			continue;
		}
		/* Whatever was read before is accounted; nothing comes now. */
		if (atomic_load(&e->fate[e->cur]) == F_LIVE)
			atomic_store(&e->fate[e->cur], F_CLOSED);
		ent_verify(e, false);
		if (e->kind == K_PERIODIC)
			w->nr_periodic--;
		live_remove(w, i);
		ent_free(w, e);
	}
	w->priv = t_open(O_NONBLOCK);
	if (w->priv < 0)
		violation(V_ERRNO, "open: %d", w->priv);
	atomic_fetch_add(&sh->closes, 1);
}

/*
 * Fork: the child arms, cancels and modifies timers of this worker's table
 * on an inherited shared file (the readers here account their records),
 * plays with a file of its own, and exits holding the inherited files.
 * The worker then adopts the child's timers.
 */
static void op_fork(struct worker *w)
{
	uint32_t slots[FORK_TIMERS];
	int k, i, status;
	pid_t pid;

	if (w->nr_free < FORK_TIMERS || w->nr_live + FORK_TIMERS > MAX_LIVE)
		return;
	/* The child takes these off its copy of the free list, in order. */
	for (i = 0; i < FORK_TIMERS; i++)
		slots[i] = w->free[w->nr_free - 1 - i];
	k = w->nr_live;
	pid = fork();
	if (pid < 0) {
		violation(V_ERRNO, "fork: %s", strerror(errno));
		return;
	}
	if (!pid) {
		struct qtimer_record recs[4];
		int fd, n;

		w->in_child = true;
		for (i = 0; i < FORK_TIMERS; i++) {
			struct ent *e = ent_alloc(w);
			struct qtimer_op op;
			int fdk = t_chance(&w->rng, 50) ? FD_S0 : FD_S1;

			prep_arm(w, e, &op, false, fdk);
			arm_done(w, e, &op, t_arm_op(sh->fds[fdk], &op));
		}
		for (i = k; i < w->nr_live; i++) {
			struct ent *e = &sh->tbl[w->live[i]];

			if (t_chance(&w->rng, 30))
				op_cancel(w, e);
			else if (t_chance(&w->rng, 30))
				op_modify(w, e);
		}
		fd = t_open(O_NONBLOCK);
		if (fd < 0)
			_exit(1);
		for (i = 0; i < 3; i++)
			if (t_arm(fd, CLOCK_MONOTONIC, 0, i * NSEC_PER_MSEC, 0,
				   i, NULL))
				_exit(2);
		n = t_collect(fd, recs, 3, QT_ARRIVE_MS);
		_exit(n == 3 ? 0 : 3);
	}
	w->nr_free -= FORK_TIMERS;
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		violation(V_CHILD, "status %#x", status);
	/* Adopt: the table, and so the child's bookkeeping, is shared. */
	for (i = 0; i < FORK_TIMERS; i++) {
		struct ent *e = &sh->tbl[slots[i]];

		if (atomic_load(&e->ostate) == O_FREE) {
			w->free[w->nr_free++] = slots[i];
			continue;
		}
		w->live[w->nr_live++] = slots[i];
	}
	atomic_fetch_add(&sh->forks, 1);
}

static void worker_init_fds(struct worker *w)
{
	w->priv = t_open(O_NONBLOCK);
	w->priv_dup = -1;
	w->sdup = -1;
}

static void *worker_fn(void *p)
{
	struct worker *w = p;
	__s64 deadline;
	int i;

	worker_init_fds(w);
	while (!atomic_load(&sh->stop)) {
		unsigned int r = t_rand_below(&w->rng, 1000);

		atomic_fetch_add(&sh->ops, 1);
		if (r < 300)
			op_arm(w, false);
		else if (r < 330 && w->nr_periodic < 6)
			op_arm(w, true);
		else if (r < 520)
			op_cancel(w, pick_live(w, false));
		else if (r < 680)
			op_modify(w, pick_live(w, true));
		else if (r < 760)
			op_submit(w);
		else if (r < 880)
			drain(w->priv, &w->rng, -1);
		else if (r < 910) {
			if (w->sdup >= 0) {
				close(w->sdup);
				w->sdup = -1;
			} else {
				w->sdup_k = t_rand_below(&w->rng, 2);
				w->sdup = dup(sh->fds[w->sdup_k]);
				atomic_fetch_add(&sh->dups, 1);
			}
		} else if (r < 930) {
			if (w->priv_dup >= 0) {
				close(w->priv_dup);
				w->priv_dup = -1;
			} else {
				w->priv_dup = dup(w->priv);
			}
		} else if (r < 945) {
			op_close_private(w);
		} else if (r < 950) {
			op_fork(w);
		} else if (r < 980) {
			sched_yield();
		} else {
			t_sleep_ns(t_rand_below(&w->rng, 2 * NSEC_PER_MSEC));
		}
		reap(w, 4);
	}

	/* Wind down: tickers and far timers go; the rest must arrive. */
	for (i = 0; i < w->nr_live; i++) {
		struct ent *e = &sh->tbl[w->live[i]];

		if (atomic_load(&e->ostate) != O_LIVE)
			continue;
		if (e->kind == K_PERIODIC ||
		    e->lo[e->cur] > t_now(e->clock) + 100 * NSEC_PER_MSEC)
			op_cancel(w, e);
	}
	deadline = t_now(CLOCK_MONOTONIC) + 10 * NSEC_PER_SEC;
	while (t_now(CLOCK_MONOTONIC) < deadline) {
		bool pending = false;

		for (i = 0; i < w->nr_live; i++) {
			struct ent *e = &sh->tbl[w->live[i]];

			if (e->kind == K_ONESHOT && !oneshot_over(e))
				pending = true;
		}
		if (!pending)
			break;
		if (t_wait_readable(w->priv, 20) > 0)
			drain(w->priv, &w->rng, -1);
	}
	return NULL;
}

FIXTURE(race)
{
	size_t map_len;
	struct worker *workers;
};

FIXTURE_SETUP(race)
{
	int nr = t_tunable("QT_RACE_WORKERS", NR_WORKERS_DEF);

	if (nr < 1 || nr > 64)
		nr = NR_WORKERS_DEF;
	self->map_len = sizeof(struct shared) +
			(size_t)nr * PER_WORKER * sizeof(struct ent);
	sh = mmap(NULL, self->map_len, PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, sh);
	sh->nr_workers = nr;
	sh->nr_cpus = t_nr_cpus();
	sh->diag_budget = 60;
	sh->fds[0] = t_open(O_NONBLOCK);
	sh->fds[1] = t_open(O_NONBLOCK);
	ASSERT_LE(0, sh->fds[0]);
	ASSERT_LE(0, sh->fds[1]);
	self->workers = calloc(nr, sizeof(*self->workers));
	ASSERT_NE(NULL, self->workers);
}

FIXTURE_TEARDOWN(race)
{
	if (sh && sh != MAP_FAILED) {
		close(sh->fds[0]);
		close(sh->fds[1]);
		munmap(sh, self->map_len);
	}
	free(self->workers);
}

static bool shared_pending(void)
{
	uint32_t i, n = sh->nr_workers * PER_WORKER;

	for (i = 0; i < n; i++) {
		struct ent *e = &sh->tbl[i];

		if (atomic_load(&e->ostate) != O_FREE && e->kind == K_ONESHOT &&
		    e->fdk != FD_PRIV && !oneshot_over(e))
			return true;
	}
	return false;
}

TEST_F_TIMEOUT(race, stress, 3700)
{
	int secs = t_stress_seconds(5), nr = sh->nr_workers, i, v;
	uint64_t seed = t_tunable("QT_SEED", 0) ?: (uint64_t)t_now(CLOCK_REALTIME);
	pthread_t wt[64], rt[NR_READERS];
	struct reader_arg ra[NR_READERS];
	struct t_fdinfo fi;
	__s64 deadline;
	uint32_t e;

	TH_LOG("%d workers, %d readers, %d s, seed %llu (QT_SEED)", nr,
	       NR_READERS, secs, (unsigned long long)seed);
	for (i = 0; i < NR_READERS; i++) {
		sh->inflight[i] = IDLE;
		ra[i].idx = i;
		ra[i].seed = seed + 1000 + i;
		ASSERT_EQ(0, pthread_create(&rt[i], NULL, reader_fn, &ra[i]));
	}
	for (i = 0; i < nr; i++) {
		struct worker *w = &self->workers[i];

		w->idx = i;
		t_rng_seed(&w->rng, seed + i);
		w->base = i * PER_WORKER;
		for (e = 0; e < PER_WORKER; e++)
			w->free[w->nr_free++] = w->base + PER_WORKER - 1 - e;
		ASSERT_EQ(0, pthread_create(&wt[i], NULL, worker_fn, w));
	}
	t_sleep_ns((__s64)secs * NSEC_PER_SEC);
	atomic_store(&sh->stop, 1);
	for (i = 0; i < nr; i++)
		pthread_join(wt[i], NULL);

	/* Let the readers bring in what is still due on the shared files. */
	deadline = t_now(CLOCK_MONOTONIC) + 10 * NSEC_PER_SEC;
	while (shared_pending() && t_now(CLOCK_MONOTONIC) < deadline)
		t_sleep_ms(20);
	atomic_store(&sh->stop_readers, 1);
	for (i = 0; i < NR_READERS; i++)
		pthread_join(rt[i], NULL);

	/* Anything still queued now was not expected: account it. */
	{
		struct t_rng rng;

		t_rng_seed(&rng, seed);
		for (i = 0; i < 2; i++)
			while (drain(sh->fds[i], &rng, -1) > 0)
				;
		for (i = 0; i < nr; i++)
			while (drain(self->workers[i].priv, &rng, -1) > 0)
				;
	}
	for (e = 0; e < (uint32_t)nr * PER_WORKER; e++)
		if (atomic_load(&sh->tbl[e].ostate) != O_FREE)
			ent_verify(&sh->tbl[e], true);
	/* Everything left on the shared files was cancelled or delivered. */
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, t_fdinfo(sh->fds[i], &fi));
		if (fi.timers || fi.pending)
			violation(V_FDINFO, "shared file %d: timers %lld pending %lld",
				  i, fi.timers, fi.pending);
	}
	for (i = 0; i < nr; i++) {
		struct worker *w = &self->workers[i];

		if (w->priv_dup >= 0)
			close(w->priv_dup);
		if (w->sdup >= 0)
			close(w->sdup);
		close(w->priv);
	}

	TH_LOG("ops %llu: arms %llu cancels %llu modifies %llu submits %llu reads %llu records %llu forks %llu closes %llu dups %llu",
	       (unsigned long long)sh->ops, (unsigned long long)sh->arms,
	       (unsigned long long)sh->cancels, (unsigned long long)sh->modifies,
	       (unsigned long long)sh->submits, (unsigned long long)sh->reads,
	       (unsigned long long)sh->records, (unsigned long long)sh->forks,
	       (unsigned long long)sh->closes, (unsigned long long)sh->dups);
	for (v = 0; v < NR_V; v++) {
		const char *what = v_names[v] ?: "?";

		EXPECT_EQ(0, sh->violations[v]) TH_LOG("%s: %llu", what,
			(unsigned long long)sh->violations[v]);
	}
	ASSERT_LT(0, sh->records);
	ASSERT_LT(0, sh->cancels);
	ASSERT_LT(0, sh->modifies);
}

TEST_HARNESS_MAIN
