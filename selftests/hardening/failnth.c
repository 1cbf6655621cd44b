// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * The pieces of the fail-nth sweeps (failnth.h): arming fail-nth and
 * seeing whether it fired, the log of outcomes, and the timers the calls
 * under test work on.
 */
#define _GNU_SOURCE

#include "failnth.h"

int nth_arm(int fd, unsigned int n)
{
	char buf[16];
	int len = snprintf(buf, sizeof(buf), "%u", n);

	return pwrite(fd, buf, len, 0) == len ? 0 : -errno;
}

/*
 * After the call under test: true when the n-th allocation was reached (and
 * failed).  Disarms what is left, so that nothing after fails by accident.
 */
bool nth_fired(int fd)
{
	char buf[16] = "";
	bool fired;

	if (pread(fd, buf, sizeof(buf) - 1, 0) <= 0)
		return false;
	fired = atoi(buf) == 0;
	nth_arm(fd, 0);
	return fired;
}

void outcome(struct outcomes *o, bool nomem)
{
	if (o->n < MAX_NTH)
		o->s[o->n++] = nomem ? 'E' : 's';
	o->s[o->n] = '\0';
}

/* Heaps keep their size until files close; halve them back to <= 256. */
void shrink_heaps(void)
{
	int i;

	for (i = 0; i < 32; i++) {
		int fd = t_open(0);

		if (fd >= 0)
			close(fd);
	}
}

long long user_timers(void)
{
	struct t_fdinfo fi;
	int fd = t_open(0);
	long long v = -1;

	if (fd < 0)
		return -1;
	if (!t_fdinfo(fd, &fi))
		v = fi.user_timers;
	close(fd);
	return v;
}

/* Arms a far-away one-shot on CPU 0 without fault injection. */
int arm_far(int fd, __u64 cookie, __u64 *id)
{
	return t_arm_cpu(fd, CLOCK_MONOTONIC, 0, 60 * NSEC_PER_SEC, 0,
			  cookie, 0, id);
}

static void far_op(struct qtimer_op *op, long k, void *cookie0)
{
	*op = t_op(CLOCK_MONOTONIC, QTIMER_F_CPU, 60 * NSEC_PER_SEC, 0,
		    *(__u64 *)cookie0 + k);
}

/* n far-away one-shots on CPU 0 in SUBMIT batches; 0 or -errno. */
int arm_many(int fd, int n, __u64 cookie0)
{
	return t_arm_many(fd, n, far_op, &cookie0, NULL, 0);
}

/*
 * Exactly one record arrives, of @cookie (and @id if non-zero), and then
 * nothing more within 100 ms.  Returns 0 or a step number.
 */
int expect_one(int fd, __u64 cookie, __u64 id, __s64 not_before)
{
	struct qtimer_record rec;
	__s64 stamp;

	if (t_collect_stamped(fd, &rec, 1, QT_ARRIVE_MS, CLOCK_MONOTONIC,
			       &stamp) != 1)
		return 1;
	if (rec.cookie != cookie || (id && rec.id != id))
		return 2;
	if (rec.expires_ns < not_before || stamp < rec.expires_ns)
		return 3;
	if (rec.count != 1 || rec.flags != QTIMER_REC_LAST)
		return 4;
	t_sleep_ms(100);
	return t_nothing_pending(fd) ? 5 : 0;
}

/* Arms a one-shot due now and waits until its record is pending. */
int arm_fired(int fd, __u64 cookie, __u64 *id)
{
	int ret = t_arm_cpu(fd, CLOCK_MONOTONIC, 0, 0, 0, cookie, 0, id);

	if (ret)
		return ret;
	return t_wait_readable(fd, QT_ARRIVE_MS) == 1 ? 0 : -ETIME;
}
