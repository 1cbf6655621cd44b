// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * Differential conformance with timerfd (issue 17).  Each schedule runs
 * through a timerfd and a qtimer timer side by side, each pair on a file of
 * its own, and the two must agree:
 *
 *  - one-shots, relative and absolute, on CLOCK_REALTIME, CLOCK_MONOTONIC
 *    and CLOCK_BOOTTIME: one delivery each (timerfd's count 1, one record of
 *    count 1 with QTIMER_REC_LAST), at or after the scheduled instant (the
 *    record's expires_ns is the schedule and is not in the reader's future),
 *    late only within seconds;
 *  - tickers: a read after several periods folds them into one record's
 *    count, and timerfd's u64 count read right after it is the same to
 *    within one (a period boundary may fall between the two reads); every
 *    record's expires_ns is the schedule's expiration number "sum of counts
 *    so far" (no expiration lost or counted twice), each read counts exactly
 *    the periods that passed by it, and once both are brought to rest on
 *    the same expiration the sums are equal, exactly;
 *  - CLOCK_REALTIME stepped forward and back: absolute realtime timers
 *    follow wall time, relative ones are intervals that steps do not move,
 *    in both; tickers likewise;
 *  - cancel-on-set: timerfd's read fails with ECANCELED exactly when
 *    qtimer delivers QTIMER_REC_CANCELED | QTIMER_REC_LAST, for the same
 *    steps, and neither reacts for timers without the flag;
 *  - time namespaces, with positive and negative offsets: absolute
 *    monotonic and boottime expiries in the namespace's view, in both.
 *
 * qtimer never delivers before timerfd: at the moment poll() reports a
 * qtimer record, the timerfd armed for the same instant (or, relative,
 * armed just before it) must already be readable, with no tolerance.  That
 * order is only defined when both hrtimers sit on one CPU, so every test
 * pins itself to the CPU it runs on (both then arm there): the hrtimer core
 * runs a CPU's hard timers (timerfd's) before it raises the softirq that
 * runs its soft ones (qtimer's), against one clock reading, and on
 * PREEMPT_RT runs both soft ones in one pass.  Across CPUs, under TCG, the
 * order would be the emulator's scheduling of virtual CPUs, not the
 * kernel's.  And pairs run one at a time (or several for one instant):
 * qtimer's expirer takes whatever is due by its own, later, reading of the
 * clock, so it may deliver a timer due a moment after the one that woke it
 * before the hrtimer core has run timerfd's for that moment.  Lateness is
 * only bounded generously (seconds).
 *
 * The clock steps need CAP_SYS_TIME and put the clock back in their
 * teardown; the namespace tests need CONFIG_TIME_NS.  Each skips without.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <sys/timerfd.h>

#include "kselftest_harness.h"
#include "helpers.h"

#ifndef TFD_TIMER_CANCEL_ON_SET
#define TFD_TIMER_CANCEL_ON_SET	(1 << 1)
#endif
#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME		0x00000080
#endif

/* How long to wait for a delivery, and how late one may be (seconds). */
#define WAIT_MS		(2 * QT_ARRIVE_MS)
#define LATE_NS		(5 * NSEC_PER_SEC)
#define MS		NSEC_PER_MSEC

/*
 * The pair checks run in the test process and in children forked into time
 * namespaces, where the harness's EXPECT/ASSERT would be lost: a failed
 * check prints one diagnostic and makes its function return -1, and the
 * test asserts that the function returned 0.
 */
#define CHK(cond, fmt, ...) do {					\
	if (!(cond)) {							\
		fprintf(stderr, "# %s:%d: %s: " fmt "\n", __func__,	\
			__LINE__, #cond, ##__VA_ARGS__);		\
		return -1;						\
	}								\
} while (0)

static struct timespec ns_to_ts(__s64 ns)
{
	struct timespec ts = {
		.tv_sec = ns / NSEC_PER_SEC, .tv_nsec = ns % NSEC_PER_SEC,
	};

	return ts;
}

static __s64 ts_to_ns(const struct timespec *ts)
{
	return ts->tv_sec * NSEC_PER_SEC + ts->tv_nsec;
}

static __s64 max_ns(__s64 a, __s64 b)
{
	return a > b ? a : b;
}

/* poll() reports EPOLLIN on @fd right now. */
static bool readable(int fd)
{
	return qt_wait_readable(fd, 0) > 0;
}

static int pin_here(void)
{
	int cpu = sched_getcpu();

	return cpu < 0 ? -errno : qt_pin_self(cpu);
}

/* One schedule on a timerfd and a qtimer timer, each on a file of its own. */
struct pair {
	const char *name;
	int clockid;		/* the clock both were armed on */
	int run_clock;		/* the one the schedule runs on (see below) */
	bool abs, rel_real;
	int tfd, qfd;
	__u64 id;
	__s64 value, period;
	/*
	 * The first expiry on run_clock: timerfd's at or after t_lo, qtimer's
	 * within [q_lo, q_hi] (one instant when absolute).  A relative
	 * CLOCK_REALTIME schedule is an interval on CLOCK_MONOTONIC.
	 */
	__s64 t_lo, t_hi, q_lo, q_hi;
	__s64 arming, armed;	/* run_clock before and after arming both */
	/*
	 * The highest run_clock reading so far: a step back can leave a
	 * delivery made before it looking early by the clock read after it.
	 */
	__s64 high;
	/* One-shots: what each delivered, and run_clock after the read. */
	__u64 t_count;
	struct qtimer_record rec;
	__s64 t_stamp, q_stamp, q_wall;
	/* Tickers. */
	__u64 sum_t, sum_q, max_count;
	int reads, folded, t_ahead, t_behind;
};

static __s64 run_now(struct pair *p)
{
	__s64 now = qt_now(p->run_clock);

	p->high = max_ns(p->high, now);
	return now;
}

static void close_pair(struct pair *p)
{
	if (p->tfd >= 0)
		close(p->tfd);
	if (p->qfd >= 0)
		close(p->qfd);
	p->tfd = p->qfd = -1;
}

/*
 * Arms @value (absolute, or relative to now; not 0, which disarms a
 * timerfd) with @period on both.  The timerfd first: for a relative
 * schedule qtimer's instant is then the later one, never the earlier.
 */
static int arm_pair(struct pair *p, const char *name, int clockid, bool abs,
		    __s64 value, __s64 period, bool cancel_on_set)
{
	struct itimerspec its = {
		.it_value = ns_to_ts(value), .it_interval = ns_to_ts(period),
	};
	int tflags = (abs ? TFD_TIMER_ABSTIME : 0) |
		     (cancel_on_set ? TFD_TIMER_CANCEL_ON_SET : 0);
	__u32 qflags = (abs ? QTIMER_F_ABSTIME : 0) |
		       (cancel_on_set ? QTIMER_F_CANCEL_ON_SET : 0);
	__s64 t0, t1, t2;
	int ret;

	memset(p, 0, sizeof(*p));
	p->name = name;
	p->clockid = clockid;
	p->abs = abs;
	p->rel_real = clockid == CLOCK_REALTIME && !abs;
	p->run_clock = p->rel_real ? CLOCK_MONOTONIC : clockid;
	p->value = value;
	p->period = period;
	p->tfd = timerfd_create(clockid, TFD_NONBLOCK | TFD_CLOEXEC);
	p->qfd = qt_open(O_NONBLOCK);
	CHK(p->tfd >= 0, "%s: timerfd_create: %s", name, strerror(errno));
	CHK(p->qfd >= 0, "%s: open: %s", name, strerror(-p->qfd));
	t0 = qt_now(p->run_clock);
	ret = timerfd_settime(p->tfd, tflags, &its, NULL);
	CHK(!ret, "%s: timerfd_settime: %s", name, strerror(errno));
	t1 = qt_now(p->run_clock);
	ret = qt_arm(p->qfd, clockid, qflags, value, period, 0xc0f, &p->id);
	t2 = qt_now(p->run_clock);
	CHK(!ret, "%s: ARM: %s", name, strerror(-ret));
	if (abs) {
		p->t_lo = p->t_hi = p->q_lo = p->q_hi = value;
	} else {
		p->t_lo = t0 + value;
		p->t_hi = p->q_lo = t1 + value;
		p->q_hi = t2 + value;
	}
	p->arming = t0;
	p->high = p->armed = t2;
	return 0;
}

/*
 * Waits for both deliveries of a one-shot pair, and stamps each with
 * run_clock right after its read.  When poll() reports qtimer's record,
 * the timerfd must be readable already: qtimer never fires first.
 */
static int collect_one_shot(struct pair *p)
{
	__s64 deadline = qt_now(CLOCK_MONOTONIC) + WAIT_MS * MS;
	bool t_done = false, q_done = false;

	while (!t_done || !q_done) {
		struct pollfd pfd[2] = {
			{ .fd = t_done ? -1 : p->tfd, .events = POLLIN },
			{ .fd = q_done ? -1 : p->qfd, .events = POLLIN },
		};
		__s64 left = deadline - qt_now(CLOCK_MONOTONIC);
		__u64 ticks;
		ssize_t n;

		CHK(left > 0, "%s: timerfd %s, qtimer %s after %d ms", p->name,
		    t_done ? "fired" : "silent", q_done ? "fired" : "silent",
		    WAIT_MS);
		CHK(poll(pfd, 2, left / MS + 1) >= 0, "%s", strerror(errno));
		if (pfd[1].revents & POLLIN) {
			CHK(t_done || readable(p->tfd),
			    "%s: qtimer delivered while timerfd had not fired",
			    p->name);
			n = qt_read(p->qfd, &p->rec, 1);
			p->q_stamp = qt_now(p->run_clock);
			p->q_wall = qt_now(CLOCK_REALTIME);
			CHK(n == 1, "%s: read: %zd", p->name, n);
			q_done = true;
		}
		if (t_done)
			continue;
		n = read(p->tfd, &ticks, sizeof(ticks));
		if (n == sizeof(ticks)) {
			p->t_stamp = qt_now(p->run_clock);
			p->t_count = ticks;
			t_done = true;
		} else {
			CHK(n < 0 && errno == EAGAIN, "%s: timerfd read: %zd %s",
			    p->name, n, strerror(errno));
		}
	}
	return 0;
}

static int check_one_shot(struct pair *p)
{
	const struct qtimer_record *r = &p->rec;

	/* The same deliveries and counts. */
	CHK(p->t_count == 1, "%s: timerfd count %llu", p->name,
	    (unsigned long long)p->t_count);
	CHK(r->id == p->id && r->cookie == 0xc0f && r->count == 1 &&
	    r->flags == QTIMER_REC_LAST, "%s: record id %#llx count %u flags %#x",
	    p->name, (unsigned long long)r->id, r->count, r->flags);
	/*
	 * The record carries the schedule, not in the reader's future.  (An
	 * expiry already past when armed may say when it was found due: in a
	 * namespace, one before the host's boot says the namespace's view of
	 * the host's time 0.)
	 */
	if (!p->rel_real)
		CHK(r->expires_ns >= p->q_lo &&
		    (r->expires_ns <= p->q_hi || p->q_hi < p->arming),
		    "%s: expires %lld, armed for [%lld, %lld]", p->name,
		    (long long)r->expires_ns, (long long)p->q_lo,
		    (long long)p->q_hi);
	CHK(r->expires_ns <= max_ns(p->rel_real ? p->q_wall : p->q_stamp, p->high),
	    "%s: expires %lld, read at %lld", p->name,
	    (long long)r->expires_ns, (long long)p->q_stamp);
	/* Never early, either (timerfd's is the method's own check). */
	CHK(max_ns(p->q_stamp, p->high) >= p->q_lo,
	    "%s: qtimer early by %lld ns", p->name,
	    (long long)(p->q_lo - p->q_stamp));
	CHK(max_ns(p->t_stamp, p->high) >= p->t_lo,
	    "%s: timerfd early by %lld ns", p->name,
	    (long long)(p->t_lo - p->t_stamp));
	/* Late only within generous bounds, also against timerfd. */
	CHK(p->q_stamp - max_ns(p->q_hi, p->armed) < LATE_NS,
	    "%s: qtimer %lld ms late", p->name,
	    (long long)(p->q_stamp - max_ns(p->q_hi, p->armed)) / MS);
	CHK(p->q_stamp - p->t_stamp < LATE_NS, "%s: qtimer %lld ms after timerfd",
	    p->name, (long long)(p->q_stamp - p->t_stamp) / MS);
	/* And nothing else. */
	CHK(!readable(p->tfd), "%s: timerfd readable again", p->name);
	CHK(!qt_nothing_pending(p->qfd), "%s: a second record", p->name);
	/* After the schedule, or after the arming if that was later. */
	fprintf(stderr, "# %-36s timerfd %+8.3f ms, qtimer %+8.3f ms\n",
		p->name, (double)(p->t_stamp - max_ns(p->t_lo, p->armed)) / MS,
		(double)(p->q_stamp - max_ns(p->q_lo, p->armed)) / MS);
	return 0;
}

static int one_shot(const char *name, int clockid, bool abs, __s64 value)
{
	struct pair p;
	int ret;

	ret = arm_pair(&p, name, clockid, abs, value, 0, false);
	if (!ret)
		ret = collect_one_shot(&p);
	if (!ret)
		ret = check_one_shot(&p);
	close_pair(&p);
	return ret;
}

/* Expirations of a schedule from @first every @period at or before @t. */
static __s64 grid_count(__s64 first, __s64 period, __s64 t)
{
	return t < first ? 0 : (t - first) / period + 1;
}

/* CLOCK_REALTIME - CLOCK_MONOTONIC, to within *err (retried until small). */
static __s64 real_minus_mono(__s64 *err)
{
	__s64 m0, r, m1;
	int i = 0;

	do {
		m0 = qt_now(CLOCK_MONOTONIC);
		r = qt_now(CLOCK_REALTIME);
		m1 = qt_now(CLOCK_MONOTONIC);
	} while (m1 - m0 > MS && ++i < 100);
	*err = m1 - m0;
	return r - m0;
}

/*
 * One read of a ticker pair: waits for qtimer's record, reads it, then
 * timerfd's count at about the same moment.
 */
static int tick_read(struct pair *p)
{
	const __s64 P = p->period;
	struct qtimer_record r;
	__s64 qb, qa, ta, exp, err = 0, first;
	__u64 ticks;
	ssize_t n;

	CHK(qt_wait_readable(p->qfd, WAIT_MS) == 1,
	    "%s: no record for %d ms (sums: timerfd %llu, qtimer %llu)",
	    p->name, WAIT_MS, (unsigned long long)p->sum_t,
	    (unsigned long long)p->sum_q);
	/*
	 * qtimer has delivered expiration number sum_q (from 0): timerfd has
	 * too, so it is readable, or its last read already counted it.
	 */
	CHK(readable(p->tfd) || p->sum_t > p->sum_q,
	    "%s: qtimer delivered expiration %llu before timerfd did",
	    p->name, (unsigned long long)p->sum_q);
	qb = run_now(p);
	n = qt_read(p->qfd, &r, 1);
	qa = run_now(p);
	CHK(n == 1, "%s: read: %zd", p->name, n);
	CHK(r.id == p->id && !r.flags && r.count >= 1,
	    "%s: record id %#llx count %u flags %#x", p->name,
	    (unsigned long long)r.id, r.count, r.flags);
	p->sum_q += r.count;
	p->reads++;
	p->folded += r.count > 1;
	if (r.count > p->max_count)
		p->max_count = r.count;
	exp = r.expires_ns;
	if (p->rel_real) {
		/* In wall time as of the read: back to the monotonic schedule. */
		__s64 off = real_minus_mono(&err);

		CHK(exp <= qt_now(CLOCK_REALTIME), "%s: expires %lld in the future",
		    p->name, (long long)exp);
		exp -= off;
	} else {
		CHK(exp <= p->high, "%s: expires %lld, read at %lld", p->name,
		    (long long)exp, (long long)qa);
	}
	/* Its latest expiration is number sum_q - 1: none lost, none twice. */
	first = exp - (__s64)(p->sum_q - 1) * P;
	CHK(first >= p->q_lo - err && first <= p->q_hi + err,
	    "%s: expires %lld is expiration %lld, but the counts sum to %llu",
	    p->name, (long long)r.expires_ns,
	    (long long)((exp - p->q_lo) / P + 1), (unsigned long long)p->sum_q);
	/* It counted the periods that had passed by the read, none to come. */
	CHK((__s64)p->sum_q >= grid_count(p->q_hi, P, qb),
	    "%s: counted %llu, %lld had passed", p->name,
	    (unsigned long long)p->sum_q, (long long)grid_count(p->q_hi, P, qb));
	CHK((__s64)p->sum_q <= grid_count(p->q_lo, P, p->high),
	    "%s: counted %llu, only %lld had passed", p->name,
	    (unsigned long long)p->sum_q,
	    (long long)grid_count(p->q_lo, P, p->high));

	n = read(p->tfd, &ticks, sizeof(ticks));
	ta = run_now(p);
	if (n == sizeof(ticks)) {
		CHK(ticks >= 1, "%s: timerfd count 0", p->name);
		p->sum_t += ticks;
	} else {
		CHK(n < 0 && errno == EAGAIN, "%s: timerfd read: %zd %s",
		    p->name, n, strerror(errno));
	}
	CHK((__s64)p->sum_t <= grid_count(p->t_lo, P, p->high),
	    "%s: timerfd counted %llu, only %lld had passed", p->name,
	    (unsigned long long)p->sum_t,
	    (long long)grid_count(p->t_lo, P, p->high));
	/*
	 * The same count, give or take the expiration that a period boundary
	 * between the two reads adds to timerfd's (or, when its interrupt for
	 * an expiration qtimer counted by the clock had not come yet, takes).
	 */
	CHK(p->sum_t + 1 >= p->sum_q, "%s: timerfd %llu, qtimer %llu", p->name,
	    (unsigned long long)p->sum_t, (unsigned long long)p->sum_q);
	CHK(p->sum_t <= p->sum_q + 1 || ta - qb >= P,
	    "%s: timerfd %llu, qtimer %llu, reads %lld us apart", p->name,
	    (unsigned long long)p->sum_t, (unsigned long long)p->sum_q,
	    (long long)(ta - qb) / 1000);
	p->t_ahead += p->sum_t > p->sum_q;
	p->t_behind += p->sum_t < p->sum_q;
	return 0;
}

/* Sleeps between reads, in percent of a period: most reads fold several. */
static const int tick_pace[] = { 0, 250, 30, 370, 120, 0, 60, 210 };

static int tick_for(struct pair *p, __s64 window)
{
	__s64 end = qt_now(CLOCK_MONOTONIC) + window;
	int i = 0;

	do {
		if (tick_read(p))
			return -1;
		qt_sleep_ns(p->period * tick_pace[i++ % 8] / 100);
	} while (qt_now(CLOCK_MONOTONIC) < end);
	return 0;
}

static void log_ticker(const struct pair *p)
{
	fprintf(stderr, "# %-36s %d reads, %d folded (up to %llu), sums %llu/%llu, timerfd ahead %d behind %d\n",
		p->name, p->reads, p->folded, (unsigned long long)p->max_count,
		(unsigned long long)p->sum_t, (unsigned long long)p->sum_q,
		p->t_ahead, p->t_behind);
}

/*
 * Brings both to rest on the same expiration: reads on until the sums
 * agree and timerfd has nothing more (its timerfd_gettime() folds a fired
 * expiration into its count, which the read after it takes).  Then the
 * sums must be equal, exactly, and timerfd's next expiry must be the
 * schedule's expiration number sum_t: it counted each one before it once.
 */
static int tick_settle(struct pair *p)
{
	int i;

	for (i = 0; i < 50; i++) {
		struct itimerspec cur;
		__s64 b, a, rem, next;
		__u64 ticks;
		ssize_t n;

		if (p->sum_t == p->sum_q) {
			b = run_now(p);
			CHK(!timerfd_gettime(p->tfd, &cur), "%s", strerror(errno));
			a = run_now(p);
			n = read(p->tfd, &ticks, sizeof(ticks));
			rem = ts_to_ns(&cur.it_value);
			if (n == sizeof(ticks)) {
				p->sum_t += ticks;
			} else if (rem > 0) {
				CHK(n < 0 && errno == EAGAIN, "%s", strerror(errno));
				next = p->t_lo + (__s64)p->sum_t * p->period;
				CHK(next <= a + rem &&
				    next + (p->t_hi - p->t_lo) >= b + rem,
				    "%s: timerfd's next expiry is %lld, expiration %llu is %lld",
				    p->name, (long long)(b + rem),
				    (unsigned long long)p->sum_t, (long long)next);
				log_ticker(p);
				return 0;
			}
		}
		if (tick_read(p))
			return -1;
	}
	CHK(p->sum_t == p->sum_q, "%s: timerfd %llu, qtimer %llu after 50 reads",
	    p->name, (unsigned long long)p->sum_t, (unsigned long long)p->sum_q);
	fprintf(stderr, "# %s: timerfd never came to rest\n", p->name);
	return -1;
}

static int ticker(const char *name, int clockid, bool abs, __s64 value,
		  __s64 period, __s64 window)
{
	struct pair p;
	int ret;

	ret = arm_pair(&p, name, clockid, abs, value, period, false);
	if (!ret)
		ret = tick_for(&p, window);
	if (!ret)
		ret = tick_settle(&p);
	if (!ret && !p.folded) {
		fprintf(stderr, "# %s: no read folded several periods\n", name);
		ret = -1;
	}
	close_pair(&p);
	return ret;
}

/* --- one-shots, on each clock, relative and absolute --------------------- */

FIXTURE(oneshot) {
};

FIXTURE_VARIANT(oneshot) {
	const char *name;
	int clockid;
	bool abs;
};

FIXTURE_VARIANT_ADD(oneshot, realtime_relative) {
	"realtime relative", CLOCK_REALTIME, false };
FIXTURE_VARIANT_ADD(oneshot, realtime_absolute) {
	"realtime absolute", CLOCK_REALTIME, true };
FIXTURE_VARIANT_ADD(oneshot, monotonic_relative) {
	"monotonic relative", CLOCK_MONOTONIC, false };
FIXTURE_VARIANT_ADD(oneshot, monotonic_absolute) {
	"monotonic absolute", CLOCK_MONOTONIC, true };
FIXTURE_VARIANT_ADD(oneshot, boottime_relative) {
	"boottime relative", CLOCK_BOOTTIME, false };
FIXTURE_VARIANT_ADD(oneshot, boottime_absolute) {
	"boottime absolute", CLOCK_BOOTTIME, true };

FIXTURE_SETUP(oneshot)
{
	ASSERT_EQ(0, pin_here());
}

FIXTURE_TEARDOWN(oneshot)
{
}

/* Due at once (1 ns; absolute: long past, or 1 s ago), soon, later. */
TEST_F(oneshot, same_delivery_as_timerfd)
{
	static const __s64 after[] = { 1, 20 * MS, 150 * MS };
	static const char *const what[] = { "now + 1 ns", "now + 20 ms",
					    "now + 150 ms" };
	int c = variant->clockid;
	unsigned int i;
	char name[64];

	for (i = 0; i < 3; i++) {
		__s64 v = variant->abs ? qt_now(c) + after[i] : after[i];

		snprintf(name, sizeof(name), "%s %s", variant->name, what[i]);
		ASSERT_EQ(0, one_shot(name, c, variant->abs, v));
	}
	if (variant->abs) {
		snprintf(name, sizeof(name), "%s now - 1 s", variant->name);
		ASSERT_EQ(0, one_shot(name, c, true, qt_now(c) - NSEC_PER_SEC));
		snprintf(name, sizeof(name), "%s 1 ns", variant->name);
		ASSERT_EQ(0, one_shot(name, c, true, 1));
	}
}

/* --- tickers ---------------------------------------------------------------- */

FIXTURE(tick) {
};

FIXTURE_VARIANT(tick) {
	const char *name;
	int clockid;
	bool abs;
	int period_ms;
};

FIXTURE_VARIANT_ADD(tick, realtime_relative_100ms) {
	"realtime relative ticker 100 ms", CLOCK_REALTIME, false, 100 };
FIXTURE_VARIANT_ADD(tick, realtime_absolute_50ms) {
	"realtime absolute ticker 50 ms", CLOCK_REALTIME, true, 50 };
FIXTURE_VARIANT_ADD(tick, monotonic_relative_50ms) {
	"monotonic relative ticker 50 ms", CLOCK_MONOTONIC, false, 50 };
FIXTURE_VARIANT_ADD(tick, monotonic_absolute_100ms) {
	"monotonic absolute ticker 100 ms", CLOCK_MONOTONIC, true, 100 };
FIXTURE_VARIANT_ADD(tick, boottime_relative_100ms) {
	"boottime relative ticker 100 ms", CLOCK_BOOTTIME, false, 100 };
FIXTURE_VARIANT_ADD(tick, boottime_absolute_50ms) {
	"boottime absolute ticker 50 ms", CLOCK_BOOTTIME, true, 50 };

FIXTURE_SETUP(tick)
{
	ASSERT_EQ(0, pin_here());
}

FIXTURE_TEARDOWN(tick)
{
}

TEST_F(tick, same_counts_as_timerfd)
{
	__s64 period = variant->period_ms * MS;
	__s64 first = variant->abs ? qt_now(variant->clockid) + period : period;

	ASSERT_EQ(0, ticker(variant->name, variant->clockid, variant->abs, first,
			    period, NSEC_PER_SEC));
}

/* --- CLOCK_REALTIME steps ------------------------------------------------- */

FIXTURE(step) {
	__s64 rt0, mono0;	/* realtime = rt0 + (monotonic - mono0) */
	bool stepped;
};

/*
 * Steps CLOCK_REALTIME by @delta; *@high gets the highest reading the clock
 * can have had before the step.
 */
static int step_realtime(__s64 delta, __s64 *high)
{
	__s64 m0 = qt_now(CLOCK_MONOTONIC), rt = qt_now(CLOCK_REALTIME);
	int ret = qt_set_realtime(rt + delta);

	*high = rt + qt_now(CLOCK_MONOTONIC) - m0;
	return ret;
}

FIXTURE_SETUP(step)
{
	ASSERT_EQ(0, pin_here());
	self->mono0 = qt_now(CLOCK_MONOTONIC);
	self->rt0 = qt_now(CLOCK_REALTIME);
}

FIXTURE_TEARDOWN(step)
{
	if (self->stepped)
		EXPECT_EQ(0, qt_set_realtime(self->rt0 + qt_now(CLOCK_MONOTONIC) -
					  self->mono0));
}

/* Steps the clock; raises p's high-water mark if p runs on wall time. */
#define STEP(p, delta) do {						\
	__s64 __high;							\
	int __r = step_realtime(delta, &__high);			\
									\
	if (__r == -EPERM)						\
		SKIP(return, "cannot set CLOCK_REALTIME (needs CAP_SYS_TIME)"); \
	ASSERT_EQ(0, __r);						\
	self->stepped = true;						\
	if ((p)->run_clock == CLOCK_REALTIME)				\
		(p)->high = max_ns((p)->high, __high);			\
} while (0)

