// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * Native unit tests: the helpers, every error path that needs no device,
 * and the library logic (handshake, op encoding, batch auto-flush and
 * completion, read/wait/dispatch) against the fake device of fake_qtimer.c.
 * The kernel side is tested by libtimerdev_test in the VM.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "timerdev.h"
#include "fake_qtimer.h"

#define NSEC_PER_SEC 1000000000LL

/* ---- helpers ---- */

/* The timespec conversions: time_test.c, built for each time_t. */

TEST(now)
{
	int64_t a, b, rt;

	a = td_now(CLOCK_MONOTONIC);
	b = td_now(CLOCK_MONOTONIC);
	ASSERT_GT(a, 0);
	ASSERT_LE(a, b);
	ASSERT_GT(td_now(CLOCK_BOOTTIME), 0);
	rt = td_now(CLOCK_REALTIME);
	ASSERT_LE(llabs(rt / NSEC_PER_SEC - (int64_t)time(NULL)), 2);
}

TEST(now_bad_clock)
{
	errno = 1234;
	ASSERT_EQ(-EINVAL, td_now((clockid_t)12345));
	ASSERT_EQ(1234, errno);
}

/* ---- the library's own version ---- */

#if !TD_CHECK_VERSION(TD_VERSION_MAJOR, TD_VERSION_MINOR)
#error "TD_CHECK_VERSION() denies the header's own version"
#endif
#if TD_CHECK_VERSION(TD_VERSION_MAJOR + 1, 0)
#error "TD_CHECK_VERSION() admits the next major version"
#endif

TEST(lib_version)
{
	ASSERT_EQ(0x020103, TD_VERSION_NUM(2, 1, 3));
	ASSERT_EQ(TD_VERSION_NUM(TD_VERSION_MAJOR, TD_VERSION_MINOR,
				 TD_VERSION_PATCH), TD_VERSION_HEX);
	ASSERT_EQ(TD_VERSION_HEX, td_lib_version());
	/* Soname 2: this is libtimerdev 2. */
	ASSERT_EQ(2, TD_VERSION_MAJOR);
	/* True for this version and earlier ones, false for later ones. */
	ASSERT_TRUE(TD_CHECK_VERSION(TD_VERSION_MAJOR, TD_VERSION_MINOR));
	ASSERT_TRUE(TD_CHECK_VERSION(TD_VERSION_MAJOR, 0));
	ASSERT_TRUE(TD_CHECK_VERSION(TD_VERSION_MAJOR - 1, 255));
	ASSERT_FALSE(TD_CHECK_VERSION(TD_VERSION_MAJOR, TD_VERSION_MINOR + 1));
	ASSERT_FALSE(TD_CHECK_VERSION(TD_VERSION_MAJOR + 1, 0));
}

/* ---- opening without a device ---- */

TEST(open_missing_path)
{
	struct td_ctx *ctx = (struct td_ctx *)1;

	errno = 1234;
	ASSERT_EQ(-ENOENT, td_open_path(&ctx, "/nonexistent/qtimer", 0));
	ASSERT_NULL(ctx);
	ASSERT_EQ(1234, errno);
}

TEST(open_default_device_missing)
{
	struct td_ctx *ctx;

	if (access(TD_DEVICE_PATH, F_OK) == 0)
		SKIP(return, TD_DEVICE_PATH " exists on this machine");
	ASSERT_EQ(-ENOENT, td_open(&ctx, TD_CLOEXEC));
	ASSERT_NULL(ctx);
}

TEST(open_bad_args)
{
	struct td_ctx *ctx = (struct td_ctx *)1;

	ASSERT_EQ(-EINVAL, td_open(NULL, 0));
	ASSERT_EQ(-EINVAL, td_open(&ctx, 1 << 5));
	ASSERT_NULL(ctx);
	ASSERT_EQ(-EINVAL, td_open(&ctx, -1));
	ASSERT_EQ(-EINVAL, td_open_path(&ctx, NULL, 0));
}

TEST(open_not_a_qtimer)
{
	struct td_ctx *ctx;

	/* /dev/null answers every ioctl with ENOTTY: no handshake. */
	ASSERT_EQ(-ENOTSUP, td_open_path(&ctx, "/dev/null", 0));
	ASSERT_NULL(ctx);
	ASSERT_EQ(-ENOTSUP, td_open_path(&ctx, "/", 0));
}

TEST(null_ctx)
{
	struct td_timer_spec spec = { .clockid = CLOCK_MONOTONIC };
	struct qtimer_version v;
	struct qtimer_record rec;
	struct td_batch batch;

	td_close(NULL);
	ASSERT_EQ(-EINVAL, td_fd(NULL));
	ASSERT_EQ(-EINVAL, td_version(NULL, &v));
	ASSERT_EQ(-EINVAL, td_arm(NULL, &spec, NULL));
	ASSERT_EQ(-EINVAL, td_cancel(NULL, 1));
	ASSERT_EQ(-EINVAL, td_modify(NULL, 1, 0, 0, 0, 0));
	ASSERT_EQ(-EINVAL, td_read(NULL, &rec, 1));
	ASSERT_EQ(-EINVAL, td_wait(NULL, &rec, 1, 0));
	ASSERT_EQ(-EINVAL, td_dispatch(NULL, NULL, NULL, 1));
	ASSERT_EQ(-EINVAL, td_batch_init(NULL, &batch, 1));
	ASSERT_EQ(-EINVAL, td_batch_init(NULL, NULL, 1));
	ASSERT_EQ(-EINVAL, td_batch_flush(NULL));
	ASSERT_EQ(-EINVAL, td_batch_cancel(NULL, 1, 0));
	td_batch_set_callback(NULL, NULL, NULL);
	td_batch_free(NULL);
}

/* ---- against the fake device ---- */

FIXTURE(fake) {
	struct td_ctx *ctx;
};

/* Every test of the fixture, through read(2) and through the record ring. */
FIXTURE_VARIANT(fake) {
	bool ring;
};

FIXTURE_VARIANT_ADD(fake, read) {
	.ring = false,
};

FIXTURE_VARIANT_ADD(fake, ring) {
	.ring = true,
};

FIXTURE_SETUP(fake)
{
	if (variant->ring)
		fake.version.features |= QTIMER_FEAT_RING;
	ASSERT_EQ(0, td_open_path(&self->ctx, FAKE_PATH, TD_NONBLOCK));
	ASSERT_NE(NULL, self->ctx);
	ASSERT_EQ(variant->ring, fake.ring.mapped);
}

FIXTURE_TEARDOWN(fake)
{
	td_close(self->ctx);
}

TEST(open_flags)
{
	struct td_ctx *ctx;
	int fd;

	ASSERT_EQ(0, td_open_path(&ctx, FAKE_PATH, 0));
	fd = td_fd(ctx);
	ASSERT_EQ(fake.fd, fd);
	/* Read-write, for the ring's mapping should the device offer one. */
	ASSERT_EQ(O_RDWR, fake.open_flags & O_ACCMODE);
	ASSERT_EQ(0, fcntl(fd, F_GETFL) & O_NONBLOCK);
	td_close(ctx);
	/* td_close() closed the descriptor. */
	ASSERT_EQ(-1, fcntl(fd, F_GETFD));

	ASSERT_EQ(0, td_open_path(&ctx, FAKE_PATH, TD_NONBLOCK | TD_CLOEXEC));
	fd = td_fd(ctx);
	ASSERT_EQ(O_NONBLOCK, fake.open_flags & O_NONBLOCK);
	ASSERT_EQ(O_CLOEXEC, fake.open_flags & O_CLOEXEC);
	ASSERT_NE(0, fcntl(fd, F_GETFL) & O_NONBLOCK);
	ASSERT_NE(0, fcntl(fd, F_GETFD) & FD_CLOEXEC);
	td_close(ctx);
}

/* Close-on-exec unless asked otherwise, on either open() the library tries. */
TEST(open_cloexec_by_default)
{
	struct td_ctx *ctx;

	ASSERT_EQ(0, td_open_path(&ctx, FAKE_PATH, 0));
	ASSERT_EQ(O_CLOEXEC, fake.open_flags & O_CLOEXEC);
	ASSERT_NE(0, fcntl(td_fd(ctx), F_GETFD) & FD_CLOEXEC);
	td_close(ctx);

	/* The read-only fallback too. */
	fake.rdwr_errno = EACCES;
	ASSERT_EQ(0, td_open_path(&ctx, FAKE_PATH, TD_NONBLOCK));
	ASSERT_EQ(O_RDONLY, fake.open_flags & O_ACCMODE);
	ASSERT_EQ(O_CLOEXEC, fake.open_flags & O_CLOEXEC);
	ASSERT_NE(0, fcntl(td_fd(ctx), F_GETFD) & FD_CLOEXEC);
	td_close(ctx);
}

TEST(open_nocloexec)
{
	struct td_ctx *ctx = (struct td_ctx *)1;

	ASSERT_EQ(0, td_open_path(&ctx, FAKE_PATH, TD_NOCLOEXEC));
	ASSERT_EQ(0, fake.open_flags & O_CLOEXEC);
	ASSERT_EQ(0, fcntl(td_fd(ctx), F_GETFD) & FD_CLOEXEC);
	td_close(ctx);

	ctx = (struct td_ctx *)1;
	ASSERT_EQ(-EINVAL, td_open_path(&ctx, FAKE_PATH, TD_CLOEXEC | TD_NOCLOEXEC));
	ASSERT_NULL(ctx);
}

