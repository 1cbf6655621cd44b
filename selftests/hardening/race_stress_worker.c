// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * The race stress's worker threads (race_stress.h): each arms, cancels,
 * modifies and SUBMITs at random on the shared files, its private file and
 * dups of them, closes its private file with timers live, and now and then
 * forks a child that works on a shared file it inherited.
 */
#define _GNU_SOURCE
#include <sys/wait.h>

#include "race_stress.h"

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

void *worker_fn(void *p)
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