/* Due in 8 s, stepped 7 s forward: both fire about 1 s later. */
TEST_F(step, absolute_realtime_follows_step_forward)
{
	struct pair p;
	__s64 m0;

	ASSERT_EQ(0, arm_pair(&p, "absolute realtime, +7 s step", CLOCK_REALTIME,
			      true, qt_now(CLOCK_REALTIME) + 8 * NSEC_PER_SEC,
			      0, false));
	m0 = qt_now(CLOCK_MONOTONIC);
	STEP(&p, 7 * NSEC_PER_SEC);
	ASSERT_EQ(0, collect_one_shot(&p));
	EXPECT_GT(m0 + 5 * NSEC_PER_SEC, qt_now(CLOCK_MONOTONIC));
	EXPECT_EQ(0, check_one_shot(&p));
	close_pair(&p);
}

/* Due in 300 ms, stepped 1 s back: both wait for the wall clock. */
TEST_F(step, absolute_realtime_follows_step_backward)
{
	struct pair p;

	ASSERT_EQ(0, arm_pair(&p, "absolute realtime, -1 s step", CLOCK_REALTIME,
			      true, qt_now(CLOCK_REALTIME) + 300 * MS, 0, false));
	STEP(&p, -NSEC_PER_SEC);
	ASSERT_EQ(0, collect_one_shot(&p));
	EXPECT_EQ(0, check_one_shot(&p));
	close_pair(&p);
}

