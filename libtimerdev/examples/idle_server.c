// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * idle_server: the idle-timeout bookkeeping of a server with many
 * connections, each with an idle timer.  All connections are armed through
 * a batch; then, for a while, an activity loop pushes random connections'
 * timers later (MODIFY) and closes some (CANCEL), both batched, while
 * expirations are dispatched.  Finally every connection still open must
 * expire exactly once, and no closed one ever.
 *
 * Each expiration is checked against the last push that the kernel
 * acknowledged: it must never come before that push plus the idle timeout.
 *
 * Idle timers are the textbook case for slack: nobody minds a connection
 * closed a little late, and neighbouring timers then share one interrupt.
 *
 *   idle_server [-n connections] [-t idle_ms] [-S slack_ms] [-d activity_ms]
 *               [-s seed]
 *
 * Exits 0 when every check holds.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <timerdev.h>

#include "common.h"

enum conn_state { CONN_OPEN, CONN_EXPIRED, CONN_CLOSED };

struct conn {
	uint64_t timer;		/* timer id */
	int64_t earliest;	/* its expiry may not be before this */
	int64_t pushing;	/* time a queued MODIFY was prepared */
	uint8_t state;
	uint8_t closing;	/* a CANCEL is queued */
	uint8_t expirations;
};

struct server {
	struct td_ctx *ctx;
	struct td_batch batch;
	struct conn *conns;
	unsigned int nr_conns;
	int64_t idle_ns;
	unsigned long errors;
	unsigned long armed, pushed, rescued, closed, discarded, expired;
};

#define OP_ARM		0
#define OP_PUSH		1
#define OP_CLOSE	2
/* user_data: the connection index, and the op in the top bits. */
#define UD(op, idx)	(((uint64_t)(op) << 32) | (idx))

static void fail(struct server *srv, const char *what, unsigned int idx,
		 long long value)
{
	if (srv->errors++ < 10)
		fprintf(stderr, "idle_server: ERROR: connection %u: %s (%lld)\n",
			idx, what, value);
}

/* The kernel's answer to each batched op, in the order they were queued. */
static void op_done(const struct td_completion *c, void *arg)
{
	struct server *srv = arg;
	unsigned int idx = (uint32_t)c->user_data;
	struct conn *conn = &srv->conns[idx];

	switch (c->user_data >> 32) {
	case OP_ARM:
		if (c->result < 0) {
			fail(srv, "arm failed", idx, c->result);
			return;
		}
		conn->timer = c->id;
		srv->armed++;
		break;
	/*
	 * Expirations are dispatched only between flushes, so an open
	 * connection's timer still exists when its op runs, though it may
	 * have fired: then the op also discards the unread record
	 * (QTIMER_CANCEL_QUEUED), which the connection never sees.
	 */
	case OP_PUSH:
		if (c->result <= 0) {
			fail(srv, "push failed", idx, c->result);
			return;
		}
		conn->earliest = conn->pushing + srv->idle_ns;
		srv->pushed++;
		srv->rescued += !!(c->result & QTIMER_CANCEL_QUEUED);
		break;
	case OP_CLOSE:
		if (c->result <= 0 || conn->state != CONN_OPEN) {
			fail(srv, "close failed", idx, c->result);
			return;
		}
		conn->state = CONN_CLOSED;
		srv->closed++;
		srv->discarded += !!(c->result & QTIMER_CANCEL_QUEUED);
		break;
	}
}

