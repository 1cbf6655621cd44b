// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * uv_idle: a libuv loop whose connections' idle timeouts live in qtimer.
 * libuv keeps its own timers in a binary heap inside the process; here the
 * loop holds one uv_poll_t on the qtimer file instead, and the 100k
 * timeouts cost the loop nothing until they fire.  The timeouts are armed
 * through a libtimerdev batch (one SUBMIT per 1024); for a while a uv_timer_t
 * plays traffic, pushing some connections' timeouts later (batched
 * MODIFYs), as a server does when a connection shows activity.  The poll
 * callback drains records with td_dispatch, a bounded number per turn so
 * that a flood of expirations cannot starve the rest of the loop; epoll is
 * level-triggered, so libuv calls it again while records remain.
 *
 *   uv_idle [-n connections] [-t idle_ms] [-S slack_ms] [-d activity_ms]
 *           [-o log]
 *
 * -o writes one line per record read: "cookie due expires_ns arrival", the
 * earliest time the connection's latest timeout allowed, the record's
 * expiry and the clock when it was dispatched, all CLOCK_MONOTONIC
 * nanoseconds.
 *
 * Exits 0 when every connection timed out exactly once, never before its
 * latest timeout.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uv.h>
#include <timerdev.h>

#include "common.h"

#define MSEC		1000000LL
#define BATCH		1024
#define TURN_RECORDS	4096	/* records dispatched per poll callback */

struct conn {
	uint64_t timer;		/* timer id */
	int64_t due;		/* its timeout may not fire before this */
	uint8_t expirations;
};

struct server {
	uv_loop_t *loop;
	uv_poll_t expiries;	/* on the qtimer file */
	uv_timer_t traffic, watchdog, quiet;
	struct td_ctx *ctx;
	struct td_batch batch;
	FILE *log;

	struct conn *conns;
	unsigned int nr;
	int64_t idle_ns, slack_ns, traffic_end;
	unsigned long armed, pushed, rescued, expired, turns, errors;
	int64_t max_late;
};

static void fail(struct server *srv, const char *what, long long value)
{
	if (srv->errors++ < 10)
		fprintf(stderr, "uv_idle: ERROR: %s (%lld)\n", what, value);
}

/* Connections differ in when they were last active: spread the timeouts. */
static int64_t timeout_ns(const struct server *srv, unsigned int idx)
{
	return srv->idle_ns + (int64_t)(idx % 1000) * srv->idle_ns / 2000;
}

#define OP_ARM	0
#define OP_PUSH	1
#define UD(op, idx)	(((uint64_t)(op) << 32) | (idx))

static void op_done(const struct td_completion *c, void *arg)
{
	struct server *srv = arg;
	unsigned int idx = (uint32_t)c->user_data;

	if (c->user_data >> 32 == OP_ARM) {
		if (c->result < 0)
			fail(srv, "arm failed", c->result);
		srv->conns[idx].timer = c->id;
		srv->armed++;
		return;
	}
	/*
	 * Records are dispatched only between flushes, so a connection that
	 * has not expired still has its timer; if it fired, the push also
	 * discarded the unread record (QTIMER_CANCEL_QUEUED).
	 */
	if (c->result <= 0)
		fail(srv, "push failed", c->result);
	srv->pushed++;
	srv->rescued += !!(c->result & QTIMER_CANCEL_QUEUED);
}