/*
 * Relative CLOCK_REALTIME is an interval in both: an hour forward does not
 * make it due, two back do not delay it.
 */
TEST_F(step, relative_realtime_is_an_interval)
{
	struct pair p;
	bool q_ready, t_ready;
	__s64 now;

	ASSERT_EQ(0, arm_pair(&p, "relative realtime, +-1 h steps",
			      CLOCK_REALTIME, false, NSEC_PER_SEC, 0, false));
	STEP(&p, 3600 * NSEC_PER_SEC);
	qt_sleep_ms(300);
	q_ready = readable(p.qfd);
	t_ready = readable(p.tfd);
	now = qt_now(CLOCK_MONOTONIC);
	EXPECT_FALSE(q_ready && now < p.q_lo)
		TH_LOG("qtimer fired %lld ms early after a +1 h step",
		       (long long)(p.q_lo - now) / MS);
	EXPECT_FALSE(t_ready && now < p.t_lo);
	STEP(&p, -7200 * NSEC_PER_SEC);
	ASSERT_EQ(0, collect_one_shot(&p));
	EXPECT_EQ(0, check_one_shot(&p));
	close_pair(&p);
}

/*
 * An absolute realtime ticker, stepped 1 s forward (both count the ten
 * periods it skipped in one read) and 1 s back (both pause for it).
 */
