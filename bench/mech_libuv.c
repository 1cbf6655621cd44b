// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * libuv's timers: a binary heap in the process, no system call per arm,
 * modify or cancel, and one epoll_wait per loop iteration to sleep until
 * the earliest.  This is the floor an in-kernel timer facility is measured
 * against.  libuv keeps time in whole milliseconds, so an expiry is given
 * as the first millisecond at or after the wanted nanosecond (rounding up
 * keeps libuv from being early by our clock; the rounding shows as up to
 * 1 ms of lateness).  Its repeating timers re-arm from the loop's time, so
 * they drift; the ticker counts what they actually deliver.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <uv.h>

#include "qtbench.h"

struct uv_priv {
	uv_loop_t loop;
	uv_timer_t waker;	/* bounds a wait */
	uv_timer_t *timers;	/* per timer index */
	struct run *r;
	int fired;
};

static void uvb_expired(uv_timer_t *t)
{
	struct uv_priv *p = t->data;

	p->fired++;
	run_expired(p->r, t - p->timers, 1, INT64_MIN);
}

static void uvb_wake(uv_timer_t *t)
{
	(void)t;
}

static int uvb_open(struct run *r)
{
	struct uv_priv *p = xcalloc(1, sizeof(*p));
	size_t i;
	int ret;

	ret = uv_loop_init(&p->loop);
	if (ret) {
		free(p);
		return ret;
	}
	p->r = r;
	p->timers = xcalloc(r->n, sizeof(*p->timers));
	for (i = 0; i < r->n; i++) {
		uv_timer_init(&p->loop, &p->timers[i]);
		p->timers[i].data = p;
	}
	uv_timer_init(&p->loop, &p->waker);
	r->priv = p;
	return 0;
}

/* The handles are never closed: the run's process exits right after. */
static void uvb_close(struct run *r)
{
	(void)r;
}

static uint64_t uvb_timeout(struct uv_priv *p, int64_t when)
{
	uint64_t due = (when + NSEC_PER_MSEC - 1) / NSEC_PER_MSEC, now = uv_now(&p->loop);

	return due > now ? due - now : 0;
}

static int uvb_submit(struct run *r, const struct mop *ops, size_t nr)
{
	struct uv_priv *p = r->priv;
	size_t k;

	for (k = 0; k < nr; k++) {
		const struct mop *m = &ops[k];
		uv_timer_t *t = &p->timers[m->idx];
		int ret;

		if (m->code == MOP_CANCEL) {
			uv_timer_stop(t);
			continue;
		}
		ret = uv_timer_start(t, uvb_expired, uvb_timeout(p, m->when),
				     m->code == MOP_ARM ? m->period / NSEC_PER_MSEC : 0);
		if (ret)
			return ret;
	}
	return 0;
}

static int uvb_wait(struct run *r, int timeout_ms)
{
	struct uv_priv *p = r->priv;

	p->fired = 0;
	uv_update_time(&p->loop);
	uv_timer_start(&p->waker, uvb_wake, timeout_ms, 0);
	uv_run(&p->loop, timeout_ms ? UV_RUN_ONCE : UV_RUN_NOWAIT);
	uv_timer_stop(&p->waker);
	return p->fired;
}

const struct mech mech_libuv = {
	.name = "libuv",
	.open = uvb_open,
	.close = uvb_close,
	.submit = uvb_submit,
	.wait = uvb_wait,
};
