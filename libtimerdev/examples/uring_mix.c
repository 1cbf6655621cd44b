// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * uring_mix: qtimer inside an io_uring loop, next to socket I/O.  One
 * thread and one ring drive both ends of a socketpair: the client end sends
 * requests, each asking for a reply after some delay, and waits between
 * sends with IORING_OP_TIMEOUT; the server end receives them, arms one
 * qtimer timer per request (cookie = request number, armed with one SUBMIT
 * per message) and replies when the timer fires.  The qtimer file is read
 * by the ring too: an IORING_OP_POLL_ADD linked to an IORING_OP_READ, so
 * the read runs only once records are pending and returns whole records.
 * That read copies each record out of the file's mapped record ring; a
 * loop that keeps the ring instead arms one multishot POLL_ADD on td_fd()
 * and, on each of its completions, takes the records from the mapping with
 * td_ring_peek() and td_ring_advance() until the peek returns 0, re-arming
 * the poll when a completion lacks IORING_CQE_F_MORE (see "Keeping the
 * ring" in Documentation/userspace-api/event-loops.rst); -r runs that
 * loop, and fails if any READ is made.
 *
 *   uring_mix [-r] [-n requests] [-b requests_per_message] [-i interval_us]
 *             [-m max_delay_ms] [-o log]
 *
 * -o writes one line per record read: "cookie due expires_ns arrival", the
 * earliest time the request allowed, the record's expiry and the clock when
 * the read completed, all CLOCK_MONOTONIC nanoseconds.
 *
 * Exits 0 when every request got exactly one record and one reply, and no
 * record came before its request's due time or before its own expiry.
 */
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <liburing.h>
#include <timerdev.h>

#include "common.h"

#define MSEC		1000000LL
#define MAX_BATCH	64	/* requests or replies in one message */
#define NR_RECORDS	64	/* records one READ may return */

/* What the ring's completions are, in user_data. */
enum op {
	OP_TIMER_POLL,
	OP_TIMER_READ,
	OP_CLIENT_SEND,
	OP_CLIENT_PAUSE,
	OP_CLIENT_RECV,
	OP_SERVER_RECV,
	OP_SERVER_SEND,
};

struct request {
	uint32_t seq;
	uint32_t delay_us;
};

struct loop {
	struct io_uring ring;
	struct td_ctx *ctx;
	struct td_batch batch;
	int client, server;	/* the two ends of the socketpair */
	FILE *log;

	unsigned int nr, per_message, interval_us, max_delay_ms;
	bool keep_ring;		/* -r: multishot poll + td_ring_peek, no READ */
	unsigned int peeks, polls;
	int64_t *due;		/* per request: earliest allowed expiry */
	uint8_t *records, *replies;	/* per request: how many arrived */
	unsigned int sent, recorded, replied;
	unsigned int reads, empty_reads;
	unsigned long errors;
	int64_t max_late;

	/* Buffers of the operations in flight: one of each at a time. */
	struct request client_out[MAX_BATCH], server_in[MAX_BATCH];
	uint32_t server_out[MAX_BATCH], client_in[MAX_BATCH];
	struct qtimer_record rec[NR_RECORDS];
	struct __kernel_timespec pause;
	int client_sending, server_sending;

	/* Replies waiting for the server's send in flight to finish. */
	uint32_t *pending;
	unsigned int nr_pending;
};

static void fail(struct loop *l, const char *what, long long value)
{
	if (l->errors++ < 10)
		fprintf(stderr, "uring_mix: ERROR: %s (%lld)\n", what, value);
}

/* An SQE, submitting what is queued first if the ring is full. */
static struct io_uring_sqe *get_sqe(struct loop *l, enum op op)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&l->ring);

	if (!sqe) {
		io_uring_submit(&l->ring);
		sqe = io_uring_get_sqe(&l->ring);
	}
	if (!sqe) {
		fprintf(stderr, "uring_mix: no SQE\n");
		exit(1);
	}
	io_uring_sqe_set_data64(sqe, op);
	return sqe;
}

/*
 * Wait for records, then read them: the link starts the READ only once the
 * POLL_ADD has completed.  The file must be O_NONBLOCK: io_uring then issues
 * the READ right here (it trusts any ->read to honour O_NONBLOCK), and
 * should the queue be empty after all, it waits with its own poll instead
 * of failing.  On a blocking file, which the device does not mark
 * FMODE_NOWAIT, every READ would go to an io-wq worker thread and sit in
 * read() until a timer fired.
 */