TEST_F(step, absolute_realtime_ticker_across_steps)
{
	const __s64 period = 100 * MS;
	struct pair p;
	__u64 before;

	ASSERT_EQ(0, arm_pair(&p, "absolute realtime ticker, +-1 s",
			      CLOCK_REALTIME, true,
			      qt_now(CLOCK_REALTIME) + period, period, false));
	ASSERT_EQ(0, tick_for(&p, 500 * MS));
	/* Just after a read: a step between two expirations. */
	ASSERT_EQ(0, tick_read(&p));
	before = p.sum_q;
	STEP(&p, NSEC_PER_SEC);
	ASSERT_EQ(0, tick_read(&p));
	EXPECT_LE(before + 10, p.sum_q);
	ASSERT_EQ(0, tick_for(&p, 300 * MS));
	ASSERT_EQ(0, tick_read(&p));
	STEP(&p, -NSEC_PER_SEC);
	ASSERT_EQ(0, tick_for(&p, 1500 * MS));
	ASSERT_EQ(0, tick_settle(&p));
	close_pair(&p);
}

/* A relative realtime ticker counts monotonic periods through +-1 h steps. */
TEST_F(step, relative_realtime_ticker_across_steps)
{
	struct pair p;

	ASSERT_EQ(0, arm_pair(&p, "relative realtime ticker, +-1 h",
			      CLOCK_REALTIME, false, 100 * MS, 100 * MS, false));
	ASSERT_EQ(0, tick_for(&p, 400 * MS));
	STEP(&p, 3600 * NSEC_PER_SEC);
	ASSERT_EQ(0, tick_for(&p, 400 * MS));
	STEP(&p, -7200 * NSEC_PER_SEC);
	ASSERT_EQ(0, tick_for(&p, 400 * MS));
	ASSERT_EQ(0, tick_settle(&p));
	close_pair(&p);
}

