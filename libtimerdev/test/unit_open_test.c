// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * Native unit tests against the fake device (fake_harness.h), the
 * library's own helpers and version, and opening: without a device, on a
 * file that fails the handshake, with each flag, and with no memory; and
 * every function given no context.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "fake_harness.h"

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

/* ---- opening the fake device ---- */

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

TEST_HARNESS_MAIN
