// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * Latency under attack (latency.h) by heap compaction:
 *
 *  - close_compacts_heap: CANCEL a sixteenth and a bit of a heap of 10^6
 *    timers and close another file: a release compacts a heap whose dead
 *    entries pass a sixteenth of it.  Its baseline is the same on a heap
 *    of CONTROL_TIMERS.
 *  - close_of_every_timer: close a file of 10^6 timers armed on the
 *    victim's CPU, from it, and wait for the compaction of their heap
 *    entries: the release walks every id, the compaction every entry.
 *    Its baseline is the same on a file of CONTROL_TIMERS.
 *  - modify_earlier_compacts_heap: MODIFY one timer of that heap to an
 *    ever earlier expiry, until its stale entries are a quarter of the
 *    heap and it is compacted.  Its baseline is not idle but the same
 *    MODIFYs on a heap of CONTROL_TIMERS (see control_modify_earlier()).
 */
#define _GNU_SOURCE
#include "kselftest_harness.h"
#include "latency.h"

/*
 * The monotonic heap of @cpu as the netlink stats see it, through
 * qtimerctl (in the guest's /bin): its entries and how many of them are
 * dead.  0, or -1 if unread.
 */
static int monotonic_heap(int cpu, unsigned long long *entries,
			  unsigned long long *dead)
{
	const char *buf = t_stats_json(), *at;
	char key[32];

	if (!buf)
		return -1;
	snprintf(key, sizeof(key), "{\"cpu\":%d,", cpu);
	at = strstr(buf, key);
	snprintf(key, sizeof(key), "\"clockid\":%d,", CLOCK_MONOTONIC);
	at = at ? strstr(at, key) : NULL;
	if (!at || sscanf(at + strlen(key), "\"entries\":%llu,\"dead\":%llu",
			  entries, dead) != 2)
		return -1;
	return 0;
}

/*
 * A release compacts a heap once its dead entries are more than a
 * sixteenth of it (qt_base_trim()), and the CANCELs that make them
 * compact it themselves at a quarter: so cancel a sixteenth and a bit of
 * the heap's timers and close another file.  A round of ARM, CANCEL, open
 * and close adds one dead entry, and two seconds of them (8k-47k under
 * TCG) never reached n / 16 = 62500 of 10^6: the attack held no
 * compaction, and no implementation of it could fail.
 */
static long close_compact_cancels(long n)
{
	return n / 16 + n / 64 + 1;
}

/*
 * Wait until no more than @left entries of @cpu's monotonic heap are dead,
 * for up to 10 s.  The netlink stats take each base lock in turn, so each
 * look waits for a compaction's hold of it, and from the victim's CPU
 * with interrupts off: a compaction done in one hold shows here, one done
 * a chunk at a time does not.  Returns the dead entries at the end.
 */
static unsigned long long wait_compacted(struct __test_metadata *_metadata,
					 int cpu, unsigned long long left)
{
	__s64 deadline = t_now(CLOCK_MONOTONIC) + 10 * NSEC_PER_SEC;
	unsigned long long entries, dead;

	do {
		ASSERT_EQ(0, monotonic_heap(cpu, &entries, &dead))
			TH_LOG("no heap stats from qtimerctl stats --json");
		if (dead <= left)
			break;
		t_sleep_ms(50);
	} while (t_now(CLOCK_MONOTONIC) < deadline);
	return dead;
}

/*
 * On the victim's CPU, with @fd's timers @ids[0, n) armed there: cancel
 * enough of them for a close to compact the heap, close another file,
 * and watch the compaction, which runs in a work item, to its end.
 * Returns the dead entries left (without a compaction, at least as many
 * as the CANCELs).
 */
static unsigned long long close_compacts(struct __test_metadata *_metadata,
					 int fd, const __u64 *ids, long n,
					 int cpu)
{
	long cancels = close_compact_cancels(n);
	int other;

	cancel_ids(_metadata, fd, ids, cancels, QTIMER_CANCEL_ARMED);
	other = t_open(0);
	ASSERT_LE(0, other);
	close(other);
	/* The compaction may miss a few, moved behind it (qt_base_compact_fn()). */
	return wait_compacted(_metadata, cpu, cancels / 64);
}

static void run_close_compacts(struct __test_metadata *_metadata,
			       FIXTURE_DATA(latency) *self)
{
	unsigned long long cancels = close_compact_cancels(self->n), dead;

	dead = close_compacts(_metadata, self->fds[0], self->ids, self->n,
			      self->cpu);
	self->ops = cancels;
	TH_LOG("CPU %d's monotonic heap after the attack: %llu dead entries (%llu cancelled)",
	       self->cpu, dead, cancels);
	/* Far in the future, they could not have gone any other way. */
	ASSERT_LT(dead, cancels)
		TH_LOG("no compaction within 10 s: the attack did not reach the walk it is about");
}

/*
 * The baseline: the same on a file of CONTROL_TIMERS on the victim's CPU,
 * whose compaction is short whatever its method; so a busy vCPU, which
 * under TCG competes for the host's CPUs where an idle one sleeps, is in
 * the baseline too.  What the last round or test left dead on the heap
 * is compacted first, not in the control's figures.
 */
static void control_close_compacts(struct __test_metadata *_metadata,
				   FIXTURE_DATA(latency) *self)
{
	int fd;

	wait_compacted(_metadata, self->cpu, 64);
	fd = control_file(_metadata, self, t_now(CLOCK_MONOTONIC) + FAR_NS);
	ASSERT_EQ(0, t_pin_self(self->cpu));
	close_compacts(_metadata, fd, self->ids, CONTROL_TIMERS, self->cpu);
	ASSERT_EQ(0, t_pin_self(self->home_cpu));
	control_end(self);
}

