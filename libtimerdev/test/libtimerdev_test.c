// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * libtimerdev against the real module, in the VM: every public function,
 * its success path and its error paths, through the library only.  Timing
 * is asserted one way only: never early, exactly; late, only within the
 * generous bounds that a QEMU TCG guest needs.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "timerdev.h"

#define MSEC		1000000LL
#define SEC		1000000000LL
/* How long a test waits for something that should happen in milliseconds. */
#define PATIENCE	(10 * SEC)
#define FAR		(600 * SEC)	/* never fires during a test */
#define PARAM_DIR	"/sys/module/qtimer/parameters/"

static struct td_timer_spec mono(int64_t expires_ns, uint64_t cookie)
{
	return (struct td_timer_spec){
		.clockid = CLOCK_MONOTONIC,
		.expires_ns = expires_ns,
		.cookie = cookie,
	};
}

static int poll_ready(struct td_ctx *ctx, int timeout_ms)
{
	struct pollfd pfd = { .fd = td_fd(ctx), .events = POLLIN };

	return poll(&pfd, 1, timeout_ms) == 1 && (pfd.revents & POLLIN);
}

static long read_param(const char *name)
{
	char path[128], buf[32] = "";
	long value = -1;
	FILE *f;

	snprintf(path, sizeof(path), PARAM_DIR "%s", name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fgets(buf, sizeof(buf), f))
		value = strtol(buf, NULL, 10);
	fclose(f);
	return value;
}

static int write_param(const char *name, long value)
{
	char path[128];
	FILE *f;
	int ret;

	snprintf(path, sizeof(path), PARAM_DIR "%s", name);
	f = fopen(path, "w");
	if (!f)
		return -errno;
	ret = fprintf(f, "%ld\n", value) < 0;
	return fclose(f) || ret ? -EIO : 0;
}

FIXTURE(qt) {
	struct td_ctx *ctx;	/* non-blocking */
};

FIXTURE_SETUP(qt)
{
	ASSERT_EQ(0, td_open(&self->ctx, TD_NONBLOCK | TD_CLOEXEC));
}

FIXTURE_TEARDOWN(qt)
{
	td_close(self->ctx);
}

/* ---- td_open, td_close, td_fd, td_version ---- */

TEST(open_modes)
{
	struct td_ctx *ctx;
	int fd;

	/* Close-on-exec by default. */
	ASSERT_EQ(0, td_open(&ctx, 0));
	fd = td_fd(ctx);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(0, fcntl(fd, F_GETFL) & O_NONBLOCK);
	ASSERT_NE(0, fcntl(fd, F_GETFD) & FD_CLOEXEC);
	td_close(ctx);
	ASSERT_EQ(-1, fcntl(fd, F_GETFD));

	ASSERT_EQ(0, td_open(&ctx, TD_NONBLOCK | TD_CLOEXEC));
	fd = td_fd(ctx);
	ASSERT_NE(0, fcntl(fd, F_GETFL) & O_NONBLOCK);
	ASSERT_NE(0, fcntl(fd, F_GETFD) & FD_CLOEXEC);
	td_close(ctx);

	ASSERT_EQ(0, td_open(&ctx, TD_NOCLOEXEC));
	fd = td_fd(ctx);
	ASSERT_EQ(0, fcntl(fd, F_GETFD) & FD_CLOEXEC);
	td_close(ctx);
}

TEST(open_bad_flags)
{
	struct td_ctx *ctx;

	ASSERT_EQ(-EINVAL, td_open(&ctx, 1 << 7));
	ASSERT_NULL(ctx);
}

TEST(open_missing_device)
{
	struct td_ctx *ctx;

	ASSERT_EQ(-ENOENT, td_open_path(&ctx, "/dev/qtimer-missing", 0));
}

TEST(open_other_device)
{
	struct td_ctx *ctx;

	/* A character device that is not qtimer fails the handshake. */
	ASSERT_EQ(-ENOTSUP, td_open_path(&ctx, "/dev/null", 0));
	ASSERT_NULL(ctx);
}

TEST_F(qt, version)
{
	struct qtimer_version v;
	long param;

	memset(&v, 0xa5, sizeof(v));
	ASSERT_EQ(0, td_version(self->ctx, &v));
	ASSERT_EQ(QTIMER_API_VERSION, v.api_version);
	ASSERT_EQ(sizeof(struct qtimer_record), v.record_size);
	ASSERT_EQ(sizeof(struct qtimer_op), v.op_size);
	ASSERT_EQ(QTIMER_SUBMIT_MAX, v.submit_max);
	ASSERT_EQ(QTIMER_COUNT_MAX, v.count_max);
	ASSERT_EQ(QTIMER_SLACK_MAX_NS, v.max_slack_ns);
	ASSERT_EQ((1U << CLOCK_REALTIME) | (1U << CLOCK_MONOTONIC) |
		  (1U << CLOCK_BOOTTIME), v.clocks);
	ASSERT_EQ(QTIMER_FEAT_SUBMIT | QTIMER_FEAT_PERIODIC | QTIMER_FEAT_SLACK,
		  v.features & (QTIMER_FEAT_SUBMIT | QTIMER_FEAT_PERIODIC |
				QTIMER_FEAT_SLACK));
	ASSERT_EQ(0, v.reserved[0] | v.reserved[1] | v.reserved[2]);
	param = read_param("max_timers_per_fd");
	if (param >= 0)
		ASSERT_EQ(param, v.max_timers_per_fd);
	param = read_param("max_timers_per_user");
	if (param >= 0)
		ASSERT_EQ(param, v.max_timers_per_user);
	ASSERT_EQ(-EINVAL, td_version(self->ctx, NULL));
}

/* td_version asks the device again: it sees a changed module parameter. */
TEST_F(qt, version_follows_limits)
{
	struct qtimer_version v;
	long old = read_param("max_timers_per_fd");

	ASSERT_GT(old, 0);
	ASSERT_EQ(0, write_param("max_timers_per_fd", 4321));
	ASSERT_EQ(0, td_version(self->ctx, &v));
	ASSERT_EQ(0, write_param("max_timers_per_fd", old));
	ASSERT_EQ(4321, v.max_timers_per_fd);
}

/* ---- td_arm ---- */

FIXTURE(clock) {
	struct td_ctx *ctx;
};

FIXTURE_VARIANT(clock) {
	clockid_t clockid;
	bool abstime;
};

FIXTURE_VARIANT_ADD(clock, monotonic) {
	.clockid = CLOCK_MONOTONIC,
};

FIXTURE_VARIANT_ADD(clock, realtime) {
	.clockid = CLOCK_REALTIME,
};

FIXTURE_VARIANT_ADD(clock, boottime) {
	.clockid = CLOCK_BOOTTIME,
};

FIXTURE_VARIANT_ADD(clock, monotonic_abs) {
	.clockid = CLOCK_MONOTONIC,
	.abstime = true,
};

FIXTURE_VARIANT_ADD(clock, realtime_abs) {
	.clockid = CLOCK_REALTIME,
	.abstime = true,
};

FIXTURE_VARIANT_ADD(clock, boottime_abs) {
	.clockid = CLOCK_BOOTTIME,
	.abstime = true,
};

FIXTURE_SETUP(clock)
{
	ASSERT_EQ(0, td_open(&self->ctx, TD_NONBLOCK));
}

FIXTURE_TEARDOWN(clock)
{
	td_close(self->ctx);
}

/* A one-shot timer fires once, never early, and is then gone. */
TEST_F(clock, oneshot_fires_once)
{
	struct td_timer_spec spec = {
		.clockid = variant->clockid,
		.expires_ns = 20 * MSEC,
		.cookie = 0xc0ffee,
	};
	struct qtimer_record rec[2];
	int64_t start, due, now;
	uint64_t id;

	start = td_now(variant->clockid);
	due = start + spec.expires_ns;
	if (variant->abstime) {
		spec.flags = TD_TIMER_ABSTIME;
		spec.expires_ns = due;
	}
	ASSERT_EQ(0, td_arm(self->ctx, &spec, &id));
	ASSERT_NE(0, id);
	ASSERT_EQ(1, td_wait(self->ctx, rec, 2, PATIENCE));
	now = td_now(variant->clockid);
	ASSERT_EQ(id, rec[0].id);
	ASSERT_EQ(0xc0ffee, rec[0].cookie);
	ASSERT_EQ(1, rec[0].count);
	ASSERT_EQ(QTIMER_REC_LAST, rec[0].flags);
	ASSERT_GE(rec[0].expires_ns, due);
	ASSERT_LE(rec[0].expires_ns, now);
	if (variant->abstime)
		ASSERT_EQ(due, rec[0].expires_ns);
	/* Gone: no second record, and the id is dead. */
	ASSERT_EQ(-ETIME, td_wait(self->ctx, rec, 2, 50 * MSEC));
	ASSERT_EQ(-ENOENT, td_cancel(self->ctx, id));
}

