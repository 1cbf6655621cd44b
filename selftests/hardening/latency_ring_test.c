// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * Latency under attack (latency.h) through the mapped ring:
 *
 *  - ring_read_rewalks_taken_records: read() a mapped ring whose records
 *    were all claimed, with one more waiting for room, while another
 *    thread keeps writing the old tail back (see its comment for what it
 *    can and cannot show under TCG).
 *  - expirer_upkeep_of_many_rings: UPKEEP_FILES ringed files, each with a
 *    ring full of the records of tickers with a period of 1 ns, whose
 *    tails a thread keeps moving to their heads, and a one-shot per file
 *    due on the victim's CPU every UPKEEP_EVERY_NS: each delivery into a
 *    file reaped its ring and re-fired every ticker in it, outside the
 *    run's budget.
 */
#define _GNU_SOURCE
#include <sys/mman.h>

#include "kselftest_harness.h"
#include "latency.h"

/*
 * A consumer of the mapped ring that claims every record and leaves its
 * tail behind them, while another of its threads writes that tail back
 * over and over.  read() looks at every record from the tail on, with
 * interrupts off, and stores the tail past them; with one more record
 * waiting in the kernel for room, it looks again at once.  Should the
 * other thread put the tail back every time before the kernel reads it
 * again, the looks would follow each other within one hold of the file's
 * lock for as long as that went on.  Today the kernel reads the tail
 * again a few instructions after storing it and the other thread wins
 * that race only a few times in a row (in five runs on stock 6.1 under
 * TCG: 2-10 looks of 0.3-0.7 ms each, 3-7 ms in read()), and a lost race
 * reaps the records, which drops the lock.  So this passes on the code it
 * was written for; it fails if read() ever looks again without reading
 * the tail afresh first, or holds the lock across a slower step between
 * the two, and it checks that the record that waited is the one read()
 * returns, whatever the tail did meanwhile.
 */
struct rewinder {
	pthread_t thread;
	__u32 *tail_p;
	__u32 tail;
	__s64 until;
	long stores;
};

static void *rewinder_fn(void *arg)
{
	struct rewinder *w = arg;
	int i;

	while (t_now(CLOCK_MONOTONIC) < w->until) {
		for (i = 0; i < 1024; i++)
			__atomic_store_n(w->tail_p, w->tail, __ATOMIC_RELEASE);
		w->stores += i;
	}
	return NULL;
}

/*
 * A ring as large as the file's timers allow (QTIMER_RING_MAX at most),
 * filled by one-shots that fired, and one more record waiting in the
 * kernel for room; every record in the ring claimed, the tail where it
 * was.  The timers fire on the home CPU, not the victim's.
 */
static void prepare_taken_ring(struct __test_metadata *_metadata,
			       FIXTURE_DATA(latency) *self)
{
	struct t_ring *r = &self->ring;
	__u32 entries = QTIMER_RING_MIN, head, i;
	__u64 cookies = 0;
	int fd;

	while (entries < QTIMER_RING_MAX && 2 * (long)entries <= self->n)
		entries *= 2;
	fd = t_open(0);
	ASSERT_LE(0, fd);
	self->fds[0] = fd;
	ASSERT_EQ(0, t_ring_map(r, fd, entries));
	ASSERT_EQ(0, arm_range(self, fd, 0, entries + 1, self->home_cpu,
			       t_now(CLOCK_MONOTONIC) - NSEC_PER_MSEC,
			       NSEC_PER_MSEC));
	ASSERT_EQ(1, t_ring_wait_pending(r, entries, 120 * 1000))
		TH_LOG("the ring of %u did not fill within 120 s", entries);
	ASSERT_EQ(1, t_ring_wait_overflow(r, 10 * 1000))
		TH_LOG("the last record never waited in the kernel");
	head = t_ring_head(r);
	ASSERT_EQ(entries, head - t_ring_tail(r));
	for (i = t_ring_tail(r); i != head; i++) {
		struct qtimer_record rec;

		ASSERT_TRUE(t_ring_claim(r, i, &rec));
		cookies += rec.cookie;
	}
	/* The cookies are 0..entries: the one not in the ring waits. */
	self->left_cookie = (__u64)entries * (entries + 1) / 2 - cookies;
	TH_LOG("a ring of %u records, all claimed, the tail left at %u; record %llu waits",
	       entries, t_ring_tail(r), (unsigned long long)self->left_cookie);
}