/* --- cancel-on-set -------------------------------------------------------- */

/*
 * timerfd learns of a set in clock_settime() itself: its read fails with
 * ECANCELED, once.  Its timer is not disarmed by that (qtimer's is gone:
 * the record is LAST), so when the step made it due it may still fire
 * after the read (this CPU's hrtimers see the new time at their next
 * interrupt): only when nothing is due is the next read checked to be empty.
 * Returns 0 when it does so.
 */
static int timerfd_canceled(const struct pair *p, bool then_empty)
{
	__u64 ticks;
	ssize_t n;

	n = read(p->tfd, &ticks, sizeof(ticks));
	CHK(n < 0 && errno == ECANCELED, "%s: timerfd read %zd (%s), not ECANCELED",
	    p->name, n, n < 0 ? strerror(errno) : "a count");
	n = read(p->tfd, &ticks, sizeof(ticks));
	CHK(!then_empty || (n < 0 && errno == EAGAIN),
	    "%s: timerfd read %zd again", p->name, n);
	return 0;
}

/* qtimer delivers the cancellation from a work item: wait for it. */
static int qtimer_canceled(const struct pair *p, struct qtimer_record *rec)
{
	CHK(qt_collect(p->qfd, rec, 1, WAIT_MS) == 1,
	    "%s: no record %d ms after the set", p->name, WAIT_MS);
	CHK(rec->id == p->id && rec->cookie == 0xc0f &&
	    rec->flags == (QTIMER_REC_CANCELED | QTIMER_REC_LAST),
	    "%s: record id %#llx count %u flags %#x, not CANCELED|LAST",
	    p->name, (unsigned long long)rec->id, rec->count, rec->flags);
	CHK(!qt_nothing_pending(p->qfd), "%s: a record after LAST", p->name);
	CHK(qt_cancel(p->qfd, p->id) == -ENOENT, "%s: still there", p->name);
	return 0;
}

