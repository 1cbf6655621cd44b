// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * A hostile consumer of the ring (qtimer_ring_mapping.h): garbage in the
 * words the kernel shares with it, a full ring of claimed records that
 * poll() must stay cheap on, and a tail written backwards over records
 * already taken.
 */
#define _GNU_SOURCE
#include <sys/mman.h>

#include "qtimer_ring_mapping.h"

/* --- a hostile consumer ------------------------------------------------- */

/*
 * Everything a file offers, on a ring whose shared words a consumer has
 * scribbled on: none of it may crash or hang the kernel (the VM's console
 * and kmemleak check the rest), whatever it returns.
 */
static void exercise(struct t_ring *r)
{
	struct qtimer_record recs[16];
	__u64 ids[32];
	int i;

	for (i = 0; i < 32; i++)
		if (t_arm(r->fd, CLOCK_MONOTONIC, 0, i * NSEC_PER_USEC,
			   i % 4 ? 0 : NSEC_PER_MSEC, i, &ids[i]))
			ids[i] = 0;
	t_sleep_ms(30);
	t_wait_readable(r->fd, 10);
	t_read(r->fd, recs, 16);
	for (i = 0; i < 32; i += 3)
		t_modify(r->fd, ids[i], 0, NSEC_PER_USEC, 0, 0);
	t_sleep_ms(10);
	t_wait_readable(r->fd, 10);
	for (i = 0; i < 32; i += 2)
		t_cancel(r->fd, ids[i]);
	t_read(r->fd, recs, 16);
	t_wait_readable(r->fd, 10);
}

FIXTURE(hostile)
{
	int fd;
	struct t_ring r;
};

FIXTURE_VARIANT(hostile)
{
	const char *what;
};

FIXTURE_VARIANT_ADD(hostile, tail_beyond_head)	{ .what = "tail beyond head" };
FIXTURE_VARIANT_ADD(hostile, tail_far_behind)	{ .what = "tail far behind" };
FIXTURE_VARIANT_ADD(hostile, claim_garbage)	{ .what = "claim garbage" };
FIXTURE_VARIANT_ADD(hostile, head_and_flags)	{ .what = "head and flags" };

FIXTURE_SETUP(hostile)
{
	t_ring_fixture_open(_metadata, &self->fd, &self->r, 8);
}

FIXTURE_TEARDOWN(hostile)
{
	t_ring_fixture_close(self->fd, &self->r);
}

static void scribble(struct t_ring *r, const char *what, struct t_rng *rng)
{
	__u32 head = t_ring_head(r), i;

	if (!strcmp(what, "tail beyond head")) {
		t_ring_set_tail(r, head + 1000);
	} else if (!strcmp(what, "tail far behind")) {
		t_ring_set_tail(r, head - 0x80000000U);
	} else if (!strcmp(what, "claim garbage")) {
		for (i = 0; i < r->entries; i++) {
			struct qtimer_record *rec = &r->recs[i];

			__atomic_store_n(&rec->flags, (__u32)t_rand(rng),
					 __ATOMIC_RELAXED);
			/* READY above all: what a forger would write. */
			if (i % 2)
				__atomic_store_n(&rec->flags, QTIMER_REC_READY,
						 __ATOMIC_RELAXED);
			rec->id = t_rand(rng);
			rec->count = t_rand(rng);
		}
		t_ring_set_tail(r, head - r->entries / 2);
	} else {
		__atomic_store_n(r->head, head + 12345, __ATOMIC_RELAXED);
		__atomic_store_n(r->flags, ~0U, __ATOMIC_RELAXED);
	}
}

/*
 * The consumer writes garbage in the middle of traffic and again after
 * it; the kernel survives it, the file still closes cleanly, and a fresh
 * file works.
 */
TEST_F(hostile, kernel_survives)
{
	struct t_rng rng;

	RETURN_IF_SETUP_SKIPPED();
	t_rng_seed(&rng, (uint64_t)t_now(CLOCK_MONOTONIC));
	exercise(&self->r);
	scribble(&self->r, variant->what, &rng);
	exercise(&self->r);
	scribble(&self->r, variant->what, &rng);
	exercise(&self->r);
	close(self->fd);
	self->fd = -1;
	t_ring_unmap(&self->r);
	EXPECT_EQ(0, fresh_file_works()) TH_LOG("after %s", variant->what);
}

/*
 * CPU time of this thread for @n polls of @fd that must find nothing
 * (*@woke counts those that did not), or the first figure past @give_up,
 * with the polls made in *@done.
 */
static __s64 polls_cpu_ns(int fd, int n, __s64 give_up, int *woke, int *done)
{
	__s64 t0 = t_now(CLOCK_THREAD_CPUTIME_ID), spent = 0;
	int i;

	for (i = 0; i < n && spent <= give_up; i++) {
		if (t_revents(fd) & POLLIN)
			(*woke)++;
		spent = t_now(CLOCK_THREAD_CPUTIME_ID) - t0;
	}
	*done = i;
	return spent;
}

#define CHEAP_POLLS	2000
#define CHEAP_FACTOR	8
#define CHEAP_FLOOR_NS	(50 * NSEC_PER_MSEC)

/*
 * A consumer that claims every record through the mapping but never moves
 * its tail leaves a full ring of records that are not READY in [tail,
 * head), which poll() must look through for a READY one.  It may look at
 * each of them once, not on every call: CHEAP_POLLS polls on such a ring
 * may cost at most CHEAP_FACTOR times as much CPU as on an empty ring
 * (plus CHEAP_FLOOR_NS).  When each poll() walked all QTIMER_RING_MAX
 * records with interrupts off, they cost 10-100 times that.  A record
 * written after the claimed ones still makes the file readable.
 */
