// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * Native unit tests against the fake device (fake_harness.h), setting the
 * ring up: td_open's default ring and its mapping, td_open2 with a ring of
 * a chosen size or none and each bad parameter, and a library that goes on
 * with read(2) wherever the ring is missing, refused or unusable.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fake_harness.h"

/* ---- td_open: the default ring, set up and mapped ---- */

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

/* ---- without the ring: the library goes on with read(2) ---- */

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
