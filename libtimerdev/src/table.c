// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * The timer table: when the module offers QTIMER_FEAT_TABLE, td_open()
 * gives the file a table and maps it, and td_cancel() and td_modify() try
 * a compare-and-swap on the timer's slot before they make a system call
 * (the protocol is "The timer table" in <linux/qtimer.h>).  A swap that
 * wins is the whole operation; one that loses, or a timer the table
 * cannot serve, goes to the ioctl, whose answer then says what happened,
 * so the results are the ioctls' either way.
 *
 * Two things the table does not do as the ioctls do, and how the library
 * makes up for them:
 *   - A stopped timer keeps its place under the caps until the kernel sees
 *     it.  The library remembers the ids it stopped; when an arm fails for
 *     a cap (ENOSPC, EDQUOT), it CANCELs those still stopped, which gives
 *     their places back at once, and arms again.
 *   - A push keeps the timer's period, slack and cancel-on-set.  td_modify()
 *     pushes only a timer whose slot says QTIMER_SLOT_PLAIN (a one-shot
 *     with none of them) to a schedule with none of them.
 *
 * The library touches only slots of ids its own arms returned (the pages
 * of others may not exist: SIGBUS), tracking per shard how far they reach.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "internal.h"

/* Beyond this an expiry goes to the ioctl, whose limits are the kernel's. */
#define TD_TABLE_WHEN_MAX	(INT64_MAX / 2)

static const clockid_t td_table_clocks[] = {
	CLOCK_REALTIME, CLOCK_MONOTONIC, CLOCK_BOOTTIME,
};

/* Trust but verify: a layout we cannot use is no worse than no table. */
static bool td_table_layout_ok(const struct qtimer_table_setup *setup)
{
	long page = sysconf(_SC_PAGESIZE);

	return setup->nr_shards && setup->nr_shards <= 256 &&
	       page > 0 && setup->shard_size &&
	       !(setup->shard_size % (uint64_t)page) &&
	       !(setup->mmap_off % (uint64_t)page) &&
	       setup->shard_size <= SIZE_MAX / setup->nr_shards;
}

void td_table_setup(struct td_ctx *ctx)
{
	struct qtimer_table_setup setup = { 0 };
	struct td_table *table = &ctx->table;
	int saved = errno;
	size_t size;
	void *map;

	/* Shards of 256 MiB of address space each: 64-bit processes only. */
	if (sizeof(void *) < 8 || !(ctx->version.features & QTIMER_FEAT_TABLE))
		return;
	if (td_sys_ioctl(ctx->fd, QTIMER_IOC_TABLE_SETUP, &setup) < 0 ||
	    !td_table_layout_ok(&setup))
		goto out;
	size = (size_t)setup.nr_shards * setup.shard_size;
	table->known = calloc(setup.nr_shards, sizeof(*table->known));
	if (!table->known)
		goto out;
	map = mmap(NULL, size, PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_NORESERVE, ctx->fd, (off_t)setup.mmap_off);
	if (map == MAP_FAILED) {
		free(table->known);
		table->known = NULL;
		goto out;
	}
	pthread_mutex_init(&table->lock, NULL);
	table->map = map;
	table->map_size = size;
	table->shard_size = setup.shard_size;
	table->nr_shards = setup.nr_shards;
out:
	errno = saved;
}

void td_table_unmap(struct td_ctx *ctx)
{
	struct td_table *table = &ctx->table;

	if (!table->map)
		return;
	munmap(table->map, table->map_size);
	pthread_mutex_destroy(&table->lock);
	free(table->known);
	free(table->stopped);
	memset(table, 0, sizeof(*table));
}

/* An arm returned @id: its slot's page exists, and so do those below it. */
void td_table_note(struct td_ctx *ctx, uint64_t id)
{
	struct td_table *table = &ctx->table;
	uint32_t shard = QTIMER_ID_SHARD(id), reach = QTIMER_ID_SLOT(id) + 1;
	uint32_t known;

	if (!table->map || shard >= table->nr_shards)
		return;
	known = __atomic_load_n(&table->known[shard], __ATOMIC_RELAXED);
	while (known < reach &&
	       !__atomic_compare_exchange_n(&table->known[shard], &known, reach,
					    true, __ATOMIC_RELEASE,
					    __ATOMIC_RELAXED))
		;
}

/* @id's slot, or NULL where the library may not look. */
static struct qtimer_slot *td_table_slot(struct td_ctx *ctx, uint64_t id)
{
	struct td_table *table = &ctx->table;
	uint32_t shard = QTIMER_ID_SHARD(id), slot = QTIMER_ID_SLOT(id);