/* A failed handshake returns err and leaves no descriptor open. */
static int open_expect(struct __test_metadata *_metadata, int err)
{
	struct td_ctx *ctx = (struct td_ctx *)1;
	int ret = td_open_path(&ctx, FAKE_PATH, 0);

	EXPECT_EQ(err, ret);
	EXPECT_NULL(ctx);
	EXPECT_EQ(-1, fcntl(fake.fd, F_GETFD));
	return ret;
}

TEST(handshake_api_version)
{
	fake.version.api_version = QTIMER_API_VERSION + 1;
	open_expect(_metadata, -EPROTO);
}

TEST(handshake_record_size)
{
	fake.version.record_size = sizeof(struct qtimer_record) + 8;
	open_expect(_metadata, -EPROTO);
}

TEST(handshake_op_size)
{
	fake.version.op_size = sizeof(struct qtimer_op) - 8;
	open_expect(_metadata, -EPROTO);
}

TEST(handshake_no_version_ioctl)
{
	fake.version_errno = ENOTTY;
	open_expect(_metadata, -ENOTSUP);
}

TEST(handshake_other_error)
{
	fake.version_errno = EIO;
	open_expect(_metadata, -EIO);
}

TEST(open_enomem)
{
	struct td_ctx *ctx;

	fake.alloc_fail = 1;
	errno = 1234;
	ASSERT_EQ(-ENOMEM, td_open_path(&ctx, FAKE_PATH, 0));
	ASSERT_EQ(1234, errno);
	ASSERT_NULL(ctx);
}

TEST_F(fake, version_is_fresh)
{
	struct qtimer_version v;

	fake.version.max_timers_per_fd = 77;
	ASSERT_EQ(0, td_version(self->ctx, &v));
	ASSERT_EQ(77, v.max_timers_per_fd);
	ASSERT_EQ(QTIMER_API_VERSION, v.api_version);
	ASSERT_EQ(-EINVAL, td_version(self->ctx, NULL));
}

TEST_F(fake, arm_encodes_spec)
{
	struct td_timer_spec spec = {
		.clockid = CLOCK_REALTIME,
		.flags = TD_TIMER_ABSTIME | TD_TIMER_CANCEL_ON_SET,
		.expires_ns = 123,
		.period_ns = 456,
		.slack_ns = 789,
		.cookie = 0xfeedULL << 40,
	};
	uint64_t id = 0;

	ASSERT_EQ(0, td_arm(self->ctx, &spec, &id));
	ASSERT_NE(0, id);
	ASSERT_EQ(id, fake.last_op.id);
	ASSERT_EQ(QTIMER_OP_ARM, fake.last_op.opcode);
	ASSERT_EQ(CLOCK_REALTIME, fake.last_op.clockid);
	ASSERT_EQ(QTIMER_F_ABSTIME | QTIMER_F_CANCEL_ON_SET, fake.last_op.flags);
	ASSERT_EQ(123, fake.last_op.expires_ns);
	ASSERT_EQ(456, fake.last_op.period_ns);
	ASSERT_EQ(789, fake.last_op.slack_ns);
	ASSERT_EQ(spec.cookie, fake.last_op.cookie);
	ASSERT_EQ(0, fake.last_op.cpu);
	ASSERT_EQ(0, fake.last_op.reserved);

	/* Pinned: TD_TIMER_CPU is QTIMER_F_CPU; and the id may be ignored. */
	spec.flags = TD_TIMER_CPU;
	spec.cpu = 1;
	ASSERT_EQ(0, td_arm(self->ctx, &spec, NULL));
	ASSERT_EQ(QTIMER_F_CPU, fake.last_op.flags);
	ASSERT_EQ(1, fake.last_op.cpu);
	/* CPU 0 is a CPU like any other. */
	spec.cpu = 0;
	ASSERT_EQ(0, td_arm(self->ctx, &spec, NULL));
	ASSERT_EQ(QTIMER_F_CPU, fake.last_op.flags);
	ASSERT_EQ(0, fake.last_op.cpu);
	ASSERT_EQ(3, fake_nr_live());
}

/* A zeroed spec pins nothing, armed alone or in a batch. */
TEST_F(fake, zeroed_spec_does_not_pin)
{
	struct td_timer_spec spec;
	struct td_batch batch;

	memset(&spec, 0, sizeof(spec));
	spec.clockid = CLOCK_MONOTONIC;
	ASSERT_EQ(0, td_arm(self->ctx, &spec, NULL));
	ASSERT_EQ(0, fake.last_op.flags & QTIMER_F_CPU);
	ASSERT_EQ(0, fake.last_op.cpu);

	ASSERT_EQ(0, td_batch_init(self->ctx, &batch, 4));
	ASSERT_EQ(0, td_batch_arm(&batch, &spec, 1));
	ASSERT_EQ(1, td_batch_flush(&batch));
	ASSERT_EQ(QTIMER_OP_ARM, fake.last_op.opcode);
	ASSERT_EQ(0, fake.last_op.flags & QTIMER_F_CPU);
	td_batch_free(&batch);

	/* TD_CPU_ANY, libtimerdev 1's "no CPU", still means that. */
	spec.cpu = TD_CPU_ANY;
	ASSERT_EQ(0, td_arm(self->ctx, &spec, NULL));
	ASSERT_EQ(0, fake.last_op.flags & QTIMER_F_CPU);
	ASSERT_EQ(0, fake.last_op.cpu);
	ASSERT_EQ(3, fake_nr_live());
}

TEST_F(fake, arm_rejected_by_library)
{
	struct td_timer_spec spec = { .clockid = CLOCK_MONOTONIC };
	unsigned int calls = fake.ioctl_calls;
	uint64_t id = 99;

	ASSERT_EQ(-EINVAL, td_arm(self->ctx, NULL, &id));
	spec.flags = 1U << 31;
	ASSERT_EQ(-EINVAL, td_arm(self->ctx, &spec, &id));
	spec.flags = 0;
	spec.cpu = -2;
	ASSERT_EQ(-EINVAL, td_arm(self->ctx, &spec, &id));
	/* A CPU without TD_TIMER_CPU would not pin: refused, not ignored. */
	spec.cpu = 1;
	ASSERT_EQ(-EINVAL, td_arm(self->ctx, &spec, &id));
	/* TD_TIMER_CPU names a CPU, never "any". */
	spec.flags = TD_TIMER_CPU;
	spec.cpu = TD_CPU_ANY;
	ASSERT_EQ(-EINVAL, td_arm(self->ctx, &spec, &id));
	spec.flags = 0;
	spec.cpu = 0;
	spec.clockid = -1;
	ASSERT_EQ(-EINVAL, td_arm(self->ctx, &spec, &id));
	spec.clockid = 0x10000;
	ASSERT_EQ(-EINVAL, td_arm(self->ctx, &spec, &id));
	ASSERT_EQ(calls, fake.ioctl_calls);
	ASSERT_EQ(99, id);
}

TEST_F(fake, arm_rejected_by_kernel)
{
	struct td_timer_spec spec = {
		.clockid = CLOCK_MONOTONIC, .expires_ns = -1,
	};
	uint64_t id = 99;

	errno = 1234;
	ASSERT_EQ(-EINVAL, td_arm(self->ctx, &spec, &id));
	ASSERT_EQ(1234, errno);
	ASSERT_EQ(99, id);
}

TEST_F(fake, cancel_and_modify)
{
	struct td_timer_spec spec = { .clockid = CLOCK_MONOTONIC,
				      .expires_ns = 1000 };
	unsigned int calls;
	uint64_t id;

	ASSERT_EQ(0, td_arm(self->ctx, &spec, &id));
	ASSERT_EQ(QTIMER_CANCEL_ARMED,
		  td_modify(self->ctx, id, 5, 6, 7, TD_TIMER_ABSTIME));
	ASSERT_EQ(QTIMER_OP_MODIFY, fake.last_op.opcode);
	ASSERT_EQ(QTIMER_F_ABSTIME, fake.last_op.flags);
	ASSERT_EQ(5, fake.last_op.expires_ns);
	ASSERT_EQ(6, fake.last_op.period_ns);
	ASSERT_EQ(7, fake.last_op.slack_ns);
	ASSERT_EQ(0, fake.last_op.clockid);
	ASSERT_EQ(0, fake.last_op.cookie);

	calls = fake.ioctl_calls;
	ASSERT_EQ(-EINVAL, td_modify(self->ctx, id, 5, 0, 0, QTIMER_F_CPU));
	ASSERT_EQ(calls, fake.ioctl_calls);

	ASSERT_EQ(QTIMER_CANCEL_ARMED, td_cancel(self->ctx, id));
	ASSERT_EQ(QTIMER_OP_CANCEL, fake.last_op.opcode);
	ASSERT_EQ(-ENOENT, td_cancel(self->ctx, id));
	ASSERT_EQ(-ENOENT, td_modify(self->ctx, id, 5, 0, 0, 0));
}

/*
 * td_get: asks GET with nothing but the id, and fills the spec from the
 * answer so that it arms the same timer again (pinned where it lives);
 * errors leave the spec alone.
 */
