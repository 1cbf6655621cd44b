// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * libtimerdev against the real module, through the timer table: td_cancel
 * of an armed timer and td_modify pushing a plain one-shot later make no
 * system call (a child under a seccomp filter that fails every ioctl
 * proves it) and give the ioctls' results; what the table cannot serve
 * still goes to the ioctls; the places under the caps that stops hold come
 * back when an arm needs them; td_cancel racing the expiry is exact; and
 * TD_NOTABLE opens without a table (see device_harness.h for the rest).
 */
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "device_harness.h"

#define NEED_TABLE() do {						\
	if (!t_table_offered())						\
		SKIP(return, "the module has no QTIMER_FEAT_TABLE");	\
} while (0)

/* From here on every ioctl(2) of this process fails with ENOSYS. */
static int forbid_ioctls(void)
{
	struct sock_filter filter[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_ioctl, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {
		.len = sizeof(filter) / sizeof(filter[0]),
		.filter = filter,
	};

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -1;
	return syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
}

/* Whether this kernel has seccomp filters (debug-6.1's tinyconfig has not). */
static bool seccomp_filters(void)
{
	int status;
	pid_t pid = fork();

	if (!pid)
		_exit(forbid_ioctls() ? 1 : 0);
	return pid > 0 && waitpid(pid, &status, 0) == pid &&
	       WIFEXITED(status) && !WEXITSTATUS(status);
}

#define NEED_SECCOMP() do {						\
	if (!seccomp_filters())						\
		SKIP(return, "no seccomp filters: no proof of no ioctl");	\
} while (0)

/*
 * What td_cancel (modify false) or td_modify (relative, @expires_ns, no
 * period, slack or flags but @flags) returns for @id in a child that may
 * make no ioctl: -ENOSYS says the library went to the kernel.
 */
static int no_ioctl(struct td_ctx *ctx, uint64_t id, bool modify,
		    int64_t expires_ns, uint64_t period_ns, uint64_t slack_ns,
		    unsigned int flags)
{
	int status, ret;
	pid_t pid = fork();

	if (pid < 0)
		return -1000;
	if (!pid) {
		if (forbid_ioctls())
			_exit(255);
		ret = modify ? td_modify(ctx, id, expires_ns, period_ns, slack_ns,
					 flags) :
			       td_cancel(ctx, id);
		/* As a byte: 0..3 the masks, 100 + errno the errors. */
		_exit(ret < 0 ? 100 - ret : ret);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status) == 255)
		return -1000;
	ret = WEXITSTATUS(status);
	return ret >= 100 ? -(ret - 100) : ret;
}

/*
 * The same in this process where the kernel has no seccomp filters: the
 * results are checked all the same, and fdinfo shows that a stop went
 * through the table.
 */
static int table_op(struct td_ctx *ctx, uint64_t id, bool modify,
		    int64_t expires_ns, unsigned int flags)
{
	if (seccomp_filters())
		return no_ioctl(ctx, id, modify, expires_ns, 0, 0, flags);
	return modify ? td_modify(ctx, id, expires_ns, 0, 0, flags) :
			td_cancel(ctx, id);
}

/* td_cancel of an armed timer is a stop: no system call, the same answer. */
TEST_F(qt, cancel_is_a_stop)
{
	struct td_timer_spec spec = mono(FAR, 1);
	struct qtimer_record rec;
	uint64_t id;

	NEED_TABLE();
	ASSERT_EQ(0, td_arm(self->ctx, &spec, &id));
	ASSERT_LE(1, t_fdinfo_named(td_fd(self->ctx), "table_pages"));
	ASSERT_EQ(QTIMER_CANCEL_ARMED, table_op(self->ctx, id, false, 0, 0));
	/* The kernel has not looked yet: the timer is still counted... */
	EXPECT_EQ(1, t_fdinfo_named(td_fd(self->ctx), "timers"));
	/* ...but gone for every call, and a CANCEL frees it at once. */
	EXPECT_EQ(-ENOENT, td_get(self->ctx, id, &spec));
	EXPECT_EQ(-ENOENT, td_cancel(self->ctx, id));
	EXPECT_EQ(0, t_fdinfo_named(td_fd(self->ctx), "timers"));
	EXPECT_EQ(-EAGAIN, td_read(self->ctx, &rec, 1));
}

