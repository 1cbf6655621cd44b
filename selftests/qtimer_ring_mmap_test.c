// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * The ring's mapping (qtimer_ring_mapping.h): mmap()'s validation, and the
 * mapping outliving close() and crossing fork().
 */
#define _GNU_SOURCE
#include <sys/mman.h>
#include <sys/wait.h>

#include "qtimer_ring_mapping.h"

TEST(mmap_before_setup_enodev)
{
	void *p;
	int fd;

	SKIP_WITHOUT_RING();
	fd = t_open(0);
	ASSERT_LE(0, fd);
	p = mmap(NULL, page_size(), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(ENODEV, errno);
	if (p != MAP_FAILED)
		munmap(p, page_size());
	close(fd);
}

/* A ring set up but not mapped; each variant maps it wrongly once. */
FIXTURE(mmap_bad)
{
	int fd;
	struct qtimer_ring_setup s;
};

FIXTURE_VARIANT(mmap_bad)
{
	int map_flags;
	int offset_pages;
	int extra_pages;
};

FIXTURE_VARIANT_ADD(mmap_bad, private)
{
	.map_flags = MAP_PRIVATE,
};

FIXTURE_VARIANT_ADD(mmap_bad, nonzero_offset)
{
	.map_flags = MAP_SHARED, .offset_pages = 1,
};

FIXTURE_VARIANT_ADD(mmap_bad, longer_than_mmap_size)
{
	.map_flags = MAP_SHARED, .extra_pages = 1,
};

FIXTURE_SETUP(mmap_bad)
{
	int ret;

	self->fd = t_open(0);
	ASSERT_LE(0, self->fd);
	ret = t_ring_setup(self->fd, 64, &self->s);
	if (ret == -ENOTTY)
		SKIP(return, "no record ring: QTIMER_FEAT_RING not offered");
	ASSERT_EQ(0, ret);
}

FIXTURE_TEARDOWN(mmap_bad)
{
	close(self->fd);
}

/* EINVAL, and the right mapping still works afterwards. */
TEST_F(mmap_bad, einval)
{
	long pg = page_size();
	size_t len = (self->s.mmap_size + pg - 1) / pg * pg;
	void *p;

	RETURN_IF_SETUP_SKIPPED();
	p = mmap(NULL, len + variant->extra_pages * pg, PROT_READ | PROT_WRITE,
		 variant->map_flags, self->fd, variant->offset_pages * pg);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EINVAL, errno);
	if (p != MAP_FAILED)
		munmap(p, len + variant->extra_pages * pg);

	p = mmap(NULL, self->s.mmap_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		 self->fd, 0);
	ASSERT_NE(MAP_FAILED, p);
	munmap(p, self->s.mmap_size);
}

/*
 * A file opened read-only cannot be mapped for writing (the consumer
 * writes tail and claims): EACCES, as the header says, from mmap() itself.
 */
TEST(mmap_readonly_file_eacces)
{
	struct qtimer_ring_setup s;
	void *p;
	int fd, ret;

	fd = open(QT_DEV, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, fd);
	ret = t_ring_setup(fd, 64, &s);
	if (ret == -ENOTTY)
		SKIP(return, "no record ring: QTIMER_FEAT_RING not offered");
	ASSERT_EQ(0, ret);
	p = mmap(NULL, s.mmap_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EACCES, errno);
	if (p != MAP_FAILED)
		munmap(p, s.mmap_size);
	close(fd);
}

/* --- the mapping's life ------------------------------------------------- */

/*
 * close() with the ring mapped, then munmap(): the mapping still shows the
 * record that was there, and tearing it down with timers armed and
 * records pending is clean (kmemleak and the console judge the rest).
 */
TEST_F(ring, close_while_mapped_then_munmap)
{
	struct qtimer_record rec;
	long idx;
	__u64 id;

	RETURN_IF_SETUP_SKIPPED();
	idx = t_ring_fire_one(&self->r, 0xc105e, &id);
	ASSERT_LE(0, idx);
	ASSERT_LE(0, t_ring_fire_one(&self->r, 0xc105f, NULL));
	ASSERT_EQ(0, t_arm(self->fd, CLOCK_MONOTONIC, 0, 30 * NSEC_PER_SEC, 0,
			    1, NULL));
	close(self->fd);
	self->fd = -1;
	ASSERT_TRUE(t_ring_claim(&self->r, idx, &rec));
	EXPECT_EQ(id, rec.id);
	EXPECT_EQ(0xc105e, rec.cookie);
	t_ring_unmap(&self->r);
	EXPECT_EQ(0, fresh_file_works());
}

/*
 * The mapping holds the file: after close(), its timers keep firing into
 * the ring until munmap() ends the file ("the last close").
 */
TEST_F(ring, mapping_keeps_file_alive)
{
	struct qtimer_record rec;
	__s64 when;

	RETURN_IF_SETUP_SKIPPED();
	when = t_now(CLOCK_MONOTONIC) + 50 * NSEC_PER_MSEC;
	ASSERT_EQ(0, t_arm_at_cpu0(self->fd, when, 0xa11e, NULL));
	close(self->fd);
	self->fd = -1;
	ASSERT_EQ(1, t_ring_wait_pending(&self->r, 1, QT_ARRIVE_MS))
		TH_LOG("no record after close() with the ring still mapped");
	ASSERT_TRUE(t_ring_claim(&self->r, t_ring_tail(&self->r), &rec));
	EXPECT_EQ(0xa11e, rec.cookie);
	EXPECT_EQ(when, rec.expires_ns);
	EXPECT_LE(when, t_now(CLOCK_MONOTONIC));
}

/*
 * The mapping is shared across fork(): the child consumes through it (the
 * one consumer meanwhile), and the parent sees what it did.
 */
TEST_F(ring, fork_child_consumes_mapping)
{
	__u32 idx;
	pid_t pid;
	__u64 id;

	RETURN_IF_SETUP_SKIPPED();
	idx = t_ring_head(&self->r);
	ASSERT_EQ(0, t_arm(self->fd, CLOCK_MONOTONIC, 0, 20 * NSEC_PER_MSEC,
			    0, 0xf0e, &id));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct qtimer_record rec;

		if (t_ring_collect(&self->r, &rec, 1, QT_ARRIVE_MS,
				    CLOCK_MONOTONIC, NULL) != 1)
			_exit(1);
		_exit(rec.id == id && rec.cookie == 0xf0e ? 0 : 2);
	}
	ASSERT_EQ(0, t_wait_child(pid));
	EXPECT_EQ(idx + 1, t_ring_tail(&self->r));
	EXPECT_EQ(QTIMER_REC_TAKEN, t_ring_claim_of(&self->r, idx));
	EXPECT_EQ(0, t_revents(self->fd) & POLLIN);
}

TEST_HARNESS_MAIN