TEST_F(qt, arm_id_optional)
{
	struct td_timer_spec spec = mono(MSEC, 5);
	struct qtimer_record rec;

	ASSERT_EQ(0, td_arm(self->ctx, &spec, NULL));
	ASSERT_EQ(1, td_wait(self->ctx, &rec, 1, PATIENCE));
	ASSERT_EQ(5, rec.cookie);
}

TEST_F(qt, arm_on_cpu)
{
	struct td_timer_spec spec = mono(MSEC, 7);
	struct qtimer_record rec;
	long cpu, nr = sysconf(_SC_NPROCESSORS_ONLN);

	spec.flags = TD_TIMER_CPU;
	for (cpu = 0; cpu < nr; cpu++) {
		spec.cpu = cpu;
		ASSERT_EQ(0, td_arm(self->ctx, &spec, NULL));
		ASSERT_EQ(1, td_wait(self->ctx, &rec, 1, PATIENCE));
		ASSERT_EQ(7, rec.cookie);
	}
}

TEST_F(qt, arm_offline_cpu)
{
	struct td_timer_spec spec = mono(FAR, 0);

	spec.flags = TD_TIMER_CPU;
	spec.cpu = sysconf(_SC_NPROCESSORS_CONF) + 1;
	ASSERT_EQ(-EINVAL, td_arm(self->ctx, &spec, NULL));
}

TEST_F(qt, arm_bad_clock)
{
	struct td_timer_spec spec = mono(FAR, 0);

	spec.clockid = CLOCK_PROCESS_CPUTIME_ID;
	ASSERT_EQ(-EINVAL, td_arm(self->ctx, &spec, NULL));
}

TEST_F(qt, arm_negative_relative)
{
	struct td_timer_spec spec = mono(-1, 0);

	ASSERT_EQ(-EINVAL, td_arm(self->ctx, &spec, NULL));
}

TEST_F(qt, arm_slack_above_limit)
{
	struct td_timer_spec spec = mono(FAR, 0);

	spec.slack_ns = QTIMER_SLACK_MAX_NS + 1;
	ASSERT_EQ(-EINVAL, td_arm(self->ctx, &spec, NULL));
}

TEST_F(qt, arm_slack_at_limit)
{
	struct td_timer_spec spec = mono(FAR, 0);
	uint64_t id;

	spec.slack_ns = QTIMER_SLACK_MAX_NS;
	ASSERT_EQ(0, td_arm(self->ctx, &spec, &id));
	ASSERT_EQ(QTIMER_CANCEL_ARMED, td_cancel(self->ctx, id));
}

TEST_F(qt, arm_cancel_on_set_needs_realtime_abs)
{
	struct td_timer_spec spec = mono(FAR, 0);

	spec.flags = TD_TIMER_CANCEL_ON_SET;
	ASSERT_EQ(-EINVAL, td_arm(self->ctx, &spec, NULL));
	spec.flags |= TD_TIMER_ABSTIME;
	spec.expires_ns += td_now(CLOCK_MONOTONIC);
	ASSERT_EQ(-EINVAL, td_arm(self->ctx, &spec, NULL));
	spec.clockid = CLOCK_REALTIME;
	spec.flags = TD_TIMER_CANCEL_ON_SET;	/* relative */
	ASSERT_EQ(-EINVAL, td_arm(self->ctx, &spec, NULL));
}

TEST_F(qt, arm_overflow)
{
	struct td_timer_spec spec = mono(INT64_MAX, 0);

	ASSERT_EQ(-EOVERFLOW, td_arm(self->ctx, &spec, NULL));
}

TEST_F(qt, arm_library_checks)
{
	struct td_timer_spec spec = mono(FAR, 0);

	spec.cpu = -2;
	ASSERT_EQ(-EINVAL, td_arm(self->ctx, &spec, NULL));
	/* A CPU without TD_TIMER_CPU, and TD_TIMER_CPU without a CPU. */
	spec.cpu = 1;
	ASSERT_EQ(-EINVAL, td_arm(self->ctx, &spec, NULL));
	spec.cpu = TD_CPU_ANY;
	spec.flags = TD_TIMER_CPU;
	ASSERT_EQ(-EINVAL, td_arm(self->ctx, &spec, NULL));
	ASSERT_EQ(-EINVAL, td_arm(self->ctx, NULL, NULL));
}

/* A realtime CANCEL_ON_SET timer reports a clock set, like timerfd. */
TEST_F(qt, cancel_on_set)
{
	struct td_timer_spec spec = {
		.clockid = CLOCK_REALTIME,
		.flags = TD_TIMER_ABSTIME | TD_TIMER_CANCEL_ON_SET,
		.cookie = 77,
	};
	struct qtimer_version v;
	struct qtimer_record rec;
	struct timespec ts;
	uint64_t id;

	ASSERT_EQ(0, td_version(self->ctx, &v));
	if (!(v.features & QTIMER_FEAT_CANCEL_ON_SET))
		SKIP(return, "no QTIMER_FEAT_CANCEL_ON_SET");
	spec.expires_ns = td_now(CLOCK_REALTIME) + FAR;
	ASSERT_EQ(0, td_arm(self->ctx, &spec, &id));
	ASSERT_EQ(-EAGAIN, td_read(self->ctx, &rec, 1));
	/* Set the clock to what it is: still a set. */
	ASSERT_EQ(0, clock_gettime(CLOCK_REALTIME, &ts));
	ASSERT_EQ(0, clock_settime(CLOCK_REALTIME, &ts));
	ASSERT_EQ(1, td_wait(self->ctx, &rec, 1, PATIENCE));
	ASSERT_EQ(id, rec.id);
	ASSERT_EQ(77, rec.cookie);
	ASSERT_EQ(0, rec.count);
	ASSERT_EQ(QTIMER_REC_CANCELED | QTIMER_REC_LAST, rec.flags);
	ASSERT_EQ(-ENOENT, td_cancel(self->ctx, id));
}

/* ---- td_get ---- */

/*
 * The schedule comes back as armed, and the spec arms its twin; a fired
 * one-shot is pending until read, then gone.
 */
TEST_F(qt, get_reads_the_schedule_back)
{
	struct td_timer_spec spec = mono(FAR, 0), got, again;
	struct qtimer_version v;
	struct qtimer_record rec;
	int64_t before = td_now(CLOCK_MONOTONIC);
	uint64_t id, twin;

	ASSERT_EQ(0, td_version(self->ctx, &v));
	if (!(v.features & QTIMER_FEAT_GET))
		SKIP(return, "the module has no GET");
	spec.slack_ns = 1000;
	spec.cookie = 42;
	ASSERT_EQ(0, td_arm(self->ctx, &spec, &id));
	ASSERT_EQ(TD_TIMER_ARMED, td_get(self->ctx, id, &got));
	EXPECT_EQ(CLOCK_MONOTONIC, got.clockid);
	EXPECT_EQ(TD_TIMER_ABSTIME | TD_TIMER_CPU, got.flags);
	EXPECT_LE(before + FAR, got.expires_ns);
	EXPECT_GE(td_now(CLOCK_MONOTONIC) + FAR, got.expires_ns);
	EXPECT_EQ(1000, got.slack_ns);
	EXPECT_EQ(42, got.cookie);

	ASSERT_EQ(0, td_arm(self->ctx, &got, &twin));
	ASSERT_EQ(TD_TIMER_ARMED, td_get(self->ctx, twin, &again));
	EXPECT_EQ(0, memcmp(&got, &again, sizeof(got)));
	ASSERT_EQ(QTIMER_CANCEL_ARMED, td_cancel(self->ctx, twin));
	ASSERT_EQ(QTIMER_CANCEL_ARMED, td_cancel(self->ctx, id));
	ASSERT_EQ(-ENOENT, td_get(self->ctx, id, &got));

	spec = mono(MSEC, 0);
	ASSERT_EQ(0, td_arm(self->ctx, &spec, &id));
	ASSERT_TRUE(poll_ready(self->ctx, PATIENCE / MSEC));
	ASSERT_EQ(TD_TIMER_PENDING, td_get(self->ctx, id, &got));
	ASSERT_EQ(1, td_read(self->ctx, &rec, 1));
	EXPECT_EQ(id, rec.id);
	EXPECT_EQ(got.expires_ns, rec.expires_ns);
	ASSERT_EQ(-ENOENT, td_get(self->ctx, id, &got));
}

/* ---- td_cancel ---- */