static void queue_timer_read(struct loop *l)
{
	struct io_uring_sqe *sqe;

	sqe = get_sqe(l, OP_TIMER_POLL);
	if (l->keep_ring) {
		/* Stays armed: a completion each time records become claimable. */
		io_uring_prep_poll_multishot(sqe, td_fd(l->ctx), POLLIN);
		return;
	}
	io_uring_prep_poll_add(sqe, td_fd(l->ctx), POLLIN);
	sqe->flags |= IOSQE_IO_LINK;
	sqe = get_sqe(l, OP_TIMER_READ);
	io_uring_prep_read(sqe, td_fd(l->ctx), l->rec, sizeof(l->rec), 0);
}

static void queue_client_send(struct loop *l)
{
	unsigned int i, n = l->nr - l->sent;
	struct io_uring_sqe *sqe;

	if (n > l->per_message)
		n = l->per_message;
	for (i = 0; i < n; i++) {
		l->client_out[i].seq = l->sent + i;
		l->client_out[i].delay_us = (uint32_t)rand() %
					    (l->max_delay_ms * 1000 + 1);
	}
	sqe = get_sqe(l, OP_CLIENT_SEND);
	io_uring_prep_send(sqe, l->client, l->client_out,
			   n * sizeof(l->client_out[0]), 0);
	l->client_sending = 1;
}

static void queue_recv(struct loop *l, enum op op)
{
	struct io_uring_sqe *sqe = get_sqe(l, op);

	if (op == OP_CLIENT_RECV)
		io_uring_prep_recv(sqe, l->client, l->client_in,
				   sizeof(l->client_in), 0);
	else
		io_uring_prep_recv(sqe, l->server, l->server_in,
				   sizeof(l->server_in), 0);
}

/* Send the waiting replies, as many as one message holds. */
static void queue_server_send(struct loop *l)
{
	unsigned int n = l->nr_pending < MAX_BATCH ? l->nr_pending : MAX_BATCH;
	struct io_uring_sqe *sqe;

	if (l->server_sending || !n)
		return;
	memcpy(l->server_out, l->pending, n * sizeof(l->pending[0]));
	l->nr_pending -= n;
	memmove(l->pending, l->pending + n, l->nr_pending * sizeof(l->pending[0]));
	sqe = get_sqe(l, OP_SERVER_SEND);
	io_uring_prep_send(sqe, l->server, l->server_out,
			   n * sizeof(l->server_out[0]), 0);
	l->server_sending = 1;
}

/* The server received a message of requests: a timer for each. */
static void on_requests(struct loop *l, int len)
{
	struct td_timer_spec spec = { .clockid = CLOCK_MONOTONIC };
	unsigned int i, n = len / sizeof(l->server_in[0]);
	int ret;

	for (i = 0; i < n; i++) {
		struct request *req = &l->server_in[i];

		if (req->seq >= l->nr) {
			fail(l, "request out of range", req->seq);
			continue;
		}
		spec.expires_ns = req->delay_us * 1000LL;
		spec.cookie = req->seq;
		/* Relative to the kernel's clock at SUBMIT, which is later. */
		l->due[req->seq] = td_now(CLOCK_MONOTONIC) + spec.expires_ns;
		ret = td_batch_arm(&l->batch, &spec, req->seq);
		if (ret < 0)
			fail(l, "td_batch_arm", ret);
	}
	ret = td_batch_flush(&l->batch);
	if (ret < 0)
		fail(l, "td_batch_flush", ret);
}

static void arm_done(const struct td_completion *c, void *arg)
{
	if (c->result < 0)
		fail(arg, "arm failed", c->result);
}

/* Check one record, read or peeked at time now, and queue its reply. */
static void on_record(struct loop *l, const struct qtimer_record *rec,
		      int64_t now)
{
	uint64_t seq = rec->cookie;

	if (seq >= l->nr) {
		fail(l, "unknown cookie", (long long)seq);
		return;
	}
	example_log_delivery(l->log, seq, l->due[seq], rec->expires_ns, now);
	/* A peeked record carries its claim in the top bits. */
	if (rec->count != 1 ||
	    (rec->flags & ~QTIMER_REC_CLAIM) != QTIMER_REC_LAST)
		fail(l, "bad record flags", rec->flags);
	if (rec->expires_ns < l->due[seq])
		fail(l, "expiry before the due time (ns)",
		     l->due[seq] - rec->expires_ns);
	if (now < rec->expires_ns)
		fail(l, "delivered before its expiry (ns)",
		     rec->expires_ns - now);
	if (l->records[seq]++)
		fail(l, "second record for request", (long long)seq);
	if (now - l->due[seq] > l->max_late)
		l->max_late = now - l->due[seq];
	l->recorded++;
	l->pending[l->nr_pending++] = (uint32_t)seq;
}

/* The READ returned len bytes of records: check each and queue its reply. */
static void on_records(struct loop *l, int len)
{
	int64_t now = td_now(CLOCK_MONOTONIC);
	unsigned int i, n = len / sizeof(l->rec[0]);

	if (len % sizeof(l->rec[0]))
		fail(l, "partial record", len);
	for (i = 0; i < n; i++)
		on_record(l, &l->rec[i], now);
	queue_server_send(l);
}

