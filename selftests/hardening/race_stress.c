// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * The readers' half of the race stress (race_stress.h): tickets that order
 * the calls, violations counted and the first few described, and the
 * accounting of each record read against the schedule table.
 */
#define _GNU_SOURCE
#include <stdarg.h>

#include "race_stress.h"

struct shared *sh;

const char *const v_names[NR_V] = {
	"record with an unknown cookie",
	"record of a finished timer (stale generation)",
	"record whose expires_ns matches no schedule of its timer",
	"record read before its expiry",
	"record of a schedule CANCEL/MODIFY prevented",
	"record read by a read() that started after CANCEL/MODIFY returned",
	"schedule delivered twice",
	"record flags or count wrong",
	"unexpected errno",
	"schedule never delivered",
	"record id differs from the id ARM returned",
	"ticker counted more periods than elapsed",
	"CANCEL/MODIFY returned -ENOENT for a ticker",
	"forked child failed",
	"fdinfo counts wrong at the end",
	"record after a one-shot's LAST record (MODIFY returned 0 yet re-armed it)",
	"CANCEL/MODIFY of a one-shot returned 0 (the header says -ENOENT once a read took its record)",
};

uint64_t ticket(void)
{
	return atomic_fetch_add(&sh->ticket, 1) + 1;
}

void violation(int v, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int len;

	atomic_fetch_add(&sh->violations[v], 1);
	if (atomic_fetch_sub(&sh->diag_budget, 1) <= 0)
		return;
	/* write(2), not stdio: children of a threaded process may call this. */
	len = snprintf(buf, sizeof(buf), "# VIOLATION %s: ", v_names[v]);
	va_start(ap, fmt);
	len += vsnprintf(buf + len, sizeof(buf) - len - 1, fmt, ap);
	va_end(ap);
	if (len > (int)sizeof(buf) - 2)
		len = sizeof(buf) - 2;
	buf[len++] = '\n';
	if (write(STDERR_FILENO, buf, len) < 0)
		return;
}

const int clocks[3] = { CLOCK_MONOTONIC, CLOCK_BOOTTIME, CLOCK_REALTIME };

static int clock_idx(int clockid)
{
	return clockid == CLOCK_MONOTONIC ? 0 : clockid == CLOCK_BOOTTIME ? 1 : 2;
}

uint32_t ent_idx(const struct ent *e)
{
	return e - sh->tbl;
}

uint64_t ent_cookie(struct ent *e)
{
	return (uint64_t)atomic_load(&e->gen) << 32 | ent_idx(e);
}

/*
 * Account one record.  @rticket is the reader's ticket taken before its
 * read() began; @now are the three clocks read after it returned.
 */
