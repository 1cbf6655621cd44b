// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * The record ring from user space: RING_SETUP, the mapping, and a consumer
 * that follows uapi/linux/qtimer.h to the letter (acquire head, claim each
 * record READY -> TAKEN with one compare-and-swap, skip anything else,
 * release tail), so that a suite holds the kernel to the header's protocol
 * and not to a looser one of its own.  The consumer also notes what it saw
 * on the way (records skipped, the fullest the ring got, the overflow
 * flag), for the tests to assert on.  It also holds what the ring's
 * suites share besides: whether the module offers the ring, firing one
 * record into it, and watching it stay empty.
 */
#include <sys/mman.h>

#include "helpers.h"

bool t_ring_offered(void)
{
	struct qtimer_version v;
	int fd = t_open(0);
	bool ret;

	if (fd < 0)
		return false;
	ret = !t_version(fd, &v) && (v.features & QTIMER_FEAT_RING);
	close(fd);
	return ret;
}

int t_ring_setup(int fd, __u32 entries, struct qtimer_ring_setup *s)
{
	memset(s, 0, sizeof(*s));
	s->entries = entries;
	return t_ioctl(fd, QTIMER_IOC_RING_SETUP, s);
}

/* [off, off + len) lies inside the mapping and is aligned for its type. */
static bool qt_ring_span_ok(__u64 off, __u64 len, __u64 align, __u64 size)
{
	return !(off % align) && off <= size && len <= size - off;
}

static bool qt_ring_spans_overlap(__u64 a, __u64 alen, __u64 b, __u64 blen)
{
	return a < b + blen && b < a + alen;
}

bool t_ring_layout_ok(const struct qtimer_ring_setup *s, __u32 entries)
{
	const __u64 recs_len = (__u64)entries * sizeof(struct qtimer_record);
	const __u64 word = sizeof(__u32);
	const __u64 off[3] = { s->head_off, s->tail_off, s->flags_off };
	int i, j;

	if (!qt_ring_span_ok(s->recs_off, recs_len, 8, s->mmap_size))
		return false;
	for (i = 0; i < 3; i++) {
		if (!qt_ring_span_ok(off[i], word, word, s->mmap_size) ||
		    qt_ring_spans_overlap(off[i], word, s->recs_off, recs_len))
			return false;
		for (j = 0; j < i; j++)
			if (off[i] == off[j])
				return false;
	}
	return true;
}

int t_ring_map(struct t_ring *r, int fd, __u32 entries)
{
	char *p;
	int ret;

	memset(r, 0, sizeof(*r));
	r->fd = fd;
	ret = t_ring_setup(fd, entries, &r->setup);
	if (ret)
		return ret;
	/* Never touch a word the mapping does not hold. */
	if (!t_ring_layout_ok(&r->setup, entries))
		return -ERANGE;
	p = mmap(NULL, r->setup.mmap_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		 fd, 0);
	if (p == MAP_FAILED)
		return -errno;
	r->map = p;
	r->map_len = r->setup.mmap_size;
	r->entries = entries;
	r->head = (__u32 *)(p + r->setup.head_off);
	r->tail = (__u32 *)(p + r->setup.tail_off);
	r->flags = (__u32 *)(p + r->setup.flags_off);
	r->recs = (struct qtimer_record *)(p + r->setup.recs_off);
	return 0;
}

void t_ring_unmap(struct t_ring *r)
{
	if (r->map)
		munmap(r->map, r->map_len);
	r->map = NULL;
}

__u32 t_ring_head(const struct t_ring *r)
{
	return __atomic_load_n(r->head, __ATOMIC_ACQUIRE);
}

/* Only the consumer writes tail, and a ring has one consumer at a time. */
__u32 t_ring_tail(const struct t_ring *r)
{
	return __atomic_load_n(r->tail, __ATOMIC_RELAXED);
}

__u32 t_ring_flags(const struct t_ring *r)
{
	return __atomic_load_n(r->flags, __ATOMIC_ACQUIRE);
}

void t_ring_set_tail(struct t_ring *r, __u32 tail)
{
	__atomic_store_n(r->tail, tail, __ATOMIC_RELEASE);
}

struct qtimer_record *t_ring_rec(const struct t_ring *r, __u32 idx)
{
	return &r->recs[idx & (r->entries - 1)];
}