/*
 * Steps forward and back, with a cancel-on-set pair armed before each (far
 * away, so nothing fires): both report each step to the pair armed before
 * it, and a pair armed after a step does not hear of that step.  A pair
 * without the flag, armed through all of them, hears of none.
 */
TEST_F(step, cancel_on_set_same_steps)
{
	static const __s64 steps[] = { NSEC_PER_SEC, -NSEC_PER_SEC,
				       10 * NSEC_PER_SEC, -10 * NSEC_PER_SEC };
	struct qtimer_record rec;
	struct itimerspec cur;
	struct pair plain, cos;
	unsigned int i;

	ASSERT_EQ(0, arm_pair(&plain, "without the flag", CLOCK_REALTIME, true,
			      qt_now(CLOCK_REALTIME) + 7200 * NSEC_PER_SEC, 0,
			      false));
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(0, arm_pair(&cos, "cancel-on-set", CLOCK_REALTIME,
				      true, qt_now(CLOCK_REALTIME) +
				      30 * NSEC_PER_SEC, 0, true));
		/* Not cancelled by the step before it, even a little later. */
		qt_sleep_ms(50);
		EXPECT_FALSE(readable(cos.tfd));
		EXPECT_EQ(0, qt_nothing_pending(cos.qfd));
		STEP(&cos, steps[i]);
		EXPECT_EQ(0, timerfd_canceled(&cos, true)) TH_LOG("step %u", i);
		EXPECT_EQ(0, qtimer_canceled(&cos, &rec)) TH_LOG("step %u", i);
		EXPECT_EQ(0, rec.count);
		close_pair(&cos);
		EXPECT_FALSE(readable(plain.tfd));
	}
	/* The work that cancelled the last pair has run: nothing for plain. */
	qt_sleep_ms(100);
	EXPECT_FALSE(readable(plain.tfd));
	ASSERT_EQ(0, timerfd_gettime(plain.tfd, &cur));
	EXPECT_LT(0, ts_to_ns(&cur.it_value));
	EXPECT_EQ(0, qt_nothing_pending(plain.qfd));
	EXPECT_EQ(QTIMER_CANCEL_ARMED, qt_cancel(plain.qfd, plain.id));
	close_pair(&plain);
}

