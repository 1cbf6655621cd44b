// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * Fail-nth sweeps (failnth.h) of reading a ticker whose re-arm must grow
 * its full heap: read() without a ring, and the ring's consumer, for
 * which poll() and O_NONBLOCK read() leave the growth to the file's drain.
 */
#define _GNU_SOURCE
#include "kselftest_harness.h"
#include "failnth.h"

/* Fillers ring_rearm_regrows_heap adds: its heap grows several times. */
#define RING_FILLERS	300

/*
 * A ticker's record is read while its heap is full: read() must put it
 * back and so needs to grow the heap.  With that allocation failed, the
 * record is not delivered: read() fails with ENOMEM and the record stays
 * pending, with its count, for the next read(), which delivers it (a page
 * allocation failure may be absorbed by the slab instead); the
 * ticker keeps ticking and the timer count is right.  Fillers are added one at a
 * time while the ticker is out of the heap until a read allocates.  The
 * heap is CLOCK_BOOTTIME's on the last CPU, which other suites rarely use,
 * so that it is small: a small heap grows with kmalloc alone, so failing
 * that one allocation fails the growth (a big one has kvmalloc's vmalloc
 * fallback, which single-shot fail-nth cannot get past).
 */
TEST_F_TIMEOUT(failnth, read_regrows_heap, 300)
{
	struct qtimer_record rec;
	int fd = t_open(O_NONBLOCK), fillers = 0, cpu = t_nr_cpus() - 1, n;
	struct t_fdinfo fi;
	bool fired = false;
	__u64 tick;

	REQUIRE_FAILNTH();
	ASSERT_LE(0, fd);
	if (!t_cpu_online(cpu))
		cpu = 0;
	ASSERT_EQ(0, t_pin_self(cpu));
	ASSERT_EQ(0, t_arm_cpu(fd, CLOCK_BOOTTIME, 0, 0, NSEC_PER_MSEC,
				7, cpu, &tick));
	while (!fired && fillers < 5000) {
		ASSERT_EQ(1, t_wait_readable(fd, QT_ARRIVE_MS));
		ASSERT_EQ(0, t_arm_cpu(fd, CLOCK_BOOTTIME, 0, 60 * NSEC_PER_SEC,
					0, 1000 + fillers, cpu, NULL));
		fillers++;
		ASSERT_EQ(0, nth_arm(self->nth, 1));
		n = t_read(fd, &rec, 1);
		fired = nth_fired(self->nth);
		/*
		 * A failed slab allocation fails the growth; a failed page
		 * allocation may be absorbed by the slab's fallback to a
		 * smaller order, and then the read simply succeeds.
		 */
		if (fired && (!variant->pages || n == -ENOMEM)) {
			/* Not delivered: still pending, and readable. */
			ASSERT_EQ(-ENOMEM, n);
			ASSERT_EQ(1, t_wait_readable(fd, 0));
			n = t_read(fd, &rec, 1);
		}
		ASSERT_EQ(1, n);
		ASSERT_EQ(tick, rec.id);
		ASSERT_EQ(7, rec.cookie);
		ASSERT_EQ(0, rec.flags);
		ASSERT_LE(1, rec.count);
	}
	ASSERT_TRUE(fired) TH_LOG("no read needed to grow the heap");
	TH_LOG("the read after %d fillers grew the heap (its first allocation failed)",
	       fillers);
	/* Still ticking, and nothing lost or doubled. */
	ASSERT_EQ(1, t_collect(fd, &rec, 1, QT_ARRIVE_MS));
	EXPECT_EQ(tick, rec.id);
	ASSERT_EQ(0, t_fdinfo(fd, &fi));
	EXPECT_EQ(fillers + 1, fi.timers);
	EXPECT_LE(0, t_cancel(fd, tick));
	close(fd);
}

/*
 * The same with a ring: the consumer is done with a ticker's record, and
 * re-arming the ticker may need its full heap to grow.  poll() and an
 * O_NONBLOCK read() must not sleep for that (the resize mutex may be held
 * by another user's growth, and the allocation may reclaim): they leave it
 * to the file's drain, which grows the heap and re-arms the ticker.  So
 * with fail-nth armed, neither fails for want of memory, at any filler
 * count, while the ticker keeps ticking.  Same heap and fillers as above, one
 * filler at a time, so that the heap is exactly full at each of its
 * growths; the period is long enough that the re-arm usually goes into
 * the heap rather than firing at once for periods missed.
 */
