// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * CLOCK_REALTIME stepped forward and back, over and over, under many timers
 * (the basic cases are in ../qtimer_clockset_test.c; this is the stress):
 *
 *  - absolute CLOCK_REALTIME timers follow the clock: each fires once, at
 *    its expiry on the clock as it stands, never early: by the time its
 *    record is read the clock must have reached its expiry at some moment
 *    since it was armed (at the read, or just before a step);
 *  - QTIMER_F_CANCEL_ON_SET one-shots still pending at a step end with one
 *    CANCELED|LAST record of count 0 (a timer that cannot have fired before
 *    the step must not fire normally), the others fire normally; tickers
 *    end with one CANCELED|LAST record and nothing after it; timers armed
 *    after the last step are not cancelled by it;
 *  - absolute CLOCK_MONOTONIC and CLOCK_BOOTTIME timers are unaffected:
 *    each fires once, never early and not late by anything like a step.
 *
 * Steps go back 30-60 s and then forward to where the clock should be
 * (plus up to half a second), so a timer that followed one would be tens
 * of seconds off, far beyond any scheduling delay even under TCG; the
 * clock stays within 60 s of the truth and it is put back exactly (CLOCK_REALTIME - CLOCK_MONOTONIC as
 * found) at the end, also when the test fails.  Needs root (CAP_SYS_TIME).
 * The stepping lasts QT_STRESS_SECONDS (default 3).
 */
#define _GNU_SOURCE
#include <pthread.h>

#include "kselftest_harness.h"
#include "helpers.h"

/*
 * Each round of the stepping loop arms ROUND_TIMERS timers and sleeps at
 * least ROUND_MIN_NS before its step: the timer and step tables are sized
 * from the run's length by that (FIXTURE_SETUP).
 */
#define ROUND_TIMERS	(50 + 4 + 50 + 30 + 20)
#define ROUND_MIN_NS	(50 * NSEC_PER_MSEC)
#define AFTER_TIMERS	50
/* A timer due this much after the clock was read before a step was surely
 * still pending when the step happened. */
#define STEP_MARGIN	(50 * NSEC_PER_MSEC)

enum { K_MONO, K_BOOT, K_RT, K_COS1, K_COSP, K_COS_AFTER };

struct ct {
	int kind;
	int clockid;
	__s64 exp;
	__u64 period;
	unsigned int arm_seq;		/* g.seq when armed (even) */
	__u64 id;
	_Atomic int records;
	_Atomic int canceled;
	_Atomic int lastflag;
	_Atomic int bad;
	_Atomic __s64 late;		/* MONO/BOOT: read time - expiry */
	/* REALTIME one-shots: when the record was read */
	__s64 read_real;		/* CLOCK_REALTIME after the read */
	unsigned int read_seq;		/* g.seq after the read */
};

struct step {
	__s64 real_before;		/* CLOCK_REALTIME just before the set */
	__s64 window;			/* at most this long before the set */
	__s64 delta;
	unsigned int seq_after;
};

static struct {
	int fd;
	struct ct *t;
	int secs;			/* QT_STRESS_SECONDS */
	int rounds;			/* most the stepping loop can start */
	int nr, max_timers;
	struct step *steps;
	_Atomic int nr_steps;
	int max_steps;
	pthread_t reader;
	bool reading;
	_Atomic unsigned int seq;	/* odd while a step is under way */
	_Atomic int stop;
	_Atomic long early, bad, after_last, records;
	__s64 offset;			/* REALTIME - MONOTONIC at the start */
} g;

static int step_clock(__s64 delta)
{
	struct step *st = &g.steps[g.nr_steps];
	__s64 now, mono;
	int ret;

	mono = t_now(CLOCK_MONOTONIC);
	g.seq++;
	now = t_now(CLOCK_REALTIME);
	st->real_before = now;
	st->delta = delta;
	ret = t_set_realtime(now + delta);
	/* The clock read at most real_before + window as it was set. */
	st->window = t_now(CLOCK_MONOTONIC) - mono;
	g.seq++;
	st->seq_after = g.seq;
	if (g.nr_steps < g.max_steps - 1)
		g.nr_steps++;
	return ret;
}

/* Put CLOCK_REALTIME back to where it was relative to CLOCK_MONOTONIC. */
static int restore_clock(void)
{
	return step_clock(t_now(CLOCK_MONOTONIC) + g.offset -
			  t_now(CLOCK_REALTIME));
}