	if (!table->map || shard >= table->nr_shards ||
	    slot >= __atomic_load_n(&table->known[shard], __ATOMIC_ACQUIRE) ||
	    (uint64_t)slot * sizeof(struct qtimer_slot) >= table->shard_size)
		return NULL;
	return (struct qtimer_slot *)(table->map + shard * table->shard_size) +
	       slot;
}

/* Whether @ctl lets user space act on @id's timer. */
static bool td_table_ours(uint64_t ctl, uint64_t id)
{
	uint32_t state = QTIMER_SLOT_STATE(ctl);

	return QTIMER_SLOT_GEN(ctl) == QTIMER_ID_GEN(id) &&
	       (state == QTIMER_SLOT_ARMED || state == QTIMER_SLOT_LATER);
}

/* Whether @id's timer is one the library stopped and the kernel still has. */
static bool td_table_still_stopped(struct td_ctx *ctx, uint64_t id)
{
	struct qtimer_slot *slot = td_table_slot(ctx, id);
	uint64_t ctl;

	if (!slot)
		return false;
	ctl = __atomic_load_n(&slot->ctl, __ATOMIC_RELAXED);
	return QTIMER_SLOT_GEN(ctl) == QTIMER_ID_GEN(id) &&
	       QTIMER_SLOT_STATE(ctl) == QTIMER_SLOT_STOPPED;
}

/* How many slots the context's arms reached, over all shards. */
static size_t td_table_reach(struct td_ctx *ctx)
{
	struct td_table *table = &ctx->table;
	size_t reach = 0;
	uint32_t shard;

	for (shard = 0; shard < table->nr_shards; shard++)
		reach += __atomic_load_n(&table->known[shard], __ATOMIC_RELAXED);
	return reach;
}

/* Drop the remembered stops the kernel has ended.  Under table->lock. */
static void td_table_prune(struct td_ctx *ctx)
{
	struct td_table *table = &ctx->table;
	size_t i, nr = 0;

	for (i = 0; i < table->nr_stopped; i++)
		if (td_table_still_stopped(ctx, table->stopped[i]))
			table->stopped[nr++] = table->stopped[i];
	table->nr_stopped = nr;
}

/*
 * Remember a stop, for td_table_reclaim().  The list is pruned before it
 * grows past the slots reached, so it holds at most about twice as many
 * ids as the context has slots.  Without memory for it, the stop is
 * cancelled at once.
 */
static void td_table_remember(struct td_ctx *ctx, uint64_t id)
{
	struct td_table *table = &ctx->table;

	pthread_mutex_lock(&table->lock);
	if (table->nr_stopped == table->cap_stopped) {
		/*
		 * Pruned only once the list is as long as the slots the
		 * context's arms reached: at most that many stops can be
		 * waiting (a prune reads every listed slot, a cache and TLB
		 * miss each when timers are many).
		 */
		if (table->nr_stopped >= td_table_reach(ctx))
			td_table_prune(ctx);
		/* Grown when a prune freed less than half: amortised. */
		if (table->nr_stopped > table->cap_stopped / 2 ||
		    !table->cap_stopped) {
			size_t cap = table->cap_stopped ?
				     table->cap_stopped * 2 : 64;
			uint64_t *grown = realloc(table->stopped,
						  cap * sizeof(*grown));

			if (grown) {
				table->stopped = grown;
				table->cap_stopped = cap;
			}
		}
	}
	if (table->nr_stopped < table->cap_stopped) {
		table->stopped[table->nr_stopped++] = id;
		pthread_mutex_unlock(&table->lock);
	} else {
		struct qtimer_op op = { .opcode = QTIMER_OP_CANCEL, .id = id };

		pthread_mutex_unlock(&table->lock);
		td_sys_ioctl(ctx->fd, QTIMER_IOC_CANCEL, &op);
	}
}

int td_table_stop(struct td_ctx *ctx, uint64_t id)
{
	struct qtimer_slot *slot = td_table_slot(ctx, id);
	uint64_t ctl;

	if (!slot)
		return -EAGAIN;
	ctl = __atomic_load_n(&slot->ctl, __ATOMIC_ACQUIRE);
	do {
		if (!td_table_ours(ctl, id))
			return -EAGAIN;
	} while (!__atomic_compare_exchange_n(&slot->ctl, &ctl,
					      QTIMER_SLOT_NEXT(ctl, QTIMER_SLOT_STOPPED),
					      false, __ATOMIC_ACQ_REL,
					      __ATOMIC_ACQUIRE));
	td_table_remember(ctx, id);
	return 0;
}