TEST_F(fake, get_fills_a_spec_that_arms_the_same_timer)
{
	struct td_timer_spec spec = { .clockid = CLOCK_MONOTONIC }, got;
	unsigned int calls;
	uint64_t id;

	ASSERT_EQ(0, td_arm(self->ctx, &spec, &id));
	memset(&got, 0x5a, sizeof(got));
	ASSERT_EQ(-ENOTTY, td_get(self->ctx, id, &got));
	ASSERT_EQ(0x5a5a5a5a, got.cpu);

	fake.version.features |= QTIMER_FEAT_GET;
	fake.get_answer = (struct qtimer_op){
		.clockid = CLOCK_REALTIME,
		.flags = QTIMER_F_ABSTIME | QTIMER_F_CANCEL_ON_SET,
		.expires_ns = 123456789, .period_ns = 11, .slack_ns = 22,
		.cookie = 33, .cpu = 3, .result = QTIMER_CANCEL_ARMED,
	};
	ASSERT_EQ(TD_TIMER_ARMED, td_get(self->ctx, id, &got));
	EXPECT_EQ(id, fake.last_op.id);
	EXPECT_EQ(0, fake.last_op.opcode);
	EXPECT_EQ(CLOCK_REALTIME, got.clockid);
	EXPECT_EQ(TD_TIMER_ABSTIME | TD_TIMER_CANCEL_ON_SET | TD_TIMER_CPU, got.flags);
	EXPECT_EQ(123456789, got.expires_ns);
	EXPECT_EQ(11, got.period_ns);
	EXPECT_EQ(22, got.slack_ns);
	EXPECT_EQ(33, got.cookie);
	EXPECT_EQ(3, got.cpu);
	EXPECT_EQ(0, got.reserved[0]);
	EXPECT_EQ(0, got.reserved[4]);
	/* It arms as it reads. */
	ASSERT_EQ(0, td_arm(self->ctx, &got, &id));
	EXPECT_EQ(QTIMER_F_ABSTIME | QTIMER_F_CANCEL_ON_SET | QTIMER_F_CPU,
		  fake.last_op.flags);
	EXPECT_EQ(3, fake.last_op.cpu);
	EXPECT_EQ(123456789, fake.last_op.expires_ns);

	fake.get_answer.result = QTIMER_CANCEL_QUEUED;
	ASSERT_EQ(TD_TIMER_PENDING, td_get(self->ctx, id, &got));

	ASSERT_EQ(QTIMER_CANCEL_ARMED, td_cancel(self->ctx, id));
	got.cpu = 77;
	ASSERT_EQ(-ENOENT, td_get(self->ctx, id, &got));
	ASSERT_EQ(77, got.cpu);

	calls = fake.ioctl_calls;
	ASSERT_EQ(-EINVAL, td_get(NULL, id, &got));
	ASSERT_EQ(-EINVAL, td_get(self->ctx, id, NULL));
	ASSERT_EQ(calls, fake.ioctl_calls);
}

/* Completions as a batch callback sees them. */
struct log {
	unsigned int nr;
	struct td_completion c[256];
	struct td_batch *batch;	/* for the re-entrancy test */
	int reentry[2];
};

static void log_cb(const struct td_completion *c, void *arg)
{
	struct log *log = arg;

	if (log->nr < 256)
		log->c[log->nr] = *c;
	log->nr++;
}

TEST_F(fake, batch_init_errors)
{
	struct td_batch batch;

	ASSERT_EQ(-EINVAL, td_batch_init(self->ctx, &batch, 0));
	ASSERT_EQ(-EINVAL, td_batch_init(self->ctx, &batch, QTIMER_SUBMIT_MAX + 1));
	ASSERT_EQ(-EINVAL, td_batch_arm(&batch, NULL, 0));	/* left unusable */
	fake.alloc_fail = 1;
	errno = 1234;
	ASSERT_EQ(-ENOMEM, td_batch_init(self->ctx, &batch, 8));
	ASSERT_EQ(1234, errno);
	ASSERT_EQ(0, td_batch_init(self->ctx, &batch, QTIMER_SUBMIT_MAX));
	td_batch_free(&batch);
	td_batch_free(&batch);	/* a freed batch is inert */
}

/* Room for later fields: a spec that uses it is refused before any ioctl. */
TEST_F(fake, spec_reserved_must_be_zero)
{
	struct td_timer_spec spec = { .clockid = CLOCK_MONOTONIC };
	const unsigned int nr = sizeof(spec.reserved) / sizeof(spec.reserved[0]);
	struct log log = { 0 };
	struct td_batch batch;
	unsigned int i, calls;
	uint64_t id = 99;

	ASSERT_EQ(0, td_batch_init(self->ctx, &batch, 4));
	td_batch_set_callback(&batch, log_cb, &log);
	calls = fake.ioctl_calls;
	for (i = 0; i < nr; i++) {
		spec.reserved[i] = 1U << (i * 7);
		ASSERT_EQ(-EINVAL, td_arm(self->ctx, &spec, &id));
		ASSERT_EQ(-EINVAL, td_batch_arm(&batch, &spec, i));
		spec.reserved[i] = 0;
	}
	ASSERT_EQ(calls, fake.ioctl_calls);
	ASSERT_EQ(99, id);
	ASSERT_EQ(0, batch.nr);
	ASSERT_EQ(0, td_arm(self->ctx, &spec, &id));
	td_batch_free(&batch);
	ASSERT_EQ(0, log.nr);
}

/*
 * td_batch_init sets every field, whatever the caller's storage held: the
 * reserved room is zero, the private state allocated apart.
 */
TEST_F(fake, batch_init_sets_every_field)
{
	const unsigned int nr = sizeof(((struct td_batch *)0)->reserved) /
				sizeof(void *);
	struct log log = { 0 };
	struct td_batch batch;
	unsigned int i;

	memset(&batch, 0xa5, sizeof(batch));
	ASSERT_EQ(0, td_batch_init(self->ctx, &batch, 8));
	ASSERT_EQ(0, batch.nr);
	ASSERT_EQ(8, batch.capacity);
	ASSERT_EQ(0, batch.completed);
	ASSERT_EQ(0, batch.failed);
	ASSERT_NE(NULL, batch.state);
	for (i = 0; i < nr; i++)
		ASSERT_NULL(batch.reserved[i]);
	td_batch_set_callback(&batch, log_cb, &log);
	ASSERT_EQ(0, td_batch_cancel(&batch, 1, 5));
	td_batch_free(&batch);
	ASSERT_EQ(1, log.nr);
	ASSERT_EQ(-ECANCELED, log.c[0].result);
	ASSERT_NULL(batch.state);

	/* A failed init leaves the batch inert, whatever it held before. */
	memset(&batch, 0xa5, sizeof(batch));
	fake.alloc_fail = 1;
	ASSERT_EQ(-ENOMEM, td_batch_init(self->ctx, &batch, 8));
	ASSERT_NULL(batch.state);
	ASSERT_EQ(0, batch.capacity);
	ASSERT_EQ(-EINVAL, td_batch_flush(&batch));
	td_batch_set_callback(&batch, log_cb, &log);
	td_batch_free(&batch);
}

TEST(batch_needs_submit_feature)
{
	struct td_batch batch;
	struct td_ctx *ctx;

	fake.version.features &= ~QTIMER_FEAT_SUBMIT;
	ASSERT_EQ(0, td_open_path(&ctx, FAKE_PATH, 0));
	ASSERT_EQ(-ENOTSUP, td_batch_init(ctx, &batch, 8));
	td_close(ctx);
}

TEST_F(fake, batch_auto_flush)
{
	struct td_timer_spec spec = { .clockid = CLOCK_MONOTONIC,
				      .expires_ns = NSEC_PER_SEC };
	struct log log = { 0 };
	struct td_batch batch;
	unsigned int i, j;

	ASSERT_EQ(0, td_batch_init(self->ctx, &batch, 4));
	td_batch_set_callback(&batch, log_cb, &log);
	for (i = 0; i < 10; i++) {
		spec.cookie = i;
		ASSERT_EQ(0, td_batch_arm(&batch, &spec, 100 + i));
		/* Full arrays go out at once; the rest waits. */
		ASSERT_EQ((i + 1) / 4 * 4, log.nr);
		ASSERT_EQ((i + 1) % 4, batch.nr);
		ASSERT_EQ((i + 1) / 4, fake.submit_calls);
	}
	ASSERT_EQ(2, td_batch_flush(&batch));
	ASSERT_EQ(3, fake.submit_calls);
	ASSERT_EQ(0, td_batch_flush(&batch));	/* empty: no call */
	ASSERT_EQ(3, fake.submit_calls);
	ASSERT_EQ(10, log.nr);
	ASSERT_EQ(10, batch.completed);
	ASSERT_EQ(0, batch.failed);
	for (i = 0; i < 10; i++) {
		ASSERT_EQ(100 + i, log.c[i].user_data);
		ASSERT_EQ(QTIMER_OP_ARM, log.c[i].opcode);
		ASSERT_EQ(0, log.c[i].result);
		ASSERT_NE(0, log.c[i].id);
		for (j = 0; j < i; j++)
			ASSERT_NE(log.c[j].id, log.c[i].id);
	}
	ASSERT_EQ(10, fake_nr_live());
	td_batch_free(&batch);
	ASSERT_EQ(10, log.nr);	/* nothing was left to cancel */
}