/*
 * -r: the multishot poll completed, so records became claimable.  Take
 * them where the kernel wrote them until none is left: a completion says
 * that some arrived, not how many, and one that arrives after the last
 * peek wakes the still-armed poll again.
 */
static void on_ring_ready(struct loop *l)
{
	const struct qtimer_record *recs[NR_RECORDS];
	int i, nr, ret;
	int64_t now;

	while ((nr = td_ring_peek(l->ctx, recs, NR_RECORDS)) > 0) {
		/* After the peek: a record may have been written just before. */
		now = td_now(CLOCK_MONOTONIC);
		l->peeks++;
		for (i = 0; i < nr; i++)
			on_record(l, recs[i], now);
		ret = td_ring_advance(l->ctx, nr);
		if (ret < 0)
			fail(l, "td_ring_advance", ret);
	}
	if (nr < 0)
		fail(l, "td_ring_peek", nr);
	queue_server_send(l);
}

/* The client received replies. */
static void on_replies(struct loop *l, int len)
{
	unsigned int i, n = len / sizeof(l->client_in[0]);

	for (i = 0; i < n; i++) {
		uint32_t seq = l->client_in[i];

		if (seq >= l->nr || l->replies[seq]++)
			fail(l, "unexpected reply", seq);
		else
			l->replied++;
	}
}

/* A message arrived at one end of the socketpair: take it, await the next. */
static void on_recv(struct loop *l, enum op op, int res)
{
	bool client = op == OP_CLIENT_RECV;

	if (res <= 0) {
		fail(l, client ? "client recv" : "server recv", res);
		return;
	}
	if (client)
		on_replies(l, res);
	else
		on_requests(l, res);
	queue_recv(l, op);
}

static void on_cqe(struct loop *l, const struct io_uring_cqe *cqe)
{
	enum op op = (enum op)io_uring_cqe_get_data64(cqe);
	struct io_uring_sqe *sqe;
	int res = cqe->res;

	switch (op) {
	case OP_TIMER_POLL:
		/* Success is the poll mask; the READ linked to it follows. */
		if (res < 0)
			fail(l, "poll on qtimer", res);
		if (!l->keep_ring)
			break;
		l->polls++;
		if (res > 0)
			on_ring_ready(l);
		/* Without F_MORE the multishot poll has ended: arm it again. */
		if (!(cqe->flags & IORING_CQE_F_MORE))
			queue_timer_read(l);
		break;
	case OP_TIMER_READ:
		l->reads++;
		l->empty_reads += res == -EAGAIN;
		if (res > 0)
			on_records(l, res);
		else if (res != -EAGAIN && res != -ECANCELED)
			fail(l, "read of qtimer", res);
		queue_timer_read(l);
		break;
	case OP_CLIENT_SEND:
		if (res <= 0 || res % sizeof(struct request)) {
			fail(l, "client send", res);
			break;
		}
		l->sent += res / sizeof(struct request);
		l->client_sending = 0;
		if (l->sent == l->nr)
			break;
		if (!l->interval_us) {
			queue_client_send(l);
			break;
		}
		l->pause.tv_sec = 0;
		l->pause.tv_nsec = l->interval_us * 1000LL;
		sqe = get_sqe(l, OP_CLIENT_PAUSE);
		io_uring_prep_timeout(sqe, &l->pause, 0, 0);
		break;
	case OP_CLIENT_PAUSE:
		if (res != -ETIME)
			fail(l, "client pause", res);
		queue_client_send(l);
		break;
	case OP_CLIENT_RECV:
	case OP_SERVER_RECV:
		on_recv(l, op, res);
		break;
	case OP_SERVER_SEND:
		if (res <= 0)
			fail(l, "server send", res);
		l->server_sending = 0;
		queue_server_send(l);
		break;
	}
}

/* Run the ring until done() or the deadline; 0, or -ETIME at the deadline. */
static int run(struct loop *l, int (*done)(const struct loop *), int64_t deadline)
{
	struct __kernel_timespec wait = { .tv_nsec = 100 * MSEC };
	struct io_uring_cqe *cqe;
	unsigned int head, seen;
	int ret;

	while (!done(l) && !l->errors) {
		if (td_now(CLOCK_MONOTONIC) >= deadline)
			return -ETIME;
		io_uring_submit(&l->ring);
		ret = io_uring_wait_cqe_timeout(&l->ring, &cqe, &wait);
		if (ret < 0 && ret != -ETIME && ret != -EINTR) {
			fail(l, "io_uring_wait_cqe_timeout", ret);
			break;
		}
		seen = 0;
		io_uring_for_each_cqe(&l->ring, head, cqe) {
			on_cqe(l, cqe);
			seen++;
		}
		io_uring_cq_advance(&l->ring, seen);
	}
	return 0;
}

