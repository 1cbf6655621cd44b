// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * libtimerdev against the real module, opening a context: td_open's modes
 * and errors, td_fd, td_close, td_version (which asks the device each
 * time), and the module's caps on timers per file and per user as the
 * library reports them (see device_harness.h for what every
 * libtimerdev_*_test shares).
 */
#include <fcntl.h>

#include "device_harness.h"

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
	long long param;

	memset(&v, 0xa5, sizeof(v));
	ASSERT_EQ(0, td_version(self->ctx, &v));
	ASSERT_EQ(QTIMER_API_VERSION, v.api_version);
	ASSERT_EQ(sizeof(struct qtimer_record), v.record_size);
	ASSERT_EQ(sizeof(struct qtimer_op), v.op_size);
	ASSERT_EQ(QTIMER_SUBMIT_MAX, v.submit_max);
	ASSERT_EQ(QTIMER_COUNT_MAX, v.count_max);
	ASSERT_EQ(QTIMER_SLACK_MAX_NS, v.max_slack_ns);
	ASSERT_EQ(QT_CLOCKS_SPEC, v.clocks);
	ASSERT_EQ(QTIMER_FEAT_SUBMIT | QTIMER_FEAT_PERIODIC | QTIMER_FEAT_SLACK,
		  v.features & (QTIMER_FEAT_SUBMIT | QTIMER_FEAT_PERIODIC |
				QTIMER_FEAT_SLACK));
	ASSERT_EQ(0, v.reserved[0] | v.reserved[1] | v.reserved[2]);
	param = t_param_get("max_timers_per_fd");
	if (param >= 0)
		ASSERT_EQ(param, v.max_timers_per_fd);
	param = t_param_get("max_timers_per_user");
	if (param >= 0)
		ASSERT_EQ(param, v.max_timers_per_user);
	ASSERT_EQ(-EINVAL, td_version(self->ctx, NULL));
}

/* td_version asks the device again: it sees a changed module parameter. */
TEST_F(qt, version_follows_limits)
{
	struct qtimer_version v;
	long long old = t_param_get("max_timers_per_fd");

	ASSERT_GT(old, 0);
	ASSERT_EQ(0, t_param_set("max_timers_per_fd", 4321));
	ASSERT_EQ(0, td_version(self->ctx, &v));
	ASSERT_EQ(0, t_param_set("max_timers_per_fd", old));
	ASSERT_EQ(4321, v.max_timers_per_fd);
}

/* ---- limits ---- */

TEST_F(qt, enospc_per_fd)
{
	struct td_timer_spec spec = mono(FAR, 0);
	long long old = t_param_get("max_timers_per_fd");
	int ret[9], i;

	ASSERT_GT(old, 0);
	ASSERT_EQ(0, t_param_set("max_timers_per_fd", 8));
	for (i = 0; i < 9; i++)
		ret[i] = td_arm(self->ctx, &spec, NULL);
	ASSERT_EQ(0, t_param_set("max_timers_per_fd", old));
	for (i = 0; i < 8; i++)
		ASSERT_EQ(0, ret[i]);
	ASSERT_EQ(-ENOSPC, ret[8]);
}

TEST_F(qt, edquot_per_user)
{
	struct td_timer_spec spec = mono(FAR, 0);
	long long old = t_param_get("max_timers_per_user");
	struct td_ctx *other;
	int ret[9], i;

	ASSERT_GT(old, 0);
	ASSERT_EQ(0, td_open(&other, 0));
	ASSERT_EQ(0, t_param_set("max_timers_per_user", 8));
	/* The cap spans files: 5 here and 3 there make 8. */
	for (i = 0; i < 9; i++)
		ret[i] = td_arm(i < 5 ? self->ctx : other, &spec, NULL);
	ASSERT_EQ(0, t_param_set("max_timers_per_user", old));
	td_close(other);
	for (i = 0; i < 8; i++)
		ASSERT_EQ(0, ret[i]);
	ASSERT_EQ(-EDQUOT, ret[8]);
}

/* td_close gives the user's timers back: the per-user count drops. */
TEST(close_releases_timers)
{
	struct td_timer_spec spec = mono(FAR, 0);
	long long old = t_param_get("max_timers_per_user");
	struct td_ctx *ctx;
	int round, i, ret = 0;

	ASSERT_GT(old, 0);
	ASSERT_EQ(0, t_param_set("max_timers_per_user", 100));
	for (round = 0; round < 3 && !ret; round++) {
		ret = td_open(&ctx, 0);
		for (i = 0; i < 100 && !ret; i++)
			ret = td_arm(ctx, &spec, NULL);
		td_close(ctx);
	}
	ASSERT_EQ(0, t_param_set("max_timers_per_user", old));
	ASSERT_EQ(0, ret);
}

TEST_HARNESS_MAIN
