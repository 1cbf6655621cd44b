// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * The two sides of the ENDED window's race (qtimer_shard_window.h): the
 * reader thread, which takes records and logs them, and the op side,
 * which arms a round's timers and goes for them with CANCEL or MODIFY;
 * then the verdict on what each side got.
 */
#define _GNU_SOURCE
#include <pthread.h>

#include "qtimer_shard_window.h"

static __u64 duel_cookie(const struct duel *d, int k)
{
	return (__u64)(d->round + 1) << 32 | k;
}

/* The timer of this round a cookie names, or -1. */
static int duel_timer(const struct duel *d, __u64 cookie)
{
	if (cookie >> 32 != (__u64)d->round + 1 || (cookie & 0xffffffff) >= (__u64)d->n)
		return -1;
	return cookie & 0xffffffff;
}

/* Whether @rec is the record of timer @k's schedule as armed. */
static bool duel_old(const struct duel *d, const struct qtimer_record *rec,
		     int k)
{
	return k >= 0 && duel_timer(d, rec->cookie) == k &&
	       rec->expires_ns == d->old_when[k];
}

/* Takes up to @max records and logs them: how many, or -errno. */
static int duel_take(struct duel *d, int max)
{
	struct qtimer_record recs[WIN_READ_MAX];
	__s64 stamp;
	int ret, i;

	if (d->taker == BY_RING_MAP)
		ret = t_ring_consume(d->ring, recs, max);
	else
		ret = t_read(d->fd, recs, max);
	stamp = t_now(CLOCK_MONOTONIC);
	if (ret == -EAGAIN)
		return 0;
	if (ret < 0) {
		d->take_errors++;
		return ret;
	}
	for (i = 0; i < ret; i++) {
		int k = duel_timer(d, recs[i].cookie);

		if (duel_old(d, &recs[i], k))
			d->old_taken[k] = true;
		if (d->nr_log == WIN_LOG) {
			d->lost_log++;
			continue;
		}
		d->log[d->nr_log].rec = recs[i];
		d->log[d->nr_log++].stamp = stamp;
	}
	return ret;
}

/*
 * The first timer from @k on that neither side has had yet, or n.  (acted[]
 * is read with acquire: without a handshake the op side sets it meanwhile.)
 */
static int duel_next(const struct duel *d, int k)
{
	while (k < d->n && (d->old_taken[k] ||
			    __atomic_load_n(&d->acted[k], __ATOMIC_ACQUIRE)))
		k++;
	return k;
}

/*
 * The timer whose record the reader takes last of the @max it is about to
 * take, or -1 to look again.  read() takes records in the order their
 * timers fired, which is the order of their deadlines on the one heap
 * they share: the @max-th of those not had yet, once something is
 * pending.  In the mapping, the record at the tail says (@max is 1); a
 * record there that is not one to race for (a new schedule's) is taken
 * as it comes.
 */
static int duel_aim(struct duel *d, int first, int max)
{
	const struct qtimer_record *slot;
	__u32 head, tail;
	int k, next;

	if (d->taker != BY_RING_MAP) {
		t_wait_readable(d->fd, 20);
		for (k = first; --max > 0 && (next = duel_next(d, k + 1)) < d->n; )
			k = next;
		return k;
	}
	head = t_ring_head(d->ring);
	tail = t_ring_tail(d->ring);
	if (tail == head) {
		t_wait_readable(d->fd, 20);
		return -1;
	}
	if (t_ring_claim_of(d->ring, tail) != QTIMER_REC_READY) {
		t_ring_set_tail(d->ring, tail + 1);
		return -1;
	}
	slot = t_ring_rec(d->ring, tail);
	k = duel_timer(d, slot->cookie);
	if (duel_old(d, slot, k) && !d->old_taken[k] && !d->acted[k])
		return k;
	duel_take(d, 1);
	return -1;
}

static __s64 clamp_lead(__s64 lead)
{
	if (lead > WIN_LEAD_MAX_NS)
		return WIN_LEAD_MAX_NS;
	if (lead < -WIN_LEAD_MAX_NS)
		return -WIN_LEAD_MAX_NS;
	return lead;
}

/*
 * Who won the race for timer @k: the reader if it took the record and the
 * op found the timer gone; the op if it took back a record that had fired
 * (QUEUED).  An op that found the timer still armed raced nobody.  Any
 * other combination is wrong, which the verdict says.
 */
static void duel_judge_step(struct duel *d, int k, bool took_it)
{
	__s64 lead = atomic_load(&d->lead_ns);
	__s64 step = llabs(lead) / 8 + WIN_LEAD_STEP_NS;

	d->steps++;
	if (took_it && d->res[k] == -ENOENT) {
		d->reader_won++;
		atomic_store(&d->lead_ns, clamp_lead(lead + step));
	} else if (!took_it && d->res[k] == QTIMER_CANCEL_QUEUED) {
		d->op_won++;
		atomic_store(&d->lead_ns, clamp_lead(lead - step));
	} else if (d->res[k] == QTIMER_CANCEL_ARMED) {
		d->op_armed++;
	}
}

