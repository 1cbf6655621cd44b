/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * Differential conformance with timerfd, split by feature into
 * conformance_{delivery,step,timens}_test.c, which share the pair machinery
 * of conformance.c that this header declares.  Each schedule runs
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
#ifndef _QT_CONFORMANCE_H
#define _QT_CONFORMANCE_H

#include <sched.h>
#include <sys/timerfd.h>

#include "helpers.h"

#ifndef TFD_TIMER_CANCEL_ON_SET
#define TFD_TIMER_CANCEL_ON_SET	(1 << 1)
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

__s64 ts_to_ns(const struct timespec *ts);
__s64 max_ns(__s64 a, __s64 b);
bool readable(int fd);
int pin_here(void);
void close_pair(struct pair *p);
int arm_pair(struct pair *p, const char *name, int clockid, bool abs,
	     __s64 value, __s64 period, bool cancel_on_set);
int collect_one_shot(struct pair *p);
int check_one_shot(struct pair *p);
int one_shot(const char *name, int clockid, bool abs, __s64 value);
int tick_read(struct pair *p);
int tick_for(struct pair *p, __s64 window);
int tick_settle(struct pair *p);
int ticker(const char *name, int clockid, bool abs, __s64 value,
	   __s64 period, __s64 window);

#endif /* _QT_CONFORMANCE_H */