static void on_expiry(const struct qtimer_record *rec, void *arg)
{
	struct server *srv = arg;
	int64_t now = td_now(CLOCK_MONOTONIC);
	struct conn *conn;

	if (rec->cookie >= srv->nr) {
		fail(srv, "unknown cookie", (long long)rec->cookie);
		return;
	}
	conn = &srv->conns[rec->cookie];
	example_log_delivery(srv->log, rec->cookie, conn->due, rec->expires_ns,
			     now);
	if (rec->count != 1 || rec->flags != QTIMER_REC_LAST)
		fail(srv, "bad record flags", rec->flags);
	if (rec->expires_ns < conn->due)
		fail(srv, "expiry before the timeout (ns)", conn->due - rec->expires_ns);
	if (now < rec->expires_ns)
		fail(srv, "delivered before its expiry (ns)", rec->expires_ns - now);
	if (conn->expirations++)
		fail(srv, "second expiry of connection", (long long)rec->cookie);
	else
		srv->expired++;
	if (now - conn->due > srv->max_late)
		srv->max_late = now - conn->due;
}

static void close_all(struct server *srv)
{
	uv_close((uv_handle_t *)&srv->expiries, NULL);
	uv_close((uv_handle_t *)&srv->traffic, NULL);
	uv_close((uv_handle_t *)&srv->watchdog, NULL);
	uv_close((uv_handle_t *)&srv->quiet, NULL);
}

static void on_quiet(uv_timer_t *t)
{
	close_all(t->data);
}

static void on_readable(uv_poll_t *poll, int status, int events)
{
	struct server *srv = poll->data;
	int ret;

	if (status < 0 || !(events & UV_READABLE)) {
		fail(srv, "uv_poll", status);
	} else {
		srv->turns++;
		ret = td_dispatch(srv->ctx, on_expiry, srv, TURN_RECORDS);
		if (ret < 0 && ret != -EAGAIN)
			fail(srv, "td_dispatch", ret);
	}
	/*
	 * All timed out (or something failed): keep listening a little
	 * longer, so that a second record of any connection would still be
	 * seen, then close.
	 */
	if ((srv->expired == srv->nr || srv->errors) &&
	    !uv_is_active((uv_handle_t *)&srv->quiet)) {
		uv_timer_stop(&srv->traffic);
		uv_timer_start(&srv->quiet, on_quiet, 200, 0);
	}
}

/* Traffic: 1% of the connections not yet timed out show activity. */
static void on_traffic(uv_timer_t *t)
{
	struct server *srv = t->data;
	unsigned int i, idx, busy = srv->nr / 100 + 1;
	int ret;

	if (td_now(CLOCK_MONOTONIC) >= srv->traffic_end) {
		uv_timer_stop(t);
		return;
	}
	for (i = 0; i < busy; i++) {
		idx = example_random_index(srv->nr);
		if (srv->conns[idx].expirations)
			continue;
		/* Before the MODIFY: the kernel's clock at SUBMIT is later. */
		srv->conns[idx].due = td_now(CLOCK_MONOTONIC) + srv->idle_ns;
		ret = td_batch_modify(&srv->batch, srv->conns[idx].timer,
				      srv->idle_ns, 0, srv->slack_ns, 0,
				      UD(OP_PUSH, idx));
		if (ret < 0)
			fail(srv, "td_batch_modify", ret);
	}
	ret = td_batch_flush(&srv->batch);
	if (ret < 0)
		fail(srv, "td_batch_flush", ret);
}

static void on_watchdog(uv_timer_t *t)
{
	struct server *srv = t->data;

	fail(srv, "timed out; connections expired", srv->expired);
	close_all(srv);
}