static void on_expiry(const struct qtimer_record *rec, void *arg)
{
	struct server *srv = arg;
	unsigned int idx = (unsigned int)rec->cookie;
	struct conn *conn;

	if (rec->cookie >= srv->nr_conns) {
		fail(srv, "unknown cookie", 0, (long long)rec->cookie);
		return;
	}
	conn = &srv->conns[idx];
	if (conn->state != CONN_OPEN)
		fail(srv, "expired while not open", idx, conn->state);
	if (rec->expires_ns < conn->earliest)
		fail(srv, "expired early (ns)", idx, conn->earliest - rec->expires_ns);
	if (rec->expires_ns > td_now(CLOCK_MONOTONIC))
		fail(srv, "delivered before its expiry", idx, rec->expires_ns);
	if (rec->count != 1 || rec->flags != QTIMER_REC_LAST)
		fail(srv, "bad record", idx, rec->flags);
	conn->state = CONN_EXPIRED;
	conn->expirations++;
	srv->expired++;
}

/*
 * The event loop's turn for expirations: wait up to timeout_ns for the
 * first, then take at most max, so that a flood of expirations cannot starve
 * the rest of the loop.
 */
static void drain(struct server *srv, int64_t timeout_ns, unsigned int max)
{
	struct qtimer_record rec;
	int ret;

	ret = td_wait(srv->ctx, &rec, 1, timeout_ns);
	if (ret == -ETIME)
		return;
	if (ret != 1) {
		fail(srv, "td_wait", 0, ret);
		return;
	}
	on_expiry(&rec, srv);
	ret = td_dispatch(srv->ctx, on_expiry, srv, max);
	if (ret < 0 && ret != -EAGAIN)
		fail(srv, "td_dispatch", 0, ret);
}

static double ns_per_op(int64_t ns, unsigned long ops)
{
	return ops ? (double)ns / ops : 0;
}

