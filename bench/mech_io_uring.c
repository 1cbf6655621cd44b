// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * io_uring timeouts through liburing: IORING_OP_TIMEOUT with an absolute
 * CLOCK_MONOTONIC time arms, IORING_TIMEOUT_UPDATE modifies and
 * IORING_OP_TIMEOUT_REMOVE cancels, each addressed by user_data (the timer
 * index).  SQEs go in r->batch at a time.  A removed timeout completes with
 * -ECANCELED and its remove with 0; both CQEs are reaped before submit()
 * returns, so the cost of consuming them is in the numbers.  The kernels
 * benchmarked predate multishot timeouts (6.4), so a periodic timer is
 * re-armed from its completion, as a user would do, and the expirations
 * it missed are counted from the clock.
 *
 * The ring is set up with SINGLE_ISSUER | DEFER_TASKRUN where the kernel
 * has them (the fastest completion path for one thread), else
 * COOP_TASKRUN, else plain; the CQ is the largest the kernel allows.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <liburing.h>

#include "helpers.h"
#include "qtbench.h"

#define UR_CQ_ENTRIES	65536
#define UR_TAG_UPDATE	(1ULL << 62)
#define UR_TAG_REMOVE	(1ULL << 63)
#define UR_TAG_MASK	(UR_TAG_UPDATE | UR_TAG_REMOVE)

struct ur_priv {
	struct io_uring ring;
	struct __kernel_timespec *ts;	/* one per SQE of a batch */
	unsigned int queued;		/* SQEs prepared, not submitted */
	uint64_t owed;			/* CQEs of updates/removes not yet reaped */
	int64_t *next;			/* periodic: the expiry armed, per timer */
	int64_t period;
	int error;			/* first failed CQE */
	struct io_uring_cqe *cqes[1024];
};

static int ur_open(struct run *r)
{
	static const unsigned int setups[] = {
		IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN,
		IORING_SETUP_COOP_TASKRUN,
		0,
	};
	struct ur_priv *p = xcalloc(1, sizeof(*p));
	unsigned int i;
	int ret = -EINVAL;

	for (i = 0; i < sizeof(setups) / sizeof(setups[0]); i++) {
		struct io_uring_params params;

		memset(&params, 0, sizeof(params));
		params.flags = setups[i] | IORING_SETUP_CQSIZE;
		params.cq_entries = UR_CQ_ENTRIES;
		ret = io_uring_queue_init_params(r->batch, &p->ring, &params);
		if (!ret) {
			if (i)
				note(r, "ring set up with flags %#x", setups[i]);
			break;
		}
	}
	if (ret) {
		free(p);
		return ret;
	}
	p->ts = xcalloc(r->batch, sizeof(*p->ts));
	p->next = xcalloc(r->n, sizeof(*p->next));
	r->priv = p;
	return 0;
}

static void ur_close(struct run *r)
{
	struct ur_priv *p = r->priv;

	io_uring_queue_exit(&p->ring);
	free(p->ts);
	free(p->next);
	free(p);
}

static void ur_timespec(struct __kernel_timespec *ts, int64_t when)
{
	ts->tv_sec = when / NSEC_PER_SEC;
	ts->tv_nsec = when % NSEC_PER_SEC;
}

static int ur_flush(struct ur_priv *p)
{
	int ret;

	if (!p->queued)
		return 0;
	ret = io_uring_submit(&p->ring);
	if (ret < 0)
		return ret;
	if ((unsigned int)ret != p->queued)
		return -EIO;
	p->queued = 0;
	return 0;
}

/* A periodic timer that fired: count what it missed, arm the next one. */
static void ur_rearm(struct run *r, struct ur_priv *p, uint32_t idx, uint64_t *count)
{
	int64_t now = t_now(CLOCK_MONOTONIC), missed = now > p->next[idx] ?
		(now - p->next[idx]) / p->period : 0;
	struct io_uring_sqe *sqe;

	*count = 1 + missed;
	p->next[idx] += (missed + 1) * p->period;
	if (p->queued == r->batch && ur_flush(p) < 0)
		return;
	sqe = io_uring_get_sqe(&p->ring);
	if (!sqe)
		return;
	ur_timespec(&p->ts[p->queued], p->next[idx]);
	io_uring_prep_timeout(sqe, &p->ts[p->queued], 0, IORING_TIMEOUT_ABS);
	io_uring_sqe_set_data64(sqe, idx);
	p->queued++;
}

