// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * The race stress's table as its owners keep it (race_stress.h): each
 * worker's slots, every schedule recorded before its call and settled by
 * the call's result, the timers a worker may still act on, and the check
 * of each schedule's fate against the records the readers accounted, when
 * a slot is reaped and at the end.
 */
#define _GNU_SOURCE

#include "race_stress.h"

int fd_of(struct worker *w, int fdk)
{
	if (fdk == FD_PRIV)
		return w->priv_dup >= 0 && t_chance(&w->rng, 50) ? w->priv_dup : w->priv;
	if (w->sdup >= 0 && w->sdup_k == fdk && t_chance(&w->rng, 50))
		return w->sdup;
	return sh->fds[fdk];
}

struct ent *ent_alloc(struct worker *w)
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

void ent_free(struct worker *w, struct ent *e)
{
	atomic_store(&e->ostate, O_FREE);
	w->free[w->nr_free++] = ent_idx(e);
}

/*
 * Verify a timer whose life is over (or the run is): every schedule got
 * what its fate says.
 */
void ent_verify(struct ent *e, bool final)
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
bool oneshot_over(struct ent *e)
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

void live_remove(struct worker *w, int i)
{
	w->live[i] = w->live[--w->nr_live];
}

/* Retire finished timers; a few per call, round robin over the list. */
void reap(struct worker *w, int budget)
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
void prep_arm(struct worker *w, struct ent *e, struct qtimer_op *op,
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

void arm_done(struct worker *w, struct ent *e, const struct qtimer_op *op,
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
void prep_modify(struct worker *w, struct ent *e, struct qtimer_op *op)
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

void modify_done(struct ent *e, int ret, uint64_t t)
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

void cancel_done(struct ent *e, int ret, uint64_t t)
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
struct ent *pick_live(struct worker *w, bool oneshot_only)
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