/*
 * td_modify pushing a plain one-shot later is a push: no system call; the
 * timer fires once, no earlier than the new expiry.
 */
TEST_F(qt, modify_later_is_a_push)
{
	struct td_timer_spec spec = mono(200 * NSEC_PER_MSEC, 2), got;
	struct qtimer_record rec;
	int64_t before;
	uint64_t id;

	NEED_TABLE();
	ASSERT_EQ(0, td_arm(self->ctx, &spec, &id));
	before = td_now(CLOCK_MONOTONIC);
	ASSERT_EQ(QTIMER_CANCEL_ARMED,
		  table_op(self->ctx, id, true, 700 * NSEC_PER_MSEC, 0));
	ASSERT_EQ(TD_TIMER_ARMED, td_get(self->ctx, id, &got));
	EXPECT_LE(before + 700 * NSEC_PER_MSEC, got.expires_ns);
	/* Absolute, later still: a push too. */
	ASSERT_EQ(QTIMER_CANCEL_ARMED,
		  table_op(self->ctx, id, true, got.expires_ns + 100 * NSEC_PER_MSEC,
			   TD_TIMER_ABSTIME));
	ASSERT_EQ(TD_TIMER_ARMED, td_get(self->ctx, id, &spec));
	EXPECT_EQ(got.expires_ns + 100 * NSEC_PER_MSEC, spec.expires_ns);
	ASSERT_EQ(1, t_wait_readable(td_fd(self->ctx), PATIENCE_MS));
	ASSERT_EQ(1, td_read(self->ctx, &rec, 1));
	/* Never early. */
	EXPECT_LE(spec.expires_ns, td_now(CLOCK_MONOTONIC));
	EXPECT_EQ(spec.expires_ns, rec.expires_ns);
	EXPECT_EQ(2, rec.cookie);
	EXPECT_EQ(1, rec.count);
	EXPECT_EQ(-ENOENT, td_cancel(self->ctx, id));
	EXPECT_EQ(-EAGAIN, td_read(self->ctx, &rec, 1));
}

/*
 * What a push cannot do as MODIFY would goes to the ioctl: sooner, a new
 * period or slack, cancel-on-set, a ticker or a slack timer, a relative
 * CLOCK_REALTIME expiry, a timer that fired.
 */
TEST_F(qt, modify_routes_the_rest_to_the_ioctl)
{
	struct td_timer_spec spec = mono(FAR, 3);
	uint64_t plain, ticker, slack, real, fired;
	int64_t now = td_now(CLOCK_REALTIME);

	NEED_TABLE();
	NEED_SECCOMP();
	ASSERT_EQ(0, td_arm(self->ctx, &spec, &plain));
	spec.period_ns = FAR;
	ASSERT_EQ(0, td_arm(self->ctx, &spec, &ticker));
	spec.period_ns = 0;
	spec.slack_ns = 1000;
	ASSERT_EQ(0, td_arm(self->ctx, &spec, &slack));
	spec = (struct td_timer_spec){
		.clockid = CLOCK_REALTIME, .flags = TD_TIMER_ABSTIME,
		.expires_ns = now + FAR,
	};
	ASSERT_EQ(0, td_arm(self->ctx, &spec, &real));
	spec = mono(NSEC_PER_MSEC, 4);
	ASSERT_EQ(0, td_arm(self->ctx, &spec, &fired));
	ASSERT_EQ(1, t_wait_readable(td_fd(self->ctx), PATIENCE_MS));

	EXPECT_EQ(-ENOSYS, no_ioctl(self->ctx, plain, true, FAR / 2, 0, 0, 0));
	EXPECT_EQ(-ENOSYS, no_ioctl(self->ctx, plain, true, 2 * FAR, FAR, 0, 0));
	EXPECT_EQ(-ENOSYS, no_ioctl(self->ctx, plain, true, 2 * FAR, 0, 1, 0));
	EXPECT_EQ(-ENOSYS, no_ioctl(self->ctx, ticker, true, 2 * FAR, 0, 0, 0));
	EXPECT_EQ(-ENOSYS, no_ioctl(self->ctx, slack, true, 2 * FAR, 0, 0, 0));
	EXPECT_EQ(-ENOSYS, no_ioctl(self->ctx, real, true, 2 * FAR, 0, 0, 0));
	EXPECT_EQ(-ENOSYS, no_ioctl(self->ctx, real, true, now + 2 * FAR, 0, 0,
				    TD_TIMER_ABSTIME | TD_TIMER_CANCEL_ON_SET));
	EXPECT_EQ(-ENOSYS, no_ioctl(self->ctx, fired, true, 2 * FAR, 0, 0, 0));
	EXPECT_EQ(-ENOSYS, no_ioctl(self->ctx, fired, false, 0, 0, 0, 0));
	/* An absolute CLOCK_REALTIME push is the table's. */
	EXPECT_EQ(QTIMER_CANCEL_ARMED,
		  no_ioctl(self->ctx, real, true, now + 2 * FAR, 0, 0,
			   TD_TIMER_ABSTIME));
	/* And the ioctls' answers are as ever. */
	EXPECT_EQ(QTIMER_CANCEL_ARMED, td_modify(self->ctx, ticker, 2 * FAR, 0, 0, 0));
	EXPECT_EQ(QTIMER_CANCEL_QUEUED, td_cancel(self->ctx, fired));
	EXPECT_EQ(QTIMER_CANCEL_ARMED, td_modify(self->ctx, plain, FAR / 2, 0, 0, 0));
	ASSERT_EQ(TD_TIMER_ARMED, td_get(self->ctx, ticker, &spec));
	EXPECT_EQ(0, spec.period_ns);
	ASSERT_EQ(TD_TIMER_ARMED, td_get(self->ctx, slack, &spec));
	EXPECT_EQ(1000, spec.slack_ns);
}

