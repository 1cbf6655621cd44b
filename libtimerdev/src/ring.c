// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * The record ring: when the module offers QTIMER_FEAT_RING, td_open() gives
 * the file a ring and maps it, and the readers of read.c take records from
 * it by claim, with no system call, for as long as it holds any.  This file
 * is the consumer's half of the protocol in <linux/qtimer.h>; when and how
 * to fall back to read(2) and poll(2) is read.c's business.  Setting up is
 * best effort: an older module (ENOTTY), a short memory cgroup (ENOMEM) or
 * a failed mmap() leave the context reading with read(2), which takes from
 * the kernel's ring too when only the mapping failed.
 */
#include <stdint.h>
#include <sys/mman.h>

#include "internal.h"

/* 128 KiB of records: a burst that size drains with no system call. */
_Static_assert(TD_RING_DEFAULT_ENTRIES >= QTIMER_RING_MIN &&
	       TD_RING_DEFAULT_ENTRIES <= QTIMER_RING_MAX &&
	       !(TD_RING_DEFAULT_ENTRIES & (TD_RING_DEFAULT_ENTRIES - 1)),
	       "TD_RING_DEFAULT_ENTRIES must be a ring size the uapi allows");
/* Never a size: the uapi's largest is far below it. */
_Static_assert(TD_RING_OFF > QTIMER_RING_MAX, "TD_RING_OFF is a ring size");

/* A __u32 at off, aligned and inside the mapping. */
static bool td_ring_word_fits(uint32_t off, uint64_t size)
{
	return !(off % sizeof(uint32_t)) && off + sizeof(uint32_t) <= size;
}

/* Trust but verify: a layout we cannot use is no worse than no ring. */
static bool td_ring_layout_ok(const struct qtimer_ring_setup *setup,
			      uint32_t entries)
{
	uint64_t size = setup->mmap_size;

	return size <= SIZE_MAX &&
	       td_ring_word_fits(setup->head_off, size) &&
	       td_ring_word_fits(setup->tail_off, size) &&
	       td_ring_word_fits(setup->flags_off, size) &&
	       !(setup->recs_off % _Alignof(struct qtimer_record)) &&
	       setup->recs_off + (uint64_t)entries *
			sizeof(struct qtimer_record) <= size;
}

/* entries: a size the uapi allows, as td_open2() checked. */
void td_ring_setup(struct td_ctx *ctx, uint32_t entries)
{
	struct qtimer_ring_setup setup = { .entries = entries };
	struct td_ring *ring = &ctx->ring;
	int saved = errno;
	char *map;

	if (!(ctx->version.features & QTIMER_FEAT_RING))
		return;
	if (td_sys_ioctl(ctx->fd, QTIMER_IOC_RING_SETUP, &setup) < 0)
		return;
	if (!td_ring_layout_ok(&setup, entries))
		return;
	map = mmap(NULL, setup.mmap_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		   ctx->fd, 0);
	if (map == MAP_FAILED) {
		errno = saved;
		return;
	}
	pthread_mutex_init(&ring->lock, NULL);
	ring->head = (const uint32_t *)(map + setup.head_off);
	ring->tail = (uint32_t *)(map + setup.tail_off);
	ring->flags = (const uint32_t *)(map + setup.flags_off);
	ring->recs = (struct qtimer_record *)(map + setup.recs_off);
	ring->mask = entries - 1;
	ring->map_size = setup.mmap_size;
	ring->map = map;
}

TD_EXPORT int td_ring_entries(const struct td_ctx *ctx)
{
	if (!ctx)
		return -EINVAL;
	return td_has_ring(ctx) ? (int)(ctx->ring.mask + 1) : 0;
}

void td_ring_unmap(struct td_ctx *ctx)
{
	struct td_ring *ring = &ctx->ring;
	int saved = errno;

	if (!ring->map)
		return;
	/* munmap() of a mapping we made cannot fail. */
	munmap(ring->map, ring->map_size);
	pthread_mutex_destroy(&ring->lock);
	ring->map = NULL;
	errno = saved;
}

/*
 * Claim up to max records from the tail on and copy them out with their
 * claim bits clear, exactly as the header's consumer loop does; records
 * found VOID (cancelled or modified) or otherwise not READY are skipped.
 * The tail moves past what was claimed or skipped, and no further, so a
 * READY record beyond max stays for the next call.  Caller holds the lock.
 */
unsigned int td_ring_consume(struct td_ctx *ctx, struct qtimer_record *records,
			     unsigned int max)
{
	struct td_ring *ring = &ctx->ring;
	/*
	 * Only a consumer writes the tail, and every consumer of this file
	 * (this function, and read(2) as the library calls it) runs under
	 * the lock, whose hand-over orders it: no acquire needed.
	 */
	uint32_t start = __atomic_load_n(ring->tail, __ATOMIC_RELAXED);
	/* Pairs with the kernel's release: the records before head are written. */
	uint32_t head = __atomic_load_n(ring->head, __ATOMIC_ACQUIRE);
	uint32_t tail = start;
	unsigned int nr = 0;

	while (tail != head && nr < max) {
		struct qtimer_record *rec = &ring->recs[tail++ & ring->mask];
		uint32_t flags = __atomic_load_n(&rec->flags, __ATOMIC_RELAXED);
		struct qtimer_record *out = &records[nr];

		if ((flags & QTIMER_REC_CLAIM) != QTIMER_REC_READY ||
		    !__atomic_compare_exchange_n(&rec->flags, &flags,
				(flags & ~QTIMER_REC_CLAIM) | QTIMER_REC_TAKEN,
				false, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
			continue;
		/* Ours now: the kernel writes the slot again only past the tail. */
		out->id = rec->id;
		out->cookie = rec->cookie;
		out->expires_ns = rec->expires_ns;
		out->count = rec->count;
		out->flags = flags & ~QTIMER_REC_CLAIM;
		nr++;
	}
	/* Done with the records before it: the kernel may reuse their slots. */
	if (tail != start)
		__atomic_store_n(ring->tail, tail, __ATOMIC_RELEASE);
	return nr;
}

/* Records wait in the kernel for room in the ring.  A hint: no ordering. */
bool td_ring_overflowed(const struct td_ctx *ctx)
{
	return __atomic_load_n(ctx->ring.flags, __ATOMIC_RELAXED) &
	       QTIMER_RING_OVERFLOW;
}

/* The consumer's tail has reached head.  A hint: no ordering. */
bool td_ring_empty(const struct td_ctx *ctx)
{
	return __atomic_load_n(ctx->ring.tail, __ATOMIC_RELAXED) ==
	       __atomic_load_n(ctx->ring.head, __ATOMIC_RELAXED);
}