TEST_F(fake, batch_per_op_results)
{
	struct td_timer_spec spec = { .clockid = CLOCK_MONOTONIC };
	struct log log = { 0 };
	struct td_batch batch;
	uint64_t id;

	ASSERT_EQ(0, td_arm(self->ctx, &spec, &id));
	ASSERT_EQ(0, td_batch_init(self->ctx, &batch, 16));
	td_batch_set_callback(&batch, log_cb, &log);
	ASSERT_EQ(0, td_batch_modify(&batch, id, 10, 0, 0, 0, 1));
	ASSERT_EQ(0, td_batch_cancel(&batch, id + 1000, 2));
	ASSERT_EQ(0, td_batch_cancel(&batch, id, 3));
	ASSERT_EQ(0, td_batch_modify(&batch, id, 10, 0, 0, 0, 4));
	spec.expires_ns = -5;
	ASSERT_EQ(0, td_batch_arm(&batch, &spec, 5));
	/* Rejected by the library: not queued, no completion. */
	ASSERT_EQ(-EINVAL, td_batch_modify(&batch, id, 10, 0, 0, 1U << 30, 6));
	ASSERT_EQ(-EINVAL, td_batch_modify(&batch, id, 10, 0, 0, TD_TIMER_CPU, 6));
	spec.cpu = -7;
	ASSERT_EQ(-EINVAL, td_batch_arm(&batch, &spec, 7));
	spec.cpu = 7;
	ASSERT_EQ(-EINVAL, td_batch_arm(&batch, &spec, 7));
	ASSERT_EQ(5, batch.nr);
	ASSERT_EQ(0, log.nr);

	ASSERT_EQ(5, td_batch_flush(&batch));
	ASSERT_EQ(5, log.nr);
	ASSERT_EQ(1, log.c[0].user_data);
	ASSERT_EQ(QTIMER_OP_MODIFY, log.c[0].opcode);
	ASSERT_EQ(QTIMER_CANCEL_ARMED, log.c[0].result);
	ASSERT_EQ(id, log.c[0].id);
	ASSERT_EQ(-ENOENT, log.c[1].result);
	ASSERT_EQ(id + 1000, log.c[1].id);
	ASSERT_EQ(QTIMER_OP_CANCEL, log.c[2].opcode);
	ASSERT_EQ(QTIMER_CANCEL_ARMED, log.c[2].result);
	ASSERT_EQ(-ENOENT, log.c[3].result);
	ASSERT_EQ(QTIMER_OP_ARM, log.c[4].opcode);
	ASSERT_EQ(-EINVAL, log.c[4].result);
	ASSERT_EQ(0, log.c[4].id);
	ASSERT_EQ(5, batch.completed);
	ASSERT_EQ(3, batch.failed);
	td_batch_free(&batch);
}

TEST_F(fake, batch_partial_submit_is_resumed)
{
	struct log log = { 0 };
	struct td_batch batch;
	unsigned int i;

	fake.submit_limit = 3;
	ASSERT_EQ(0, td_batch_init(self->ctx, &batch, 8));
	td_batch_set_callback(&batch, log_cb, &log);
	for (i = 0; i < 8; i++)
		ASSERT_EQ(0, td_batch_cancel(&batch, 5000 + i, i));
	/* 3 + 3 + 2 */
	ASSERT_EQ(3, fake.submit_calls);
	ASSERT_EQ(8, log.nr);
	for (i = 0; i < 8; i++) {
		ASSERT_EQ(i, log.c[i].user_data);
		ASSERT_EQ(-ENOENT, log.c[i].result);
	}
	td_batch_free(&batch);
}

TEST_F(fake, batch_failed_submit_completes_every_op)
{
	struct log log = { 0 };
	struct td_batch batch;
	unsigned int i;

	fake.submit_errno = EIO;
	ASSERT_EQ(0, td_batch_init(self->ctx, &batch, 4));
	td_batch_set_callback(&batch, log_cb, &log);
	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, td_batch_cancel(&batch, 1, i));
	errno = 1234;
	ASSERT_EQ(-EIO, td_batch_cancel(&batch, 1, 3));
	ASSERT_EQ(1234, errno);
	ASSERT_EQ(0, batch.nr);
	ASSERT_EQ(4, log.nr);
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(i, log.c[i].user_data);
		ASSERT_EQ(-EIO, log.c[i].result);
	}
	ASSERT_EQ(4, batch.failed);
	/* The batch stays usable. */
	fake.submit_errno = 0;
	ASSERT_EQ(0, td_batch_cancel(&batch, 1, 4));
	ASSERT_EQ(1, td_batch_flush(&batch));
	ASSERT_EQ(-ENOENT, log.c[4].result);
	td_batch_free(&batch);
}

TEST_F(fake, batch_free_cancels_queued_ops)
{
	struct log log = { 0 };
	struct td_batch batch;

	ASSERT_EQ(0, td_batch_init(self->ctx, &batch, 4));
	td_batch_set_callback(&batch, log_cb, &log);
	ASSERT_EQ(0, td_batch_cancel(&batch, 1, 7));
	ASSERT_EQ(0, td_batch_modify(&batch, 1, 0, 0, 0, 0, 8));
	td_batch_free(&batch);
	ASSERT_EQ(0, fake.submit_calls);
	ASSERT_EQ(2, log.nr);
	ASSERT_EQ(7, log.c[0].user_data);
	ASSERT_EQ(-ECANCELED, log.c[0].result);
	ASSERT_EQ(8, log.c[1].user_data);
	ASSERT_EQ(-ECANCELED, log.c[1].result);
}

static void reentrant_cb(const struct td_completion *c, void *arg)
{
	struct log *log = arg;

	log_cb(c, arg);
	log->reentry[0] = td_batch_cancel(log->batch, 1, 0);
	log->reentry[1] = td_batch_flush(log->batch);
}

TEST_F(fake, batch_callback_cannot_reenter)
{
	struct log log = { 0 };
	struct td_batch batch;

	ASSERT_EQ(0, td_batch_init(self->ctx, &batch, 2));
	log.batch = &batch;
	td_batch_set_callback(&batch, reentrant_cb, &log);
	ASSERT_EQ(0, td_batch_cancel(&batch, 1, 0));
	ASSERT_EQ(0, td_batch_cancel(&batch, 1, 1));
	ASSERT_EQ(2, log.nr);
	ASSERT_EQ(-EBUSY, log.reentry[0]);
	ASSERT_EQ(-EBUSY, log.reentry[1]);
	ASSERT_EQ(0, batch.nr);
	td_batch_free(&batch);
}

TEST_F(fake, batch_without_callback_counts)
{
	struct td_batch batch;
	unsigned int i;

	ASSERT_EQ(0, td_batch_init(self->ctx, &batch, 3));
	for (i = 0; i < 7; i++)
		ASSERT_EQ(0, td_batch_cancel(&batch, 1, i));
	ASSERT_EQ(1, td_batch_flush(&batch));
	ASSERT_EQ(7, batch.completed);
	ASSERT_EQ(7, batch.failed);
	td_batch_free(&batch);
}

TEST_F(fake, read_records)
{
	struct qtimer_record recs[8];
	unsigned int i;

	ASSERT_EQ(-EAGAIN, td_read(self->ctx, recs, 8));
	ASSERT_EQ(-EINVAL, td_read(self->ctx, recs, 0));
	ASSERT_EQ(-EINVAL, td_read(self->ctx, NULL, 1));
	for (i = 0; i < 5; i++)
		fake_push_record(i + 1, 10 + i, 1);
	ASSERT_EQ(3, td_read(self->ctx, recs, 3));
	ASSERT_EQ(1, recs[0].id);
	ASSERT_EQ(12, recs[2].cookie);
	ASSERT_EQ(2, td_read(self->ctx, recs, 8));
	ASSERT_EQ(4, recs[0].id);
	ASSERT_EQ(-EAGAIN, td_read(self->ctx, recs, 8));
}

TEST_F(fake, wait_times_out)
{
	struct qtimer_record rec;
	int64_t start = td_now(CLOCK_MONOTONIC);

	ASSERT_EQ(-ETIME, td_wait(self->ctx, &rec, 1, 20000000));
	ASSERT_GE(td_now(CLOCK_MONOTONIC) - start, 20000000);
	ASSERT_EQ(-ETIME, td_wait(self->ctx, &rec, 1, 0));
	ASSERT_EQ(-EINVAL, td_wait(self->ctx, &rec, 0, 0));
}

TEST_F(fake, wait_returns_pending)
{
	struct qtimer_record recs[4];

	fake_push_record(9, 99, 3);
	ASSERT_EQ(1, td_wait(self->ctx, recs, 4, 0));
	ASSERT_EQ(9, recs[0].id);
	ASSERT_EQ(3, recs[0].count);
	fake_push_record(10, 100, 1);
	ASSERT_EQ(1, td_wait(self->ctx, recs, 4, -1));	/* no timeout */
	ASSERT_EQ(10, recs[0].id);
}

struct seen {
	unsigned int nr;
	uint64_t ids[512];
};

static void seen_cb(const struct qtimer_record *rec, void *arg)
{
	struct seen *seen = arg;

	seen->ids[seen->nr++ % 512] = rec->id;
}