static int all_replied(const struct loop *l)
{
	return l->replied == l->nr;
}

static int never(const struct loop *l)
{
	(void)l;
	return 0;
}

int main(int argc, char **argv)
{
	struct loop l = { .nr = 20000, .per_message = 16, .interval_us = 500,
			  .max_delay_ms = 300 };
	unsigned int i, missing = 0;
	char *log_path = NULL;
	int sv[2], ret;
	struct example_option options[] = {
		{ 'r', NULL, OPTION_FLAG, &l.keep_ring },
		{ 'n', "requests", OPTION_UINT, &l.nr },
		{ 'b', "requests_per_message", OPTION_UINT, &l.per_message },
		{ 'i', "interval_us", OPTION_UINT, &l.interval_us },
		{ 'm', "max_delay_ms", OPTION_UINT, &l.max_delay_ms },
		{ 'o', "log", OPTION_STRING, &log_path },
		{ 0 }
	};

	if (example_options(argc, argv, options))
		return 2;
	if (!l.nr || !l.per_message || l.per_message > MAX_BATCH ||
	    l.interval_us >= 1000000 || l.max_delay_ms > 4000) {
		fprintf(stderr, "uring_mix: bad arguments\n");
		return 2;
	}
	l.due = calloc(l.nr, sizeof(*l.due));
	l.records = calloc(l.nr, 1);
	l.replies = calloc(l.nr, 1);
	/* A record's reply waits here at most once: nr entries suffice. */
	l.pending = calloc(l.nr, sizeof(*l.pending));
	if (!l.due || !l.records || !l.replies || !l.pending)
		return 1;
	if (example_open_log(log_path, &l.log))
		return 1;

	ret = td_open(&l.ctx, TD_NONBLOCK);
	if (!ret)
		ret = td_batch_init(l.ctx, &l.batch, MAX_BATCH);
	if (ret) {
		fprintf(stderr, "uring_mix: libtimerdev: %s\n", strerror(-ret));
		return 1;
	}
	/* -r is the ring's path: without one it would test nothing. */
	if (l.keep_ring && td_ring_entries(l.ctx) <= 0) {
		fprintf(stderr, "uring_mix: -r: the context has no record ring\n");
		return 1;
	}
	td_batch_set_callback(&l.batch, arm_done, &l);
	/* SEQPACKET keeps each message of requests or replies whole. */
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv)) {
		perror("uring_mix: socketpair");
		return 1;
	}
	l.client = sv[0];
	l.server = sv[1];
	ret = io_uring_queue_init(256, &l.ring, 0);
	if (ret) {
		fprintf(stderr, "uring_mix: io_uring_queue_init: %s\n", strerror(-ret));
		return 1;
	}
	printf("uring_mix: %u requests, %u a message every %u us, replies after "
	       "0-%u ms; one ring for qtimer and a socketpair; records %s\n",
	       l.nr, l.per_message, l.interval_us, l.max_delay_ms,
	       l.keep_ring ? "peeked in the mapping (-r)" : "read with READ");

	queue_timer_read(&l);
	queue_recv(&l, OP_SERVER_RECV);
	queue_recv(&l, OP_CLIENT_RECV);
	queue_client_send(&l);
	if (run(&l, all_replied, td_now(CLOCK_MONOTONIC) + 60000 * MSEC))
		fail(&l, "timed out; replies", l.replied);
	/* Then nothing more may arrive: a second record would show up here. */
	run(&l, never, td_now(CLOCK_MONOTONIC) + 200 * MSEC);

	for (i = 0; i < l.nr; i++)
		missing += !l.records[i] || !l.replies[i];
	if (missing)
		fail(&l, "requests without a record or reply", missing);
	if (l.keep_ring)
		printf("  %u requests sent, %u records taken from the mapping "
		       "(%u poll completions, %u peeks, %u READs), ",
		       l.sent, l.recorded, l.polls, l.peeks, l.reads);
	else
		printf("  %u requests sent, %u records read (%u READs, %u found "
		       "none), ", l.sent, l.recorded, l.reads, l.empty_reads);
	printf("%u replies received; latest %.1f ms after its due time\n",
	       l.replied, l.max_late / 1e6);
	/* The ring's path copies nothing through read(). */
	if (l.keep_ring && l.reads)
		fail(&l, "READs in -r mode", l.reads);

	io_uring_queue_exit(&l.ring);
	td_batch_free(&l.batch);
	td_close(l.ctx);
	l.errors += example_close_log(l.log, log_path);
	return example_verdict("uring_mix", l.errors,
			       "every request answered once, never early");
}