TEST_F(qt, cancel_armed)
{
	struct td_timer_spec spec = mono(FAR, 0);
	struct qtimer_record rec;
	uint64_t id;

	ASSERT_EQ(0, td_arm(self->ctx, &spec, &id));
	ASSERT_EQ(QTIMER_CANCEL_ARMED, td_cancel(self->ctx, id));
	ASSERT_EQ(-ENOENT, td_cancel(self->ctx, id));
	ASSERT_EQ(-EAGAIN, td_read(self->ctx, &rec, 1));
}

/* Cancelling a fired, unread one-shot discards its record. */
TEST_F(qt, cancel_queued)
{
	struct td_timer_spec spec = mono(MSEC, 0);
	struct qtimer_record rec;
	uint64_t id;

	ASSERT_EQ(0, td_arm(self->ctx, &spec, &id));
	ASSERT_TRUE(poll_ready(self->ctx, PATIENCE / MSEC));
	ASSERT_EQ(QTIMER_CANCEL_QUEUED, td_cancel(self->ctx, id));
	ASSERT_FALSE(poll_ready(self->ctx, 0));
	ASSERT_EQ(-EAGAIN, td_read(self->ctx, &rec, 1));
	ASSERT_EQ(-ENOENT, td_cancel(self->ctx, id));
}

/*
 * A periodic timer whose record is unread has fired and waits to be read:
 * cancelling it discards the record (QUEUED); ARMED means "had not fired".
 */
TEST_F(qt, cancel_periodic_queued)
{
	struct td_timer_spec spec = mono(MSEC, 0);
	struct qtimer_record rec;
	uint64_t id;

	spec.period_ns = 100 * SEC;
	ASSERT_EQ(0, td_arm(self->ctx, &spec, &id));
	ASSERT_TRUE(poll_ready(self->ctx, PATIENCE / MSEC));
	ASSERT_EQ(QTIMER_CANCEL_QUEUED, td_cancel(self->ctx, id));
	ASSERT_EQ(-EAGAIN, td_read(self->ctx, &rec, 1));
}

TEST_F(qt, cancel_bad_ids)
{
	struct td_timer_spec spec = mono(FAR, 0);
	uint64_t id;

	ASSERT_EQ(-ENOENT, td_cancel(self->ctx, 0));
	ASSERT_EQ(-ENOENT, td_cancel(self->ctx, ~0ULL));
	ASSERT_EQ(0, td_arm(self->ctx, &spec, &id));
	ASSERT_EQ(-ENOENT, td_cancel(self->ctx, id ^ (1ULL << 40)));
	ASSERT_EQ(-ENOENT, td_cancel(self->ctx, id + 1));
	ASSERT_EQ(QTIMER_CANCEL_ARMED, td_cancel(self->ctx, id));
}

/* Contexts are independent: one file cannot touch another's timers. */
TEST_F(qt, cancel_other_context)
{
	struct td_timer_spec spec = mono(FAR, 0);
	struct td_ctx *other;
	uint64_t id;

	ASSERT_EQ(0, td_open(&other, 0));
	ASSERT_EQ(0, td_arm(self->ctx, &spec, &id));
	EXPECT_EQ(-ENOENT, td_cancel(other, id));
	EXPECT_EQ(-ENOENT, td_modify(other, id, MSEC, 0, 0, 0));
	td_close(other);
	ASSERT_EQ(QTIMER_CANCEL_ARMED, td_cancel(self->ctx, id));
}

/* ---- td_modify ---- */

TEST_F(qt, modify_sooner)
{
	struct td_timer_spec spec = mono(FAR, 99);
	struct qtimer_record rec;
	int64_t due;
	uint64_t id;

	ASSERT_EQ(0, td_arm(self->ctx, &spec, &id));
	due = td_now(CLOCK_MONOTONIC) + 20 * MSEC;
	ASSERT_EQ(QTIMER_CANCEL_ARMED, td_modify(self->ctx, id, 20 * MSEC, 0, 0, 0));
	ASSERT_EQ(1, td_wait(self->ctx, &rec, 1, PATIENCE));
	ASSERT_LE(due, td_now(CLOCK_MONOTONIC));
	ASSERT_EQ(id, rec.id);
	ASSERT_EQ(99, rec.cookie);
	ASSERT_GE(rec.expires_ns, due);
	ASSERT_EQ(QTIMER_REC_LAST, rec.flags);
}

/* Pushed later before it fires: it fires at the new time, not the old. */
TEST_F(qt, modify_later_never_early)
{
	struct td_timer_spec spec = mono(50 * MSEC, 0);
	struct qtimer_record rec;
	int64_t due;
	uint64_t id;

	ASSERT_EQ(0, td_arm(self->ctx, &spec, &id));
	due = td_now(CLOCK_MONOTONIC) + 400 * MSEC;
	ASSERT_EQ(QTIMER_CANCEL_ARMED,
		  td_modify(self->ctx, id, due, 0, 0, TD_TIMER_ABSTIME));
	ASSERT_EQ(1, td_wait(self->ctx, &rec, 1, PATIENCE));
	ASSERT_LE(due, td_now(CLOCK_MONOTONIC));
	ASSERT_EQ(due, rec.expires_ns);
	ASSERT_EQ(1, rec.count);
}

/* Modifying a fired, unread timer drops its record and re-arms it. */
TEST_F(qt, modify_queued)
{
	struct td_timer_spec spec = mono(MSEC, 0);
	struct qtimer_record rec;
	uint64_t id;

	ASSERT_EQ(0, td_arm(self->ctx, &spec, &id));
	ASSERT_TRUE(poll_ready(self->ctx, PATIENCE / MSEC));
	ASSERT_EQ(QTIMER_CANCEL_QUEUED, td_modify(self->ctx, id, FAR, 0, 0, 0));
	ASSERT_EQ(-EAGAIN, td_read(self->ctx, &rec, 1));
	ASSERT_EQ(QTIMER_CANCEL_ARMED, td_cancel(self->ctx, id));
}

TEST_F(qt, modify_after_read)
{
	struct td_timer_spec spec = mono(MSEC, 0);
	struct qtimer_record rec;
	uint64_t id;

	ASSERT_EQ(0, td_arm(self->ctx, &spec, &id));
	ASSERT_EQ(1, td_wait(self->ctx, &rec, 1, PATIENCE));
	ASSERT_EQ(-ENOENT, td_modify(self->ctx, id, MSEC, 0, 0, 0));
}

TEST_F(qt, modify_bad_id)
{
	ASSERT_EQ(-ENOENT, td_modify(self->ctx, 12345, MSEC, 0, 0, 0));
}

TEST_F(qt, modify_negative_relative)
{
	struct td_timer_spec spec = mono(FAR, 0);
	uint64_t id;

	ASSERT_EQ(0, td_arm(self->ctx, &spec, &id));
	ASSERT_EQ(-EINVAL, td_modify(self->ctx, id, -1, 0, 0, 0));
	ASSERT_EQ(QTIMER_CANCEL_ARMED, td_cancel(self->ctx, id));
}

TEST_F(qt, modify_bad_flags)
{
	struct td_timer_spec spec = mono(FAR, 0);
	uint64_t id;

	ASSERT_EQ(0, td_arm(self->ctx, &spec, &id));
	ASSERT_EQ(-EINVAL, td_modify(self->ctx, id, MSEC, 0, 0, QTIMER_F_CPU));
	ASSERT_EQ(QTIMER_CANCEL_ARMED, td_cancel(self->ctx, id));
}

/* One-shot turned periodic keeps its id and cookie. */
TEST_F(qt, modify_to_periodic)
{
	struct td_timer_spec spec = mono(FAR, 31);
	struct qtimer_record rec;
	uint64_t id;

	ASSERT_EQ(0, td_arm(self->ctx, &spec, &id));
	ASSERT_EQ(QTIMER_CANCEL_ARMED,
		  td_modify(self->ctx, id, MSEC, 5 * MSEC, 0, 0));
	ASSERT_EQ(1, td_wait(self->ctx, &rec, 1, PATIENCE));
	ASSERT_EQ(id, rec.id);
	ASSERT_EQ(31, rec.cookie);
	ASSERT_EQ(0, rec.flags & QTIMER_REC_LAST);
	ASSERT_EQ(1, td_wait(self->ctx, &rec, 1, PATIENCE));
	ASSERT_EQ(id, rec.id);
	/*
	 * Armed, or fired again since the read, or (taken from the record
	 * ring, whose tail the kernel has not reaped yet) neither: 0.  Either
	 * way it existed: not -ENOENT.
	 */
	ASSERT_GE(td_cancel(self->ctx, id), 0);
}

/* ---- periodic timers and counts ---- */

/*
 * A periodic timer read slowly: one record per read whatever the backlog,
 * expiries on the grid first + k * period, and counts that add up to the
 * number of grid points passed.
 */