TEST_F(fake, dispatch)
{
	struct seen seen = { 0 };
	unsigned int i;

	ASSERT_EQ(-EINVAL, td_dispatch(self->ctx, NULL, &seen, 10));
	ASSERT_EQ(-EINVAL, td_dispatch(self->ctx, seen_cb, &seen, 0));
	ASSERT_EQ(-EAGAIN, td_dispatch(self->ctx, seen_cb, &seen, 10));
	for (i = 0; i < 150; i++)
		fake_push_record(i + 1, 0, 1);
	ASSERT_EQ(10, td_dispatch(self->ctx, seen_cb, &seen, 10));
	/* More than one internal read's worth. */
	ASSERT_EQ(140, td_dispatch(self->ctx, seen_cb, &seen, 1000));
	ASSERT_EQ(150, seen.nr);
	for (i = 0; i < 150; i++)
		ASSERT_EQ(i + 1, seen.ids[i]);
	ASSERT_EQ(-EAGAIN, td_dispatch(self->ctx, seen_cb, &seen, 10));
}

TEST_F(fake, epoll_readiness)
{
	struct epoll_event ev = { .events = EPOLLIN };
	struct qtimer_record rec;
	int ep = epoll_create1(EPOLL_CLOEXEC);

	ASSERT_GE(ep, 0);
	ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_ADD, td_fd(self->ctx), &ev));
	ASSERT_EQ(0, epoll_wait(ep, &ev, 1, 0));
	fake_push_record(1, 0, 1);
	ASSERT_EQ(1, epoll_wait(ep, &ev, 1, 0));
	ASSERT_EQ(1, td_read(self->ctx, &rec, 1));
	ASSERT_EQ(0, epoll_wait(ep, &ev, 1, 0));
	close(ep);
}

/* ---- the record ring, against the fake's ---- */

static uint32_t ring_tail(void)
{
	return *fake.ring.tail_p;
}

static uint32_t ring_claim(uint32_t pos)
{
	return fake.ring.recs[pos & (fake.ring.entries - 1)].flags &
	       QTIMER_REC_CLAIM;
}

TEST(ring_set_up_at_open)
{
	struct td_ctx *ctx;

	fake.version.features |= QTIMER_FEAT_RING;
	errno = 1234;
	ASSERT_EQ(0, td_open_path(&ctx, FAKE_PATH, TD_NONBLOCK));
	ASSERT_EQ(1234, errno);
	ASSERT_EQ(O_RDWR, fake.open_flags & O_ACCMODE);
	ASSERT_EQ(1, fake.ring.setup_calls);
	ASSERT_EQ(4096, fake.ring.setup.entries);
	ASSERT_EQ(0, fake.ring.setup.flags);
	ASSERT_EQ(1, fake.ring.mmap_calls);
	ASSERT_EQ(PROT_READ | PROT_WRITE, fake.ring.mmap_prot);
	ASSERT_EQ(MAP_SHARED, fake.ring.mmap_flags & MAP_TYPE);
	ASSERT_EQ(0, fake.ring.mmap_off);
	ASSERT_EQ(fake.ring.size, fake.ring.mmap_len);
	ASSERT_TRUE(fake.ring.mapped);
	td_close(ctx);
	ASSERT_EQ(1234, errno);
	ASSERT_FALSE(fake.ring.mapped);
	ASSERT_EQ(1, fake.ring.munmap_calls);
	ASSERT_EQ(fake.ring.size, fake.ring.munmap_len);
}

/* ---- td_open2: the ring's size, or none ---- */

/* Zeroed params but the path: td_open_path(ctxp, path, 0), default ring. */
TEST(open2_zeroed_params_are_td_open)
{
	struct td_open_params params = { .path = FAKE_PATH };
	struct td_ctx *ctx;

	fake.version.features |= QTIMER_FEAT_RING;
	errno = 1234;
	ASSERT_EQ(0, td_open2(&ctx, &params));
	ASSERT_EQ(1234, errno);
	ASSERT_EQ(O_RDWR, fake.open_flags & O_ACCMODE);
	ASSERT_EQ(O_CLOEXEC, fake.open_flags & O_CLOEXEC);
	ASSERT_EQ(0, fake.open_flags & O_NONBLOCK);
	ASSERT_EQ(1, fake.ring.setup_calls);
	ASSERT_EQ(TD_RING_DEFAULT_ENTRIES, fake.ring.setup.entries);
	ASSERT_EQ(4096, td_ring_entries(ctx));
	td_close(ctx);
}

/* The default path is the device's, not the caller's NULL. */
TEST(open2_null_path_is_the_device)
{
	struct td_open_params params = { 0 };
	struct td_ctx *ctx = (struct td_ctx *)1;

	if (access(TD_DEVICE_PATH, F_OK) == 0)
		SKIP(return, TD_DEVICE_PATH " exists on this machine");
	ASSERT_EQ(-ENOENT, td_open2(&ctx, &params));
	ASSERT_NULL(ctx);
	ASSERT_EQ(0, fake.open_calls);
}

TEST(open2_ring_of_chosen_size)
{
	struct td_open_params params = {
		.path = FAKE_PATH,
		.flags = TD_NONBLOCK,
		.ring_entries = QTIMER_RING_MIN,
	};
	struct qtimer_record recs[16];
	struct td_ctx *ctx;
	unsigned int i;

	fake.version.features |= QTIMER_FEAT_RING;
	ASSERT_EQ(0, td_open2(&ctx, &params));
	ASSERT_EQ(O_NONBLOCK, fake.open_flags & O_NONBLOCK);
	ASSERT_EQ(QTIMER_RING_MIN, fake.ring.setup.entries);
	ASSERT_EQ(QTIMER_RING_MIN, td_ring_entries(ctx));
	ASSERT_TRUE(fake.ring.mapped);
	/* Twice the ring: the library wraps with the size it asked for. */
	for (i = 0; i < 2 * QTIMER_RING_MIN; i++) {
		fake_push_record(i + 1, i, 1);
		ASSERT_EQ(1, td_read(ctx, recs, 16));
		ASSERT_EQ(i + 1, recs[0].id);
		ASSERT_EQ(i, recs[0].cookie);
	}
	ASSERT_EQ(0, fake.read_calls);
	td_close(ctx);
	ASSERT_FALSE(fake.ring.mapped);
}

/* (The fake is one file, whose ring is set up once: a test of its own.) */
TEST(open2_ring_of_max_size)
{
	struct td_open_params params = {
		.path = FAKE_PATH,
		.ring_entries = QTIMER_RING_MAX,
	};
	struct td_ctx *ctx;

	fake.version.features |= QTIMER_FEAT_RING;
	ASSERT_EQ(0, td_open2(&ctx, &params));
	ASSERT_EQ(QTIMER_RING_MAX, fake.ring.setup.entries);
	ASSERT_EQ(QTIMER_RING_MAX, td_ring_entries(ctx));
	td_close(ctx);
}

TEST(open2_ring_off)
{
	struct td_open_params params = {
		.path = FAKE_PATH,
		.flags = TD_NONBLOCK,
		.ring_entries = TD_RING_OFF,
	};
	struct qtimer_record rec;
	struct td_ctx *ctx;

	fake.version.features |= QTIMER_FEAT_RING;
	ASSERT_EQ(0, td_open2(&ctx, &params));
	ASSERT_EQ(0, td_ring_entries(ctx));
	ASSERT_EQ(0, fake.ring.setup_calls);
	ASSERT_EQ(0, fake.ring.mmap_calls);
	/* Opened for writing all the same: the mode does not hang on it. */
	ASSERT_EQ(O_RDWR, fake.open_flags & O_ACCMODE);
	fake_push_record(7, 70, 1);
	ASSERT_EQ(1, td_read(ctx, &rec, 1));
	ASSERT_EQ(7, rec.id);
	ASSERT_EQ(1, fake.read_calls);
	td_close(ctx);
}

/* What td_open does when the device has no ring: asked or not. */
TEST(ring_entries_without_a_ring)
{
	struct td_open_params params = { .path = FAKE_PATH, .ring_entries = 64 };
	struct td_ctx *ctx;

	ASSERT_EQ(-EINVAL, td_ring_entries(NULL));
	ASSERT_EQ(0, td_open2(&ctx, &params));
	ASSERT_EQ(0, td_ring_entries(ctx));
	ASSERT_EQ(0, fake.ring.setup_calls);
	td_close(ctx);

	fake.version.features |= QTIMER_FEAT_RING;
	fake.ring.setup_errno = ENOMEM;
	ASSERT_EQ(0, td_open2(&ctx, &params));
	ASSERT_EQ(1, fake.ring.setup_calls);
	ASSERT_EQ(64, fake.ring.setup.entries);
	ASSERT_EQ(0, td_ring_entries(ctx));
	td_close(ctx);
}

/* One bad field each, the rest valid: nothing is opened. */
FIXTURE(open2_bad) {
	int unused;
};

FIXTURE_VARIANT(open2_bad) {
	unsigned int flags;
	uint32_t ring_entries;
	unsigned int reserved_idx;	/* 1 + the index to set, or 0 */
};

FIXTURE_VARIANT_ADD(open2_bad, entries_not_a_power_of_two) {
	.ring_entries = 24,
};