/*
 * A step that makes the timers due: with the flag, the set is what both
 * report (timerfd ECANCELED, qtimer CANCELED|LAST of count 0), not an
 * expiry; without it, both fire, at the step.
 */
TEST_F(step, cancel_on_set_step_makes_it_due)
{
	struct qtimer_record rec;
	struct pair plain, cos;
	__s64 when = qt_now(CLOCK_REALTIME) + 2 * NSEC_PER_SEC;

	ASSERT_EQ(0, arm_pair(&cos, "cancel-on-set, stepped past", CLOCK_REALTIME,
			      true, when, 0, true));
	ASSERT_EQ(0, arm_pair(&plain, "without the flag, stepped past",
			      CLOCK_REALTIME, true, when, 0, false));
	STEP(&plain, 2500 * MS);
	EXPECT_EQ(0, timerfd_canceled(&cos, false));
	ASSERT_EQ(0, collect_one_shot(&plain));
	EXPECT_EQ(0, check_one_shot(&plain));
	EXPECT_EQ(0, qtimer_canceled(&cos, &rec));
	EXPECT_EQ(0, rec.count);
	close_pair(&cos);
	close_pair(&plain);
}

/*
 * A ticker with expirations pending: timerfd discards them and fails with
 * ECANCELED; qtimer's cancellation record keeps them in its count (the
 * header says so).  Both report the set.  qtimer's is read once its work
 * item has had time to run: a read at once is the next test.
 */
TEST_F(step, cancel_on_set_ticker_with_pending)
{
	const __s64 period = 20 * MS;
	struct qtimer_record rec;
	struct pair cos;

	ASSERT_EQ(0, arm_pair(&cos, "cancel-on-set ticker", CLOCK_REALTIME, true,
			      qt_now(CLOCK_REALTIME) + period, period, true));
	ASSERT_EQ(1, qt_wait_readable(cos.qfd, WAIT_MS));
	EXPECT_TRUE(readable(cos.tfd));
	qt_sleep_ms(100);
	STEP(&cos, -NSEC_PER_SEC);
	EXPECT_EQ(0, timerfd_canceled(&cos, true));
	qt_sleep_ms(200);
	EXPECT_EQ(0, qtimer_canceled(&cos, &rec));
	EXPECT_LE(1, rec.count);
	close_pair(&cos);
}

/*
 * The same, read as soon as clock_settime() returns.  timerfd has applied
 * the set by then (ECANCELED); qtimer must not hand out the expirations it
 * had pending as if the clock had not been set: its record must be the
 * cancellation.  The header allows a plain record only to a read() that
 * was copying it out when the clock was set.  qtimer applies sets from a
 * work item on this CPU, which an ordinary task may or may not let run
 * before it reads; SCHED_FIFO makes the read come first every time.
 */
TEST_F(step, cancel_on_set_ticker_read_at_once)
{
	const __s64 period = 20 * MS;
	struct sched_param sp = { .sched_priority = 10 };
	struct qtimer_record recs[2];
	struct pair cos;
	int n;

	ASSERT_EQ(0, arm_pair(&cos, "cancel-on-set ticker, read at once",
			      CLOCK_REALTIME, true,
			      qt_now(CLOCK_REALTIME) + period, period, true));
	ASSERT_EQ(1, qt_wait_readable(cos.qfd, WAIT_MS));
	EXPECT_TRUE(readable(cos.tfd));
	qt_sleep_ms(100);
	if (sched_setscheduler(0, SCHED_FIFO, &sp))
		SKIP(return, "cannot use SCHED_FIFO: %s", strerror(errno));
	STEP(&cos, -NSEC_PER_SEC);
	EXPECT_EQ(0, timerfd_canceled(&cos, true));
	n = qt_read(cos.qfd, recs, 1);
	sp.sched_priority = 0;
	ASSERT_EQ(0, sched_setscheduler(0, SCHED_OTHER, &sp));
	ASSERT_EQ(1, n);
	/* What follows, for the log. */
	memset(&recs[1], 0, sizeof(recs[1]));
	n = qt_collect(cos.qfd, recs + 1, 1, 500);
	EXPECT_EQ(QTIMER_REC_CANCELED | QTIMER_REC_LAST, recs[0].flags)
		TH_LOG("timerfd: ECANCELED; qtimer: flags %#x count %u, then %d more: flags %#x count %u",
		       recs[0].flags, recs[0].count, n, recs[1].flags,
		       recs[1].count);
	close_pair(&cos);
}

