// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * The record ring's setup (qtimer_ring_mapping.h): VERSION's feature bit,
 * RING_SETUP's validation and layout, a second or read-only setup, and a
 * read() blocked across the setup.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>

#include "qtimer_ring_mapping.h"

#define REC_SIZE	sizeof(struct qtimer_record)

/* The module this tree builds has the ring, and says so consistently. */
TEST(version_offers_ring)
{
	struct qtimer_ring_setup s;
	struct qtimer_version v;
	int fd = t_open(0);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, t_version(fd, &v));
	EXPECT_EQ(REC_SIZE, v.record_size);
	EXPECT_EQ(32, REC_SIZE);
	EXPECT_EQ(QTIMER_FEAT_RING, v.features & QTIMER_FEAT_RING);
	/* "without QTIMER_FEAT_RING, -ENOTTY" */
	EXPECT_EQ(v.features & QTIMER_FEAT_RING ? 0 : -ENOTTY,
		  t_ring_setup(fd, 64, &s));
	close(fd);
}

/*
 * Every size from QTIMER_RING_MIN to QTIMER_RING_MAX: the four words and
 * the records lie inside mmap_size without overlapping, the mapping can
 * be made, and a new ring is empty with no overflow.
 */
TEST(setup_layout_every_size)
{
	__u32 entries;

	SKIP_WITHOUT_RING();
	for (entries = QTIMER_RING_MIN; entries <= QTIMER_RING_MAX; entries *= 2) {
		struct t_ring r;
		int fd = t_open(0);

		ASSERT_LE(0, fd);
		ASSERT_EQ(0, t_ring_setup(fd, entries, &r.setup))
			TH_LOG("entries %u", entries);
		EXPECT_TRUE(t_ring_layout_ok(&r.setup, entries))
			TH_LOG("entries %u: head %u tail %u flags %u recs %u, mmap_size %llu",
			       entries, r.setup.head_off, r.setup.tail_off,
			       r.setup.flags_off, r.setup.recs_off,
			       (unsigned long long)r.setup.mmap_size);
		EXPECT_LE(r.setup.recs_off + (__u64)entries * REC_SIZE,
			  r.setup.mmap_size);
		close(fd);

		fd = t_open(0);
		ASSERT_LE(0, fd);
		ASSERT_EQ(0, t_ring_map(&r, fd, entries)) TH_LOG("entries %u", entries);
		EXPECT_EQ(t_ring_head(&r), t_ring_tail(&r));
		EXPECT_EQ(0, t_ring_flags(&r) & QTIMER_RING_OVERFLOW);
		t_ring_unmap(&r);
		close(fd);
	}
}

/* One bad field per variant, everything else valid. */
FIXTURE(setup_bad)
{
	int fd;
};

FIXTURE_VARIANT(setup_bad)
{
	__u32 entries;
	__u32 flags;
	int reserved_idx;	/* -1: none */
	__u64 reserved;
};

FIXTURE_VARIANT_ADD(setup_bad, entries_zero)
{
	.entries = 0, .reserved_idx = -1,
};

FIXTURE_VARIANT_ADD(setup_bad, entries_not_power_of_two)
{
	.entries = 24, .reserved_idx = -1,
};

FIXTURE_VARIANT_ADD(setup_bad, entries_max_minus_one)
{
	.entries = QTIMER_RING_MAX - 1, .reserved_idx = -1,
};

FIXTURE_VARIANT_ADD(setup_bad, entries_below_min)
{
	.entries = QTIMER_RING_MIN / 2, .reserved_idx = -1,
};

FIXTURE_VARIANT_ADD(setup_bad, entries_one)
{
	.entries = 1, .reserved_idx = -1,
};

FIXTURE_VARIANT_ADD(setup_bad, entries_above_max)
{
	.entries = QTIMER_RING_MAX * 2, .reserved_idx = -1,
};

FIXTURE_VARIANT_ADD(setup_bad, entries_top_bit)
{
	.entries = 1U << 31, .reserved_idx = -1,
};