FIXTURE(full_ring) {};
FIXTURE_SETUP(full_ring) {}
FIXTURE_TEARDOWN(full_ring) {}

/*
 * Not the harness's default 30 s: on debug-6.1 under TCG arming and firing
 * QTIMER_RING_MAX one-shots took most of it, and the test ran out of time
 * waiting for its last record (in one run of a fresh clone's make check).
 */
TEST_F_TIMEOUT(full_ring, claimed_ring_polls_cheaply, 180)
{
	const __u32 n = QTIMER_RING_MAX;
	__s64 idle, hostile, bound;
	struct qtimer_record rec;
	int fd, woke = 0, done;
	struct t_ring r;
	__u32 tail, i;
	long got = 0;

	SKIP_WITHOUT_RING();
	fd = t_open(O_NONBLOCK);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, t_ring_map(&r, fd, n));
	idle = polls_cpu_ns(fd, CHEAP_POLLS, INT64_MAX, &woke, &done);
	ASSERT_EQ(0, woke);
	bound = CHEAP_FACTOR * idle + CHEAP_FLOOR_NS;

	ASSERT_EQ(0, t_arm_many(fd, n, t_fill_in_ns, NULL, NULL, 0));
	ASSERT_EQ(1, t_ring_wait_pending(&r, n, 120 * 1000));
	tail = t_ring_tail(&r);
	for (i = 0; i < n; i++)
		got += t_ring_claim(&r, tail + i, &rec);
	ASSERT_EQ(n, got);

	hostile = polls_cpu_ns(fd, CHEAP_POLLS, bound, &woke, &done);
	EXPECT_EQ(0, woke);
	EXPECT_LE(hostile, bound)
		TH_LOG("%d of %d polls past %u claimed records: %lld us of CPU (stopped there), against %lld us for all on an empty ring",
		       done, CHEAP_POLLS, n, (long long)hostile / 1000,
		       (long long)idle / 1000);
	TH_LOG("CPU for %d polls on an empty ring %lld us, for %d past %u claimed records %lld us",
	       CHEAP_POLLS, (long long)idle / 1000, done, n,
	       (long long)hostile / 1000);

	/* Room for one more, past the claimed ones: it must be seen. */
	t_ring_set_tail(&r, tail + 1);
	EXPECT_EQ(0, t_revents(fd) & POLLIN);
	EXPECT_LE(0, t_ring_fire_one(&r, 0xc1a1, NULL));
	EXPECT_EQ(POLLIN, t_revents(fd) & POLLIN);
	t_ring_unmap(&r);
	close(fd);
}

/*
 * tail written backwards over records already taken: the kernel neither
 * hands them out again (they are TAKEN, not READY), nor loses this file's
 * new records, nor touches another file's.
 */
TEST_F(ring, tail_backwards_no_redelivery)
{
	struct qtimer_record recs[16], other[16];
	struct t_ring ro;
	__s64 base;
	__u32 tail;
	int ofd, i;

	RETURN_IF_SETUP_SKIPPED();
	ofd = t_open(O_NONBLOCK);
	ASSERT_LE(0, ofd);
	ASSERT_EQ(0, t_ring_map(&ro, ofd, 8));

	base = t_now(CLOCK_MONOTONIC);
	for (i = 0; i < 5; i++)
		ASSERT_EQ(0, t_arm_at_cpu0(self->fd, base + i, 0x100 + i, NULL));
	ASSERT_EQ(5, t_ring_collect(&self->r, recs, 5, QT_ARRIVE_MS,
				     CLOCK_MONOTONIC, NULL));
	/* The other file's timers fire while this one's tail is wrong. */
	base = t_now(CLOCK_MONOTONIC) + 50 * NSEC_PER_MSEC;
	for (i = 0; i < 12; i++)
		ASSERT_EQ(0, t_arm_at_cpu0(ofd, base + i * NSEC_PER_MSEC, 0x200 + i, NULL));

	tail = t_ring_tail(&self->r);
	t_ring_set_tail(&self->r, tail - 5);
	/* Five TAKEN records in [tail, head), none READY. */
	EXPECT_EQ(0, t_revents(self->fd) & POLLIN);
	EXPECT_EQ(-EAGAIN, t_read(self->fd, recs, 16));
	EXPECT_EQ(0, t_ring_consume(&self->r, recs, 16));

	base = t_now(CLOCK_MONOTONIC);
	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, t_arm_at_cpu0(self->fd, base + i, 0x300 + i, NULL));
	ASSERT_EQ(3, t_ring_collect(&self->r, recs, 3, QT_ARRIVE_MS,
				     CLOCK_MONOTONIC, NULL));
	for (i = 0; i < 3; i++)
		EXPECT_EQ(0x300 + i, recs[i].cookie);

	ASSERT_EQ(12, t_ring_collect(&ro, other, 16, QT_ARRIVE_MS,
				      CLOCK_MONOTONIC, NULL));
	for (i = 0; i < 12; i++)
		EXPECT_LE(0, t_find_cookie(other, 12, 0x200 + i))
			TH_LOG("the other file lost record %d", i);
	EXPECT_TRUE(t_ring_stays_empty(&ro, 100));
	EXPECT_TRUE(t_ring_stays_empty(&self->r, 100));
	t_ring_unmap(&ro);
	close(ofd);
}

TEST_HARNESS_MAIN