/*
 * The reader's loop condition: moves *first on to the next timer neither
 * side has had, and says whether there is one and time is left for it
 * (running out of time sets timed_out).
 */
static bool duel_goes_on(struct duel *d, int *first)
{
	*first = duel_next(d, *first);
	if (*first == d->n)
		return false;
	if (t_now(CLOCK_MONOTONIC) > d->deadline) {
		d->timed_out = true;
		return false;
	}
	return true;
}

/*
 * Without a handshake: take records as they come, up to 8 at a time, and
 * say which timer is next, until every timer went to one side or the other.
 */
static void duel_read_freely(struct duel *d)
{
	int first = 0;

	while (duel_goes_on(d, &first)) {
		atomic_store(&d->head, first);
		if (!duel_take(d, WIN_READ_MAX))
			t_wait_readable(d->fd, 1);
	}
}

void *duel_reader(void *arg)
{
	struct duel *d = arg;
	unsigned int offer = 0;
	int first = 0;

	if (t_pin_self(d->reader_cpu)) {
		d->take_errors++;
		goto out;
	}
	if (d->free_run) {
		duel_read_freely(d);
		goto out;
	}
	while (duel_goes_on(d, &first)) {
		/* read() takes 1, 2, 4 or 8 at a time; the mapping one. */
		int max = d->taker == BY_RING_MAP ? 1 : 1 << (offer % 4);
		bool took_it = false;
		int k, i, logged;
		__s64 lead;

		k = duel_aim(d, first, max);
		if (k < 0)
			continue;
		atomic_store(&d->target, k);
		atomic_store(&d->offer, ++offer);
		while (atomic_load(&d->fire) != offer)
			;
		lead = atomic_load(&d->lead_ns);
		if (lead > 0)
			t_busy_wait_ns(t_rand_below(&d->rng, 2 * lead + 1));
		logged = d->nr_log;
		duel_take(d, max);
		for (i = logged; i < d->nr_log; i++)
			took_it |= duel_old(d, &d->log[i].rec, k);
		while (atomic_load(&d->done) != offer)
			;
		duel_judge_step(d, k, took_it);
	}
out:
	atomic_store(&d->over, true);
	return NULL;
}

/* CANCEL or MODIFY of timer @k, into res[k]. */
static void duel_op(struct duel *d, int k)
{
	if (d->modify) {
		d->new_when[k] = (t_now(CLOCK_MONOTONIC) + WIN_MODIFY_NS) | 1;
		d->res[k] = t_modify(d->fd, d->ids[k], QTIMER_F_ABSTIME,
				      d->new_when[k], 0, 0);
	} else {
		d->res[k] = t_cancel(d->fd, d->ids[k]);
	}
	__atomic_store_n(&d->acted[k], true, __ATOMIC_RELEASE);
}

/*
 * The op side: answer each offer with CANCEL or MODIFY of its timer, or
 * without a handshake, as fast as it can, go for one of the 8 timers the
 * reader takes next.
 */
void duel_act(struct duel *d, struct t_rng *rng)
{
	unsigned int seen = 0;
	int k;

	while (d->free_run && !atomic_load(&d->over)) {
		int head = atomic_load(&d->head);

		k = head + t_rand_below(rng, WIN_READ_MAX);
		while (k < d->n && d->acted[k])
			k++;
		if (k < d->n && k < head + WIN_READ_MAX)
			duel_op(d, k);
	}
	while (!atomic_load(&d->over)) {
		unsigned int offer = atomic_load(&d->offer);
		__s64 lead;

		if (offer == seen)
			continue;
		seen = offer;
		k = atomic_load(&d->target);
		lead = atomic_load(&d->lead_ns);
		atomic_store(&d->fire, offer);
		if (lead < 0)
			t_busy_wait_ns(t_rand_below(rng, 2 * -lead + 1));
		duel_op(d, k);
		atomic_store(&d->done, offer);
	}
}

/* Timers a round arms from one CPU before it moves to the next. */
#define WIN_ARM_CHUNK	16

/*
 * Arms the round's timers in chunks from each CPU in turn, so from several
 * shards, all on @heap_cpu's heap, so that they
 * fire in the order of their deadlines.  0 or -errno.
 */