FIXTURE_VARIANT_ADD(setup_bad, flags_low_bit)
{
	.entries = 64, .flags = 1, .reserved_idx = -1,
};

FIXTURE_VARIANT_ADD(setup_bad, flags_high_bit)
{
	.entries = 64, .flags = 1U << 31, .reserved_idx = -1,
};

FIXTURE_VARIANT_ADD(setup_bad, reserved0)
{
	.entries = 64, .reserved_idx = 0, .reserved = 1,
};

FIXTURE_VARIANT_ADD(setup_bad, reserved1)
{
	.entries = 64, .reserved_idx = 1, .reserved = 1ULL << 63,
};

FIXTURE_SETUP(setup_bad)
{
	self->fd = t_open(0);
	ASSERT_LE(0, self->fd);
	SKIP_WITHOUT_RING();
}

FIXTURE_TEARDOWN(setup_bad)
{
	close(self->fd);
}

/*
 * EINVAL, and the file is left as it was: no ring to map, read() works,
 * and a good RING_SETUP afterwards is not -EBUSY.
 */
TEST_F(setup_bad, einval_and_no_ring_left)
{
	struct qtimer_ring_setup s;
	struct qtimer_record rec;
	__u64 id;
	void *p;

	RETURN_IF_SETUP_SKIPPED();
	memset(&s, 0, sizeof(s));
	s.entries = variant->entries;
	s.flags = variant->flags;
	if (variant->reserved_idx >= 0)
		s.reserved[variant->reserved_idx] = variant->reserved;
	ASSERT_EQ(-EINVAL, t_ioctl(self->fd, QTIMER_IOC_RING_SETUP, &s));

	p = mmap(NULL, page_size(), PROT_READ | PROT_WRITE, MAP_SHARED,
		 self->fd, 0);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(ENODEV, errno);
	if (p != MAP_FAILED)
		munmap(p, page_size());

	ASSERT_EQ(0, t_arm(self->fd, CLOCK_MONOTONIC, 0, 0, 0, 0xbad, &id));
	ASSERT_EQ(1, t_collect(self->fd, &rec, 1, QT_ARRIVE_MS));
	EXPECT_EQ(id, rec.id);
	EXPECT_EQ(0xbad, rec.cookie);
	EXPECT_EQ(QTIMER_REC_LAST, rec.flags);

	EXPECT_EQ(0, t_ring_setup(self->fd, 64, &s));
}

/*
 * Once per file: a second RING_SETUP is -EBUSY whatever its size, and the
 * first ring is untouched by it.
 */
TEST(setup_twice_busy)
{
	struct qtimer_ring_setup s;
	struct qtimer_record rec;
	struct t_ring r;
	__u64 id;
	int fd;

	SKIP_WITHOUT_RING();
	fd = t_open(O_NONBLOCK);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, t_ring_map(&r, fd, 16));
	EXPECT_EQ(-EBUSY, t_ring_setup(fd, 16, &s));
	EXPECT_EQ(-EBUSY, t_ring_setup(fd, 1024, &s));
	ASSERT_EQ(0, t_arm(fd, CLOCK_MONOTONIC, 0, 0, 0, 0xb5, &id));
	ASSERT_EQ(1, t_ring_collect(&r, &rec, 1, QT_ARRIVE_MS,
				     CLOCK_MONOTONIC, NULL));
	EXPECT_EQ(id, rec.id);
	t_ring_unmap(&r);
	close(fd);
}

/*
 * A struct that can be read but not written: -EFAULT, and nothing set up
 * (no ring to map, and a good RING_SETUP afterwards is not -EBUSY).
 */
