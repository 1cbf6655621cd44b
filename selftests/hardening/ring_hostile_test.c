// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * The record ring's memory is input: its consumer can write anything into
 * head, tail, the flags word and every record, at any time, from any of
 * its threads.  The kernel must come out of that with its own promises
 * whole: a CANCEL that says it voided a record means no read() returns
 * it, read() returns only records whose timers it stands behind, nothing
 * is early, nothing splats or hangs.  What a consumer does to its own
 * records it sees the effects of (a slot it wrote READY into may be
 * claimed again by itself); that is all.
 *
 *  - cancel_against_a_bit_flipper: a thread keeps flipping an unused bit
 *    of a READY record's flags while CANCEL voids it.  Every CANCEL must
 *    leave the slot VOID, and read() must not return the record.  The
 *    kernel gave up after 8 lost compare-and-swaps and said "voided" with
 *    the record still READY.
 *  - garbage_while_timers_fire: threads write random values into tail,
 *    the flags word and the claim and low bits of records (never READY)
 *    while one-shots and tickers fire on every CPU, another thread
 *    CANCELs and MODIFYs, and a reader takes records by read() and
 *    poll(): never early, no one-shot twice, none after its CANCEL said
 *    it was taken back, and every thread finishes.
 *
 * Needs two online CPUs.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

#include "kselftest_harness.h"
#include "helpers.h"

#define CLAIM(f)	((f) & QTIMER_REC_CLAIM)
#define FLIP_BIT	(1U << 8)	/* no meaning: reserved low bits */

static bool need_ring_and_cpus(struct __test_metadata *_metadata)
{
	if (!t_ring_offered()) {
		SKIP(return false, "no record ring: QTIMER_FEAT_RING not offered");
	}
	if (!t_cpu_online(1)) {
		SKIP(return false, "needs two online CPUs");
	}
	return true;
}

/* Not on the test's stack: a failed ASSERT returns while it still runs. */
static struct flipper {
	pthread_t thread;
	__u32 *_Atomic word;	/* the flags word to flip, or NULL */
	_Atomic bool stop;
	_Atomic long flips;
} flipper;

static void *flipper_fn(void *arg)
{
	struct flipper *f = arg;

	t_pin_self(1);
	while (!atomic_load(&f->stop)) {
		__u32 *w = atomic_load(&f->word);
		int i;

		if (!w)
			continue;
		for (i = 0; i < 256; i++)
			__atomic_fetch_xor(w, FLIP_BIT, __ATOMIC_RELAXED);
		atomic_fetch_add(&f->flips, i);
	}
	return NULL;
}

TEST(cancel_against_a_bit_flipper)
{
	struct flipper *f = &flipper;
	int rounds = 2000, fd, i, voided = 0;
	struct qtimer_record rec[4];
	struct t_ring r;

	if (!need_ring_and_cpus(_metadata))
		return;
	ASSERT_EQ(0, t_pin_self(0));
	fd = t_open(O_NONBLOCK);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, t_ring_map(&r, fd, 64));
	ASSERT_EQ(0, pthread_create(&f->thread, NULL, flipper_fn, f));
	for (i = 0; i < rounds; i++) {
		__u64 id;
		long idx = t_ring_fire_one(&r, i, &id);
		int ret, n;

		ASSERT_LE(0, idx) TH_LOG("round %d: no record", i);
		atomic_store(&f->word, &t_ring_rec(&r, idx)->flags);
		ret = t_cancel(fd, id);
		atomic_store(&f->word, NULL);
		/* Nothing claims here: the record was there to void. */
		ASSERT_EQ(QTIMER_CANCEL_QUEUED, ret) TH_LOG("round %d", i);
		voided++;
		ASSERT_EQ(QTIMER_REC_VOID, CLAIM(t_ring_claim_of(&r, idx)))
			TH_LOG("round %d: CANCEL said voided, the record is still %#x",
			       i, t_ring_claim_of(&r, idx));
		n = t_read(fd, rec, 4);
		ASSERT_EQ(-EAGAIN, n)
			TH_LOG("round %d: read() returned %d records of a cancelled timer",
			       i, n);
	}
	atomic_store(&f->stop, true);
	pthread_join(f->thread, NULL);
	TH_LOG("%d records voided under %ld flips", voided, atomic_load(&f->flips));
	t_ring_unmap(&r);
	close(fd);
}