TEST_F(qt, periodic_counts_add_up)
{
	const int64_t period = 10 * MSEC;
	struct td_timer_spec spec = mono(0, 0);
	struct qtimer_record rec[4];
	int64_t first, last = 0;
	uint64_t id, total = 0;
	int i, j, nr;

	first = td_now(CLOCK_MONOTONIC) + period;
	spec.expires_ns = first;
	spec.flags = TD_TIMER_ABSTIME;
	spec.period_ns = period;
	ASSERT_EQ(0, td_arm(self->ctx, &spec, &id));
	for (i = 0; i < 5; i++) {
		usleep(60000);
		/*
		 * Usually one record; two when the ticker, re-armed by this
		 * read, fired again before the read returned (a slow guest).
		 * Either way the counts must add up.
		 */
		nr = td_wait(self->ctx, rec, 4, PATIENCE);
		ASSERT_LE(1, nr);
		for (j = 0; j < nr; j++) {
			ASSERT_EQ(id, rec[j].id);
			ASSERT_EQ(0, rec[j].flags);
			ASSERT_GE(rec[j].count, 1);
			ASSERT_EQ(0, (rec[j].expires_ns - first) % period);
			ASSERT_GT(rec[j].expires_ns, last);
			ASSERT_LE(rec[j].expires_ns, td_now(CLOCK_MONOTONIC));
			last = rec[j].expires_ns;
			total += rec[j].count;
		}
	}
	ASSERT_EQ((uint64_t)((last - first) / period + 1), total);
	/*
	 * Armed, or fired again since the read, or (taken from the record
	 * ring, whose tail the kernel has not reaped yet) neither: 0.  Either
	 * way it existed: not -ENOENT.
	 */
	ASSERT_GE(td_cancel(self->ctx, id), 0);
}

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
		spec.expires_ns = MSEC;
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
	struct td_timer_spec spec = mono(30 * MSEC, 3);
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

	ASSERT_EQ(-ETIME, td_wait(self->ctx, &rec, 1, 50 * MSEC));
	ASSERT_GE(td_now(CLOCK_MONOTONIC) - start, 50 * MSEC);
	ASSERT_EQ(-ETIME, td_wait(self->ctx, &rec, 1, 0));
	ASSERT_EQ(-EINVAL, td_wait(self->ctx, &rec, 0, 0));
}

/* The timer fires after the wait began but before its timeout. */
TEST(wait_blocking_context)
{
	struct td_timer_spec spec = mono(20 * MSEC, 4);
	struct qtimer_record rec;
	struct td_ctx *ctx;

	ASSERT_EQ(0, td_open(&ctx, 0));
	ASSERT_EQ(-ETIME, td_wait(ctx, &rec, 1, 10 * MSEC));
	ASSERT_EQ(0, td_arm(ctx, &spec, NULL));
	ASSERT_EQ(1, td_wait(ctx, &rec, 1, PATIENCE));
	ASSERT_EQ(4, rec.cookie);
	td_close(ctx);
}

/* ---- td_dispatch ---- */

struct tally {
	unsigned int nr;
	unsigned int per_cookie[300];
	unsigned int bad;
};

static void tally_cb(const struct qtimer_record *rec, void *arg)
{
	struct tally *t = arg;

	t->nr++;
	if (rec->cookie < 300 && rec->count == 1 && rec->flags == QTIMER_REC_LAST)
		t->per_cookie[rec->cookie]++;
	else
		t->bad++;
}

TEST_F(qt, dispatch_all)
{
	struct td_timer_spec spec = mono(5 * MSEC, 0);
	struct tally t = { 0 };
	int i, nr;

	for (i = 0; i < 300; i++) {
		spec.cookie = i;
		ASSERT_EQ(0, td_arm(self->ctx, &spec, NULL));
	}
	ASSERT_TRUE(poll_ready(self->ctx, PATIENCE / MSEC));
	/* max caps each call. */
	nr = td_dispatch(self->ctx, tally_cb, &t, 7);
	ASSERT_GT(nr, 0);
	ASSERT_LE(nr, 7);
	ASSERT_EQ(nr, t.nr);
	while (t.nr < 300) {
		ASSERT_TRUE(poll_ready(self->ctx, PATIENCE / MSEC));
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

	w->ret = td_wait(w->ctx, &rec, 1, 200 * MSEC);
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
	until.tv_sec += PATIENCE / SEC;
	ASSERT_EQ(0, pthread_timedjoin_np(th, NULL, &until))
		TH_LOG("td_wait() still blocked %lld s after its 200 ms timeout",
		       PATIENCE / SEC);
	ASSERT_NE(0, hook.id);
	ASSERT_EQ(NULL, hook.ctx) TH_LOG("the poll never reported the record");
	EXPECT_EQ(QTIMER_CANCEL_QUEUED, hook.cancelled);
	EXPECT_EQ(-ETIME, w.ret);
	td_close(w.ctx);
}

/* ---- td_fd with epoll ---- */

TEST_F(qt, epoll)
{
	struct td_timer_spec spec = mono(20 * MSEC, 0);
	struct epoll_event ev = { .events = EPOLLIN };
	struct qtimer_record rec;
	int ep = epoll_create1(EPOLL_CLOEXEC);

	ASSERT_GE(ep, 0);
	ev.data.u64 = 42;
	ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_ADD, td_fd(self->ctx), &ev));
	ASSERT_EQ(0, epoll_wait(ep, &ev, 1, 0));
	ASSERT_EQ(0, td_arm(self->ctx, &spec, NULL));
	ASSERT_EQ(1, epoll_wait(ep, &ev, 1, PATIENCE / MSEC));
	ASSERT_EQ(42, ev.data.u64);
	ASSERT_EQ(EPOLLIN, ev.events);
	ASSERT_EQ(1, td_read(self->ctx, &rec, 1));
	/* Readable exactly while records are pending. */
	ASSERT_EQ(0, epoll_wait(ep, &ev, 1, 0));
	close(ep);
}

/* ---- batches ---- */

struct results {
	unsigned int nr;
	unsigned int bad_order;
	uint64_t ids[4096];
	int res[4096];
};

static void results_cb(const struct td_completion *c, void *arg)
{
	struct results *r = arg;

	/* user_data is the op's sequence number: completions come in order. */
	if (c->user_data != r->nr || r->nr >= 4096) {
		r->bad_order++;
		return;
	}
	r->ids[r->nr] = c->id;
	r->res[r->nr] = c->result;
	r->nr++;
}

TEST_F(qt, batch_init_bad_capacity)
{
	struct td_batch batch;

	ASSERT_EQ(-EINVAL, td_batch_init(self->ctx, &batch, 0));
	ASSERT_EQ(-EINVAL, td_batch_init(self->ctx, &batch, QTIMER_SUBMIT_MAX + 1));
}

/* 1000 arms through a 64-op batch: 15 automatic flushes, then one more. */
TEST_F(qt, batch_auto_flush)
{
	struct td_timer_spec spec = mono(FAR, 0);
	struct results *r = calloc(1, sizeof(*r));
	struct td_batch batch;
	unsigned int i;

	ASSERT_NE(NULL, r);
	ASSERT_EQ(0, td_batch_init(self->ctx, &batch, 64));
	td_batch_set_callback(&batch, results_cb, r);
	for (i = 0; i < 1000; i++) {
		spec.cookie = i;
		ASSERT_EQ(0, td_batch_arm(&batch, &spec, i));
		ASSERT_EQ((i + 1) / 64 * 64, r->nr);
	}
	ASSERT_EQ(1000 % 64, td_batch_flush(&batch));
	ASSERT_EQ(1000, r->nr);
	ASSERT_EQ(0, r->bad_order);
	ASSERT_EQ(1000, batch.completed);
	ASSERT_EQ(0, batch.failed);

	/* Every id works in a single call, and cancelling them in a batch. */
	ASSERT_EQ(QTIMER_CANCEL_ARMED, td_cancel(self->ctx, r->ids[999]));
	for (i = 0; i < 999; i++)
		ASSERT_EQ(0, td_batch_cancel(&batch, r->ids[i], 1000 + i));
	ASSERT_EQ(999 % 64, td_batch_flush(&batch));
	ASSERT_EQ(1999, r->nr);
	for (i = 1000; i < 1999; i++)
		ASSERT_EQ(QTIMER_CANCEL_ARMED, r->res[i]);
	ASSERT_EQ(0, batch.failed);
	td_batch_free(&batch);
	free(r);
}