/*
 * On the victim's CPU, a blocking read() while a thread on the home CPU
 * writes the old tail back for ATTACK_NS.  Once it stops, the read() must
 * return the record that waited, and only that.
 */
static void run_ring_read_rewound(struct __test_metadata *_metadata,
				  FIXTURE_DATA(latency) *self)
{
	struct rewinder w = {
		.tail_p = self->ring.tail,
		.tail = t_ring_tail(&self->ring),
		.until = t_now(CLOCK_MONOTONIC) + ATTACK_NS,
	};
	struct qtimer_record rec[2];
	__s64 t;
	ssize_t n;
	int ret;

	ASSERT_EQ(0, start_on_cpu(&w.thread, self->home_cpu, 0, rewinder_fn,
				  &w));
	t = t_now(CLOCK_MONOTONIC);
	n = read(self->fds[0], rec, sizeof(rec));
	ret = errno;
	self->ops = (t_now(CLOCK_MONOTONIC) - t) / NSEC_PER_MSEC;
	pthread_join(w.thread, NULL);
	TH_LOG("the other thread wrote the tail back %ld times", w.stores);
	ASSERT_EQ((ssize_t)sizeof(rec[0]), n) TH_LOG("read(): %s", strerror(ret));
	EXPECT_EQ(self->left_cookie, rec[0].cookie);
	EXPECT_EQ(QTIMER_REC_LAST, rec[0].flags);
}

static void require_ring(struct __test_metadata *_metadata,
			 FIXTURE_DATA(latency) *self)
{
	if (!t_ring_offered())
		snprintf(self->skip, sizeof(self->skip), "no record ring");
}

ATTACK_TEST(ring_read_rewalks_taken_records,
	.what = "read() of a ring whose tail is written back",
	.setup = require_ring,
	.prepare = prepare_taken_ring,
	.run = run_ring_read_rewound,
	.ops = "ms in read()")

/*
 * The expirer's ring upkeep: see the top of the file.  The one-shots are
 * all armed beforehand, every file's due at the same instants, so that one
 * run of the victim CPU's expirer visits every file.
 */
#define UPKEEP_FILES		256
#define UPKEEP_FILES_DEBUG	16
#define UPKEEP_TICKERS		128
#define UPKEEP_EVERY_NS		(2 * NSEC_PER_MSEC)

static struct t_ring upkeep_rings[UPKEEP_FILES];
static int upkeep_nr;
static __s64 upkeep_start;	/* when the first one-shots are due */

struct upkeep_arm {
	__s64 start;
	int cpu;
};

static void upkeep_oneshot_op(struct qtimer_op *op, long k, void *arg)
{
	const struct upkeep_arm *a = arg;

	*op = t_op(CLOCK_MONOTONIC, QTIMER_F_ABSTIME | QTIMER_F_CPU,
		    a->start + k * UPKEEP_EVERY_NS, 0, k);
	op->cpu = a->cpu;
}

static void upkeep_ticker_op(struct qtimer_op *op, long k, void *arg)
{
	*op = t_op(CLOCK_MONOTONIC, QTIMER_F_CPU, 0, 1, k);
	op->cpu = *(int *)arg;
}

