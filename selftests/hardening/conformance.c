// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * The pairs of the conformance suites (conformance.h): a timerfd and a
 * qtimer timer armed on one schedule, and the checks that their one-shot
 * deliveries and ticker counts agree.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <sys/timerfd.h>

#include "conformance.h"

static struct timespec ns_to_ts(__s64 ns)
{
	struct timespec ts = {
		.tv_sec = ns / NSEC_PER_SEC, .tv_nsec = ns % NSEC_PER_SEC,
	};

	return ts;
}

__s64 ts_to_ns(const struct timespec *ts)
{
	return ts->tv_sec * NSEC_PER_SEC + ts->tv_nsec;
}

__s64 max_ns(__s64 a, __s64 b)
{
	return a > b ? a : b;
}

/* poll() reports EPOLLIN on @fd right now. */
bool readable(int fd)
{
	return t_wait_readable(fd, 0) > 0;
}

int pin_here(void)
{
	int cpu = sched_getcpu();

	return cpu < 0 ? -errno : t_pin_self(cpu);
}


static __s64 run_now(struct pair *p)
{
	__s64 now = t_now(p->run_clock);

	p->high = max_ns(p->high, now);
	return now;
}

void close_pair(struct pair *p)
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
int arm_pair(struct pair *p, const char *name, int clockid, bool abs,
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
	p->qfd = t_open(O_NONBLOCK);
	CHK(p->tfd >= 0, "%s: timerfd_create: %s", name, strerror(errno));
	CHK(p->qfd >= 0, "%s: open: %s", name, strerror(-p->qfd));
	t0 = t_now(p->run_clock);
	ret = timerfd_settime(p->tfd, tflags, &its, NULL);
	CHK(!ret, "%s: timerfd_settime: %s", name, strerror(errno));
	t1 = t_now(p->run_clock);
	ret = t_arm(p->qfd, clockid, qflags, value, period, 0xc0f, &p->id);
	t2 = t_now(p->run_clock);
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
int collect_one_shot(struct pair *p)
{
	__s64 deadline = t_now(CLOCK_MONOTONIC) + WAIT_MS * MS;
	bool t_done = false, q_done = false;

	while (!t_done || !q_done) {
		struct pollfd pfd[2] = {
			{ .fd = t_done ? -1 : p->tfd, .events = POLLIN },
			{ .fd = q_done ? -1 : p->qfd, .events = POLLIN },
		};
		__s64 left = deadline - t_now(CLOCK_MONOTONIC);
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
			n = t_read(p->qfd, &p->rec, 1);
			p->q_stamp = t_now(p->run_clock);
			p->q_wall = t_now(CLOCK_REALTIME);
			CHK(n == 1, "%s: read: %zd", p->name, n);
			q_done = true;
		}
		if (t_done)
			continue;
		n = read(p->tfd, &ticks, sizeof(ticks));
		if (n == sizeof(ticks)) {
			p->t_stamp = t_now(p->run_clock);
			p->t_count = ticks;
			t_done = true;
		} else {
			CHK(n < 0 && errno == EAGAIN, "%s: timerfd read: %zd %s",
			    p->name, n, strerror(errno));
		}
	}
	return 0;
}

int check_one_shot(struct pair *p)
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
	CHK(!t_nothing_pending(p->qfd), "%s: a second record", p->name);
	/* After the schedule, or after the arming if that was later. */
	fprintf(stderr, "# %-36s timerfd %+8.3f ms, qtimer %+8.3f ms\n",
		p->name, (double)(p->t_stamp - max_ns(p->t_lo, p->armed)) / MS,
		(double)(p->q_stamp - max_ns(p->q_lo, p->armed)) / MS);
	return 0;
}

int one_shot(const char *name, int clockid, bool abs, __s64 value)
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
		m0 = t_now(CLOCK_MONOTONIC);
		r = t_now(CLOCK_REALTIME);
		m1 = t_now(CLOCK_MONOTONIC);
	} while (m1 - m0 > MS && ++i < 100);
	*err = m1 - m0;
	return r - m0;
}

/*
 * One read of a ticker pair: waits for qtimer's record, reads it, then
 * timerfd's count at about the same moment.
 */
int tick_read(struct pair *p)
{
	const __s64 P = p->period;
	struct qtimer_record r;
	__s64 qb, qa, ta, exp, err = 0, first;
	__u64 ticks;
	ssize_t n;

	CHK(t_wait_readable(p->qfd, WAIT_MS) == 1,
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
	n = t_read(p->qfd, &r, 1);
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

		CHK(exp <= t_now(CLOCK_REALTIME), "%s: expires %lld in the future",
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

int tick_for(struct pair *p, __s64 window)
{
	__s64 end = t_now(CLOCK_MONOTONIC) + window;
	int i = 0;

	do {
		if (tick_read(p))
			return -1;
		t_sleep_ns(p->period * tick_pace[i++ % 8] / 100);
	} while (t_now(CLOCK_MONOTONIC) < end);
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
int tick_settle(struct pair *p)
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

int ticker(const char *name, int clockid, bool abs, __s64 value,
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