static void account(const struct qtimer_record *rec, uint64_t rticket,
		    const __s64 now[3])
{
	uint64_t idx = rec->cookie & 0xffffffffULL;
	uint32_t gen = rec->cookie >> 32, v, nsched;
	uint64_t ended;
	struct ent *e;

	atomic_fetch_add(&sh->records, 1);
	if (idx >= (uint64_t)sh->nr_workers * PER_WORKER) {
		violation(V_COOKIE, "cookie %#llx", (unsigned long long)rec->cookie);
		return;
	}
	e = &sh->tbl[idx];
	if (atomic_load(&e->gen) != gen) {
		violation(V_STALE, "cookie %#llx, slot now at generation %u",
			  (unsigned long long)rec->cookie, atomic_load(&e->gen));
		return;
	}
	atomic_store(&e->rec_id, rec->id);
	atomic_fetch_add(&e->records, 1);
	if (now[clock_idx(e->clock)] < rec->expires_ns)
		violation(V_EARLY, "cookie %#llx expires %lld, read at %lld",
			  (unsigned long long)rec->cookie,
			  (long long)rec->expires_ns,
			  (long long)now[clock_idx(e->clock)]);

	if (e->kind == K_PERIODIC) {
		if (rec->flags || !rec->count)
			violation(V_FLAGS, "ticker %#llx flags %#x count %u",
				  (unsigned long long)rec->cookie, rec->flags,
				  rec->count);
		if (rec->expires_ns < e->lo[0] ||
		    (rec->expires_ns - e->lo[0]) % e->period)
			violation(V_EXPIRY, "ticker %#llx expires %lld, first %lld period %llu",
				  (unsigned long long)rec->cookie,
				  (long long)rec->expires_ns, (long long)e->lo[0],
				  (unsigned long long)e->period);
		ended = atomic_load(&e->ended[0]);
		if (ended && rticket > ended)
			violation(V_AFTER, "ticker %#llx: read ticket %llu, cancel ticket %llu",
				  (unsigned long long)rec->cookie,
				  (unsigned long long)rticket,
				  (unsigned long long)ended);
		atomic_fetch_add(&e->count_sum, rec->count);
		return;
	}

	nsched = atomic_load(&e->nsched);
	for (v = 0; v < nsched; v++)
		if (rec->expires_ns >= e->lo[v] && rec->expires_ns <= e->hi[v])
			break;
	if (v == nsched) {
		violation(V_EXPIRY, "one-shot %#llx expires %lld, %u schedules",
			  (unsigned long long)rec->cookie,
			  (long long)rec->expires_ns, nsched);
		return;
	}
	if (rec->flags != QTIMER_REC_LAST || rec->count != 1)
		violation(V_FLAGS, "one-shot %#llx flags %#x count %u",
			  (unsigned long long)rec->cookie, rec->flags, rec->count);
	switch (atomic_load(&e->fate[v])) {
	case F_PREVENTED:
	case F_VOID:
		violation(V_PREVENTED, "one-shot %#llx schedule %u",
			  (unsigned long long)rec->cookie, v);
		break;
	case F_AFTER_LAST:
		violation(V_RESURRECT, "one-shot %#llx schedule %u",
			  (unsigned long long)rec->cookie, v);
		break;
	}
	ended = atomic_load(&e->ended[v]);
	if (ended && rticket > ended)
		violation(V_AFTER, "one-shot %#llx schedule %u: read ticket %llu, ending call ticket %llu",
			  (unsigned long long)rec->cookie, v,
			  (unsigned long long)rticket, (unsigned long long)ended);
	if (atomic_fetch_add(&e->delivered[v], 1))
		violation(V_DOUBLE, "one-shot %#llx schedule %u",
			  (unsigned long long)rec->cookie, v);
}

/* Read what is there (O_NONBLOCK file) and account it. */
int drain(int fd, struct t_rng *rng, int reader)
{
	struct qtimer_record recs[64];
	size_t want = 1 + t_rand_below(rng, 64);
	uint64_t t = ticket();
	__s64 now[3];
	ssize_t n;
	int i;

	if (reader >= 0)
		atomic_store(&sh->inflight[reader], t);
	/* A length that is not a multiple of the record size is fine too. */
	n = read(fd, recs, want * sizeof(recs[0]) + t_rand_below(rng, 2) * 7);
	for (i = 0; i < 3; i++)
		now[i] = t_now(clocks[i]);
	if (n < 0) {
		if (errno != EAGAIN)
			violation(V_ERRNO, "read: %s", strerror(errno));
		n = 0;
	} else if (n % sizeof(recs[0])) {
		violation(V_ERRNO, "read returned %zd bytes", n);
	}
	atomic_fetch_add(&sh->reads, 1);
	for (i = 0; i < n / (ssize_t)sizeof(recs[0]); i++)
		account(&recs[i], t, now);
	if (reader >= 0)
		atomic_store(&sh->inflight[reader], IDLE);
	return n / sizeof(recs[0]);
}

void *reader_fn(void *p)
{
	struct reader_arg *a = p;
	struct t_rng rng;

	t_rng_seed(&rng, a->seed);
	while (!atomic_load(&sh->stop_readers)) {
		struct pollfd pfd[2] = {
			{ .fd = sh->fds[0], .events = POLLIN },
			{ .fd = sh->fds[1], .events = POLLIN },
		};
		int i;

		if (poll(pfd, 2, 20) <= 0)
			continue;
		for (i = 0; i < 2; i++)
			if (pfd[i].revents & POLLIN)
				drain(sh->fds[i], &rng, a->idx);
	}
	return NULL;
}