static void check_record(const struct qtimer_record *r, const __s64 now[3],
			 unsigned int seq)
{
	struct ct *t;
	__s64 n;

	g.records++;
	if (r->cookie >= (__u64)g.nr) {
		g.bad++;
		return;
	}
	t = &g.t[r->cookie];
	n = now[t->clockid == CLOCK_MONOTONIC ? 0 : t->clockid == CLOCK_BOOTTIME ? 1 : 2];
	t->records++;
	switch (t->kind) {
	case K_MONO:
	case K_BOOT:
	case K_RT:
	case K_COS1:
	case K_COS_AFTER:
		/*
		 * Cancelled: count 0, or 1 if it had fired and was not read
		 * yet when the clock was set (its record became the
		 * cancellation, as timerfd's read turns ECANCELED then).
		 */
		if (r->flags == (QTIMER_REC_LAST | QTIMER_REC_CANCELED) &&
		    (t->kind == K_COS1 || t->kind == K_COS_AFTER)) {
			if (r->count > 1)
				t->bad++;
			t->canceled = 1;
			break;
		}
		if (r->flags != QTIMER_REC_LAST || r->count != 1 ||
		    r->expires_ns != t->exp) {
			t->bad++;
			t_diag("cookie %llu kind %d: flags %#x count %u expires %lld want %lld",
				(unsigned long long)r->cookie, t->kind, r->flags,
				r->count, (long long)r->expires_ns, (long long)t->exp);
			break;
		}
		if (t->kind != K_MONO && t->kind != K_BOOT) {
			/* Checked against the step log once it is complete. */
			t->read_real = n;
			t->read_seq = seq;
			break;
		}
		if (n < r->expires_ns) {
			g.early++;
			t_diag("early: cookie %llu kind %d expires %lld read %lld",
				(unsigned long long)r->cookie, t->kind,
				(long long)r->expires_ns, (long long)n);
		}
		t->late = n - r->expires_ns;
		break;
	case K_COSP:
		if (t->lastflag) {
			t->bad++;	/* anything after the LAST record */
			break;
		}
		if (r->flags == (QTIMER_REC_LAST | QTIMER_REC_CANCELED)) {
			t->lastflag = 1;
			break;
		}
		if (r->flags || !r->count ||
		    (r->expires_ns - t->exp) % (__s64)t->period)
			t->bad++;
		break;
	}
}

static void *reader_fn(void *arg)
{
	static struct qtimer_record recs[4096];

	while (!g.stop) {
		unsigned int seq;
		__s64 now[3];
		int n, i;

		if (t_wait_readable(g.fd, 20) != 1)
			continue;
		n = t_read(g.fd, recs, 4096);
		now[0] = t_now(CLOCK_MONOTONIC);
		now[1] = t_now(CLOCK_BOOTTIME);
		now[2] = t_now(CLOCK_REALTIME);
		seq = g.seq;
		if (n <= 0) {
			if (n != -EAGAIN)
				g.bad++;
			continue;
		}
		for (i = 0; i < n; i++)
			check_record(&recs[i], now, seq);
	}
	return NULL;
}

/*
 * The most CLOCK_REALTIME can have read between @t's arming and the read of
 * its record.  The expirer decided it was due at some moment in between;
 * the clock then read at most this (it only goes forward between steps, and
 * a step back leaves its highest reading just before the set), so a record
 * whose expiry is past it was fired early.  Comparing with the read time
 * alone would blame a record popped just before a step back and read after.
 */
static __s64 highest_reading(const struct ct *t)
{
	__s64 high = t->read_real;
	int k;

	for (k = 0; k < g.nr_steps; k++) {
		const struct step *st = &g.steps[k];

		if (st->seq_after > t->arm_seq && st->seq_after - 1 <= t->read_seq &&
		    st->real_before + st->window > high)
			high = st->real_before + st->window;
	}
	return high;
}