int td_table_push(struct td_ctx *ctx, uint64_t id, int64_t when, bool plain)
{
	struct qtimer_slot *slot = td_table_slot(ctx, id);
	uint64_t ctl;

	if (!slot)
		return -EAGAIN;
	ctl = __atomic_load_n(&slot->ctl, __ATOMIC_ACQUIRE);
	for (;;) {
		int64_t old;

		if (!td_table_ours(ctl, id) ||
		    (plain && !(ctl & QTIMER_SLOT_PLAIN)))
			return -EAGAIN;
		old = __atomic_load_n(&slot->deadline, __ATOMIC_RELAXED);
		if (when <= old)
			return -ERANGE;
		if (!__atomic_compare_exchange_n(&slot->deadline, &old, when,
						 false, __ATOMIC_RELAXED,
						 __ATOMIC_RELAXED)) {
			ctl = __atomic_load_n(&slot->ctl, __ATOMIC_ACQUIRE);
			continue;
		}
		if (__atomic_compare_exchange_n(&slot->ctl, &ctl,
						QTIMER_SLOT_NEXT(ctl, QTIMER_SLOT_LATER),
						false, __ATOMIC_RELEASE,
						__ATOMIC_ACQUIRE))
			return 0;
	}
}

/*
 * The absolute expiry on @id's clock that @expires_ns and @flags name, if
 * the table can take it: 0 and *@when; -ERANGE beyond what the kernel
 * surely accepts (2^62 ns); -EAGAIN for no clock of the module's (a forged
 * id) or, unless @realtime, a relative CLOCK_REALTIME expiry, which MODIFY
 * would make an interval the table does not serve.
 */
int td_table_when(uint64_t id, int64_t expires_ns, unsigned int flags,
		  bool realtime, int64_t *when)
{
	uint32_t clock = QTIMER_ID_CLOCK(id);
	int64_t now;

	if (expires_ns < 0 || expires_ns > TD_TABLE_WHEN_MAX)
		return -ERANGE;
	if (clock >= sizeof(td_table_clocks) / sizeof(td_table_clocks[0]))
		return -EAGAIN;
	if (flags & TD_TIMER_ABSTIME) {
		*when = expires_ns;
		return 0;
	}
	if (td_table_clocks[clock] == CLOCK_REALTIME && !realtime)
		return -EAGAIN;
	now = td_now(td_table_clocks[clock]);
	if (now < 0)
		return -EAGAIN;
	if (now > TD_TABLE_WHEN_MAX - expires_ns)
		return -ERANGE;
	*when = now + expires_ns;
	return 0;
}

/*
 * An arm failed for a cap: CANCEL the timers this context stopped that the
 * kernel still holds, which frees their places at once.  The list is taken
 * whole and cancelled through a td_batch (SUBMITs of up to submit_max), or
 * one ioctl each on a module without SUBMIT.  Returns how many it
 * cancelled: worth arming again if any.
 */
unsigned int td_table_reclaim(struct td_ctx *ctx)
{
	struct td_table *table = &ctx->table;
	struct td_batch batch;
	uint64_t *ids;
	size_t nr, i;

	if (!table->map)
		return 0;
	pthread_mutex_lock(&table->lock);
	td_table_prune(ctx);
	ids = table->stopped;
	nr = table->nr_stopped;
	table->stopped = NULL;
	table->nr_stopped = table->cap_stopped = 0;
	pthread_mutex_unlock(&table->lock);
	if (nr && !td_batch_init(ctx, &batch, nr < ctx->version.submit_max ?
					      (unsigned int)nr :
					      ctx->version.submit_max)) {
		for (i = 0; i < nr; i++)
			td_batch_cancel(&batch, ids[i], 0);
		td_batch_flush(&batch);
		td_batch_free(&batch);
	} else {
		for (i = 0; i < nr; i++) {
			struct qtimer_op op = {
				.opcode = QTIMER_OP_CANCEL, .id = ids[i],
			};

			td_sys_ioctl(ctx->fd, QTIMER_IOC_CANCEL, &op);
		}
	}
	free(ids);
	return nr > UINT_MAX ? UINT_MAX : (unsigned int)nr;
}

TD_EXPORT int td_stop(struct td_ctx *ctx, uint64_t id)
{
	if (!ctx)
		return -EINVAL;
	if (!td_has_table(ctx))
		return -ENOTSUP;
	return td_table_stop(ctx, id);
}

TD_EXPORT int td_push(struct td_ctx *ctx, uint64_t id, int64_t expires_ns,
		      unsigned int flags)
{
	int64_t when;
	int ret;

	if (!ctx || (flags & ~TD_TIMER_ABSTIME) || expires_ns < 0)
		return -EINVAL;
	if (!td_has_table(ctx))
		return -ENOTSUP;
	ret = td_table_when(id, expires_ns, flags, true, &when);
	return ret ? ret : td_table_push(ctx, id, when, false);
}