FIXTURE_VARIANT_ADD(open2_bad, entries_below_min) {
	.ring_entries = QTIMER_RING_MIN / 2,
};

FIXTURE_VARIANT_ADD(open2_bad, entries_above_max) {
	.ring_entries = QTIMER_RING_MAX * 2,
};

FIXTURE_VARIANT_ADD(open2_bad, unknown_flag) {
	.flags = 1 << 5,
};

FIXTURE_VARIANT_ADD(open2_bad, cloexec_and_nocloexec) {
	.flags = TD_CLOEXEC | TD_NOCLOEXEC,
};

FIXTURE_VARIANT_ADD(open2_bad, reserved_first) {
	.reserved_idx = 1,
};

FIXTURE_VARIANT_ADD(open2_bad, reserved_last) {
	.reserved_idx = 8,
};

FIXTURE_SETUP(open2_bad)
{
	fake.version.features |= QTIMER_FEAT_RING;
}

FIXTURE_TEARDOWN(open2_bad)
{
}

TEST_F(open2_bad, is_einval)
{
	struct td_open_params params = {
		.path = FAKE_PATH,
		.flags = variant->flags,
		.ring_entries = variant->ring_entries,
	};
	struct td_ctx *ctx = (struct td_ctx *)1;

	if (variant->reserved_idx)
		params.reserved[variant->reserved_idx - 1] = 1;
	ASSERT_EQ(-EINVAL, td_open2(&ctx, &params));
	ASSERT_NULL(ctx);
	ASSERT_EQ(0, fake.open_calls);
	/* The same params with the field put right open. */
	params.flags = 0;
	params.ring_entries = 0;
	memset(params.reserved, 0, sizeof(params.reserved));
	ASSERT_EQ(0, td_open2(&ctx, &params));
	ASSERT_EQ(1, fake.open_calls);
	td_close(ctx);
}

TEST(open2_null_args)
{
	struct td_open_params params = { .path = FAKE_PATH };
	struct td_ctx *ctx = (struct td_ctx *)1;

	ASSERT_EQ(-EINVAL, td_open2(NULL, &params));
	ASSERT_EQ(-EINVAL, td_open2(&ctx, NULL));
	ASSERT_NULL(ctx);
	ASSERT_EQ(0, fake.open_calls);
}

FIXTURE(ring) {
	struct td_ctx *ctx;
};

/*
 * Blocking or not, a context takes what the ring holds without a system
 * call.  (The fake's read() never blocks, so an empty ring ends in -EAGAIN
 * on both; the kernel's would block on the first.)
 */
FIXTURE_VARIANT(ring) {
	int flags;
};

FIXTURE_VARIANT_ADD(ring, nonblocking) {
	.flags = TD_NONBLOCK,
};

FIXTURE_VARIANT_ADD(ring, blocking) {
	.flags = 0,
};

FIXTURE_SETUP(ring)
{
	fake.version.features |= QTIMER_FEAT_RING;
	ASSERT_EQ(0, td_open_path(&self->ctx, FAKE_PATH, variant->flags));
	ASSERT_TRUE(fake.ring.mapped);
}

FIXTURE_TEARDOWN(ring)
{
	td_close(self->ctx);
}

TEST_F(ring, read_takes_from_the_mapping)
{
	struct qtimer_record recs[8];
	unsigned int i;

	for (i = 0; i < 5; i++)
		fake_push_record(i + 1, 10 + i, 1);
	ASSERT_EQ(5, fake_ring_nr_ready());
	errno = 1234;
	ASSERT_EQ(3, td_read(self->ctx, recs, 3));
	ASSERT_EQ(1234, errno);
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(i + 1, recs[i].id);
		ASSERT_EQ(10 + i, recs[i].cookie);
		ASSERT_EQ(1, recs[i].count);
		/* The claim bits are the library's business, not the caller's. */
		ASSERT_EQ(QTIMER_REC_LAST, recs[i].flags);
		ASSERT_EQ(QTIMER_REC_TAKEN, ring_claim(i));
	}
	/* The tail passed what was taken, and no further. */
	ASSERT_EQ(3, ring_tail());
	ASSERT_EQ(QTIMER_REC_READY, ring_claim(3));
	ASSERT_EQ(0, fake.read_calls);
	ASSERT_EQ(0, fake.poll_calls);

	ASSERT_EQ(2, td_read(self->ctx, recs, 8));
	ASSERT_EQ(4, recs[0].id);
	ASSERT_EQ(5, recs[1].id);
	ASSERT_EQ(5, ring_tail());
	ASSERT_EQ(0, fake.read_calls);
	/* Empty: now, and only now, read(2). */
	ASSERT_EQ(-EAGAIN, td_read(self->ctx, recs, 8));
	ASSERT_EQ(1, fake.read_calls);
}

struct order {
	uint64_t next;		/* the id expected next */
	unsigned int nr, bad;
	unsigned int skip_every;	/* ids that are not expected: every nth */
};

static void order_cb(const struct qtimer_record *rec, void *arg)
{
	struct order *o = arg;

	if (o->skip_every && o->next % o->skip_every == 0)
		o->next++;
	if (rec->id != o->next++ || rec->flags != QTIMER_REC_LAST)
		o->bad++;
	o->nr++;
}

TEST_F(ring, wait_and_dispatch_take_from_the_mapping)
{
	struct order o = { .next = 1 };
	struct qtimer_record recs[8];
	unsigned int i;

	for (i = 0; i < 3; i++)
		fake_push_record(i + 1, 0, 1);
	ASSERT_EQ(3, td_wait(self->ctx, recs, 8, 0));
	ASSERT_EQ(3, recs[2].id);
	ASSERT_EQ(QTIMER_REC_LAST, recs[2].flags);
	/* The take emptied the ring: one poll(2), for the kernel's reap. */
	ASSERT_EQ(1, fake.poll_calls);
	ASSERT_EQ(0, fake.read_calls);

	for (i = 0; i < 200; i++)
		fake_push_record(i + 1, 0, 1);
	ASSERT_EQ(200, td_dispatch(self->ctx, order_cb, &o, 1000));
	ASSERT_EQ(200, o.nr);
	ASSERT_EQ(0, o.bad);
	ASSERT_EQ(203, ring_tail());
	ASSERT_EQ(2, fake.poll_calls);
	ASSERT_EQ(0, fake.read_calls);

	/* Nothing in the ring: td_wait polls the file. */
	ASSERT_EQ(-ETIME, td_wait(self->ctx, recs, 8, 0));
	ASSERT_EQ(3, fake.poll_calls);
	ASSERT_EQ(0, fake.read_calls);
}

/*
 * With QTIMER_FEAT_RING_DRAIN the kernel reaps by itself: a take that
 * empties the ring makes no system call (the poll(2) above was the
 * workaround for a module without it).
 */
TEST(ring_with_the_drain_a_take_makes_no_system_call)
{
	struct qtimer_record recs[8];
	struct order o = { .next = 1 };
	struct td_ctx *ctx;
	unsigned int i;

	fake.version.features |= QTIMER_FEAT_RING | QTIMER_FEAT_RING_DRAIN;
	ASSERT_EQ(0, td_open_path(&ctx, FAKE_PATH, 0));
	ASSERT_TRUE(fake.ring.mapped);
	for (i = 0; i < 3; i++)
		fake_push_record(i + 1, 0, 1);
	ASSERT_EQ(3, td_wait(ctx, recs, 8, 0));
	/* Fewer than the ring holds: none waits in the (fake) kernel. */
	for (i = 0; i < 30; i++)
		fake_push_record(i + 1, 0, 1);
	ASSERT_EQ(30, td_dispatch(ctx, order_cb, &o, 1000));
	ASSERT_EQ(0, o.bad);
	/* Every record came from the mapping, and nothing went to the kernel. */
	ASSERT_EQ(0, fake.poll_calls);
	ASSERT_EQ(0, fake.read_calls);
	td_close(ctx);
}

/* VOID records, and any claim not READY, are passed over. */
TEST_F(ring, void_and_foreign_claims_are_skipped)
{
	struct td_timer_spec spec = { .clockid = CLOCK_MONOTONIC };
	struct qtimer_record recs[8];
	uint64_t ids[4];
	unsigned int i;

	for (i = 0; i < 4; i++) {
		ASSERT_EQ(0, td_arm(self->ctx, &spec, &ids[i]));
		fake_push_record(ids[i], i, 1);
	}
	ASSERT_EQ(QTIMER_CANCEL_QUEUED, td_cancel(self->ctx, ids[1]));
	ASSERT_EQ(QTIMER_REC_VOID, ring_claim(1));
	/* As if a read(2) behind the library's back had claimed it. */
	fake.ring.recs[2].flags = (fake.ring.recs[2].flags & ~QTIMER_REC_CLAIM) |
				  QTIMER_REC_TAKEN;
	ASSERT_EQ(QTIMER_REC_TAKEN, ring_claim(2));

	ASSERT_EQ(2, td_read(self->ctx, recs, 8));
	ASSERT_EQ(ids[0], recs[0].id);
	ASSERT_EQ(ids[3], recs[1].id);
	ASSERT_EQ(4, ring_tail());
	ASSERT_EQ(QTIMER_REC_VOID, ring_claim(1));
	ASSERT_EQ(0, fake.read_calls);
	ASSERT_EQ(-EAGAIN, td_read(self->ctx, recs, 8));
}