int main(int argc, char **argv)
{
	struct td_timer_spec spec = { .clockid = CLOCK_MONOTONIC };
	int64_t idle_ms = 1000, slack_ms = -1, activity_ms = 500;
	struct server srv = { .nr = 100000 };
	unsigned int i, missing = 0;
	char *log_path = NULL;
	int ret;
	struct example_option options[] = {
		{ 'n', "connections", OPTION_UINT, &srv.nr },
		{ 't', "idle_ms", OPTION_INT64, &idle_ms },
		{ 'S', "slack_ms", OPTION_INT64, &slack_ms },
		{ 'd', "activity_ms", OPTION_INT64, &activity_ms },
		{ 'o', "log", OPTION_STRING, &log_path },
		{ 0 }
	};

	if (example_options(argc, argv, options))
		return 2;
	if (slack_ms < 0)
		slack_ms = idle_ms / 10;
	if (!srv.nr || idle_ms <= 0 || activity_ms < 0) {
		fprintf(stderr, "uv_idle: bad arguments\n");
		return 2;
	}
	srv.idle_ns = idle_ms * MSEC;
	srv.slack_ns = slack_ms * MSEC;
	srv.conns = calloc(srv.nr, sizeof(*srv.conns));
	if (!srv.conns)
		return 1;
	if (example_open_log(log_path, &srv.log))
		return 1;
	printf("uv_idle: %u connections, idle timeout %lld-%lld ms (slack %lld ms), "
	       "traffic for %lld ms; libuv %s polls the qtimer file\n", srv.nr,
	       (long long)idle_ms, (long long)(timeout_ns(&srv, 999) / MSEC),
	       (long long)slack_ms, (long long)activity_ms, uv_version_string());

	ret = td_open(&srv.ctx, TD_NONBLOCK);
	if (!ret)
		ret = td_batch_init(srv.ctx, &srv.batch, BATCH);
	if (ret) {
		fprintf(stderr, "uv_idle: libtimerdev: %s\n", strerror(-ret));
		return 1;
	}
	td_batch_set_callback(&srv.batch, op_done, &srv);

	srv.loop = uv_default_loop();
	srv.expiries.data = srv.traffic.data = srv.watchdog.data =
		srv.quiet.data = &srv;
	ret = uv_poll_init(srv.loop, &srv.expiries, td_fd(srv.ctx));
	if (ret) {
		fprintf(stderr, "uv_idle: uv_poll_init: %s\n", uv_strerror(ret));
		return 1;
	}
	uv_timer_init(srv.loop, &srv.traffic);
	uv_timer_init(srv.loop, &srv.watchdog);
	uv_timer_init(srv.loop, &srv.quiet);

	/* Everyone connects: one idle timeout each, cookie = connection. */
	spec.slack_ns = srv.slack_ns;
	for (i = 0; i < srv.nr; i++) {
		spec.expires_ns = timeout_ns(&srv, i);
		spec.cookie = i;
		srv.conns[i].due = td_now(CLOCK_MONOTONIC) + spec.expires_ns;
		ret = td_batch_arm(&srv.batch, &spec, UD(OP_ARM, i));
		if (ret < 0)
			fail(&srv, "td_batch_arm", ret);
	}
	ret = td_batch_flush(&srv.batch);
	if (ret < 0 || srv.armed != srv.nr)
		fail(&srv, "arming", ret < 0 ? ret : (long long)srv.armed);

	srv.traffic_end = td_now(CLOCK_MONOTONIC) + activity_ms * MSEC;
	uv_poll_start(&srv.expiries, UV_READABLE, on_readable);
	uv_timer_start(&srv.traffic, on_traffic, 10, 10);
	uv_timer_start(&srv.watchdog, on_watchdog,
		       2 * timeout_ns(&srv, 999) / MSEC + activity_ms + 30000, 0);
	if (srv.errors)
		close_all(&srv);
	uv_run(srv.loop, UV_RUN_DEFAULT);
	uv_loop_close(srv.loop);

	for (i = 0; i < srv.nr; i++)
		missing += !srv.conns[i].expirations;
	if (missing)
		fail(&srv, "connections that never timed out", missing);
	printf("  armed %lu, pushed %lu (%lu rescued a fired timer), expired %lu "
	       "in %lu loop turns; latest %.1f ms after its timeout\n",
	       srv.armed, srv.pushed, srv.rescued, srv.expired, srv.turns,
	       srv.max_late / 1e6);

	td_batch_free(&srv.batch);
	td_close(srv.ctx);
	srv.errors += example_close_log(srv.log, log_path);
	return example_verdict("uv_idle", srv.errors,
			       "every connection timed out once, never early");
}