static int arm_batch(struct t_rng *rng, int kind, int count)
{
	struct qtimer_op ops[64];
	int i, ret, first = g.nr;

	if (g.nr + count > g.max_timers || count > 64)
		return -ENOSPC;
	for (i = 0; i < count; i++) {
		struct ct *t = &g.t[first + i];
		__u32 flags = QTIMER_F_ABSTIME;

		t->kind = kind;
		t->clockid = kind == K_MONO ? CLOCK_MONOTONIC :
			     kind == K_BOOT ? CLOCK_BOOTTIME : CLOCK_REALTIME;
		t->exp = t_now(t->clockid) + t_rand_below(rng, 400 * NSEC_PER_MSEC);
		t->period = 0;
		if (kind == K_COSP) {
			t->period = 20 * NSEC_PER_MSEC;
			t->exp = t_now(t->clockid) + t_rand_below(rng, 50 * NSEC_PER_MSEC);
		}
		if (kind == K_COS_AFTER)
			t->exp = t_now(t->clockid) + 100 * NSEC_PER_MSEC +
				 t_rand_below(rng, 200 * NSEC_PER_MSEC);
		if (kind == K_COS1 || kind == K_COSP || kind == K_COS_AFTER)
			flags |= QTIMER_F_CANCEL_ON_SET;
		t->arm_seq = g.seq;
		ops[i] = t_op(t->clockid, flags, t->exp, t->period, first + i);
		ops[i].opcode = QTIMER_OP_ARM;
	}
	g.nr += count;
	ret = t_submit(g.fd, ops, count, 0, NULL);
	if (ret != count)
		return ret < 0 ? ret : -EIO;
	for (i = 0; i < count; i++) {
		if (ops[i].result)
			return ops[i].result;
		g.t[first + i].id = ops[i].id;
	}
	return 0;
}

FIXTURE(clk)
{
	bool ok;
};

FIXTURE_SETUP(clk)
{
	struct timespec ts;

	memset(&g, 0, sizeof(g));
	g.offset = t_now(CLOCK_REALTIME) - t_now(CLOCK_MONOTONIC);
	/* Setting the clock to what it is tells whether we may. */
	clock_gettime(CLOCK_REALTIME, &ts);
	self->ok = !clock_settime(CLOCK_REALTIME, &ts);
	g.offset = t_now(CLOCK_REALTIME) - t_now(CLOCK_MONOTONIC);
	g.secs = t_stress_seconds(3);
	/* One round more than the loop can start, and restore_clock()'s step. */
	g.rounds = (int)((__s64)g.secs * NSEC_PER_SEC / ROUND_MIN_NS) + 2;
	g.max_steps = g.rounds + 1;
	g.steps = calloc(g.max_steps, sizeof(*g.steps));
	ASSERT_NE(NULL, g.steps);
}

/* Stop the reader thread, if it runs, and wait for it. */
static void stop_reader(void)
{
	if (!g.reading)
		return;
	g.stop = 1;
	pthread_join(g.reader, NULL);
	g.reading = false;
}

FIXTURE_TEARDOWN(clk)
{
	/* A failed assertion comes here with the reader still running. */
	stop_reader();
	if (self->ok)
		EXPECT_EQ(0, restore_clock());
	if (g.t)
		munmap(g.t, g.max_timers * sizeof(*g.t));
	free(g.steps);
}

