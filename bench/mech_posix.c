// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * POSIX timers.  Where nothing is delivered (arm/modify/cancel, mixed) the
 * timers are SIGEV_NONE, the cheapest kind.  For fire and ticker each timer
 * queues SIGRTMIN with its index as the value, and the blocked signal is
 * read in batches from a signalfd: every timer owns a preallocated sigqueue
 * entry (counted against RLIMIT_SIGPENDING, which main.c lifts), so one
 * realtime signal per timer can be pending at once, and a periodic timer's
 * missed expirations come back as the overrun count.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "qtbench.h"

#define PX_READ_SIGNALS	256

struct px_priv {
	timer_t *timers;	/* per timer index */
	int sfd;
	sigset_t mask, old_mask;
	struct signalfd_siginfo si[PX_READ_SIGNALS];
};

static int px_open(struct run *r)
{
	struct px_priv *p = xcalloc(1, sizeof(*p));

	p->timers = xcalloc(r->n, sizeof(*p->timers));
	p->sfd = -1;
	if (r->deliver) {
		sigemptyset(&p->mask);
		sigaddset(&p->mask, SIGRTMIN);
		sigprocmask(SIG_BLOCK, &p->mask, &p->old_mask);
		p->sfd = signalfd(-1, &p->mask, SFD_NONBLOCK | SFD_CLOEXEC);
		if (p->sfd < 0) {
			int ret = -errno;

			free(p->timers);
			free(p);
			return ret;
		}
	}
	r->priv = p;
	return 0;
}

/* The timers themselves go with the process: exit_itimers() frees them. */
static void px_close(struct run *r)
{
	struct px_priv *p = r->priv;

	if (p->sfd >= 0)
		close(p->sfd);
	free(p->timers);
	free(p);
}

static int px_submit(struct run *r, const struct mop *ops, size_t nr)
{
	struct px_priv *p = r->priv;
	size_t k;

	for (k = 0; k < nr; k++) {
		const struct mop *m = &ops[k];
		struct itimerspec its = {
			.it_value = { m->when / NSEC_PER_SEC, m->when % NSEC_PER_SEC },
			.it_interval = { m->period / NSEC_PER_SEC, m->period % NSEC_PER_SEC },
		};
		struct sigevent sev = { .sigev_notify = SIGEV_NONE };

		switch (m->code) {
		case MOP_ARM:
			if (r->deliver) {
				sev.sigev_notify = SIGEV_SIGNAL;
				sev.sigev_signo = SIGRTMIN;
				sev.sigev_value.sival_int = m->idx;
			}
			if (timer_create(CLOCK_MONOTONIC, &sev, &p->timers[m->idx]) < 0)
				return -errno;
			/* fall through */
		case MOP_MODIFY:
			if (timer_settime(p->timers[m->idx], TIMER_ABSTIME, &its, NULL) < 0)
				return -errno;
			break;
		default:
			if (timer_delete(p->timers[m->idx]) < 0)
				return -errno;
			break;
		}
	}
	return 0;
}

static int px_wait(struct run *r, int timeout_ms)
{
	struct px_priv *p = r->priv;
	ssize_t len;
	size_t i;

	if (p->sfd < 0)
		return 0;
	len = read_or_wait(p->sfd, p->si, sizeof(p->si), timeout_ms);
	if (len <= 0)
		return len;
	for (i = 0; i < len / sizeof(p->si[0]); i++)
		run_expired(r, p->si[i].ssi_int, 1 + p->si[i].ssi_overrun, INT64_MIN);
	return len / sizeof(p->si[0]);
}

const struct mech mech_posix = {
	.name = "posix",
	.kernel_timers = true,
	.open = px_open,
	.close = px_close,
	.submit = px_submit,
	.wait = px_wait,
};