/* td_stop and td_push: the swaps alone, and what they say. */
TEST_F(qt, stop_and_push_say_who_won)
{
	struct td_timer_spec spec = mono(FAR, 5), got;
	uint64_t id, ticker, fired;
	struct td_ctx *plain;

	NEED_TABLE();
	ASSERT_EQ(0, td_arm(self->ctx, &spec, &id));
	spec.period_ns = FAR;
	spec.slack_ns = 1000;
	ASSERT_EQ(0, td_arm(self->ctx, &spec, &ticker));
	spec = mono(NSEC_PER_MSEC, 6);
	ASSERT_EQ(0, td_arm(self->ctx, &spec, &fired));

	ASSERT_EQ(0, td_push(self->ctx, id, 2 * FAR, 0));
	ASSERT_EQ(TD_TIMER_ARMED, td_get(self->ctx, id, &got));
	EXPECT_EQ(-ERANGE, td_push(self->ctx, id, got.expires_ns, TD_TIMER_ABSTIME));
	EXPECT_EQ(-ERANGE, td_push(self->ctx, id, FAR, 0));
	EXPECT_EQ(-ERANGE, td_push(self->ctx, id, INT64_MAX, TD_TIMER_ABSTIME));
	EXPECT_EQ(-EINVAL, td_push(self->ctx, id, -1, 0));
	EXPECT_EQ(-EINVAL, td_push(self->ctx, id, 2 * FAR, TD_TIMER_CANCEL_ON_SET));
	EXPECT_EQ(-EINVAL, td_push(NULL, id, 2 * FAR, 0));
	EXPECT_EQ(-EINVAL, td_stop(NULL, id));
	/* A ticker's push keeps its period and slack. */
	ASSERT_EQ(0, td_push(self->ctx, ticker, 2 * FAR, 0));
	ASSERT_EQ(TD_TIMER_ARMED, td_get(self->ctx, ticker, &got));
	EXPECT_EQ(FAR, got.period_ns);
	EXPECT_EQ(1000, got.slack_ns);
	/* Stopped: gone for the swaps and for the ioctls. */
	ASSERT_EQ(0, td_stop(self->ctx, id));
	EXPECT_EQ(-EAGAIN, td_stop(self->ctx, id));
	EXPECT_EQ(-EAGAIN, td_push(self->ctx, id, 3 * FAR, 0));
	EXPECT_EQ(-ENOENT, td_modify(self->ctx, id, 3 * FAR, 0, 0, 0));
	/* Fired: the kernel's; the record is there to read. */
	ASSERT_EQ(1, t_wait_readable(td_fd(self->ctx), PATIENCE_MS));
	EXPECT_EQ(-EAGAIN, td_stop(self->ctx, fired));
	EXPECT_EQ(-EAGAIN, td_push(self->ctx, fired, FAR, 0));
	EXPECT_EQ(QTIMER_CANCEL_QUEUED, td_cancel(self->ctx, fired));
	/* Ids no arm of this context returned: never looked at. */
	EXPECT_EQ(-EAGAIN, td_stop(self->ctx, 0));
	EXPECT_EQ(-EAGAIN, td_stop(self->ctx, ~0ULL));
	EXPECT_EQ(-EAGAIN, td_stop(self->ctx, id + 0x1000));
	/* No table, no swaps. */
	ASSERT_EQ(0, td_open(&plain, TD_NONBLOCK | TD_NOTABLE));
	EXPECT_EQ(-ENOTSUP, td_stop(plain, ticker));
	EXPECT_EQ(-ENOTSUP, td_push(plain, ticker, 3 * FAR, 0));
	td_close(plain);
}