__u32 t_ring_claim_of(const struct t_ring *r, __u32 idx)
{
	return __atomic_load_n(&t_ring_rec(r, idx)->flags, __ATOMIC_ACQUIRE) &
	       QTIMER_REC_CLAIM;
}

bool t_ring_claim(struct t_ring *r, __u32 idx, struct qtimer_record *out)
{
	struct qtimer_record *rec = t_ring_rec(r, idx);
	__u32 f = __atomic_load_n(&rec->flags, __ATOMIC_RELAXED);
	__u32 taken = (f & ~QTIMER_REC_CLAIM) | QTIMER_REC_TAKEN;

	if ((f & QTIMER_REC_CLAIM) != QTIMER_REC_READY ||
	    !__atomic_compare_exchange_n(&rec->flags, &f, taken, false,
					 __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
		return false;
	/* Ours now: nobody writes the slot until tail passes it. */
	out->id = rec->id;
	out->cookie = rec->cookie;
	out->expires_ns = rec->expires_ns;
	out->count = rec->count;
	out->flags = taken;
	return true;
}

int t_ring_consume(struct t_ring *r, struct qtimer_record *out, int max)
{
	__u32 head = t_ring_head(r);
	__u32 tail = t_ring_tail(r);
	int got = 0;

	if (t_ring_flags(r) & QTIMER_RING_OVERFLOW)
		r->overflow_seen = true;
	if (head - tail > r->max_pending)
		r->max_pending = head - tail;
	if (head - tail > r->entries)
		return -EOVERFLOW;
	while (tail != head && got < max) {
		if (t_ring_claim(r, tail, &out[got]))
			got++;
		else
			r->skipped++;
		tail++;
	}
	t_ring_set_tail(r, tail);
	r->claimed += got;
	return got;
}

int t_ring_collect(struct t_ring *r, struct qtimer_record *out, int want,
		    int timeout_ms, int clockid, __s64 *stamp)
{
	__s64 deadline = t_now(CLOCK_MONOTONIC) + timeout_ms * NSEC_PER_MSEC;
	int got = 0;

	while (got < want) {
		__s64 left;
		int ret, i;

		ret = t_ring_consume(r, out + got, want - got);
		if (ret < 0)
			return ret;
		if (ret) {
			__s64 now = t_now(clockid);

			for (i = 0; stamp && i < ret; i++)
				stamp[got + i] = now;
			got += ret;
			continue;
		}
		/*
		 * Empty: poll() moves records that wait in the kernel into
		 * the ring and sleeps until one is READY.  It may report
		 * EPOLLIN for a record that a racing CANCEL then voids, so
		 * the deadline, not poll(), ends the loop.
		 */
		left = deadline - t_now(CLOCK_MONOTONIC);
		if (left <= 0)
			break;
		ret = t_wait_readable(r->fd, (int)((left + NSEC_PER_MSEC - 1) /
						     NSEC_PER_MSEC));
		if (ret < 0)
			return ret;
	}
	return got;
}

int t_ring_wait_pending(const struct t_ring *r, __u32 n, int timeout_ms)
{
	__s64 deadline = t_now(CLOCK_MONOTONIC) + timeout_ms * NSEC_PER_MSEC;

	while (t_ring_head(r) - t_ring_tail(r) < n) {
		if (t_now(CLOCK_MONOTONIC) > deadline)
			return 0;
		t_sleep_ms(1);
	}
	return 1;
}

int t_ring_wait_overflow(const struct t_ring *r, int timeout_ms)
{
	__s64 deadline = t_now(CLOCK_MONOTONIC) + timeout_ms * NSEC_PER_MSEC;

	while (!(t_ring_flags(r) & QTIMER_RING_OVERFLOW)) {
		if (t_now(CLOCK_MONOTONIC) > deadline)
			return 0;
		t_sleep_ms(1);
	}
	return 1;
}

long t_ring_fire_one(struct t_ring *r, __u64 cookie, __u64 *id)
{
	__u32 idx = t_ring_head(r);
	__u32 want = idx - t_ring_tail(r) + 1;

	if (t_arm(r->fd, CLOCK_MONOTONIC, 0, 0, 0, cookie, id) ||
	    !t_ring_wait_pending(r, want, QT_ARRIVE_MS))
		return -1;
	return idx;
}

bool t_ring_stays_empty(struct t_ring *r, int ms)
{
	__u32 head = t_ring_head(r);

	t_wait_readable(r->fd, ms);
	return t_ring_head(r) == head && t_ring_tail(r) == head;
}
