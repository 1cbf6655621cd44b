// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * libtimerdev against the real module, taking records: td_read and td_wait
 * on blocking and non-blocking contexts, td_dispatch, a record cancelled
 * between td_wait's poll and its read, and td_fd in an epoll set (see
 * device_harness.h for what every libtimerdev_*_test shares).
 */
#include <dlfcn.h>
#include <pthread.h>
#include <sys/epoll.h>

#include "device_harness.h"

/* ---- td_read, td_wait ---- */

TEST_F(qt, read_nonblocking_empty)
{
	struct qtimer_record rec;

	ASSERT_EQ(-EAGAIN, td_read(self->ctx, &rec, 1));
}

TEST_F(qt, read_bad_args)
{
	struct qtimer_record rec;

	ASSERT_EQ(-EINVAL, td_read(self->ctx, &rec, 0));
	ASSERT_EQ(-EINVAL, td_read(self->ctx, NULL, 1));
}

TEST_F(qt, read_several)
{
	struct td_timer_spec spec = mono(0, 0);
	struct qtimer_record rec[16];
	int i, nr, got = 0;
	bool seen[10] = { false };

	for (i = 0; i < 10; i++) {
		spec.cookie = i;
		spec.expires_ns = NSEC_PER_MSEC;
		ASSERT_EQ(0, td_arm(self->ctx, &spec, NULL));
	}
	while (got < 10) {
		nr = td_wait(self->ctx, rec, 3, PATIENCE);
		ASSERT_GT(nr, 0);
		ASSERT_LE(nr, 3);
		for (i = 0; i < nr; i++) {
			ASSERT_LT(rec[i].cookie, 10);
			ASSERT_FALSE(seen[rec[i].cookie]);
			seen[rec[i].cookie] = true;
		}
		got += nr;
	}
	ASSERT_EQ(-EAGAIN, td_read(self->ctx, rec, 16));
}

/* A blocking context blocks in td_read until the first record. */
TEST(read_blocks)
{
	struct td_timer_spec spec = mono(30 * NSEC_PER_MSEC, 3);
	struct qtimer_record rec;
	struct td_ctx *ctx;
	int64_t due;

	ASSERT_EQ(0, td_open(&ctx, 0));
	due = td_now(CLOCK_MONOTONIC) + spec.expires_ns;
	ASSERT_EQ(0, td_arm(ctx, &spec, NULL));
	ASSERT_EQ(1, td_read(ctx, &rec, 1));
	ASSERT_LE(due, td_now(CLOCK_MONOTONIC));
	ASSERT_EQ(3, rec.cookie);
	td_close(ctx);
}

TEST_F(qt, wait_timeout)
{
	struct qtimer_record rec;
	int64_t start = td_now(CLOCK_MONOTONIC);

	ASSERT_EQ(-ETIME, td_wait(self->ctx, &rec, 1, 50 * NSEC_PER_MSEC));
	ASSERT_GE(td_now(CLOCK_MONOTONIC) - start, 50 * NSEC_PER_MSEC);
	ASSERT_EQ(-ETIME, td_wait(self->ctx, &rec, 1, 0));
	ASSERT_EQ(-EINVAL, td_wait(self->ctx, &rec, 0, 0));
}

/* The timer fires after the wait began but before its timeout. */
TEST(wait_blocking_context)
{
	struct td_timer_spec spec = mono(20 * NSEC_PER_MSEC, 4);
	struct qtimer_record rec;
	struct td_ctx *ctx;

	ASSERT_EQ(0, td_open(&ctx, 0));
	ASSERT_EQ(-ETIME, td_wait(ctx, &rec, 1, 10 * NSEC_PER_MSEC));
	ASSERT_EQ(0, td_arm(ctx, &spec, NULL));
	ASSERT_EQ(1, td_wait(ctx, &rec, 1, PATIENCE));
	ASSERT_EQ(4, rec.cookie);
	td_close(ctx);
}

/* ---- td_dispatch ---- */

TEST_F(qt, dispatch_all)
{
	struct td_timer_spec spec = mono(5 * NSEC_PER_MSEC, 0);
	struct tally t = { 0 };
	int i, nr;

	for (i = 0; i < 300; i++) {
		spec.cookie = i;
		ASSERT_EQ(0, td_arm(self->ctx, &spec, NULL));
	}
	ASSERT_EQ(1, t_wait_readable(td_fd(self->ctx), PATIENCE_MS));
	/* max caps each call. */
	nr = td_dispatch(self->ctx, tally_cb, &t, 7);
	ASSERT_GT(nr, 0);
	ASSERT_LE(nr, 7);
	ASSERT_EQ(nr, t.nr);
	while (t.nr < 300) {
		ASSERT_EQ(1, t_wait_readable(td_fd(self->ctx), PATIENCE_MS));
		nr = td_dispatch(self->ctx, tally_cb, &t, 1000);
		ASSERT_GT(nr, 0);
	}
	ASSERT_EQ(300, t.nr);
	ASSERT_EQ(0, t.bad);
	for (i = 0; i < 300; i++)
		ASSERT_EQ(1, t.per_cookie[i]);
	ASSERT_EQ(-EAGAIN, td_dispatch(self->ctx, tally_cb, &t, 10));
}

