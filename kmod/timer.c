// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * The slab cache every timer comes from.  Timers are freed by whoever
 * timer.h says may free them, often in bulk: a chunk of a SUBMIT, of a
 * read(), of a compaction pass or of a closing file at a time.
 */

#include <linux/slab.h>

#include "timer.h"

static struct kmem_cache *qt_timer_cache;

int qt_timer_cache_init(void)
{
	qt_timer_cache = kmem_cache_create("qtimer_timer",
					   sizeof(struct qt_timer), 0,
					   SLAB_ACCOUNT, NULL);
	return qt_timer_cache ? 0 : -ENOMEM;
}

void qt_timer_cache_exit(void)
{
	kmem_cache_destroy(qt_timer_cache);
}

struct qt_timer *qt_timer_alloc(gfp_t gfp)
{
	return kmem_cache_alloc(qt_timer_cache, gfp);
}

/* Up to @nr zeroed timers in one slab call; returns how many it got. */
unsigned int qt_timer_alloc_bulk(unsigned int nr, struct qt_timer **timers)
{
	return kmem_cache_alloc_bulk(qt_timer_cache, GFP_KERNEL | __GFP_ZERO,
				     nr, (void **)timers);
}

void qt_timer_free(struct qt_timer *t)
{
	kmem_cache_free(qt_timer_cache, t);
}

void qt_timer_free_bulk(unsigned int nr, void **timers)
{
	kmem_cache_free_bulk(qt_timer_cache, nr, timers);
}

/*
 * Free timers nothing can reach any more, linked by ->next, in bulk: what a
 * holder of the file's lock collected, freed once it dropped the lock.
 */
void qt_timer_free_list(struct qt_timer *list)
{
	void *bulk[16];
	unsigned int nr = 0;

	while (list) {
		bulk[nr++] = list;
		list = list->next;
		if (nr == ARRAY_SIZE(bulk)) {
			qt_timer_free_bulk(nr, bulk);
			nr = 0;
		}
	}
	if (nr)
		qt_timer_free_bulk(nr, bulk);
}