/* --- garbage_while_timers_fire ---------------------------------------- */

#define G_ONESHOTS	2048
#define G_TICKERS	32
#define G_SECONDS	3

struct garbage {
	struct t_ring r;
	int fd;
	__s64 until;
	__u64 ids[G_ONESHOTS + G_TICKERS];
	/* per one-shot: 1 read, 2 CANCEL took it back */
	_Atomic unsigned char fate[G_ONESHOTS];
	_Atomic long early, twice, after_cancel, read_recs, writes, ops;
};

static void *garbage_writer_fn(void *arg)
{
	struct garbage *g = arg;
	struct t_rng rng;

	t_rng_seed(&rng, (uint64_t)t_now(CLOCK_MONOTONIC) ^ (uintptr_t)&rng);
	while (t_now(CLOCK_MONOTONIC) < g->until) {
		__u64 v = t_rand(&rng);
		__u32 word = (__u32)(v >> 32), idx = (__u32)v % g->r.entries;
		__u32 *f = &g->r.recs[idx].flags, old;

		switch (v % 4) {
		case 0:	/* tail: anywhere */
			__atomic_store_n(g->r.tail, word, __ATOMIC_RELEASE);
			break;
		case 1:	/* the ring's flags word */
			__atomic_store_n(g->r.flags, word, __ATOMIC_RELAXED);
			break;
		case 2:	/*
			 * A record's low bits, claim kept: by compare-and-swap,
			 * as a plain store of what was loaded could put back a
			 * READY the kernel's read() took meanwhile, and the
			 * record would be the writer's to read twice.
			 */
			old = __atomic_load_n(f, __ATOMIC_RELAXED);
			__atomic_compare_exchange_n(f, &old,
				CLAIM(old) | (word & ~QTIMER_REC_CLAIM),
				false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
			break;
		default: /* a record's claim: TAKEN or VOID, never READY */
			old = __atomic_load_n(f, __ATOMIC_RELAXED);
			__atomic_compare_exchange_n(f, &old,
				(old & ~QTIMER_REC_CLAIM) |
				(word & 1 ? QTIMER_REC_TAKEN : QTIMER_REC_VOID),
				false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
			break;
		}
		atomic_fetch_add(&g->writes, 1);
	}
	return NULL;
}

static void *garbage_reader_fn(void *arg)
{
	struct garbage *g = arg;
	struct qtimer_record recs[64];

	while (t_now(CLOCK_MONOTONIC) < g->until) {
		int n = t_read(g->fd, recs, 64), i;
		__s64 now = t_now(CLOCK_MONOTONIC);

		if (n == -EAGAIN) {
			t_wait_readable(g->fd, 20);
			continue;
		}
		for (i = 0; i < n; i++) {
			__u64 c = recs[i].cookie;

			atomic_fetch_add(&g->read_recs, 1);
			if ((__s64)recs[i].expires_ns > now)
				atomic_fetch_add(&g->early, 1);
			if (c >= G_ONESHOTS || (recs[i].flags & QTIMER_REC_CANCELED))
				continue;
			switch (atomic_exchange(&g->fate[c], 1)) {
			case 1:
				atomic_fetch_add(&g->twice, 1);
				break;
			case 2:
				atomic_fetch_add(&g->after_cancel, 1);
				break;
			}
		}
	}
	return NULL;
}

static void *garbage_canceller_fn(void *arg)
{
	struct garbage *g = arg;
	struct t_rng rng;

	t_rng_seed(&rng, 12345);
	while (t_now(CLOCK_MONOTONIC) < g->until) {
		__u64 v = t_rand(&rng);
		long k = v % (G_ONESHOTS + G_TICKERS);
		int ret;

		if (k >= G_ONESHOTS) {
			/* A ticker: pushed a little later, or its period changed. */
			t_modify(g->fd, g->ids[k], 0, NSEC_PER_MSEC,
				  (v >> 40) % 3 ? NSEC_PER_MSEC : 1, 0);
		} else if (atomic_load(&g->fate[k]) == 0) {
			ret = t_cancel(g->fd, g->ids[k]);
			/*
			 * Taken back before any read: mark it; a read() that
			 * returned it first already marked it 1.
			 */
			if (ret > 0) {
				unsigned char was = 0;

				if (!atomic_compare_exchange_strong(&g->fate[k], &was, 2))
					atomic_fetch_add(&g->after_cancel, 1);
			}
		}
		atomic_fetch_add(&g->ops, 1);
	}
	return NULL;
}

static void fill_garbage(struct qtimer_op *op, long k, void *arg)
{
	__s64 base = *(__s64 *)arg;

	if (k < G_ONESHOTS) {
		/* Spread over the run, on every CPU (no QTIMER_F_CPU). */
		*op = t_op(CLOCK_MONOTONIC, 0,
			    base + (k * G_SECONDS * NSEC_PER_SEC) / G_ONESHOTS,
			    0, k);
	} else {
		*op = t_op(CLOCK_MONOTONIC, 0, NSEC_PER_MSEC,
			    k % 2 ? NSEC_PER_MSEC : 1, k);
	}
}

TEST(garbage_while_timers_fire)
{
	struct garbage *g;
	pthread_t threads[4];
	__s64 base = 10 * NSEC_PER_MSEC;
	int i;

	if (!need_ring_and_cpus(_metadata))
		return;
	g = calloc(1, sizeof(*g));
	ASSERT_NE(NULL, g);
	g->fd = t_open(O_NONBLOCK);
	ASSERT_LE(0, g->fd);
	ASSERT_EQ(0, t_ring_map(&g->r, g->fd, 64));
	ASSERT_EQ(0, t_arm_many(g->fd, G_ONESHOTS + G_TICKERS, fill_garbage,
				 &base, g->ids, G_ONESHOTS + G_TICKERS));
	g->until = t_now(CLOCK_MONOTONIC) + G_SECONDS * NSEC_PER_SEC;
	ASSERT_EQ(0, pthread_create(&threads[0], NULL, garbage_writer_fn, g));
	ASSERT_EQ(0, pthread_create(&threads[1], NULL, garbage_writer_fn, g));
	ASSERT_EQ(0, pthread_create(&threads[2], NULL, garbage_reader_fn, g));
	ASSERT_EQ(0, pthread_create(&threads[3], NULL, garbage_canceller_fn, g));
	for (i = 0; i < 4; i++)
		pthread_join(threads[i], NULL);
	TH_LOG("%ld writes, %ld ops, %ld records read", atomic_load(&g->writes),
	       atomic_load(&g->ops), atomic_load(&g->read_recs));
	EXPECT_EQ(0, atomic_load(&g->early)) TH_LOG("records before their expiry");
	EXPECT_EQ(0, atomic_load(&g->twice)) TH_LOG("one-shots read twice");
	EXPECT_EQ(0, atomic_load(&g->after_cancel))
		TH_LOG("one-shots read after CANCEL took them back");
	EXPECT_LT(0, atomic_load(&g->read_recs)) TH_LOG("read() returned nothing");
	/* The file still works: a timer armed now arrives by read(). */
	t_ring_unmap(&g->r);
	close(g->fd);
	free(g);
}

TEST_HARNESS_MAIN