TEST_F(qt, dispatch_bad_args)
{
	struct tally t = { 0 };

	ASSERT_EQ(-EINVAL, td_dispatch(self->ctx, NULL, &t, 1));
	ASSERT_EQ(-EINVAL, td_dispatch(self->ctx, tally_cb, &t, 0));
}

/*
 * The library's ppoll(2), interposed: when armed for a context, the first
 * call for its descriptor arms a one-shot due at once before it polls, and
 * once the poll reports POLLIN, cancels it, as another thread could in
 * that window.
 */
static struct {
	struct td_ctx *_Atomic ctx;
	uint64_t id;
	int cancelled;
} hook;

int ppoll(struct pollfd *fds, nfds_t nfds, const struct timespec *tmo,
	  const sigset_t *sigmask)
{
	static int (*real)(struct pollfd *, nfds_t, const struct timespec *,
			   const sigset_t *);
	struct td_timer_spec spec = mono(0, 7);
	struct td_ctx *ctx = hook.ctx;
	int ret;

	if (!real)
		real = (int (*)(struct pollfd *, nfds_t, const struct timespec *,
				const sigset_t *))dlsym(RTLD_NEXT, "ppoll");
	/*
	 * Only td_wait() polls while the hook is armed (glibc's declaration
	 * forbids reading *fds before the call).
	 */
	if (ctx && nfds == 1 && !hook.id && td_arm(ctx, &spec, &hook.id))
		abort();
	ret = real(fds, nfds, tmo, sigmask);
	if (ctx && ret > 0 && nfds == 1 && fds[0].fd == td_fd(ctx) &&
	    (fds[0].revents & POLLIN)) {
		hook.ctx = NULL;
		hook.cancelled = td_cancel(ctx, hook.id);
	}
	return ret;
}

struct wait_call {
	struct td_ctx *ctx;
	int ret;
};

static void *wait_200ms(void *arg)
{
	struct wait_call *w = arg;
	struct qtimer_record rec;

	w->ret = td_wait(w->ctx, &rec, 1, 200 * NSEC_PER_MSEC);
	return NULL;
}

/*
 * A blocking context: td_wait() polls, a record arrives, and a CANCEL voids
 * it before the library reads.  td_wait() must still give up at its
 * timeout.  (Its read(2) after POLLIN used to block, on a blocking file,
 * until some later expiry: here, for ever.)
 */
TEST(wait_after_poll_record_cancelled)
{
	struct wait_call w = { 0 };
	struct timespec until;
	pthread_t th;

	ASSERT_EQ(0, td_open(&w.ctx, 0));
	hook.id = 0;
	hook.ctx = w.ctx;
	ASSERT_EQ(0, pthread_create(&th, NULL, wait_200ms, &w));
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += PATIENCE / NSEC_PER_SEC;
	ASSERT_EQ(0, pthread_timedjoin_np(th, NULL, &until))
		TH_LOG("td_wait() still blocked %lld s after its 200 ms timeout",
		       PATIENCE / NSEC_PER_SEC);
	ASSERT_NE(0, hook.id);
	ASSERT_EQ(NULL, hook.ctx) TH_LOG("the poll never reported the record");
	EXPECT_EQ(QTIMER_CANCEL_QUEUED, hook.cancelled);
	EXPECT_EQ(-ETIME, w.ret);
	td_close(w.ctx);
}

/* ---- td_fd with epoll ---- */

TEST_F(qt, epoll)
{
	struct td_timer_spec spec = mono(20 * NSEC_PER_MSEC, 0);
	struct epoll_event ev = { .events = EPOLLIN };
	struct qtimer_record rec;
	int ep = epoll_create1(EPOLL_CLOEXEC);

	ASSERT_GE(ep, 0);
	ev.data.u64 = 42;
	ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_ADD, td_fd(self->ctx), &ev));
	ASSERT_EQ(0, epoll_wait(ep, &ev, 1, 0));
	ASSERT_EQ(0, td_arm(self->ctx, &spec, NULL));
	ASSERT_EQ(1, epoll_wait(ep, &ev, 1, PATIENCE_MS));
	ASSERT_EQ(42, ev.data.u64);
	ASSERT_EQ(EPOLLIN, ev.events);
	ASSERT_EQ(1, td_read(self->ctx, &rec, 1));
	/* Readable exactly while records are pending. */
	ASSERT_EQ(0, epoll_wait(ep, &ev, 1, 0));
	close(ep);
}

TEST_HARNESS_MAIN