TEST_F_TIMEOUT(clk, steps_under_load, 3700)
{
	int secs = g.secs, i, k;
	uint64_t seed = t_tunable("QT_SEED", 0) ?: (uint64_t)t_now(CLOCK_MONOTONIC);
	__s64 end, deadline, bound, cum = 0, worst_late = 0;
	long missing = 0, bad = 0, missed_cancel = 0, stray_cancel = 0;
	long across = 0;
	struct t_rng rng;

	if (!self->ok)
		SKIP(return, "needs CAP_SYS_TIME");
	/* Backward steps are >= 30 s: a timer that followed one would be. */
	bound = (t_fast_machine() ? 2 : 20) * NSEC_PER_SEC;
	t_rng_seed(&rng, seed);
	TH_LOG("%d s of steps, seed %llu (QT_SEED)", secs, (unsigned long long)seed);
	g.max_timers = g.rounds * ROUND_TIMERS + AFTER_TIMERS;
	g.t = mmap(NULL, g.max_timers * sizeof(*g.t), PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, g.t);
	g.fd = t_open(O_NONBLOCK);
	ASSERT_LE(0, g.fd);
	ASSERT_EQ(0, pthread_create(&g.reader, NULL, reader_fn, NULL));
	g.reading = true;

	end = t_now(CLOCK_MONOTONIC) + (__s64)secs * NSEC_PER_SEC;
	while (t_now(CLOCK_MONOTONIC) < end) {
		__s64 delta;

		ASSERT_EQ(0, arm_batch(&rng, K_COS1, 50));
		ASSERT_EQ(0, arm_batch(&rng, K_COSP, 4));
		ASSERT_EQ(0, arm_batch(&rng, K_RT, 50));
		ASSERT_EQ(0, arm_batch(&rng, K_MONO, 30));
		ASSERT_EQ(0, arm_batch(&rng, K_BOOT, 20));
		t_sleep_ns(50 * NSEC_PER_MSEC + t_rand_below(&rng, 100 * NSEC_PER_MSEC));
		if (cum < 0)
			delta = -cum + t_rand_below(&rng, 500 * NSEC_PER_MSEC);
		else
			delta = -(30 * NSEC_PER_SEC + t_rand_below(&rng, 30 * NSEC_PER_SEC));
		cum += delta;
		ASSERT_EQ(0, step_clock(delta));
	}
	ASSERT_EQ(0, restore_clock());
	/* After the last step: cancel-on-set timers it must not touch. */
	ASSERT_EQ(0, arm_batch(&rng, K_COS_AFTER, AFTER_TIMERS));

	/* The clock is back: every realtime timer is due within ~1 s. */
	deadline = t_now(CLOCK_MONOTONIC) + 20 * NSEC_PER_SEC;
	do {
		t_sleep_ms(100);
		missing = 0;
		for (i = 0; i < g.nr; i++) {
			struct ct *t = &g.t[i];

			if (t->kind == K_COSP ? !t->lastflag : !t->records)
				missing++;
		}
	} while (missing && t_now(CLOCK_MONOTONIC) < deadline);
	t_sleep_ms(100);
	stop_reader();

	for (i = 0; i < g.nr; i++) {
		struct ct *t = &g.t[i];

		bad += t->bad;
		if (t->kind != K_COSP && t->records > 1) {
			bad++;
			t_diag("cookie %d kind %d: %d records", i, t->kind,
				(int)t->records);
		}
		if ((t->kind == K_MONO || t->kind == K_BOOT) && t->late > worst_late)
			worst_late = t->late;
		if (t->read_real) {
			__s64 high = highest_reading(t);

			if (high > t->read_real)
				across++;
			if (high < t->exp) {
				g.early++;
				t_diag("early: cookie %d kind %d expires %lld; the clock read at most %lld before its record was read",
					i, t->kind, (long long)t->exp, (long long)high);
			}
		}
		if (t->kind == K_COS_AFTER && t->canceled)
			stray_cancel++;
		if (t->kind == K_COS1 && t->records == 1 && !t->canceled) {
			/* The first step after it was armed. */
			for (k = 0; k < g.nr_steps; k++)
				if (g.steps[k].seq_after > t->arm_seq)
					break;
			if (k < g.nr_steps &&
			    t->exp > g.steps[k].real_before + STEP_MARGIN) {
				missed_cancel++;
				t_diag("cookie %d due %lld fired normally; step %d at %lld by %+lld ns came first",
					i, (long long)t->exp, k,
					(long long)g.steps[k].real_before,
					(long long)g.steps[k].delta);
			}
		}
	}
	TH_LOG("%d timers, %d steps, %ld records (%ld realtime ones read across a step), worst monotonic/boottime lateness %.3f s",
	       g.nr, (int)g.nr_steps, (long)g.records, across,
	       (double)worst_late / NSEC_PER_SEC);
	EXPECT_EQ(0, missing);
	EXPECT_EQ(0, bad);
	EXPECT_EQ(0, g.bad);
	EXPECT_EQ(0, g.early);
	EXPECT_GT(bound, worst_late);
	EXPECT_EQ(0, missed_cancel)
		TH_LOG("cancel-on-set timers pending at a step fired normally");
	EXPECT_EQ(0, stray_cancel)
		TH_LOG("cancel-on-set timers armed after the last step were cancelled by it");
	EXPECT_EQ(0, t_nothing_pending(g.fd));
	close(g.fd);
}

/*
 * The focused case of the stress above: cancel-on-set timers still pending
 * when the clock jumps forward past their expiry.  Pending at the set, so
 * they are cancelled (CANCELED|LAST, count 0), as timerfd reports
 * ECANCELED in this case, rather than fired by the jump.  The timers sit on
 * CPU 1 and the clock is set from CPU 0, whose clock_was_set() makes CPU 1
 * expire them at once; five rounds.
 */