/* Each op gets its own result; a failed op does not stop the others. */
TEST_F(qt, batch_per_op_errors)
{
	struct td_timer_spec spec = mono(FAR, 0);
	struct results *r = calloc(1, sizeof(*r));
	struct td_batch batch;
	uint64_t id;

	ASSERT_NE(NULL, r);
	ASSERT_EQ(0, td_arm(self->ctx, &spec, &id));
	ASSERT_EQ(0, td_batch_init(self->ctx, &batch, 16));
	td_batch_set_callback(&batch, results_cb, r);
	ASSERT_EQ(0, td_batch_cancel(&batch, id + 1, 0));	/* ENOENT */
	spec.clockid = CLOCK_THREAD_CPUTIME_ID;
	ASSERT_EQ(0, td_batch_arm(&batch, &spec, 1));		/* EINVAL */
	ASSERT_EQ(0, td_batch_modify(&batch, id, -5, 0, 0, 0, 2)); /* EINVAL */
	ASSERT_EQ(0, td_batch_modify(&batch, id, FAR, 0, 0, 0, 3));
	ASSERT_EQ(0, td_batch_cancel(&batch, id, 4));
	ASSERT_EQ(0, td_batch_cancel(&batch, id, 5));		/* ENOENT */
	ASSERT_EQ(6, td_batch_flush(&batch));
	ASSERT_EQ(6, r->nr);
	ASSERT_EQ(0, r->bad_order);
	ASSERT_EQ(-ENOENT, r->res[0]);
	ASSERT_EQ(-EINVAL, r->res[1]);
	ASSERT_EQ(0, r->ids[1]);
	ASSERT_EQ(-EINVAL, r->res[2]);
	ASSERT_EQ(QTIMER_CANCEL_ARMED, r->res[3]);
	ASSERT_EQ(QTIMER_CANCEL_ARMED, r->res[4]);
	ASSERT_EQ(-ENOENT, r->res[5]);
	ASSERT_EQ(4, batch.failed);
	td_batch_free(&batch);
	free(r);
}

/*
 * MODIFY through a batch: of 200 far timers, the even ones are pulled in
 * to fire soon; exactly those fire, the odd ones are still armed.
 */
TEST_F(qt, batch_modify_selects_what_fires)
{
	struct td_timer_spec spec = mono(FAR, 0);
	struct results *r = calloc(1, sizeof(*r));
	struct qtimer_record rec;
	struct tally t = { 0 };
	struct td_batch batch;
	uint64_t ids[200];
	unsigned int i;

	ASSERT_NE(NULL, r);
	for (i = 0; i < 200; i++) {
		spec.cookie = i;
		ASSERT_EQ(0, td_arm(self->ctx, &spec, &ids[i]));
	}
	ASSERT_EQ(0, td_batch_init(self->ctx, &batch, 32));
	td_batch_set_callback(&batch, results_cb, r);
	for (i = 0; i < 200; i += 2)
		ASSERT_EQ(0, td_batch_modify(&batch, ids[i], 10 * MSEC, 0, 0, 0,
					     i / 2));
	ASSERT_EQ(100 % 32, td_batch_flush(&batch));
	ASSERT_EQ(100, r->nr);
	ASSERT_EQ(0, batch.failed);
	while (t.nr < 100) {
		ASSERT_TRUE(poll_ready(self->ctx, PATIENCE / MSEC));
		ASSERT_GT(td_dispatch(self->ctx, tally_cb, &t, 1000), 0);
	}
	/* And nothing else fires. */
	ASSERT_EQ(-ETIME, td_wait(self->ctx, &rec, 1, 100 * MSEC));
	ASSERT_EQ(0, t.bad);
	for (i = 0; i < 200; i++)
		ASSERT_EQ(!(i & 1), t.per_cookie[i]);
	for (i = 1; i < 200; i += 2)
		ASSERT_EQ(QTIMER_CANCEL_ARMED, td_cancel(self->ctx, ids[i]));
	td_batch_free(&batch);
	free(r);
}

/* Unsubmitted ops are completed with -ECANCELED by td_batch_free. */
TEST_F(qt, batch_free_reports_unsubmitted)
{
	struct td_timer_spec spec = mono(FAR, 0);
	struct results *r = calloc(1, sizeof(*r));
	struct qtimer_record rec;
	struct td_batch batch;

	ASSERT_NE(NULL, r);
	ASSERT_EQ(0, td_batch_init(self->ctx, &batch, 8));
	td_batch_set_callback(&batch, results_cb, r);
	spec.expires_ns = MSEC;
	ASSERT_EQ(0, td_batch_arm(&batch, &spec, 0));
	td_batch_free(&batch);
	ASSERT_EQ(1, r->nr);
	ASSERT_EQ(-ECANCELED, r->res[0]);
	/* It really was never armed. */
	ASSERT_EQ(-ETIME, td_wait(self->ctx, &rec, 1, 50 * MSEC));
	free(r);
}

/* ---- limits ---- */

TEST_F(qt, enospc_per_fd)
{
	struct td_timer_spec spec = mono(FAR, 0);
	long old = read_param("max_timers_per_fd");
	int ret[9], i;

	ASSERT_GT(old, 0);
	ASSERT_EQ(0, write_param("max_timers_per_fd", 8));
	for (i = 0; i < 9; i++)
		ret[i] = td_arm(self->ctx, &spec, NULL);
	ASSERT_EQ(0, write_param("max_timers_per_fd", old));
	for (i = 0; i < 8; i++)
		ASSERT_EQ(0, ret[i]);
	ASSERT_EQ(-ENOSPC, ret[8]);
}

TEST_F(qt, edquot_per_user)
{
	struct td_timer_spec spec = mono(FAR, 0);
	long old = read_param("max_timers_per_user");
	struct td_ctx *other;
	int ret[9], i;

	ASSERT_GT(old, 0);
	ASSERT_EQ(0, td_open(&other, 0));
	ASSERT_EQ(0, write_param("max_timers_per_user", 8));
	/* The cap spans files: 5 here and 3 there make 8. */
	for (i = 0; i < 9; i++)
		ret[i] = td_arm(i < 5 ? self->ctx : other, &spec, NULL);
	ASSERT_EQ(0, write_param("max_timers_per_user", old));
	td_close(other);
	for (i = 0; i < 8; i++)
		ASSERT_EQ(0, ret[i]);
	ASSERT_EQ(-EDQUOT, ret[8]);
}

/* td_close gives the user's timers back: the per-user count drops. */
TEST(close_releases_timers)
{
	struct td_timer_spec spec = mono(FAR, 0);
	long old = read_param("max_timers_per_user");
	struct td_ctx *ctx;
	int round, i, ret = 0;

	ASSERT_GT(old, 0);
	ASSERT_EQ(0, write_param("max_timers_per_user", 100));
	for (round = 0; round < 3 && !ret; round++) {
		ret = td_open(&ctx, 0);
		for (i = 0; i < 100 && !ret; i++)
			ret = td_arm(ctx, &spec, NULL);
		td_close(ctx);
	}
	ASSERT_EQ(0, write_param("max_timers_per_user", old));
	ASSERT_EQ(0, ret);
}

/* ---- thread safety ---- */

/*
 * Timers each thread arms and cancels: enough for the threads to overlap
 * in the kernel many times over, few enough that 4 x 2 x 1000 single
 * ioctls finish well within the timeout on the debug kernel under TCG
 * with the host busy (4 x 2 x 2000 took more than the default 30 s).
 */
#define ARMER_TIMERS	1000

struct armer {
	struct td_ctx *ctx;
	uint64_t ids[ARMER_TIMERS];
	int err;
};

static void *armer_thread(void *arg)
{
	struct td_timer_spec spec = mono(FAR, 0);
	struct armer *a = arg;
	int i;

	for (i = 0; i < ARMER_TIMERS && !a->err; i++)
		a->err = td_arm(a->ctx, &spec, &a->ids[i]);
	for (i = 0; i < ARMER_TIMERS && !a->err; i++)
		if (td_cancel(a->ctx, a->ids[i]) != QTIMER_CANCEL_ARMED)
			a->err = -EBADE;
	return NULL;
}

/* Several threads on one context: distinct ids, every cancel exact. */
TEST_F_TIMEOUT(qt, threads_share_context, 120)
{
	static struct armer a[4];
	pthread_t th[4];
	int i;

	for (i = 0; i < 4; i++) {
		a[i].ctx = self->ctx;
		ASSERT_EQ(0, pthread_create(&th[i], NULL, armer_thread, &a[i]));
	}
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(0, pthread_join(th[i], NULL));
		ASSERT_EQ(0, a[i].err);
	}
}

/* ---- the record ring ---- */

/*
 * read(2), counted on one descriptor.  The executable's definition
 * interposes on libc's for the whole process, libtimerdev.so's calls
 * included, so a test can tell that the library took records from the
 * mapped ring and not from the file.
 */
static int counted_fd = -1;
static unsigned int read_calls;

ssize_t read(int fd, void *buf, size_t len)
{
	if (fd >= 0 && fd == __atomic_load_n(&counted_fd, __ATOMIC_RELAXED))
		__atomic_fetch_add(&read_calls, 1, __ATOMIC_RELAXED);
	return syscall(SYS_read, fd, buf, len);
}

