// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * epoll_mix: one event loop, three kinds of event source.  A client thread
 * sends requests through a pipe, each asking for a reply after some delay;
 * the loop arms one qtimer timer per request and replies when it fires; the
 * client says it is done through an eventfd.  The qtimer file is just one
 * more descriptor in the epoll set, and td_dispatch drains it.
 *
 *   epoll_mix [-n requests] [-i interval_us] [-m max_delay_ms]
 *
 * Exits 0 when every request got exactly one reply, never before its delay.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <timerdev.h>

#include "common.h"

#define MSEC	1000000LL

struct request {
	uint32_t seq;
	uint32_t delay_ms;
};

struct client {
	int pipe_wr, done_fd;
	unsigned int nr, interval_us, max_delay_ms;
};

struct loop {
	struct td_ctx *ctx;
	unsigned int nr;
	int64_t *due;		/* per request: earliest allowed reply */
	uint8_t *replies;
	unsigned int replied, errors;
	int64_t max_late;
};

static void *client_main(void *arg)
{
	struct client *c = arg;
	struct request req;
	uint64_t one = 1;
	unsigned int i;

	for (i = 0; i < c->nr; i++) {
		req.seq = i;
		req.delay_ms = (unsigned int)rand() % (c->max_delay_ms + 1);
		if (write(c->pipe_wr, &req, sizeof(req)) != sizeof(req))
			break;
		if (c->interval_us)
			usleep(c->interval_us);
	}
	if (write(c->done_fd, &one, sizeof(one)) != sizeof(one))
		perror("epoll_mix: eventfd");
	return NULL;
}

/* A timer fired: reply to its request. */
static void on_timer(const struct qtimer_record *rec, void *arg)
{
	struct loop *l = arg;
	int64_t now = td_now(CLOCK_MONOTONIC);

	if (rec->cookie >= l->nr || rec->flags != QTIMER_REC_LAST) {
		l->errors++;
		return;
	}
	if (now < l->due[rec->cookie] || rec->expires_ns < l->due[rec->cookie])
		l->errors++;	/* early */
	if (now - l->due[rec->cookie] > l->max_late)
		l->max_late = now - l->due[rec->cookie];
	l->replies[rec->cookie]++;
	l->replied++;
}

/* Requests arrived: one timer each, cookie = request number. */
static int on_requests(struct loop *l, int fd)
{
	struct td_timer_spec spec = { .clockid = CLOCK_MONOTONIC };
	struct request req[64];
	ssize_t len = read(fd, req, sizeof(req));
	int i, ret;

	if (len <= 0)
		return len == 0 ? 0 : -errno;
	/* Requests are small and written whole: pipes keep them intact. */
	for (i = 0; i < (int)(len / sizeof(req[0])); i++) {
		if (req[i].seq >= l->nr)
			return -EINVAL;
		spec.expires_ns = req[i].delay_ms * MSEC;
		spec.cookie = req[i].seq;
		l->due[req[i].seq] = td_now(CLOCK_MONOTONIC) + spec.expires_ns;
		ret = td_arm(l->ctx, &spec, NULL);
		if (ret)
			return ret;
	}
	return 1;
}

int main(int argc, char **argv)
{
	struct client c = { .nr = 2000, .interval_us = 200, .max_delay_ms = 300 };
	struct epoll_event ev, events[8];
	struct loop l = { 0 };
	unsigned int wakeups[3] = { 0 }, i;
	int pipefd[2], ep, ret, n, client_done = 0, pipe_open = 1;
	int64_t deadline;
	pthread_t th;
	struct example_option options[] = {
		{ 'n', "requests", OPTION_UINT, &c.nr },
		{ 'i', "interval_us", OPTION_UINT, &c.interval_us },
		{ 'm', "max_delay_ms", OPTION_UINT, &c.max_delay_ms },
		{ 0 }
	};

	if (example_options(argc, argv, options))
		return 2;
	l.nr = c.nr;
	l.due = calloc(c.nr + 1, sizeof(*l.due));
	l.replies = calloc(c.nr + 1, 1);
	if (!l.due || !l.replies)
		return 1;

	ret = td_open(&l.ctx, TD_NONBLOCK);
	if (ret) {
		fprintf(stderr, "epoll_mix: td_open: %s\n", strerror(-ret));
		return 1;
	}
	ep = epoll_create1(EPOLL_CLOEXEC);
	c.done_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (ep < 0 || c.done_fd < 0 || pipe2(pipefd, O_CLOEXEC)) {
		perror("epoll_mix");
		return 1;
	}
	c.pipe_wr = pipefd[1];
	ev.events = EPOLLIN;
	for (i = 0; i < 3; i++) {
		int fd = i == 0 ? td_fd(l.ctx) : i == 1 ? pipefd[0] : c.done_fd;

		ev.data.u32 = i;
		if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev)) {
			perror("epoll_mix: epoll_ctl");
			return 1;
		}
	}
	printf("epoll_mix: %u requests every %u us, replies after 0-%u ms, "
	       "one epoll set for qtimer, pipe and eventfd\n",
	       c.nr, c.interval_us, c.max_delay_ms);
	if (pthread_create(&th, NULL, client_main, &c))
		return 1;

	/* Until the client is done and every request has its reply. */
	deadline = td_now(CLOCK_MONOTONIC) + 60000 * MSEC;
	while ((!client_done || pipe_open || l.replied < l.nr) && !l.errors) {
		if (td_now(CLOCK_MONOTONIC) > deadline) {
			fprintf(stderr, "epoll_mix: timed out\n");
			l.errors++;
			break;
		}
		n = epoll_wait(ep, events, 8, 1000);
		for (i = 0; i < (unsigned int)n; i++) {
			uint64_t value;

			wakeups[events[i].data.u32]++;
			switch (events[i].data.u32) {
			case 0:
				ret = td_dispatch(l.ctx, on_timer, &l, 256);
				if (ret < 0 && ret != -EAGAIN)
					l.errors++;
				break;
			case 1:
				ret = on_requests(&l, pipefd[0]);
				if (ret < 0)
					l.errors++;
				if (ret == 0) {		/* writer closed */
					epoll_ctl(ep, EPOLL_CTL_DEL, pipefd[0], NULL);
					pipe_open = 0;
				}
				break;
			case 2:
				if (read(c.done_fd, &value, sizeof(value)) == sizeof(value)) {
					client_done = 1;
					/* Everything is in the pipe: let EOF mark its end. */
					pthread_join(th, NULL);
					close(pipefd[1]);
				}
				break;
			}
		}
	}

	for (i = 0; i < l.nr; i++)
		if (l.replies[i] != 1)
			l.errors++;
	printf("  wakeups: qtimer %u, pipe %u, eventfd %u; %u replies, "
	       "latest %.1f ms after its due time\n", wakeups[0], wakeups[1],
	       wakeups[2], l.replied, l.max_late / 1e6);
	td_close(l.ctx);
	close(ep);
	return example_verdict("epoll_mix", l.errors,
			       "every request answered once, never early");
}