int duel_arm(struct duel *d, const int *cpus, int nc, int heap_cpu)
{
	struct qtimer_op ops[WIN_ARM_CHUNK];
	int k, i, b, ret;

	for (k = 0; k < d->n; k += b) {
		b = min_int(d->n - k, WIN_ARM_CHUNK);
		ret = t_pin_self(cpus[(k / WIN_ARM_CHUNK) % nc]);
		if (ret)
			return ret;
		for (i = 0; i < b; i++) {
			ops[i] = t_op(CLOCK_MONOTONIC,
				       QTIMER_F_ABSTIME | QTIMER_F_CPU,
				       d->old_when[k + i], 0,
				       duel_cookie(d, k + i));
			ops[i].opcode = QTIMER_OP_ARM;
			ops[i].cpu = heap_cpu;
		}
		ret = t_submit(d->fd, ops, b, 0, NULL);
		if (ret != b)
			return ret < 0 ? ret : -EIO;
		for (i = 0; i < b; i++) {
			if (ops[i].result)
				return ops[i].result;
			d->ids[k + i] = ops[i].id;
		}
	}
	return 0;
}

/* Records taken of the new schedules MODIFY gave. */
static int duel_new_taken(const struct duel *d)
{
	int i, have = 0;

	for (i = 0; i < d->nr_log; i++)
		have += !duel_old(d, &d->log[i].rec,
				  duel_timer(d, d->log[i].rec.cookie));
	return have;
}

/*
 * After the race: the records of the new schedules MODIFY gave, then
 * anything else that comes within a while (nothing should).  With a ring,
 * poll() reaps what the reader consumed, so that the file's count of
 * timers is up to date.
 */
void duel_drain(struct duel *d)
{
	__s64 deadline = t_now(CLOCK_MONOTONIC) + QT_ARRIVE_MS * NSEC_PER_MSEC;
	int want = 0, k;

	for (k = 0; d->modify && k < d->n; k++)
		want += d->acted[k] && d->res[k] >= 0;
	while (duel_new_taken(d) < want && t_now(CLOCK_MONOTONIC) < deadline) {
		int got = duel_take(d, WIN_READ_MAX);

		if (got < 0)
			break;
		if (!got)
			t_wait_readable(d->fd, 20);
	}
	t_wait_readable(d->fd, 50);
	while (duel_take(d, WIN_READ_MAX) > 0)
		;
	t_revents(d->fd);
}

/*
 * Each timer went to exactly one side: a timer the op found gone (-ENOENT)
 * had its record taken once; one whose record or expiry it prevented
 * (QUEUED, ARMED) never had it taken, and after a MODIFY fired once more,
 * at the new time; one the op never went for was taken once.  No record
 * is early, of another round, or of a schedule the timer never had.
 * Returns the number of wrongs, the first few shown.
 */
int duel_verdict(struct duel *d)
{
	unsigned char old_seen[WIN_MAX] = { 0 }, new_seen[WIN_MAX] = { 0 };
	int i, k, wrong = d->lost_log + d->take_errors + d->timed_out;

	for (i = 0; i < d->nr_log; i++) {
		const struct took *t = &d->log[i];
		bool old, new;

		k = duel_timer(d, t->rec.cookie);
		old = duel_old(d, &t->rec, k);
		new = k >= 0 && d->modify && d->acted[k] && d->res[k] >= 0 &&
		      t->rec.expires_ns == d->new_when[k];
		if ((!old && !new) || t->rec.id != d->ids[k] ||
		    t->rec.count != 1 || LOW(t->rec.flags) != QTIMER_REC_LAST ||
		    t->stamp < t->rec.expires_ns) {
			if (wrong++ < 5)
				t_diag("round %d: record cookie %#llx id %#llx expires %lld (taken at %lld) count %u flags %#x",
					d->round, (unsigned long long)t->rec.cookie,
					(unsigned long long)t->rec.id,
					(long long)t->rec.expires_ns,
					(long long)t->stamp, t->rec.count,
					t->rec.flags);
			continue;
		}
		if (old)
			old_seen[k]++;
		else
			new_seen[k]++;
	}
	for (k = 0; k < d->n; k++) {
		int r = d->res[k];
		bool ok;

		if (!d->acted[k])
			ok = old_seen[k] == 1 && !new_seen[k];
		else if (r == -ENOENT)
			ok = old_seen[k] == 1 && !new_seen[k];
		else if (r == QTIMER_CANCEL_ARMED || r == QTIMER_CANCEL_QUEUED)
			ok = !old_seen[k] && new_seen[k] == d->modify;
		else
			ok = false;
		if (ok)
			continue;
		if (wrong++ < 5)
			t_diag("round %d timer %d: %s %s %d; its record taken %d times, the new schedule's %d",
				d->round, k, d->modify ? "MODIFY" : "CANCEL",
				d->acted[k] ? "returned" : "never ran", r,
				old_seen[k], new_seen[k]);
	}
	return wrong;
}