static void count_reads(struct td_ctx *ctx)
{
	__atomic_store_n(&read_calls, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&counted_fd, td_fd(ctx), __ATOMIC_RELAXED);
}

static bool ring_offered(struct td_ctx *ctx)
{
	struct qtimer_version v;

	return !td_version(ctx, &v) && (v.features & QTIMER_FEAT_RING);
}

#define NEED_RING(ctx) do {						\
	if (!ring_offered(ctx))						\
		SKIP(return, "the module has no QTIMER_FEAT_RING");	\
} while (0)

/* A "key:\tvalue" line of the file's fdinfo, or -1. */
static long fdinfo_value(int fd, const char *key)
{
	char path[64], line[128];
	size_t len = strlen(key);
	long value = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, len) && line[len] == ':')
			value = strtol(line + len + 1, NULL, 10);
	fclose(f);
	return value;
}

/*
 * Wait until nr records are pending: in the ring, or waiting in the
 * kernel for room.  Nothing is consumed, and the file is neither read
 * nor polled, so the ring is left as the expirer filled it.
 */
static bool wait_pending(struct td_ctx *ctx, long nr)
{
	int64_t deadline = td_now(CLOCK_MONOTONIC) + PATIENCE;

	while (fdinfo_value(td_fd(ctx), "pending") < nr) {
		if (td_now(CLOCK_MONOTONIC) > deadline)
			return false;
		usleep(1000);
	}
	return true;
}

/*
 * Arm nr one-shots due in a millisecond, cookies 0 .. nr - 1, and wait
 * until all their records are pending (wait_pending()): 0, a td_arm()
 * error, or -ETIMEDOUT.
 */
static int arm_pending(struct td_ctx *ctx, int nr)
{
	struct td_timer_spec spec = mono(MSEC, 0);
	int i, ret;

	for (i = 0; i < nr; i++) {
		spec.cookie = i;
		ret = td_arm(ctx, &spec, NULL);
		if (ret)
			return ret;
	}
	return wait_pending(ctx, nr) ? 0 : -ETIMEDOUT;
}