ATTACK_TEST(close_compacts_heap,
	.what = "close() with a sixteenth of the heap dead",
	.idle = control_close_compacts,
	.idle_what = "the same on a small heap",
	.prepare = prepare_far,
	.run = run_close_compacts,
	.ops = "CANCELs")

/*
 * close() @fd, armed with @n timers far ahead on the victim's CPU, from
 * that CPU, and wait for what it leaves to deferred work: the compaction
 * of their n dead heap entries and the shrink of the heap's array.  The
 * release walks every id of the file, the compaction every entry, and
 * both free what they find; a file of 10^6 timers is 1.5 s of kernel
 * time on a quiet host.  Returns the dead entries left.
 */
static unsigned long long close_armed(struct __test_metadata *_metadata,
				      int fd, long n, int cpu)
{
	close(fd);
	return wait_compacted(_metadata, cpu, n / 64);
}

static void run_close_armed(struct __test_metadata *_metadata,
			    FIXTURE_DATA(latency) *self)
{
	unsigned long long dead;

	dead = close_armed(_metadata, self->fds[0], self->n, self->cpu);
	self->fds[0] = -1;
	ASSERT_GE(self->n / 64, dead)
		TH_LOG("%llu of %ld dead heap entries left 10 s after the close",
		       dead, self->n);
}

/* The baseline: the same close() and compaction of CONTROL_TIMERS. */
static void control_close_armed(struct __test_metadata *_metadata,
				FIXTURE_DATA(latency) *self)
{
	int fd;

	wait_compacted(_metadata, self->cpu, 64);
	fd = control_file(_metadata, self, t_now(CLOCK_MONOTONIC) + FAR_NS);
	self->fds[1] = -1;	/* close_armed() closes it */
	ASSERT_EQ(0, t_pin_self(self->cpu));
	close_armed(_metadata, fd, CONTROL_TIMERS, self->cpu);
	ASSERT_EQ(0, t_pin_self(self->home_cpu));
}

ATTACK_TEST(close_of_every_timer,
	.what = "close() of a file of armed timers",
	.idle = control_close_armed,
	.idle_what = "the same on a small file",
	.prepare = prepare_far,
	.run = run_close_armed,
	.timed = true,
	.ops = "ms to the end of the compaction")

/*
 * MODIFY timer @id of @fd to an ever earlier expiry, on the victim's CPU,
 * for ATTACK_NS and until it made @min_ops MODIFYs.  Returns how many.
 */
static long modify_earlier(struct __test_metadata *_metadata, int fd, __u64 id,
			   __s64 expires, long min_ops)
{
	__s64 deadline = t_now(CLOCK_MONOTONIC) + ATTACK_NS;
	long ops = 0;

	do {
		expires -= NSEC_PER_USEC;
		ASSERT_EQ(QTIMER_CANCEL_ARMED,
			  t_modify(fd, id, QTIMER_F_ABSTIME, expires, 0, 0));
		ops++;
	} while (t_now(CLOCK_MONOTONIC) < deadline || ops < min_ops);
	return ops;
}

/*
 * Each MODIFY earlier leaves a stale entry, and the heap is compacted once
 * they are a quarter of it: after n / 3 of them on a heap of n.  So the
 * attack makes n / 2 at least, whatever the machine's speed: on a busy
 * host two seconds had made only 10^5 of them, and no compaction, which
 * no implementation of it could then fail.
 */
static long modify_earlier_ops(FIXTURE_DATA(latency) *self)
{
	return self->n / 2;
}

static void run_modify_earlier(struct __test_metadata *_metadata,
			       FIXTURE_DATA(latency) *self)
{
	__s64 expires = t_now(CLOCK_MONOTONIC) + FAR_NS;
	int fd = self->fds[0];
	__u64 id;

	ASSERT_EQ(0, t_arm_cpu(fd, CLOCK_MONOTONIC, QTIMER_F_ABSTIME, expires,
				0, self->n, self->cpu, &id));
	self->ops = modify_earlier(_metadata, fd, id, expires,
				   modify_earlier_ops(self));
}

/*
 * The baseline of the MODIFY attack: the same MODIFYs on the victim's CPU,
 * as many, but on a heap of CONTROL_TIMERS, where no walk of the heap can
 * take long.  Under TCG a busy vCPU competes for the host's CPUs where an
 * idle one sleeps, and the compact work holds the base lock the MODIFYs
 * spin on, so an idle baseline measures neither: one run failed with a
 * stall of 212 and then 230 ms in the attack's windows against 4 ms idle.
 * Both happen here too, so only what grows with the heap counts.
 */
static void control_modify_earlier(struct __test_metadata *_metadata,
				   FIXTURE_DATA(latency) *self)
{
	__s64 expires = t_now(CLOCK_MONOTONIC) + FAR_NS;
	int fd = control_file(_metadata, self, expires + FAR_NS);
	__u64 id;

	ASSERT_EQ(0, t_arm_cpu(fd, CLOCK_MONOTONIC, QTIMER_F_ABSTIME, expires,
				0, CONTROL_TIMERS, self->cpu, &id));
	ASSERT_EQ(0, t_pin_self(self->cpu));
	modify_earlier(_metadata, fd, id, expires, modify_earlier_ops(self));
	ASSERT_EQ(0, t_pin_self(self->home_cpu));
	control_end(self);
}

ATTACK_TEST(modify_earlier_compacts_heap,
	.what = "MODIFY of one timer ever earlier",
	.idle = control_modify_earlier,
	.idle_what = "the same MODIFYs on a small heap",
	.prepare = prepare_far,
	.run = run_modify_earlier,
	.ops = "MODIFYs")

TEST_HARNESS_MAIN