int main(int argc, char **argv)
{
	struct td_timer_spec spec = { .clockid = CLOCK_MONOTONIC };
	int64_t idle_ms = 1000, slack_ms = -1, activity_ms = 1000, t0, end;
	unsigned long rounds = 0, ops = 0;
	unsigned int nr = 100000, seed = 1, i, idx, open;
	struct server srv = { 0 };
	int64_t ops_ns = 0;
	int ret;
	struct example_option options[] = {
		{ 'n', "connections", OPTION_UINT, &nr },
		{ 't', "idle_ms", OPTION_INT64, &idle_ms },
		{ 'S', "slack_ms", OPTION_INT64, &slack_ms },
		{ 'd', "activity_ms", OPTION_INT64, &activity_ms },
		{ 's', "seed", OPTION_UINT, &seed },
		{ 0 }
	};

	if (example_options(argc, argv, options))
		return 2;
	if (slack_ms < 0)
		slack_ms = idle_ms / 10;
	if (!nr || idle_ms <= 0 || activity_ms < 0) {
		fprintf(stderr, "idle_server: bad arguments\n");
		return 2;
	}
	srand(seed);
	srv.nr_conns = nr;
	srv.idle_ns = idle_ms * 1000000;
	srv.conns = calloc(nr, sizeof(*srv.conns));
	if (!srv.conns)
		return 1;
	printf("idle_server: %u connections, idle timeout %lld ms (slack %lld ms), "
	       "activity for %lld ms\n", nr, (long long)idle_ms,
	       (long long)slack_ms, (long long)activity_ms);

	ret = td_open(&srv.ctx, TD_NONBLOCK);
	if (ret) {
		fprintf(stderr, "idle_server: td_open: %s\n", strerror(-ret));
		return 1;
	}
	ret = td_batch_init(srv.ctx, &srv.batch, 1024);
	if (ret) {
		fprintf(stderr, "idle_server: td_batch_init: %s\n", strerror(-ret));
		return 1;
	}
	td_batch_set_callback(&srv.batch, op_done, &srv);

	/*
	 * Accept everyone: one idle timer each, cookie = connection index.
	 * The loop keeps serving expirations meanwhile, as a server would
	 * (on a slow machine the first connections time out before the last
	 * are accepted).
	 */
	spec.expires_ns = srv.idle_ns;
	spec.slack_ns = slack_ms * 1000000;
	for (i = 0; i < nr; i++) {
		t0 = td_now(CLOCK_MONOTONIC);
		srv.conns[i].earliest = t0 + srv.idle_ns;
		spec.cookie = i;
		ret = td_batch_arm(&srv.batch, &spec, UD(OP_ARM, i));
		if (ret < 0)
			fail(&srv, "td_batch_arm", i, ret);
		if (i + 1 == nr && td_batch_flush(&srv.batch) < 0)
			fail(&srv, "td_batch_flush", i, 0);
		ops_ns += td_now(CLOCK_MONOTONIC) - t0;
		if (srv.batch.nr == 0)	/* just submitted */
			drain(&srv, 0, 4096);
	}
	printf("  armed %lu timers: %.0f ns/op\n", srv.armed, ns_per_op(ops_ns, nr));

	/*
	 * Activity: each round, 5% of the connections show traffic (their
	 * timer is pushed a full idle period later) and 0.5% hang up.
	 */
	ops_ns = 0;
	end = td_now(CLOCK_MONOTONIC) + activity_ms * 1000000;
	while (td_now(CLOCK_MONOTONIC) < end) {
		unsigned int busy = nr / 20 + 1, leaving = nr / 200 + 1;

		t0 = td_now(CLOCK_MONOTONIC);
		for (i = 0; i < busy + leaving; i++) {
			struct conn *conn;

			idx = example_random_index(nr);
			conn = &srv.conns[idx];
			if (conn->state != CONN_OPEN || conn->closing)
				continue;
			if (i < busy) {
				conn->pushing = td_now(CLOCK_MONOTONIC);
				ret = td_batch_modify(&srv.batch, conn->timer,
						      srv.idle_ns, 0, spec.slack_ns,
						      0, UD(OP_PUSH, idx));
			} else {
				conn->closing = 1;
				ret = td_batch_cancel(&srv.batch, conn->timer,
						      UD(OP_CLOSE, idx));
			}
			if (ret < 0)
				fail(&srv, "batch op", idx, ret);
			ops++;
		}
		if (td_batch_flush(&srv.batch) < 0)
			fail(&srv, "td_batch_flush", 0, 0);
		ops_ns += td_now(CLOCK_MONOTONIC) - t0;
		rounds++;
		drain(&srv, 20000000, 4096);
	}
	printf("  activity: %lu rounds, %lu pushes (%lu rescued a fired timer), "
	       "%lu closes (%lu dropped a record): %.0f ns/op\n", rounds,
	       srv.pushed, srv.rescued, srv.closed, srv.discarded,
	       ns_per_op(ops_ns, ops));

	/* Quiet: everyone still open must now expire, within a patient bound. */
	end = td_now(CLOCK_MONOTONIC) + srv.idle_ns + spec.slack_ns + 10000000000LL;
	for (;;) {
		for (i = 0, open = 0; i < nr; i++)
			open += srv.conns[i].state == CONN_OPEN;
		if (!open || td_now(CLOCK_MONOTONIC) > end || srv.errors)
			break;
		drain(&srv, 100000000, 4096);
	}
	drain(&srv, 100000000, 4096);	/* and nothing more arrives */

	for (i = 0; i < nr; i++) {
		struct conn *conn = &srv.conns[i];
		unsigned int want = conn->state == CONN_CLOSED ? 0 : 1;

		if (conn->expirations != want)
			fail(&srv, "expirations", i, conn->expirations);
	}
	if (srv.armed != nr)
		fail(&srv, "armed", 0, srv.armed);
	if (srv.expired + srv.closed != nr)
		fail(&srv, "expired + closed", 0, srv.expired + srv.closed);
	printf("  expired %lu idle connections, closed %lu: %lu of %u accounted for\n",
	       srv.expired, srv.closed, srv.expired + srv.closed, nr);

	td_batch_free(&srv.batch);
	td_close(srv.ctx);
	free(srv.conns);
	return example_verdict("idle_server", srv.errors,
			       "only idle connections expired, each once, never early");
}
