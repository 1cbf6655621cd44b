// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * Zero-copy consumption of the record ring: td_ring_peek() claims records
 * in the mapping and hands out pointers to them, td_ring_advance() stores
 * the tail past them, as io_uring_peek_batch_cqe() and io_uring_cq_advance()
 * do for a completion queue.  The claims are made at the peek, by the same
 * compare-and-swap as td_ring_consume(), so that CANCEL and MODIFY stay
 * exact: a record the caller holds is one its timer's CANCEL will be told
 * was consumed.  Until the advance, the kernel does not reuse the records'
 * slots (they lie past the tail), and no other consumer may move the tail:
 * so the peek holds the ring's lock, which every reader of read.c takes,
 * until the advance releases it.
 */
#include "internal.h"

TD_EXPORT int td_ring_peek(struct td_ctx *ctx,
			   const struct qtimer_record **records,
			   unsigned int max)
{
	struct td_ring *ring;
	uint32_t tail, head, pos;
	unsigned int nr = 0;

	if (!ctx || !records || !max)
		return -EINVAL;
	if (!td_has_ring(ctx))
		return -ENODEV;
	/* A second peek before the advance would wait for itself. */
	if (td_ring_peek_mine(ctx))
		return -EBUSY;
	ring = &ctx->ring;
	pthread_mutex_lock(&ring->lock);
	/* The lock orders the tail, as in td_ring_consume(). */
	tail = __atomic_load_n(ring->tail, __ATOMIC_RELAXED);
	/* Pairs with the kernel's release: the records before head are written. */
	head = __atomic_load_n(ring->head, __ATOMIC_ACQUIRE);
	for (pos = tail; pos != head && nr < max;) {
		struct qtimer_record *rec = &ring->recs[pos++ & ring->mask];
		uint32_t flags = __atomic_load_n(&rec->flags, __ATOMIC_RELAXED);

		if ((flags & QTIMER_REC_CLAIM) == QTIMER_REC_READY &&
		    __atomic_compare_exchange_n(&rec->flags, &flags,
				(flags & ~QTIMER_REC_CLAIM) | QTIMER_REC_TAKEN,
				false, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
			records[nr++] = rec;
	}
	if (!nr) {
		/* Only voided records, if any: pass them, and hold nothing. */
		if (pos != tail)
			__atomic_store_n(ring->tail, pos, __ATOMIC_RELEASE);
		pthread_mutex_unlock(&ring->lock);
		return 0;
	}
	ring->peeked = nr;
	ring->peek_end = pos;
	__atomic_store_n(&ring->peek_owner, pthread_self(), __ATOMIC_RELAXED);
	__atomic_store_n(&ring->peek_active, true, __ATOMIC_RELEASE);
	return (int)nr;
}

TD_EXPORT int td_ring_advance(struct td_ctx *ctx, unsigned int nr)
{
	struct td_ring *ring;

	if (!ctx || !td_has_ring(ctx) || !td_ring_peek_mine(ctx))
		return -EINVAL;
	ring = &ctx->ring;
	/* All or nothing: the records' claims are made, the tail is one. */
	if (nr != ring->peeked)
		return -EINVAL;
	/* Done with them: the kernel may reuse their slots. */
	__atomic_store_n(ring->tail, ring->peek_end, __ATOMIC_RELEASE);
	ring->peeked = 0;
	__atomic_store_n(&ring->peek_active, false, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&ring->lock);
	td_ring_reap(ctx, nr);
	return 0;
}