TEST_F_TIMEOUT(clk, forward_step_past_pending_cancel_on_set, 300)
{
	enum { N = 64, ROUNDS = 5 };
	struct qtimer_record recs[N];
	int round, i, n, normal = 0;

	int cpu = t_nr_cpus() > 1 && t_cpu_online(1) ? 1 : 0;

	if (!self->ok)
		SKIP(return, "needs CAP_SYS_TIME");
	ASSERT_EQ(0, t_pin_self(0));
	g.fd = t_open(O_NONBLOCK);
	ASSERT_LE(0, g.fd);
	for (round = 0; round < ROUNDS; round++) {
		__s64 now = t_now(CLOCK_REALTIME);

		for (i = 0; i < N; i++)
			ASSERT_EQ(0, t_arm_cpu(g.fd, CLOCK_REALTIME,
						QTIMER_F_ABSTIME | QTIMER_F_CANCEL_ON_SET,
						now + 500 * NSEC_PER_MSEC + i * NSEC_PER_MSEC,
						0, i, cpu, NULL));
		/* Well before any of them is due: */
		ASSERT_GT(now + 400 * NSEC_PER_MSEC, t_now(CLOCK_REALTIME));
		ASSERT_EQ(0, step_clock(5 * NSEC_PER_SEC));
		n = t_collect(g.fd, recs, N, QT_ARRIVE_MS);
		ASSERT_EQ(N, n);
		for (i = 0; i < n; i++) {
			if (recs[i].flags == (QTIMER_REC_LAST | QTIMER_REC_CANCELED)) {
				EXPECT_EQ(0, recs[i].count);
				continue;
			}
			EXPECT_EQ(QTIMER_REC_LAST, recs[i].flags);
			normal++;
		}
		ASSERT_EQ(0, restore_clock());
		/* The restoring step has nothing left to cancel. */
		EXPECT_EQ(0, t_wait_readable(g.fd, 100));
	}
	EXPECT_EQ(0, normal) TH_LOG("%d of %d pending cancel-on-set timers fired normally after the jump",
				    normal, N * ROUNDS);
	close(g.fd);
}

/*
 * The clock set back while the hrtimer core expires a base.  The core runs
 * expired soft hrtimers against one reading of the clock taken before it
 * calls them; a run that then read a stepped-back clock found nothing due,
 * re-armed its hrtimer at the deadline that had just expired, and was
 * called again at once, over and over until the clock caught up: a CPU
 * stuck in the timer softirq (ktimers on PREEMPT_RT) for as long as the
 * step.  The window is widest for the last of several hrtimers expiring
 * together, as it lasts while the others' runs deliver.  So the realtime
 * heaps of every CPU get clumps of timers due at the same moments, each
 * clump delivered to many files, all armed from one CPU, where their
 * hrtimers then live (they are pinned where they were last programmed).
 * CPU 0 steps the clock back in the middle of each attempt's clumps and
 * holds it there, and the other CPU must have been mostly idle meanwhile
 * (its busy time in /proc/stat), not spinning.  Without the fix 5 and 9 of
 * 16 attempts caught it on 6.1 and 6.12.  Every timer must then still fire,
 * once.
 *
 * A debug kernel arms a hundred times slower under TCG: 128 files
 * (327680 timers) took longer than every attempt's lead there, so no
 * attempt ran and the test only checked that the timers fired, after
 * 20-50 s of arming.  There it arms SB_FILES_DEBUG files, with a longer
 * lead; its callbacks are as much slower, so a clump still lasts while
 * the step comes.  At least one attempt must run.
 */
#define SB_FILES	128
#define SB_FILES_DEBUG	8
#define SB_LEAD_NS	(3 * NSEC_PER_SEC)
#define SB_LEAD_DEBUG_NS (5 * NSEC_PER_SEC)
#define SB_CLUMP_NS	(400 * NSEC_PER_USEC)
#define SB_CLUMPS	40		/* 16 ms of clumps an attempt */
#define SB_HEAPS	4
#define SB_ATTEMPTS	16
#define SB_HOLD_MS	200
#define SB_PERIOD_NS	(350 * NSEC_PER_MSEC)	/* between attempts */

