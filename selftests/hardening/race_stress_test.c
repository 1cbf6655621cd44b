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