/* Mappings of the device in this process. */
static int qtimer_mappings(void)
{
	char line[512];
	int nr = 0;
	FILE *f = fopen("/proc/self/maps", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		nr += strstr(line, TD_DEVICE_PATH "\n") != NULL;
	fclose(f);
	return nr;
}

/* td_open sets up a ring of 4096 records and maps it; td_close unmaps. */
TEST(ring_set_up_and_mapped)
{
	struct td_ctx *ctx;

	ASSERT_EQ(0, td_open(&ctx, TD_NONBLOCK));
	if (!ring_offered(ctx)) {
		td_close(ctx);
		SKIP(return, "the module has no QTIMER_FEAT_RING");
	}
	ASSERT_EQ(4096, fdinfo_value(td_fd(ctx), "ring_entries"));
	ASSERT_EQ(1, qtimer_mappings());
	td_close(ctx);
	ASSERT_EQ(0, qtimer_mappings());
}

/*
 * td_open2 sets up a ring of the size asked for; one smaller than a burst
 * still delivers every record once (the rest wait in the kernel).
 */
TEST(open2_ring_sized)
{
	struct td_open_params params = {
		.flags = TD_NONBLOCK,
		.ring_entries = 64,
	};
	const int nr = 200;
	struct qtimer_record rec;
	bool seen[200] = { false };
	struct td_ctx *ctx;
	int got = 0;

	ASSERT_EQ(0, td_open2(&ctx, &params));
	if (!ring_offered(ctx)) {
		ASSERT_EQ(0, td_ring_entries(ctx));
		td_close(ctx);
		SKIP(return, "the module has no QTIMER_FEAT_RING");
	}
	ASSERT_EQ(64, td_ring_entries(ctx));
	ASSERT_EQ(64, fdinfo_value(td_fd(ctx), "ring_entries"));
	ASSERT_EQ(1, qtimer_mappings());
	ASSERT_EQ(0, arm_pending(ctx, nr));
	while (got < nr) {
		ASSERT_EQ(1, td_wait(ctx, &rec, 1, PATIENCE));
		ASSERT_LT(rec.cookie, nr);
		ASSERT_FALSE(seen[rec.cookie]);
		seen[rec.cookie] = true;
		got++;
	}
	ASSERT_EQ(-EAGAIN, td_read(ctx, &rec, 1));
	td_close(ctx);
	ASSERT_EQ(0, qtimer_mappings());
}

/* TD_RING_OFF: no ring, no mapping, every record through read(2). */
TEST(open2_ring_off)
{
	struct td_open_params params = {
		.flags = TD_NONBLOCK,
		.ring_entries = TD_RING_OFF,
	};
	struct td_timer_spec spec = mono(MSEC, 42);
	struct qtimer_record rec;
	struct td_ctx *ctx;

	ASSERT_EQ(0, td_open2(&ctx, &params));
	ASSERT_EQ(0, td_ring_entries(ctx));
	ASSERT_EQ(-1, fdinfo_value(td_fd(ctx), "ring_entries"));
	ASSERT_EQ(0, qtimer_mappings());
	ASSERT_EQ(0, td_arm(ctx, &spec, NULL));
	ASSERT_TRUE(poll_ready(ctx, PATIENCE / MSEC));
	count_reads(ctx);
	ASSERT_EQ(1, td_read(ctx, &rec, 1));
	ASSERT_EQ(42, rec.cookie);
	ASSERT_EQ(1, read_calls);
	td_close(ctx);
}

/* Zeroed params are td_open(ctxp, 0): the default ring, when offered. */
TEST(open2_zeroed_params)
{
	struct td_open_params params = { 0 };
	struct td_ctx *ctx;

	ASSERT_EQ(0, td_open2(&ctx, &params));
	ASSERT_EQ(ring_offered(ctx) ? 4096 : 0, td_ring_entries(ctx));
	ASSERT_EQ(FD_CLOEXEC, fcntl(td_fd(ctx), F_GETFD) & FD_CLOEXEC);
	ASSERT_EQ(0, fcntl(td_fd(ctx), F_GETFL) & O_NONBLOCK);
	td_close(ctx);
}

/*
 * Records in the ring are taken with no read(2) at all, with their claim
 * bits clear; only the empty ring sends the library to the file.
 */
TEST_F(qt, ring_records_need_no_read)
{
	const int nr = 200;
	struct qtimer_record rec;
	bool seen[200] = { false };
	int i;

	NEED_RING(self->ctx);
	ASSERT_EQ(0, arm_pending(self->ctx, nr));
	count_reads(self->ctx);
	for (i = 0; i < nr; i++) {
		ASSERT_EQ(1, td_read(self->ctx, &rec, 1));
		ASSERT_LT(rec.cookie, nr);
		ASSERT_FALSE(seen[rec.cookie]);
		seen[rec.cookie] = true;
		ASSERT_EQ(1, rec.count);
		ASSERT_EQ(QTIMER_REC_LAST, rec.flags);
	}
	ASSERT_EQ(0, read_calls);
	/* Empty: the library reads the file, and the counter sees it do so. */
	ASSERT_EQ(-EAGAIN, td_read(self->ctx, &rec, 1));
	ASSERT_EQ(1, read_calls);
	/*
	 * The tail the library stored let that read(2) reap every record:
	 * the one-shots are gone.
	 */
	ASSERT_EQ(0, fdinfo_value(td_fd(self->ctx), "pending"));
	ASSERT_EQ(0, fdinfo_value(td_fd(self->ctx), "timers"));
}

/*
 * td_ring_peek hands out the records in the mapping, claimed, with no
 * system call; td_ring_advance gives their slots back, and the kernel then
 * reaps the one-shots.
 */
TEST_F(qt, ring_peek_and_advance)
{
	const int nr = 200;
	const struct qtimer_record *recs[16];
	bool seen[200] = { false };
	int i, got = 0, n;

	NEED_RING(self->ctx);
	ASSERT_EQ(0, arm_pending(self->ctx, nr));
	count_reads(self->ctx);
	while (got < nr) {
		n = td_ring_peek(self->ctx, recs, 16);
		ASSERT_GT(n, 0);
		for (i = 0; i < n; i++) {
			ASSERT_LT(recs[i]->cookie, nr);
			ASSERT_FALSE(seen[recs[i]->cookie]);
			seen[recs[i]->cookie] = true;
			ASSERT_EQ(1, recs[i]->count);
			ASSERT_EQ(QTIMER_REC_LAST | QTIMER_REC_TAKEN, recs[i]->flags);
		}
		/* The peeking thread's own read would wait for itself. */
		ASSERT_EQ(-EBUSY, td_read(self->ctx, &(struct qtimer_record){ 0 }, 1));
		ASSERT_EQ(0, td_ring_advance(self->ctx, n));
		got += n;
	}
	ASSERT_EQ(0, read_calls);
	ASSERT_EQ(0, td_ring_peek(self->ctx, recs, 16));
	/* Past the tail, the one-shots are gone (a poll reaps on old modules). */
	ASSERT_FALSE(poll_ready(self->ctx, 0));
	ASSERT_EQ(0, fdinfo_value(td_fd(self->ctx), "pending"));
}

/*
 * The claim is made at the peek, so CANCEL stays exact: a one-shot whose
 * record the caller holds was consumed (-ENOENT); a ticker's, 0 until the
 * advance (the uapi's answer before the tail passes the record); and a
 * record cancelled before the peek is never handed out.
 */
TEST_F(qt, ring_cancel_and_peek)
{
	struct td_timer_spec ticker = mono(MSEC, 2);
	struct td_timer_spec once = mono(MSEC, 1);
	const struct qtimer_record *recs[4];
	uint64_t once_id, tick_id;

	NEED_RING(self->ctx);
	ticker.period_ns = FAR;
	ASSERT_EQ(0, td_arm(self->ctx, &once, &once_id));
	ASSERT_EQ(0, td_arm(self->ctx, &ticker, &tick_id));
	ASSERT_TRUE(wait_pending(self->ctx, 2));
	ASSERT_EQ(2, td_ring_peek(self->ctx, recs, 4));
	ASSERT_EQ(-ENOENT, td_cancel(self->ctx, once_id));
	ASSERT_EQ(0, td_cancel(self->ctx, tick_id));
	/* What the caller holds is unchanged by the cancels. */
	ASSERT_EQ(QTIMER_REC_TAKEN, recs[0]->flags & QTIMER_REC_CLAIM);
	ASSERT_EQ(QTIMER_REC_TAKEN, recs[1]->flags & QTIMER_REC_CLAIM);
	ASSERT_EQ(3, recs[0]->cookie + recs[1]->cookie);
	ASSERT_EQ(0, td_ring_advance(self->ctx, 2));

	ASSERT_EQ(0, td_arm(self->ctx, &once, &once_id));
	ASSERT_TRUE(wait_pending(self->ctx, 1));
	ASSERT_EQ(QTIMER_CANCEL_QUEUED, td_cancel(self->ctx, once_id));
	ASSERT_EQ(0, td_ring_peek(self->ctx, recs, 4));
	ASSERT_EQ(-EINVAL, td_ring_advance(self->ctx, 0));
}

/* A context without a ring has nothing to peek. */
TEST(ring_peek_needs_a_ring)
{
	struct td_open_params params = { .ring_entries = TD_RING_OFF };
	const struct qtimer_record *recs[1];
	struct td_ctx *ctx;

	ASSERT_EQ(0, td_open2(&ctx, &params));
	ASSERT_EQ(-ENODEV, td_ring_peek(ctx, recs, 1));
	ASSERT_EQ(-EINVAL, td_ring_advance(ctx, 1));
	td_close(ctx);
}

/* A blocking context takes what the ring holds without blocking or reading. */
TEST(ring_blocking_context_needs_no_read)
{
	struct td_timer_spec spec = mono(MSEC, 0);
	struct qtimer_record rec;
	struct td_ctx *ctx;
	int i;

	ASSERT_EQ(0, td_open(&ctx, 0));
	if (!ring_offered(ctx)) {
		td_close(ctx);
		SKIP(return, "the module has no QTIMER_FEAT_RING");
	}
	for (i = 0; i < 5; i++)
		ASSERT_EQ(0, td_arm(ctx, &spec, NULL));
	ASSERT_TRUE(wait_pending(ctx, 5));
	count_reads(ctx);
	for (i = 0; i < 5; i++)
		ASSERT_EQ(1, td_read(ctx, &rec, 1));
	ASSERT_EQ(0, read_calls);
	ASSERT_EQ(-ETIME, td_wait(ctx, &rec, 1, 20 * MSEC));
	td_close(ctx);
}

TEST_F(qt, ring_wait_and_dispatch_need_no_read)
{
	struct td_timer_spec spec = mono(MSEC, 0);
	struct qtimer_record recs[10];
	struct tally t = { 0 };
	int i;

	NEED_RING(self->ctx);
	for (i = 0; i < 100; i++) {
		spec.cookie = i;
		ASSERT_EQ(0, td_arm(self->ctx, &spec, NULL));
	}
	ASSERT_TRUE(wait_pending(self->ctx, 100));
	count_reads(self->ctx);
	ASSERT_EQ(10, td_wait(self->ctx, recs, 10, 0));
	for (i = 0; i < 10; i++)
		tally_cb(&recs[i], &t);
	ASSERT_EQ(90, td_dispatch(self->ctx, tally_cb, &t, 1000));
	ASSERT_EQ(0, read_calls);
	ASSERT_EQ(0, t.bad);
	for (i = 0; i < 100; i++)
		ASSERT_EQ(1, t.per_cookie[i]);
	ASSERT_EQ(-EAGAIN, td_dispatch(self->ctx, tally_cb, &t, 10));
	ASSERT_EQ(1, read_calls);
}

/*
 * CANCEL voids a record in the ring: the library skips it.  A record the
 * library took from the mapping was claimed, so the kernel says the
 * one-shot is gone, as after a read(2).
 */
TEST_F(qt, ring_cancel_voids_pending_record)
{
	struct td_timer_spec spec = mono(MSEC, 0);
	struct qtimer_record recs[8];
	uint64_t ids[3];
	int i;

	NEED_RING(self->ctx);
	for (i = 0; i < 3; i++) {
		spec.cookie = i;
		ASSERT_EQ(0, td_arm(self->ctx, &spec, &ids[i]));
	}
	ASSERT_TRUE(wait_pending(self->ctx, 3));
	ASSERT_EQ(QTIMER_CANCEL_QUEUED, td_cancel(self->ctx, ids[1]));
	count_reads(self->ctx);
	ASSERT_EQ(2, td_read(self->ctx, recs, 8));
	ASSERT_EQ(0, read_calls);
	ASSERT_EQ(0, recs[0].cookie);
	ASSERT_EQ(2, recs[1].cookie);
	ASSERT_EQ(-ENOENT, td_cancel(self->ctx, ids[0]));
	ASSERT_EQ(-ENOENT, td_cancel(self->ctx, ids[1]));
	ASSERT_EQ(-ENOENT, td_modify(self->ctx, ids[2], MSEC, 0, 0, 0));
	ASSERT_EQ(-ETIME, td_wait(self->ctx, recs, 8, 50 * MSEC));
}

/*
 * A ticker whose record the library took from the mapping waits for the
 * kernel to reap the ring before it is re-armed, but the library moved the
 * tail past its record, so it is as good as re-armed: a CANCEL meanwhile
 * says QTIMER_CANCEL_ARMED, as after a read(), not 0 and not -ENOENT.
 */
TEST_F(qt, ring_cancel_ticker_after_take)
{
	struct td_timer_spec spec = mono(MSEC, 0);
	struct qtimer_record rec;
	uint64_t id;

	NEED_RING(self->ctx);
	spec.period_ns = 100 * SEC;
	ASSERT_EQ(0, td_arm(self->ctx, &spec, &id));
	ASSERT_TRUE(wait_pending(self->ctx, 1));
	count_reads(self->ctx);
	ASSERT_EQ(1, td_read(self->ctx, &rec, 1));
	ASSERT_EQ(0, read_calls);
	ASSERT_EQ(id, rec.id);
	ASSERT_EQ(0, rec.flags);
	ASSERT_EQ(QTIMER_CANCEL_ARMED, td_cancel(self->ctx, id));
	ASSERT_EQ(-ENOENT, td_cancel(self->ctx, id));
	ASSERT_EQ(-EAGAIN, td_read(self->ctx, &rec, 1));
}

#define OVERFLOW_TIMERS	5000	/* more than the library's 4096 entries */

struct big_tally {
	unsigned int nr, bad;
	unsigned char per_cookie[OVERFLOW_TIMERS];
};

static void big_tally_cb(const struct qtimer_record *rec, void *arg)
{
	struct big_tally *t = arg;

	t->nr++;
	if (rec->cookie < OVERFLOW_TIMERS && rec->count == 1 &&
	    rec->flags == QTIMER_REC_LAST)
		t->per_cookie[rec->cookie]++;
	else
		t->bad++;
}

/*
 * More records than the ring holds: the rest wait in the kernel and come
 * through all the same, each once.  Every seventh timer is cancelled once
 * all have fired, its record in the ring (voided) or waiting behind it
 * (dropped): none of those is ever delivered.
 */
TEST_F_TIMEOUT(qt, ring_overflow_each_record_once, 120)
{
	struct td_timer_spec spec = mono(5 * MSEC, 0);
	struct big_tally *t = calloc(1, sizeof(*t));
	uint64_t *ids = calloc(OVERFLOW_TIMERS, sizeof(*ids));
	unsigned int i, expected = 0;
	struct qtimer_record rec;

	ASSERT_NE(NULL, t);
	ASSERT_NE(NULL, ids);
	NEED_RING(self->ctx);
	for (i = 0; i < OVERFLOW_TIMERS; i++) {
		spec.cookie = i;
		ASSERT_EQ(0, td_arm(self->ctx, &spec, &ids[i]));
	}
	ASSERT_TRUE(wait_pending(self->ctx, OVERFLOW_TIMERS));
	for (i = 0; i < OVERFLOW_TIMERS; i++) {
		if (i % 7 != 6) {
			expected++;
			continue;
		}
		ASSERT_EQ(QTIMER_CANCEL_QUEUED, td_cancel(self->ctx, ids[i]));
	}
	while (t->nr < expected) {
		ASSERT_TRUE(poll_ready(self->ctx, PATIENCE / MSEC));
		ASSERT_GT(td_dispatch(self->ctx, big_tally_cb, t, 1000), 0);
	}
	ASSERT_EQ(-ETIME, td_wait(self->ctx, &rec, 1, 100 * MSEC));
	ASSERT_EQ(expected, t->nr);
	ASSERT_EQ(0, t->bad);
	for (i = 0; i < OVERFLOW_TIMERS; i++)
		ASSERT_EQ(i % 7 != 6, t->per_cookie[i]);
	ASSERT_EQ(0, fdinfo_value(td_fd(self->ctx), "timers"));
	free(ids);
	free(t);
}

static void count_cb(const struct qtimer_record *rec, void *arg)
{
	(void)rec;
	++*(unsigned int *)arg;
}

/*
 * An edge-triggered epoll loop that takes each tick with td_dispatch()
 * and makes no other system call on the file: the ticker goes on ticking.
 * (It used to stop after its first record: taking it from the mapping
 * never let the kernel re-arm it, so no second edge ever came.)
 */
TEST_F(qt, ring_ticker_edge_triggered)
{
	struct td_timer_spec spec = mono(20 * MSEC, 0);
	struct epoll_event ev = { .events = EPOLLIN | EPOLLET };
	unsigned int n = 0;
	int ep, i;

	NEED_RING(self->ctx);
	ep = epoll_create1(EPOLL_CLOEXEC);
	ASSERT_LE(0, ep);
	ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_ADD, td_fd(self->ctx), &ev));
	spec.period_ns = 20 * MSEC;
	ASSERT_EQ(0, td_arm(self->ctx, &spec, NULL));
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(1, epoll_wait(ep, &ev, 1, PATIENCE / MSEC))
			TH_LOG("no edge for tick %d", i + 1);
		ASSERT_LT(0, td_dispatch(self->ctx, count_cb, &n, 64));
	}
	ASSERT_LE(3, n);
	close(ep);
}