/* Raced against their expiry, stops through the table are exact. */
#define RACERS	1024

TEST_F(qt, cancel_races_the_expiry)
{
	static uint64_t ids[RACERS];
	static int said[RACERS];
	struct qtimer_record recs[64];
	unsigned int got[RACERS] = { 0 }, i, armed = 0, queued = 0;
	unsigned int records = 0, gone = 0;
	int64_t start = td_now(CLOCK_MONOTONIC) + 50 * NSEC_PER_MSEC;
	int n;

	NEED_TABLE();
	for (i = 0; i < RACERS; i++) {
		struct td_timer_spec spec = {
			.clockid = CLOCK_MONOTONIC, .flags = TD_TIMER_ABSTIME,
			.expires_ns = start + (int64_t)i * 100 * NSEC_PER_USEC,
			.cookie = i,
		};

		ASSERT_EQ(0, td_arm(self->ctx, &spec, &ids[i]));
	}
	/*
	 * Cancel the odd ones about when they fire: 100 us before their
	 * expiry, at it, or 100 us after.
	 */
	for (i = 1; i < RACERS; i += 2) {
		int64_t at = start + (int64_t)i * 100 * NSEC_PER_USEC +
			     ((int64_t)(i % 3) - 1) * 100 * NSEC_PER_USEC;

		while (td_now(CLOCK_MONOTONIC) < at)
			;
		said[i] = td_cancel(self->ctx, ids[i]);
	}
	while ((n = td_wait(self->ctx, recs, 64, 2 * NSEC_PER_SEC)) > 0) {
		for (int k = 0; k < n; k++) {
			ASSERT_GT(RACERS, recs[k].cookie);
			got[recs[k].cookie]++;
			records++;
		}
	}
	for (i = 0; i < RACERS; i++) {
		if (!(i & 1)) {
			EXPECT_EQ(1, got[i]);
			continue;
		}
		/* ARMED or QUEUED: nothing arrives; -ENOENT: it was read. */
		if (said[i] == QTIMER_CANCEL_ARMED)
			armed++;
		else if (said[i] == QTIMER_CANCEL_QUEUED)
			queued++;
		else
			gone++;
		EXPECT_EQ(said[i] == -ENOENT ? 1 : 0, got[i]);
		EXPECT_TRUE(said[i] == QTIMER_CANCEL_ARMED ||
			    said[i] == QTIMER_CANCEL_QUEUED || said[i] == -ENOENT);
	}
	EXPECT_EQ(RACERS / 2 + gone, records);
	EXPECT_EQ(0, t_fdinfo_named(td_fd(self->ctx), "pending"));
	TH_LOG("of %u cancels: %u armed, %u queued, %u after the read",
	       RACERS / 2, armed, queued, gone);
}

/* The per-file cap, lowered for the test and put back after it. */
FIXTURE(caps) {
	struct td_ctx *ctx;
	long long saved;
};

#define CAP	64

FIXTURE_SETUP(caps)
{
	self->saved = t_param_get("max_timers_per_fd");
	ASSERT_LT(0, self->saved);
	ASSERT_EQ(0, t_param_set("max_timers_per_fd", CAP));
	ASSERT_EQ(0, td_open(&self->ctx, TD_NONBLOCK));
}