/*
 * More records than the ring holds: the rest wait in the kernel, flagged,
 * and poll(2) moves them in when the ring is drained (the poll that ends
 * each take that empties it).  Each arrives once, in order, and
 * td_dispatch needs no read(2) for them.
 */
TEST_F(ring, overflow_dispatched_once_in_order)
{
	const unsigned int nr = 4096 + 300;
	struct order o = { .next = 1 };
	unsigned int i;

	for (i = 0; i < nr; i++)
		fake_push_record(i + 1, 0, 1);
	ASSERT_EQ(4096, fake_ring_nr_ready());
	ASSERT_EQ(QTIMER_RING_OVERFLOW, *fake.ring.flags_p);
	ASSERT_EQ(nr, td_dispatch(self->ctx, order_cb, &o, 100000));
	ASSERT_EQ(nr, o.nr);
	ASSERT_EQ(0, o.bad);
	ASSERT_EQ(0, *fake.ring.flags_p);
	ASSERT_EQ(0, fake.read_calls);
	/* Once when the first 4096 were taken, once after the rest. */
	ASSERT_EQ(2, fake.poll_calls);
	ASSERT_EQ(-EAGAIN, td_dispatch(self->ctx, order_cb, &o, 10));
	ASSERT_EQ(nr, o.nr);
}

/*
 * td_read of a ring with records waiting behind it: the poll(2) that ends
 * the take that empties the ring moves them in, for the next td_read.
 */
TEST_F(ring, overflow_read_once_in_order)
{
	const unsigned int nr = 4096 + 10;
	struct qtimer_record *recs = calloc(nr, sizeof(*recs));
	unsigned int i;

	ASSERT_NE(NULL, recs);
	for (i = 0; i < nr; i++)
		fake_push_record(i + 1, 0, 1);
	ASSERT_EQ(4096, td_read(self->ctx, recs, nr));
	ASSERT_EQ(0, fake.read_calls);
	for (i = 0; i < 4096; i++)
		ASSERT_EQ(i + 1, recs[i].id);
	ASSERT_EQ(1, fake.poll_calls);
	ASSERT_EQ(10, td_read(self->ctx, recs, nr));
	ASSERT_EQ(0, fake.read_calls);
	for (i = 0; i < 10; i++) {
		ASSERT_EQ(4096 + i + 1, recs[i].id);
		ASSERT_EQ(QTIMER_REC_LAST, recs[i].flags);
	}
	ASSERT_EQ(-EAGAIN, td_read(self->ctx, recs, nr));
	free(recs);
}

/* A cancelled record is never delivered, from the ring or the overflow. */
TEST_F(ring, cancelled_records_never_delivered)
{
	struct td_timer_spec spec = { .clockid = CLOCK_MONOTONIC };
	const unsigned int nr = 4096 + 100;
	struct order o = { .next = 1, .skip_every = 7 };
	uint64_t id;
	unsigned int i;

	/* The fake hands out ids 1, 2, ...: record i + 1 is timer i + 1's. */
	for (i = 0; i < nr; i++) {
		ASSERT_EQ(0, td_arm(self->ctx, &spec, &id));
		ASSERT_EQ(i + 1, id);
		fake_push_record(id, 0, 1);
	}
	for (id = 7; id <= nr; id += 7)
		ASSERT_EQ(QTIMER_CANCEL_QUEUED, td_cancel(self->ctx, id));
	ASSERT_EQ(nr - nr / 7, td_dispatch(self->ctx, order_cb, &o, 100000));
	ASSERT_EQ(0, o.bad);
	ASSERT_EQ(nr - nr / 7, o.nr);
	ASSERT_EQ(-EAGAIN, td_dispatch(self->ctx, order_cb, &o, 10));
}

struct reader {
	struct td_ctx *ctx;
	int ret;
};

static void rereading_cb(const struct qtimer_record *rec, void *arg)
{
	struct reader *r = arg;
	struct qtimer_record more;

	(void)rec;
	/* The callback may read from its own context: no lock is held. */
	r->ret = td_read(r->ctx, &more, 1);
}

TEST_F(ring, dispatch_callback_may_read)
{
	struct reader r = { .ctx = self->ctx, .ret = 1 };

	fake_push_record(1, 0, 1);
	ASSERT_EQ(1, td_dispatch(self->ctx, rereading_cb, &r, 10));
	ASSERT_EQ(-EAGAIN, r.ret);
}

#define READER_THREADS	4

static unsigned int times_seen[4097];

static void *reader_thread(void *arg)
{
	struct reader *r = arg;
	struct qtimer_record recs[7];
	int i;

	while ((r->ret = td_read(r->ctx, recs, 7)) > 0)
		for (i = 0; i < r->ret; i++)
			__atomic_fetch_add(&times_seen[recs[i].id % 4097], 1,
					   __ATOMIC_RELAXED);
	return NULL;
}

/* Readers on several threads share the ring: each record reaches one. */
TEST_F(ring, threads_take_each_record_once)
{
	struct reader r[READER_THREADS];
	pthread_t th[READER_THREADS];
	unsigned int i;

	for (i = 0; i < 4096; i++)
		fake_push_record(i + 1, 0, 1);
	for (i = 0; i < READER_THREADS; i++) {
		r[i].ctx = self->ctx;
		ASSERT_EQ(0, pthread_create(&th[i], NULL, reader_thread, &r[i]));
	}
	for (i = 0; i < READER_THREADS; i++) {
		ASSERT_EQ(0, pthread_join(th[i], NULL));
		ASSERT_EQ(-EAGAIN, r[i].ret);
	}
	for (i = 1; i <= 4096; i++)
		ASSERT_EQ(1, times_seen[i]);
	ASSERT_EQ(4096, ring_tail());
}

/* ---- without the ring: the library goes on with read(2) ---- */

/* ---- zero-copy: td_ring_peek and td_ring_advance ---- */

TEST_F(ring, peek_points_into_the_mapping)
{
	const struct qtimer_record *recs[8];
	struct qtimer_record rec;
	unsigned int i;

	for (i = 0; i < 5; i++)
		fake_push_record(i + 1, 10 + i, 1);
	errno = 1234;
	ASSERT_EQ(3, td_ring_peek(self->ctx, recs, 3));
	ASSERT_EQ(1234, errno);
	for (i = 0; i < 3; i++) {
		/* The kernel's slot itself, not a copy. */
		ASSERT_EQ(&fake.ring.recs[i], recs[i]);
		ASSERT_EQ(i + 1, recs[i]->id);
		ASSERT_EQ(10 + i, recs[i]->cookie);
		ASSERT_EQ(QTIMER_REC_LAST | QTIMER_REC_TAKEN, recs[i]->flags);
	}
	/* Claimed, but the slots stay ours until the advance. */
	ASSERT_EQ(0, ring_tail());
	ASSERT_EQ(QTIMER_REC_READY, ring_claim(3));
	ASSERT_EQ(0, td_ring_advance(self->ctx, 3));
	ASSERT_EQ(3, ring_tail());
	ASSERT_EQ(2, td_ring_peek(self->ctx, recs, 8));
	ASSERT_EQ(4, recs[0]->id);
	ASSERT_EQ(5, recs[1]->id);
	ASSERT_EQ(0, td_ring_advance(self->ctx, 2));
	ASSERT_EQ(5, ring_tail());
	ASSERT_EQ(0, fake.read_calls);
	/* Empty: 0, no system call, no lock held, nothing to advance. */
	ASSERT_EQ(0, td_ring_peek(self->ctx, recs, 8));
	ASSERT_EQ(0, fake.read_calls);
	ASSERT_EQ(-EINVAL, td_ring_advance(self->ctx, 0));
	ASSERT_EQ(-EAGAIN, td_read(self->ctx, &rec, 1));
}

/* A record voided before the peek is passed over, and so is its slot. */
TEST_F(ring, peek_skips_voided_records)
{
	const struct qtimer_record *recs[8];
	struct td_timer_spec spec = { .clockid = CLOCK_MONOTONIC };
	uint64_t ids[3];
	unsigned int i;

	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, td_arm(self->ctx, &spec, &ids[i]));
		fake_push_record(ids[i], i, 1);
	}
	ASSERT_EQ(QTIMER_CANCEL_QUEUED, td_cancel(self->ctx, ids[1]));
	ASSERT_EQ(2, td_ring_peek(self->ctx, recs, 8));
	ASSERT_EQ(ids[0], recs[0]->id);
	ASSERT_EQ(ids[2], recs[1]->id);
	ASSERT_EQ(0, td_ring_advance(self->ctx, 2));
	ASSERT_EQ(3, ring_tail());

	/* Only voided records: the tail passes them, and nothing is held. */
	ASSERT_EQ(0, td_arm(self->ctx, &spec, &ids[0]));
	fake_push_record(ids[0], 0, 1);
	ASSERT_EQ(QTIMER_CANCEL_QUEUED, td_cancel(self->ctx, ids[0]));
	ASSERT_EQ(0, td_ring_peek(self->ctx, recs, 8));
	ASSERT_EQ(4, ring_tail());
	ASSERT_EQ(-EINVAL, td_ring_advance(self->ctx, 0));
}