TEST_F_TIMEOUT(failnth, ring_rearm_regrows_heap, 300)
{
	int fd, fillers, cpu = t_nr_cpus() - 1, n, ready, read = 0;
	struct qtimer_record rec;
	struct t_ring ring;
	struct t_fdinfo fi;
	__u64 tick;

	REQUIRE_FAILNTH();
	if (!t_ring_offered())
		SKIP(return, "the module offers no ring");
	fd = t_open(O_NONBLOCK);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, t_ring_map(&ring, fd, 64));
	if (!t_cpu_online(cpu))
		cpu = 0;
	ASSERT_EQ(0, t_pin_self(cpu));
	ASSERT_EQ(0, t_arm_cpu(fd, CLOCK_BOOTTIME, 0, 0, 20 * NSEC_PER_MSEC,
				7, cpu, &tick));
	for (fillers = 0; fillers < RING_FILLERS; ) {
		/* Its record is in the ring: the ticker is out of its heap. */
		ASSERT_EQ(1, t_ring_wait_pending(&ring, 1, QT_ARRIVE_MS))
			TH_LOG("the ticker stopped after %d fillers", fillers);
		ASSERT_EQ(0, t_arm_cpu(fd, CLOCK_BOOTTIME, 0, 60 * NSEC_PER_SEC,
					0, 1000 + fillers, cpu, NULL));
		fillers++;
		ASSERT_EQ(1, t_ring_consume(&ring, &rec, 1));
		ASSERT_EQ(tick, rec.id);
		ASSERT_EQ(7, rec.cookie);
		ASSERT_LE(1, rec.count);
		/*
		 * The tail passed it: re-arming it is the kernel's now.  Had
		 * poll() tried to grow the heap, the failed allocation would
		 * leave the ticker stuck and poll() saying EPOLLIN with
		 * nothing to take; had read(), it would say -ENOMEM.  (An
		 * allocation may still be failed harmlessly: the debug
		 * kernel's object trackers take one from a pool that refills
		 * when a re-armed ticker starts the base's hrtimer.)
		 */
		ASSERT_EQ(0, nth_arm(self->nth, 1));
		ready = t_wait_readable(fd, 0);
		nth_fired(self->nth);
		ASSERT_LE(0, ready);
		if (ready) {
			ASSERT_EQ(1, t_ring_wait_pending(&ring, 1, 0))
				TH_LOG("poll() said EPOLLIN with nothing to take, after %d fillers: it tried to grow the heap",
				       fillers);
		}
		ASSERT_EQ(0, nth_arm(self->nth, 1));
		n = t_read(fd, &rec, 1);
		nth_fired(self->nth);
		ASSERT_NE(-ENOMEM, n)
			TH_LOG("an O_NONBLOCK read() tried to grow the heap, after %d fillers",
			       fillers);
		if (n == -EAGAIN)
			continue;
		/* Re-armed and already due again. */
		ASSERT_EQ(1, n) TH_LOG("read(): %d", n);
		ASSERT_EQ(tick, rec.id);
		read++;
	}
	TH_LOG("%d fillers, neither call grew the heap (%d read() took the next record)",
	       fillers, read);
	/* Still ticking, nothing lost. */
	ASSERT_EQ(1, t_ring_collect(&ring, &rec, 1, QT_ARRIVE_MS,
				     CLOCK_BOOTTIME, NULL));
	EXPECT_EQ(tick, rec.id);
	EXPECT_EQ(7, rec.cookie);
	EXPECT_LE(1, rec.count);
	ASSERT_EQ(0, t_fdinfo(fd, &fi));
	EXPECT_EQ(fillers + 1, fi.timers);
	EXPECT_LE(0, t_cancel(fd, tick));
	t_ring_unmap(&ring);
	close(fd);
}

TEST_HARNESS_MAIN