FIXTURE_TEARDOWN(caps)
{
	td_close(self->ctx);
	t_param_set("max_timers_per_fd", self->saved);
}

/* Arm CAP far timers and stop them all through td_cancel. */
static void fill_and_stop(struct __test_metadata *_metadata,
			  struct td_ctx *ctx)
{
	struct td_timer_spec spec = mono(FAR, 0);
	uint64_t ids[CAP], extra;
	unsigned int i;

	for (i = 0; i < CAP; i++)
		ASSERT_EQ(0, td_arm(ctx, &spec, &ids[i]));
	ASSERT_EQ(-ENOSPC, td_arm(ctx, &spec, &extra));
	for (i = 0; i < CAP; i++)
		ASSERT_EQ(QTIMER_CANCEL_ARMED, td_cancel(ctx, ids[i]));
	/* Stopped, not yet seen by the kernel: the places are held. */
	ASSERT_EQ(CAP, t_fdinfo_named(td_fd(ctx), "timers"));
}

static void count_result(const struct td_completion *c, void *arg)
{
	unsigned int *ok = arg;

	if (c->result == 0 && c->id)
		(*ok)++;
}

/* An arm that meets the cap takes back the places stops hold. */
TEST_F(caps, stops_give_their_places_to_arms)
{
	struct td_timer_spec spec = mono(FAR, 0);
	struct td_batch batch;
	unsigned int i, ok = 0;
	uint64_t id;

	NEED_TABLE();
	fill_and_stop(_metadata, self->ctx);
	ASSERT_EQ(0, td_arm(self->ctx, &spec, &id));
	EXPECT_EQ(1, t_fdinfo_named(td_fd(self->ctx), "timers"));
	ASSERT_EQ(QTIMER_CANCEL_ARMED, td_cancel(self->ctx, id));

	/* The same through a batch of arms. */
	fill_and_stop(_metadata, self->ctx);
	ASSERT_EQ(0, td_batch_init(self->ctx, &batch, CAP));
	td_batch_set_callback(&batch, count_result, &ok);
	for (i = 0; i < CAP; i++)
		ASSERT_EQ(0, td_batch_arm(&batch, &spec, i));
	EXPECT_EQ(0, batch.failed);
	EXPECT_EQ(CAP, ok);
	td_batch_free(&batch);
	EXPECT_EQ(CAP, t_fdinfo_named(td_fd(self->ctx), "timers"));
}

/* Mappings of the device's table (the ring's is at offset 0). */
static int table_mappings(void)
{
	return t_mappings_of(TD_DEVICE_PATH, false);
}

/* td_open maps the table, td_close unmaps it. */
TEST(mapped_and_unmapped)
{
	struct td_ctx *ctx;

	NEED_TABLE();
	ASSERT_EQ(0, table_mappings());
	ASSERT_EQ(0, td_open(&ctx, TD_NONBLOCK));
	EXPECT_EQ(1, table_mappings());
	td_close(ctx);
	EXPECT_EQ(0, table_mappings());
}

/* TD_NOTABLE: no table, and td_cancel frees at once through the ioctl. */
TEST(notable)
{
	struct td_timer_spec spec = mono(FAR, 0);
	struct td_ctx *ctx;
	uint64_t id;

	ASSERT_EQ(0, td_open(&ctx, TD_NONBLOCK | TD_NOTABLE));
	EXPECT_EQ(QT_FI_MISSING, t_fdinfo_named(td_fd(ctx), "table_pages"));
	EXPECT_EQ(0, table_mappings());
	ASSERT_EQ(0, td_arm(ctx, &spec, &id));
	if (seccomp_filters())
		EXPECT_EQ(-ENOSYS, no_ioctl(ctx, id, false, 0, 0, 0, 0));
	EXPECT_EQ(QTIMER_CANCEL_ARMED, td_cancel(ctx, id));
	EXPECT_EQ(0, t_fdinfo_named(td_fd(ctx), "timers"));
	td_close(ctx);
	EXPECT_EQ(-EINVAL, td_open(&ctx, 1 << 4));
}

TEST_HARNESS_MAIN