/*
 * A one-shot that fired but was not read when the clock is set: timerfd
 * reports the set (ECANCELED; the expiration is discarded), so qtimer must
 * too.  The header says a cancel-on-set timer "is cancelled when the
 * realtime clock is set" and delivers CANCELED|LAST with "count 0 (or the
 * expirations it had pending)"; a plain record that hides the set is a
 * difference it does not document.
 */
TEST_F(step, cancel_on_set_one_shot_fired_unread)
{
	struct qtimer_record rec;
	struct pair cos;

	ASSERT_EQ(0, arm_pair(&cos, "cancel-on-set, fired, unread",
			      CLOCK_REALTIME, true,
			      qt_now(CLOCK_REALTIME) + 30 * MS, 0, true));
	ASSERT_EQ(1, qt_wait_readable(cos.qfd, WAIT_MS));
	EXPECT_TRUE(readable(cos.tfd));
	STEP(&cos, NSEC_PER_SEC);
	EXPECT_EQ(0, timerfd_canceled(&cos, true));
	qt_sleep_ms(200);	/* not the race of the test above */
	ASSERT_EQ(1, qt_collect(cos.qfd, &rec, 1, WAIT_MS));
	EXPECT_EQ(cos.id, rec.id);
	EXPECT_EQ(QTIMER_REC_CANCELED | QTIMER_REC_LAST, rec.flags)
		TH_LOG("timerfd: ECANCELED; qtimer: flags %#x, count %u",
		       rec.flags, rec.count);
	EXPECT_GE(1, rec.count);
	close_pair(&cos);
}

/* --- time namespaces --------------------------------------------------- */

/* The namespace's offsets are @mono and @boot seconds. */
static int check_offsets(long long mono, long long boot)
{
	FILE *f = fopen("/proc/self/timens_offsets", "re");
	char line[128], name[16];
	long long sec;
	long nsec;
	int seen = 0;

	CHK(f, "%s", strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%15s %lld %ld", name, &sec, &nsec) != 3)
			continue;
		if (!strcmp(name, "monotonic") && sec == mono && !nsec)
			seen |= 1;
		if (!strcmp(name, "boottime") && sec == boot && !nsec)
			seen |= 2;
	}
	fclose(f);
	CHK(seen == 3, "offsets are not %lld/%lld", mono, boot);
	return 0;
}

/*
 * In the namespace: absolute monotonic and boottime one-shots in its view
 * (with negative offsets, 150 ms ahead in its view is long past in the
 * host's: a timer armed in the wrong view fires early), relative ones, an
 * absolute expiry long past in its view but 20 s ahead in the host's
 * (positive offsets; in the wrong view it would be 20 s late) or at 1 ns
 * (negative), and an absolute boottime ticker.
 */
static int timens_pairs(long long mono, long long boot)
{
	__s64 m = qt_now(CLOCK_MONOTONIC), b = qt_now(CLOCK_BOOTTIME);

	if (check_offsets(mono, boot) ||
	    one_shot("ns absolute monotonic +150 ms", CLOCK_MONOTONIC, true,
		     m + 150 * MS) ||
	    one_shot("ns absolute boottime +150 ms", CLOCK_BOOTTIME, true,
		     b + 150 * MS) ||
	    one_shot("ns relative monotonic 100 ms", CLOCK_MONOTONIC, false,
		     100 * MS) ||
	    one_shot("ns relative boottime 100 ms", CLOCK_BOOTTIME, false,
		     100 * MS))
		return -1;
	if (mono > 0 && one_shot("ns absolute, host +20 s", CLOCK_MONOTONIC, true,
				 m - mono * NSEC_PER_SEC + 20 * NSEC_PER_SEC))
		return -1;
	if (mono < 0 && one_shot("ns absolute 1 ns", CLOCK_MONOTONIC, true, 1))
		return -1;
	return ticker("ns absolute boottime ticker", CLOCK_BOOTTIME, true,
		      qt_now(CLOCK_BOOTTIME) + 50 * MS, 50 * MS, 600 * MS);
}

static void run_in_timens(struct __test_metadata *_metadata, long long mono,
			  long long boot)
{
	char offs[128];
	int pid, status;

	ASSERT_EQ(0, pin_here());
	snprintf(offs, sizeof(offs), "monotonic %lld 0\nboottime %lld 0\n",
		 mono, boot);
	pid = qt_fork_into_timens(offs);
	if (!pid)
		_exit(timens_pairs(mono, boot) ? 1 : 0);
	if (pid == QT_NO_TIMENS)
		SKIP(return, "no time namespaces (CONFIG_TIME_NS) or no privilege");
	ASSERT_LT(1, pid) TH_LOG("%s", strerror(-pid));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
		TH_LOG("child status %#x", status);
}

TEST(timens_positive_offsets)
{
	run_in_timens(_metadata, 100, 200);
}

/* Behind the host by most of its uptime (a namespace's clocks stay >= 0). */
TEST(timens_negative_offsets)
{
	long long mono = qt_now(CLOCK_MONOTONIC) / NSEC_PER_SEC;
	long long boot = qt_now(CLOCK_BOOTTIME) / NSEC_PER_SEC;

	run_in_timens(_metadata, mono > 2 ? 1 - mono : -1,
		      boot > 2 ? 1 - boot : -1);
}

TEST_HARNESS_MAIN