TEST_F_TIMEOUT(clk, step_back_during_expiry, 300)
{
	static struct qtimer_record recs[SB_ATTEMPTS * SB_HEAPS * SB_CLUMPS];
	struct qtimer_op ops[SB_CLUMPS];
	int fds[SB_FILES], heaps[SB_HEAPS], nr_heaps = 0, host = -1;
	int attempt, first, h, f, k, n, stuck = 0;
	int nr_files = t_debug_kernel() ? SB_FILES_DEBUG : SB_FILES;
	long armed = 0, got = 0;
	__s64 t0, wait, lead = t_debug_kernel() ? SB_LEAD_DEBUG_NS : SB_LEAD_NS;

	if (!self->ok)
		SKIP(return, "needs CAP_SYS_TIME");
	for (h = 0; h < t_nr_cpus() && nr_heaps < SB_HEAPS; h++) {
		if (!t_cpu_online(h))
			continue;
		heaps[nr_heaps++] = h;
		if (h && host < 0)
			host = h;
	}
	if (host < 0)
		SKIP(return, "needs a second CPU");
	for (f = 0; f < nr_files; f++) {
		fds[f] = t_open(O_NONBLOCK);
		ASSERT_LE(0, fds[f]);
	}

	/* Attempt a's clump j of each heap: one timer in every file. */
	t0 = t_now(CLOCK_REALTIME) + lead;
	ASSERT_EQ(0, t_pin_self(host));
	for (attempt = 0; attempt < SB_ATTEMPTS; attempt++) {
		for (f = 0; f < nr_files; f++) {
			for (h = 0; h < nr_heaps; h++) {
				for (k = 0; k < SB_CLUMPS; k++) {
					ops[k] = t_op(CLOCK_REALTIME,
						       QTIMER_F_ABSTIME | QTIMER_F_CPU,
						       t0 + attempt * SB_PERIOD_NS +
						       k * SB_CLUMP_NS, 0, k);
					ops[k].opcode = QTIMER_OP_ARM;
					ops[k].cpu = heaps[h];
				}
				n = t_submit(fds[f], ops, SB_CLUMPS, 0, NULL);
				ASSERT_EQ(SB_CLUMPS, n);
				for (k = 0; k < SB_CLUMPS; k++)
					ASSERT_EQ(0, ops[k].result);
				armed += n;
			}
		}
	}
	ASSERT_EQ(0, t_pin_self(0));
	/*
	 * On a slow kernel the arming may run into the first attempts: their
	 * CPU is then busy catching up, and they are skipped.
	 */
	first = 0;
	while (first < SB_ATTEMPTS &&
	       t0 + first * SB_PERIOD_NS < t_now(CLOCK_REALTIME) + 100 * NSEC_PER_MSEC)
		first++;
	TH_LOG("%ld timers in %d files armed %.2f s before the first clump: %d of %d attempts left",
	       armed, nr_files,
	       (double)(t0 - t_now(CLOCK_REALTIME)) / NSEC_PER_SEC,
	       SB_ATTEMPTS - first, SB_ATTEMPTS);
	EXPECT_GT(SB_ATTEMPTS, first)
		TH_LOG("arming ran past every attempt: the step back was never tried");

	for (attempt = first; attempt < SB_ATTEMPTS; attempt++) {
		unsigned long long busy0, all0, busy1, all1, busy_ms;

		/* Halfway through the clumps, back by a minute, and hold. */
		wait = t0 + attempt * SB_PERIOD_NS + SB_CLUMPS / 2 * SB_CLUMP_NS -
		       t_now(CLOCK_REALTIME);
		if (wait > 0)
			t_sleep_ns(wait);
		ASSERT_EQ(0, step_clock(-60 * NSEC_PER_SEC));
		ASSERT_EQ(0, t_cpu_ticks(host, &busy0, &all0));
		t_sleep_ms(SB_HOLD_MS);
		ASSERT_EQ(0, t_cpu_ticks(host, &busy1, &all1));
		ASSERT_EQ(0, restore_clock());
		/*
		 * A CPU that spun was busy all along; an idle one shows next
		 * to nothing (0-1 ticks in 200 ms in the runs so far).
		 */
		busy_ms = (busy1 - busy0) * 1000 / sysconf(_SC_CLK_TCK);
		if (busy_ms * 4 >= SB_HOLD_MS * 3) {
			stuck++;
			TH_LOG("attempt %d: CPU %d busy for %llu ms of the %d ms the clock was back (%llu of %llu ticks)",
			       attempt, host, busy_ms, SB_HOLD_MS, busy1 - busy0,
			       all1 - all0);
		}
	}
	EXPECT_EQ(0, stuck);
	/* The rest came due when the clock was put back: all of them fire. */
	for (f = 0; f < nr_files; f++) {
		n = t_collect(fds[f], recs, SB_ATTEMPTS * nr_heaps * SB_CLUMPS,
			       QT_ARRIVE_MS);
		got += n > 0 ? n : 0;
	}
	EXPECT_EQ(armed, got);
	for (f = 0; f < nr_files; f++)
		close(fds[f]);
}

TEST_HARNESS_MAIN