static void prepare_upkeep(struct __test_metadata *_metadata,
			   FIXTURE_DATA(latency) *self)
{
	int files = t_debug_kernel() ? UPKEEP_FILES_DEBUG : UPKEEP_FILES, i;
	struct upkeep_arm a = { .cpu = self->cpu };
	long shots = ATTACK_NS / UPKEEP_EVERY_NS;

	for (upkeep_nr = 0; upkeep_nr < files; upkeep_nr++) {
		struct t_ring *r = &upkeep_rings[upkeep_nr];
		int fd = t_open(O_NONBLOCK);

		ASSERT_LE(0, fd);
		r->fd = fd;
		ASSERT_EQ(0, t_ring_map(r, fd, UPKEEP_TICKERS));
		ASSERT_EQ(0, t_arm_many(fd, UPKEEP_TICKERS, upkeep_ticker_op,
					 &self->home_cpu, NULL, 0));
	}
	for (i = 0; i < upkeep_nr; i++)
		ASSERT_EQ(1, t_ring_wait_pending(&upkeep_rings[i],
						  UPKEEP_TICKERS, QT_ARRIVE_MS))
			TH_LOG("file %d: its tickers did not fill its ring", i);
	/*
	 * Due from when the attack starts, right after this, on: arming
	 * takes about 10 ms a file under TCG, 400 ms on a debug kernel.
	 */
	a.start = t_now(CLOCK_MONOTONIC) +
		  upkeep_nr * (t_debug_kernel() ? 800 : 20) * NSEC_PER_MSEC;
	upkeep_start = a.start;
	for (i = 0; i < upkeep_nr; i++)
		ASSERT_EQ(0, t_arm_many(upkeep_rings[i].fd, shots,
					 upkeep_oneshot_op, &a, NULL, 0));
	/* Late: the first few rounds fired before the attack, the rest in it. */
	if (t_now(CLOCK_MONOTONIC) > a.start)
		TH_LOG("arming ended %lld ms after the first one-shots were due",
		       (t_now(CLOCK_MONOTONIC) - a.start) / NSEC_PER_MSEC);
	TH_LOG("%d files of %d tickers, %ld one-shots each", upkeep_nr,
	       UPKEEP_TICKERS, shots);
}

struct advancer {
	pthread_t thread;
	_Atomic bool stop;
	long moves;
};

/* The consumers: every tail to its head, over and over. */
static void *advancer_fn(void *arg)
{
	struct advancer *adv = arg;
	int i;

	while (!adv->stop) {
		for (i = 0; i < upkeep_nr; i++)
			t_ring_set_tail(&upkeep_rings[i],
					 t_ring_head(&upkeep_rings[i]));
		adv->moves += i;
	}
	return NULL;
}

static void run_upkeep(struct __test_metadata *_metadata,
		       FIXTURE_DATA(latency) *self)
{
	struct advancer adv = { .stop = false };

	ASSERT_EQ(0, start_on_cpu(&adv.thread, self->home_cpu, 0, advancer_fn,
				  &adv));
	t_sleep_ns(upkeep_start + ATTACK_NS - t_now(CLOCK_MONOTONIC));
	adv.stop = true;
	pthread_join(adv.thread, NULL);
	self->ops = adv.moves;
}

static void restore_upkeep(struct __test_metadata *_metadata,
			   FIXTURE_DATA(latency) *self)
{
	int i;

	for (i = 0; i < upkeep_nr; i++) {
		t_ring_unmap(&upkeep_rings[i]);
		close(upkeep_rings[i].fd);
	}
	upkeep_nr = 0;
}

/* Measured before prepare_upkeep(), whose one-shots are due at once. */
static void idle_upkeep(struct __test_metadata *_metadata,
			FIXTURE_DATA(latency) *self)
{
}

ATTACK_TEST(expirer_upkeep_of_many_rings,
	.what = "one-shots into rings whose consumers pass 1 ns tickers' records",
	.setup = require_ring,
	.idle = idle_upkeep,
	.prepare = prepare_upkeep,
	.run = run_upkeep,
	.restore = restore_upkeep,
	.ops = "tail moves")

TEST_HARNESS_MAIN