/*
 * The claim is made at the peek: a CANCEL meanwhile finds the record
 * consumed (it cannot void it), and the record the caller holds is intact.
 */
TEST_F(ring, cancel_after_peek_finds_it_consumed)
{
	const struct qtimer_record *recs[1];
	struct td_timer_spec spec = { .clockid = CLOCK_MONOTONIC };
	uint64_t id;

	ASSERT_EQ(0, td_arm(self->ctx, &spec, &id));
	fake_push_record(id, 77, 1);
	ASSERT_EQ(1, td_ring_peek(self->ctx, recs, 1));
	/* The fake's answer for a record it cannot void: only "armed". */
	ASSERT_EQ(QTIMER_CANCEL_ARMED, td_cancel(self->ctx, id));
	ASSERT_EQ(QTIMER_REC_TAKEN, ring_claim(0));
	ASSERT_EQ(id, recs[0]->id);
	ASSERT_EQ(77, recs[0]->cookie);
	ASSERT_EQ(0, td_ring_advance(self->ctx, 1));
}

/* The peeking thread cannot read, wait, dispatch or peek until it advances. */
TEST_F(ring, peek_holds_the_consumer_until_advance)
{
	const struct qtimer_record *recs[4];
	struct qtimer_record rec;
	struct order o = { .next = 2 };

	fake_push_record(1, 0, 1);
	fake_push_record(2, 0, 1);
	ASSERT_EQ(1, td_ring_peek(self->ctx, recs, 1));
	ASSERT_EQ(-EBUSY, td_read(self->ctx, &rec, 1));
	ASSERT_EQ(-EBUSY, td_wait(self->ctx, &rec, 1, 0));
	ASSERT_EQ(-EBUSY, td_dispatch(self->ctx, order_cb, &o, 8));
	ASSERT_EQ(-EBUSY, td_ring_peek(self->ctx, recs, 4));
	/* Not what the peek returned: refused, and the peek stands. */
	ASSERT_EQ(-EINVAL, td_ring_advance(self->ctx, 2));
	ASSERT_EQ(-EINVAL, td_ring_advance(self->ctx, 0));
	ASSERT_EQ(0, ring_tail());
	ASSERT_EQ(0, td_ring_advance(self->ctx, 1));
	ASSERT_EQ(1, td_dispatch(self->ctx, order_cb, &o, 8));
	ASSERT_EQ(0, o.bad);
	ASSERT_EQ(2, ring_tail());
}

struct peek_reader {
	struct td_ctx *ctx;
	struct qtimer_record rec;
	int ret;
	bool done;
};

static void *peek_reader(void *arg)
{
	struct peek_reader *r = arg;

	r->ret = td_read(r->ctx, &r->rec, 1);
	__atomic_store_n(&r->done, true, __ATOMIC_RELEASE);
	return NULL;
}

/* Another thread's read waits for the advance, then takes what is next. */
TEST_F(ring, peek_makes_other_readers_wait)
{
	struct peek_reader r = { .ctx = self->ctx };
	const struct qtimer_record *recs[1];
	pthread_t thread;

	fake_push_record(1, 0, 1);
	fake_push_record(2, 0, 1);
	ASSERT_EQ(1, td_ring_peek(self->ctx, recs, 1));
	ASSERT_EQ(0, pthread_create(&thread, NULL, peek_reader, &r));
	usleep(100000);
	ASSERT_FALSE(__atomic_load_n(&r.done, __ATOMIC_ACQUIRE));
	ASSERT_EQ(1, recs[0]->id);
	ASSERT_EQ(0, td_ring_advance(self->ctx, 1));
	ASSERT_EQ(0, pthread_join(thread, NULL));
	ASSERT_EQ(1, r.ret);
	ASSERT_EQ(2, r.rec.id);
}

/* A small ring wraps: the peek follows the mask of the size asked for. */
TEST(peek_wraps_a_small_ring)
{
	struct td_open_params params = {
		.path = FAKE_PATH,
		.flags = TD_NONBLOCK,
		.ring_entries = QTIMER_RING_MIN,
	};
	const struct qtimer_record *recs[QTIMER_RING_MIN];
	struct td_ctx *ctx;
	unsigned int round, i;
	int nr;

	fake.version.features |= QTIMER_FEAT_RING;
	ASSERT_EQ(0, td_open2(&ctx, &params));
	for (round = 0; round < 3; round++) {
		for (i = 0; i < 6; i++)
			fake_push_record(round * 6 + i + 1, 0, 1);
		nr = td_ring_peek(ctx, recs, QTIMER_RING_MIN);
		ASSERT_EQ(6, nr);
		for (i = 0; i < 6; i++)
			ASSERT_EQ(round * 6 + i + 1, recs[i]->id);
		ASSERT_EQ(0, td_ring_advance(ctx, nr));
	}
	ASSERT_EQ(18, ring_tail());
	td_close(ctx);
}

TEST(peek_needs_a_ring)
{
	struct td_open_params params = {
		.path = FAKE_PATH,
		.ring_entries = TD_RING_OFF,
	};
	const struct qtimer_record *recs[1];
	struct td_ctx *ctx;

	ASSERT_EQ(-EINVAL, td_ring_peek(NULL, recs, 1));
	ASSERT_EQ(-EINVAL, td_ring_advance(NULL, 1));
	fake.version.features |= QTIMER_FEAT_RING;
	ASSERT_EQ(0, td_open2(&ctx, &params));
	ASSERT_EQ(-EINVAL, td_ring_peek(ctx, NULL, 1));
	ASSERT_EQ(-EINVAL, td_ring_peek(ctx, recs, 0));
	ASSERT_EQ(-ENODEV, td_ring_peek(ctx, recs, 1));
	ASSERT_EQ(-EINVAL, td_ring_advance(ctx, 0));
	td_close(ctx);
}

FIXTURE(no_ring) {
	struct td_ctx *ctx;
};

FIXTURE_VARIANT(no_ring) {
	bool offered;		/* QTIMER_FEAT_RING */
	int setup_errno;
	int mmap_errno;
	bool short_size;
	int rdwr_errno;
	bool set_up;		/* the kernel side has a ring nonetheless */
};

/* A module from before the ring. */
FIXTURE_VARIANT_ADD(no_ring, not_offered) {
	.offered = false,
};

/* Offered, but refused: as a module built without it would, or memcg. */
FIXTURE_VARIANT_ADD(no_ring, setup_enotty) {
	.offered = true, .setup_errno = ENOTTY,
};

FIXTURE_VARIANT_ADD(no_ring, setup_enomem) {
	.offered = true, .setup_errno = ENOMEM,
};

/* Set up in the kernel but not mapped: read(2) consumes the ring. */
FIXTURE_VARIANT_ADD(no_ring, mmap_fails) {
	.offered = true, .mmap_errno = ENOMEM, .set_up = true,
};

FIXTURE_VARIANT_ADD(no_ring, layout_unusable) {
	.offered = true, .short_size = true, .set_up = true,
};

/* A node the caller may not write: opened read-only, no ring tried. */
FIXTURE_VARIANT_ADD(no_ring, read_only_node) {
	.offered = true, .rdwr_errno = EACCES,
};

FIXTURE_SETUP(no_ring)
{
	if (variant->offered)
		fake.version.features |= QTIMER_FEAT_RING;
	fake.ring.setup_errno = variant->setup_errno;
	fake.ring.mmap_errno = variant->mmap_errno;
	fake.ring.short_size = variant->short_size;
	fake.rdwr_errno = variant->rdwr_errno;
	errno = 1234;
	ASSERT_EQ(0, td_open_path(&self->ctx, FAKE_PATH, TD_NONBLOCK));
	ASSERT_EQ(1234, errno);
}

FIXTURE_TEARDOWN(no_ring)
{
	td_close(self->ctx);
	ASSERT_EQ(0, fake.ring.munmap_calls);
}

TEST_F(no_ring, reads_go_to_read)
{
	struct qtimer_record recs[8];
	unsigned int i;

	ASSERT_FALSE(fake.ring.mapped);
	ASSERT_EQ(variant->set_up, fake.ring.map != NULL);
	if (variant->rdwr_errno) {
		ASSERT_EQ(2, fake.open_calls);
		ASSERT_EQ(O_RDONLY, fake.open_flags & O_ACCMODE);
		ASSERT_EQ(0, fake.ring.setup_calls);
	} else {
		ASSERT_EQ(O_RDWR, fake.open_flags & O_ACCMODE);
	}
	if (!variant->offered)
		ASSERT_EQ(0, fake.ring.setup_calls);
	if (!variant->set_up)
		ASSERT_EQ(0, fake.ring.mmap_calls);

	for (i = 0; i < 3; i++)
		fake_push_record(i + 1, 0, 1);
	errno = 1234;
	ASSERT_EQ(3, td_read(self->ctx, recs, 8));
	ASSERT_EQ(1234, errno);
	ASSERT_EQ(1, fake.read_calls);
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(i + 1, recs[i].id);
		/* From the kernel's ring too, read(2) clears the claim. */
		ASSERT_EQ(QTIMER_REC_LAST, recs[i].flags);
	}
	ASSERT_EQ(-EAGAIN, td_read(self->ctx, recs, 8));
	ASSERT_EQ(2, fake.read_calls);
}

TEST_HARNESS_MAIN