static void cancel_self_cb(const struct qtimer_record *rec, void *arg)
{
	(void)rec;
	(void)arg;
	pthread_cancel(pthread_self());
}

static void *dispatch_and_die(void *arg)
{
	td_dispatch(arg, cancel_self_cb, NULL, OVERFLOW_TIMERS);
	pthread_testcancel();
	return NULL;
}

static void *read_one(void *arg)
{
	struct qtimer_record rec;

	return (void *)(intptr_t)td_read(arg, &rec, 1);
}

/*
 * A thread cancelled while td_dispatch() drains an overflowing ring must not
 * keep the context's lock: another thread's td_read() still returns.  (It
 * used to stay blocked: td_dispatch() polls for the records waiting in the
 * kernel, a cancellation point, with the lock held and no handler.)
 */
TEST_F_TIMEOUT(qt, ring_dispatch_cancelled_keeps_no_lock, 120)
{
	struct td_timer_spec spec = mono(5 * MSEC, 0);
	struct timespec until;
	pthread_t th;
	void *ret;
	unsigned int i;

	NEED_RING(self->ctx);
	for (i = 0; i < OVERFLOW_TIMERS; i++) {
		spec.cookie = i;
		ASSERT_EQ(0, td_arm(self->ctx, &spec, NULL));
	}
	ASSERT_TRUE(wait_pending(self->ctx, OVERFLOW_TIMERS));
	ASSERT_EQ(0, pthread_create(&th, NULL, dispatch_and_die, self->ctx));
	ASSERT_EQ(0, pthread_join(th, &ret));
	ASSERT_EQ(PTHREAD_CANCELED, ret);
	/* The records the dying dispatch left are still there to read. */
	ASSERT_EQ(0, pthread_create(&th, NULL, read_one, self->ctx));
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += PATIENCE / SEC;
	ASSERT_EQ(0, pthread_timedjoin_np(th, &ret, &until))
		TH_LOG("td_read() still blocked on the lock");
	ASSERT_EQ(1, (int)(intptr_t)ret);
}

/* read(2) on the descriptor still works with the ring mapped. */
TEST_F(qt, ring_plain_read_still_works)
{
	struct td_timer_spec spec = mono(MSEC, 0);
	struct qtimer_record recs[4];
	ssize_t len;
	int i;

	NEED_RING(self->ctx);
	for (i = 0; i < 3; i++) {
		spec.cookie = i;
		ASSERT_EQ(0, td_arm(self->ctx, &spec, NULL));
	}
	ASSERT_TRUE(wait_pending(self->ctx, 3));
	len = read(td_fd(self->ctx), recs, sizeof(recs));
	ASSERT_EQ(3 * sizeof(recs[0]), len);
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(i, recs[i].cookie);
		/* The kernel's read clears the claim as the library does. */
		ASSERT_EQ(QTIMER_REC_LAST, recs[i].flags);
	}
	ASSERT_EQ(-EAGAIN, td_read(self->ctx, recs, 4));
}

#define RING_READERS		4
#define RING_READER_TIMERS	2000

struct ring_reader {
	struct td_ctx *ctx;
	unsigned int *total;
	unsigned char *per_cookie;
	int err;
};

static void *ring_reader_thread(void *arg)
{
	int64_t deadline = td_now(CLOCK_MONOTONIC) + PATIENCE;
	struct ring_reader *r = arg;
	struct qtimer_record recs[8];
	unsigned int total, seen = 0;
	int i, ret;

	/*
	 * Patience runs out only when no reader has taken a record for that
	 * long: arming takes a while on a slow kernel, and records flow as
	 * it goes.
	 */
	while ((total = __atomic_load_n(r->total, __ATOMIC_RELAXED)) <
	       RING_READER_TIMERS) {
		if (total != seen) {
			seen = total;
			deadline = td_now(CLOCK_MONOTONIC) + PATIENCE;
		}
		if (td_now(CLOCK_MONOTONIC) > deadline) {
			r->err = -ETIMEDOUT;
			break;
		}
		ret = td_wait(r->ctx, recs, 8, 50 * MSEC);
		if (ret == -ETIME)
			continue;
		if (ret < 0) {
			r->err = ret;
			break;
		}
		for (i = 0; i < ret; i++) {
			if (recs[i].cookie >= RING_READER_TIMERS ||
			    recs[i].flags != QTIMER_REC_LAST) {
				r->err = -EBADMSG;
				continue;
			}
			__atomic_fetch_add(&r->per_cookie[recs[i].cookie], 1,
					   __ATOMIC_RELAXED);
		}
		__atomic_fetch_add(r->total, ret, __ATOMIC_RELAXED);
	}
	return NULL;
}

/* Threads reading one context share its ring: each record reaches one. */
TEST_F_TIMEOUT(qt, ring_threads_take_each_record_once, 120)
{
	static unsigned char per_cookie[RING_READER_TIMERS];
	struct td_timer_spec spec = mono(20 * MSEC, 0);
	struct ring_reader r[RING_READERS];
	pthread_t th[RING_READERS];
	unsigned int total = 0;
	int i;

	NEED_RING(self->ctx);
	for (i = 0; i < RING_READERS; i++) {
		r[i] = (struct ring_reader){ .ctx = self->ctx, .total = &total,
					     .per_cookie = per_cookie };
		ASSERT_EQ(0, pthread_create(&th[i], NULL, ring_reader_thread,
					    &r[i]));
	}
	for (i = 0; i < RING_READER_TIMERS; i++) {
		spec.cookie = i;
		ASSERT_EQ(0, td_arm(self->ctx, &spec, NULL));
	}
	for (i = 0; i < RING_READERS; i++) {
		ASSERT_EQ(0, pthread_join(th[i], NULL));
		ASSERT_EQ(0, r[i].err);
	}
	ASSERT_EQ(RING_READER_TIMERS, total);
	for (i = 0; i < RING_READER_TIMERS; i++)
		ASSERT_EQ(1, per_cookie[i]);
}

TEST_HARNESS_MAIN
