// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * libtimerdev, the library over /dev/qtimer, used as its documentation
 * suggests: ops queue in a struct td_batch of r->batch that flushes itself
 * when full (and at the end of each submit()), outcomes come back through
 * the completion callback, and expirations are read with td_read() on a
 * non-blocking context, waiting with td_wait() only when nothing is
 * pending.  Against "qtimer-batch" at the same batch size this shows what
 * the library adds to the raw ioctls.
 *
 * "libtimerdev-table" arms the same way but modifies and cancels one at a
 * time with td_modify() and td_cancel(), which go through the timer table
 * with no system call where they can (a context's table is set up by
 * td_open() when the module offers one): against "qtimer-table" it shows
 * what the library adds to the raw swaps.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <timerdev.h>
#include <unistd.h>

#include "helpers.h"
#include "qtbench.h"

#define TD_READ_RECORDS	256

struct tdb_priv {
	struct td_ctx *ctx;
	struct td_batch batch;
	uint64_t *ids;
	int error;
	struct qtimer_record recs[TD_READ_RECORDS];
};

/*
 * A MODIFY's or CANCEL's result, or a failed ARM's: the first error, or
 * -ENOENT for a timer that was not armed, is the run's.
 */
static void tdb_result(struct tdb_priv *p, int result)
{
	if (!p->error && (result < 0 || !(result & QTIMER_CANCEL_ARMED)))
		p->error = result < 0 ? result : -ENOENT;
}

static void tdb_completed(const struct td_completion *c, void *arg)
{
	struct tdb_priv *p = arg;

	if (c->opcode == QTIMER_OP_ARM && c->result >= 0)
		p->ids[c->user_data] = c->id;
	else
		tdb_result(p, c->result);
}

static int tdb_open(struct run *r)
{
	struct tdb_priv *p = xcalloc(1, sizeof(*p));
	int ret;

	ret = td_open(&p->ctx, TD_NONBLOCK | TD_CLOEXEC);
	if (ret < 0) {
		free(p);
		return ret;
	}
	ret = td_batch_init(p->ctx, &p->batch, r->batch);
	if (ret < 0) {
		note(r, "td_batch_init(%u) failed: %s", r->batch, strerror(-ret));
		td_close(p->ctx);
		free(p);
		return ret;
	}
	td_batch_set_callback(&p->batch, tdb_completed, p);
	p->ids = xcalloc(r->n, sizeof(*p->ids));
	r->priv = p;
	return 0;
}

static void tdb_close(struct run *r)
{
	struct tdb_priv *p = r->priv;

	td_batch_free(&p->batch);
	td_close(p->ctx);
	free(p->ids);
	free(p);
}

static int tdb_submit(struct run *r, const struct mop *ops, size_t nr)
{
	struct tdb_priv *p = r->priv;
	size_t k;
	int ret;

	for (k = 0; k < nr; k++) {
		const struct mop *m = &ops[k];
		struct td_timer_spec spec;

		switch (m->code) {
		case MOP_ARM:
			spec = (struct td_timer_spec){
				.clockid = CLOCK_MONOTONIC,
				.flags = TD_TIMER_ABSTIME,
				.expires_ns = m->when,
				.period_ns = m->period,
				.cookie = m->idx,
				.cpu = TD_CPU_ANY,
			};
			ret = td_batch_arm(&p->batch, &spec, m->idx);
			break;
		case MOP_MODIFY:
			ret = td_batch_modify(&p->batch, p->ids[m->idx], m->when, 0, 0,
					      TD_TIMER_ABSTIME, m->idx);
			break;
		default:
			ret = td_batch_cancel(&p->batch, p->ids[m->idx], m->idx);
			break;
		}
		if (ret < 0)
			return ret;
		if (p->error)
			return p->error;
	}
	ret = td_batch_flush(&p->batch);
	if (ret < 0)
		return ret;
	return p->error;
}

static int tdb_submit_single(struct run *r, const struct mop *ops, size_t nr)
{
	struct tdb_priv *p = r->priv;
	size_t k, start = 0;
	int ret;

	for (k = 0; k <= nr; k++) {
		const struct mop *m = &ops[k];

		if (k < nr && m->code == MOP_ARM)
			continue;
		/* The arms before it, batched: their ids are known after. */
		if (k > start) {
			ret = tdb_submit(r, ops + start, k - start);
			if (ret < 0)
				return ret;
		}
		start = k + 1;
		if (k == nr)
			break;
		if (m->code == MOP_MODIFY)
			tdb_result(p, td_modify(p->ctx, p->ids[m->idx], m->when, 0, 0,
						TD_TIMER_ABSTIME));
		else
			tdb_result(p, td_cancel(p->ctx, p->ids[m->idx]));
		if (p->error)
			return p->error;
	}
	return p->error;
}

static int tdb_wait(struct run *r, int timeout_ms)
{
	struct tdb_priv *p = r->priv;
	int nr, i;

	nr = td_read(p->ctx, p->recs, TD_READ_RECORDS);
	if (nr == -EAGAIN && timeout_ms)
		nr = td_wait(p->ctx, p->recs, TD_READ_RECORDS, timeout_ms * NSEC_PER_MSEC);
	if (nr == -EAGAIN || nr == -ETIME || nr == -EINTR)
		return 0;
	if (nr < 0)
		return nr;
	for (i = 0; i < nr; i++)
		run_expired(r, p->recs[i].cookie, p->recs[i].count, p->recs[i].expires_ns);
	return nr;
}

const struct mech mech_libtimerdev = {
	.name = "libtimerdev",
	.batched = true,
	.kernel_timers = true,
	.engine_stats = true,
	.open = tdb_open,
	.close = tdb_close,
	.submit = tdb_submit,
	.wait = tdb_wait,
};

/* The table's pages, which the slab counts do not see (fdinfo). */
static int64_t tdb_table_bytes(struct run *r)
{
	struct tdb_priv *p = r->priv;
	long long pages = t_fdinfo_named(td_fd(p->ctx), "table_pages");

	return pages < 0 ? 0 : pages * sysconf(_SC_PAGESIZE);
}

const struct mech mech_libtimerdev_table = {
	.name = "libtimerdev-table",
	.batched = true,
	.kernel_timers = true,
	.engine_stats = true,
	.open = tdb_open,
	.close = tdb_close,
	.submit = tdb_submit_single,
	.wait = tdb_wait,
	.hidden_bytes = tdb_table_bytes,
};
