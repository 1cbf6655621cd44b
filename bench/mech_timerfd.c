// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * timerfd + epoll, one file per timer, the way an event loop without
 * /dev/qtimer holds many kernel timers.  Arming a timer creates its file,
 * registers it with epoll and sets it; cancelling closes the file (which
 * also takes it out of the epoll set); modifying re-sets it.  Each ready
 * file costs a read() of its expiration count.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "qtbench.h"

#define TFD_EVENTS	1024

struct tfd_priv {
	int epfd;
	int *fds;		/* per timer index, -1 when none */
	struct epoll_event evs[TFD_EVENTS];
};

static struct itimerspec tfd_spec(int64_t when, int64_t period)
{
	return (struct itimerspec){
		.it_value = { when / NSEC_PER_SEC, when % NSEC_PER_SEC },
		.it_interval = { period / NSEC_PER_SEC, period % NSEC_PER_SEC },
	};
}

static int tfd_open(struct run *r)
{
	struct tfd_priv *p = xcalloc(1, sizeof(*p));
	size_t i;

	p->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (p->epfd < 0) {
		free(p);
		return -errno;
	}
	p->fds = xcalloc(r->n, sizeof(*p->fds));
	for (i = 0; i < r->n; i++)
		p->fds[i] = -1;
	r->priv = p;
	return 0;
}

static void tfd_close(struct run *r)
{
	struct tfd_priv *p = r->priv;
	size_t i;

	for (i = 0; i < r->n; i++)
		if (p->fds[i] >= 0)
			close(p->fds[i]);
	close(p->epfd);
	free(p->fds);
	free(p);
}

static int tfd_arm(struct tfd_priv *p, const struct mop *m)
{
	struct itimerspec its = tfd_spec(m->when, m->period);
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = m->idx };
	int fd, ret;

	fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (epoll_ctl(p->epfd, EPOLL_CTL_ADD, fd, &ev) < 0 ||
	    timerfd_settime(fd, TFD_TIMER_ABSTIME, &its, NULL) < 0) {
		ret = -errno;
		close(fd);
		return ret;
	}
	p->fds[m->idx] = fd;
	return 0;
}

static int tfd_submit(struct run *r, const struct mop *ops, size_t nr)
{
	struct tfd_priv *p = r->priv;
	size_t k;

	for (k = 0; k < nr; k++) {
		const struct mop *m = &ops[k];
		struct itimerspec its;
		int ret;

		switch (m->code) {
		case MOP_ARM:
			ret = tfd_arm(p, m);
			if (ret < 0)
				return ret;
			break;
		case MOP_MODIFY:
			its = tfd_spec(m->when, 0);
			if (timerfd_settime(p->fds[m->idx], TFD_TIMER_ABSTIME, &its, NULL) < 0)
				return -errno;
			break;
		default:
			if (close(p->fds[m->idx]) < 0)
				return -errno;
			p->fds[m->idx] = -1;
			break;
		}
	}
	return 0;
}

static int tfd_wait(struct run *r, int timeout_ms)
{
	struct tfd_priv *p = r->priv;
	int nr, i, got = 0;

	nr = epoll_wait(p->epfd, p->evs, TFD_EVENTS, timeout_ms);
	if (nr < 0)
		return errno == EINTR ? 0 : -errno;
	for (i = 0; i < nr; i++) {
		uint32_t idx = p->evs[i].data.u64;
		uint64_t count;

		if (read(p->fds[idx], &count, sizeof(count)) != sizeof(count)) {
			if (errno == EAGAIN)
				continue;
			return -errno;
		}
		run_expired(r, idx, count, INT64_MIN);
		got++;
	}
	return got;
}

const struct mech mech_timerfd = {
	.name = "timerfd",
	.kernel_timers = true,
	.open = tfd_open,
	.close = tfd_close,
	.submit = tfd_submit,
	.wait = tfd_wait,
};