static int ur_reap(struct run *r, struct ur_priv *p)
{
	unsigned int nr, i;
	int got = 0;

	while ((nr = io_uring_peek_batch_cqe(&p->ring, p->cqes, 1024)) > 0) {
		for (i = 0; i < nr; i++) {
			uint64_t data = io_uring_cqe_get_data64(p->cqes[i]);
			int res = p->cqes[i]->res;

			if (data & UR_TAG_MASK) {
				p->owed--;
				if (res < 0 && !p->error)
					p->error = res;
			} else if (res == -ECANCELED) {
				p->owed--;
			} else if (res == -ETIME) {
				uint64_t count = 1;

				if (p->period && r->counting)
					ur_rearm(r, p, data, &count);
				run_expired(r, data, count, INT64_MIN);
				got++;
			} else if (!p->error) {
				p->error = res < 0 ? res : -EIO;
			}
		}
		io_uring_cq_advance(&p->ring, nr);
	}
	return got;
}

static int ur_submit(struct run *r, const struct mop *ops, size_t nr)
{
	struct ur_priv *p = r->priv;
	size_t k;
	int ret;

	for (k = 0; k < nr; k++) {
		const struct mop *m = &ops[k];
		struct io_uring_sqe *sqe;

		if (p->queued == r->batch) {
			ret = ur_flush(p);
			if (ret < 0)
				return ret;
			ur_reap(r, p);
		}
		sqe = io_uring_get_sqe(&p->ring);
		if (!sqe)
			return -EBUSY;
		switch (m->code) {
		case MOP_ARM:
			ur_timespec(&p->ts[p->queued], m->when);
			io_uring_prep_timeout(sqe, &p->ts[p->queued], 0, IORING_TIMEOUT_ABS);
			io_uring_sqe_set_data64(sqe, m->idx);
			p->next[m->idx] = m->when;
			p->period = m->period;
			break;
		case MOP_MODIFY:
			ur_timespec(&p->ts[p->queued], m->when);
			io_uring_prep_timeout_update(sqe, &p->ts[p->queued], m->idx,
						     IORING_TIMEOUT_ABS);
			io_uring_sqe_set_data64(sqe, UR_TAG_UPDATE | m->idx);
			p->owed++;
			break;
		default:
			io_uring_prep_timeout_remove(sqe, m->idx, 0);
			io_uring_sqe_set_data64(sqe, UR_TAG_REMOVE | m->idx);
			p->owed += 2;
			break;
		}
		p->queued++;
	}
	ret = ur_flush(p);
	if (ret < 0)
		return ret;
	ur_reap(r, p);
	while (p->owed && !p->error) {
		struct io_uring_cqe *cqe;

		ret = io_uring_wait_cqe(&p->ring, &cqe);
		if (ret < 0)
			return ret;
		ur_reap(r, p);
	}
	return p->error;
}

static int ur_wait(struct run *r, int timeout_ms)
{
	struct ur_priv *p = r->priv;
	struct __kernel_timespec ts = {
		.tv_sec = timeout_ms / 1000,
		.tv_nsec = (timeout_ms % 1000) * NSEC_PER_MSEC,
	};
	struct io_uring_cqe *cqe;
	int ret, got;

	ret = ur_flush(p);
	if (ret < 0)
		return ret;
	got = ur_reap(r, p);
	if (got || !timeout_ms)
		goto out;
	ret = io_uring_wait_cqe_timeout(&p->ring, &cqe, &ts);
	if (ret < 0 && ret != -ETIME && ret != -EINTR)
		return ret;
	got = ur_reap(r, p);
out:
	if (p->error)
		return p->error;
	/* Re-arms of periodic timers go in now, not at the next wait. */
	ret = ur_flush(p);
	return ret < 0 ? ret : got;
}

const struct mech mech_io_uring = {
	.name = "io_uring",
	.batched = true,
	.kernel_timers = true,
	.open = ur_open,
	.close = ur_close,
	.submit = ur_submit,
	.wait = ur_wait,
};