TEST(setup_readonly_struct_sets_nothing_up)
{
	struct qtimer_ring_setup *ro, s = { .entries = 16 };
	int fd;
	void *p;

	SKIP_WITHOUT_RING();
	fd = t_open(O_NONBLOCK);
	ASSERT_LE(0, fd);
	ro = t_readonly_copy(&s, sizeof(s));
	ASSERT_NE(NULL, ro);
	EXPECT_EQ(-EFAULT, t_ioctl(fd, QTIMER_IOC_RING_SETUP, ro));

	p = mmap(NULL, page_size(), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(ENODEV, errno);
	if (p != MAP_FAILED)
		munmap(p, page_size());
	EXPECT_EQ(0, t_ring_setup(fd, 16, &s));
	t_readonly_free(ro);
	close(fd);
}

/*
 * An ARM whose id cannot be written back never runs: armed and cancelled
 * instead, its timer, due at once, could fire in between and its record
 * reach a consumer under an id the caller never learned.  With a ring the
 * kernel writes records at expiry, so head shows whether it ever fired.
 */
TEST(readonly_arm_never_fires)
{
	struct qtimer_op op = t_op(CLOCK_MONOTONIC, 0, 0, 0, 0x5e), *ro;
	struct t_ring r;
	int fd, i;

	SKIP_WITHOUT_RING();
	fd = t_open(O_NONBLOCK);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, t_ring_map(&r, fd, 16));
	ro = t_readonly_copy(&op, sizeof(op));
	ASSERT_NE(NULL, ro);
	for (i = 0; i < 8; i++)
		EXPECT_EQ(-EFAULT, t_ioctl(fd, QTIMER_IOC_ARM, ro));
	t_sleep_ms(100);
	EXPECT_EQ(0, t_ring_head(&r));
	EXPECT_EQ(0, t_fdinfo_get(fd, QT_FI_TIMERS));
	t_readonly_free(ro);
	t_ring_unmap(&r);
	close(fd);
}

struct blocked_read {
	int fd;
	struct qtimer_record rec;
	ssize_t n;
	int err;
	volatile int done;
};

static void *blocked_read_fn(void *arg)
{
	struct blocked_read *b = arg;

	b->n = read(b->fd, &b->rec, sizeof(b->rec));
	b->err = errno;
	__atomic_store_n(&b->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void wake_only(int sig)
{
}

/*
 * A read() asleep on a file without a ring when RING_SETUP gives it one:
 * the records go into the ring from then on, and the read() must take
 * them from there rather than sleep on until a signal.
 */
TEST(read_blocked_across_setup)
{
	struct sigaction sa = { .sa_handler = wake_only };
	struct blocked_read b = {};
	struct t_ring r;
	pthread_t th;
	__s64 deadline;
	__u64 id;
	bool late;

	SKIP_WITHOUT_RING();
	ASSERT_EQ(0, sigaction(SIGUSR1, &sa, NULL));	/* no SA_RESTART */
	b.fd = t_open(0);
	ASSERT_LE(0, b.fd);
	ASSERT_EQ(0, pthread_create(&th, NULL, blocked_read_fn, &b));
	t_sleep_ms(200);
	ASSERT_EQ(0, __atomic_load_n(&b.done, __ATOMIC_ACQUIRE));
	ASSERT_EQ(0, t_ring_map(&r, b.fd, 16));
	ASSERT_EQ(0, t_arm(b.fd, CLOCK_MONOTONIC, 0, 0, 0, 0x77, &id));
	deadline = t_now(CLOCK_MONOTONIC) + QT_ARRIVE_MS * NSEC_PER_MSEC;
	while (!__atomic_load_n(&b.done, __ATOMIC_ACQUIRE) &&
	       t_now(CLOCK_MONOTONIC) < deadline)
		t_sleep_ms(10);
	late = !__atomic_load_n(&b.done, __ATOMIC_ACQUIRE);
	if (late)
		pthread_kill(th, SIGUSR1);
	pthread_join(th, NULL);
	ASSERT_FALSE(late) TH_LOG("read() slept on with a record in the ring");
	ASSERT_EQ((ssize_t)sizeof(b.rec), b.n) TH_LOG("read(): %s", strerror(b.err));
	EXPECT_EQ(id, b.rec.id);
	EXPECT_EQ(0x77, b.rec.cookie);
	EXPECT_EQ(QTIMER_REC_LAST, b.rec.flags);
	t_ring_unmap(&r);
	close(b.fd);
}

TEST_HARNESS_MAIN
