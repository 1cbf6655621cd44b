// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * The memory behind each base's heap: grown before a push needs it, in
 * process context, and shrunk when the heap is mostly empty.
 */

#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "base.h"

/*
 * Heap storage.  A heap's array lives in pages that vmap() maps together;
 * growing maps the same pages again with new ones after them, so entries
 * never move: no copy under the base lock (which has irqs off), and with
 * init_on_alloc only the new pages are cleared.  (With kvmalloc() and a copy
 * per growth, a heap growing by eighths to a million entries had cleared and
 * copied about nine times its final size: a third of the time of arming
 * them.)  base->resize serialises these changes, all in process context;
 * base->pages and nr_pages are under it alone, the heap under the base lock.
 *
 * The pages are charged to no memory cgroup (GFP_KERNEL, not _ACCOUNT).  A
 * heap is every file's on its CPU and clock, and a growth is an eighth of
 * all their entries at once: charged to the task whose ARM found the heap
 * full, one tenant's million timers made another's next ARM pay megabytes,
 * or fail with ENOMEM near its limit.  A module cannot charge each
 * tenant its share (obj_cgroup_charge() is not exported), so none pays:
 * what is charged to nobody is bounded by what is charged to somebody, as
 * each entry is a timer that its owner's cgroup pays for (with its stale
 * quarter and the growth slack, at most about 24 bytes a live timer
 * against its 64-byte charged object).
 */

/* Pages that hold an array of @cap entries, or 0 if no size_t can say. */
static unsigned long qt_storage_pages(u32 cap)
{
	size_t size = qt_heap_storage_size(cap);

	if (size == SIZE_MAX)
		return 0;
	return DIV_ROUND_UP(size, PAGE_SIZE);
}

/* Entries that @nr_pages pages hold. */
static u32 qt_storage_pages_cap(unsigned long nr_pages)
{
	size_t fit = ((nr_pages << PAGE_SHIFT) - qt_heap_storage_size(0)) /
		     sizeof(struct qt_heap_entry);

	return min_t(size_t, fit, U32_MAX);
}

static u32 qt_storage_grow_cap(u32 cap, u32 need)
{
	/*
	 * Double while small; grow by an eighth once large, so that a big
	 * heap wastes little memory (the per-timer budget is 96 bytes, 16 of
	 * them this entry).  A growth maps every page anew, so it still has to
	 * be geometric to stay amortised O(1) per entry.
	 */
	u32 next = cap < 65536 ? max(cap * 2, 64U) : cap + cap / 8;

	return max(next, need);
}

/*
 * Map @nr_pages pages as @base's heap array: its current pages as far as
 * they go, new ones after them.  Fails with -ENOMEM, or with -EAGAIN when
 * the heap no longer fits by the time the base lock is taken (a shrink that
 * raced with arms), leaving everything as it was.
 */
static int qt_storage_remap(struct qt_base *base, unsigned long nr_pages)
{
	unsigned long keep = min_t(unsigned long, nr_pages, base->nr_pages), i;
	unsigned long old_nr = base->nr_pages;
	struct page **pages, **old_pages = base->pages;
	u32 cap = qt_storage_pages_cap(nr_pages);
	unsigned long flags;
	void *mem, *old;
	int ret = -ENOMEM;

	lockdep_assert_held(&base->resize);
	pages = kvmalloc_array(nr_pages, sizeof(*pages), GFP_KERNEL);
	if (!pages)
		return -ENOMEM;
	if (keep)
		memcpy(pages, old_pages, keep * sizeof(*pages));
	for (i = keep; i < nr_pages; i++) {
		pages[i] = alloc_page(GFP_KERNEL);
		if (!pages[i])
			goto out_free;
	}
	mem = vmap(pages, nr_pages, VM_MAP, PAGE_KERNEL);
	if (!mem)
		goto out_free;

	spin_lock_irqsave(&base->lock, flags);
	if (base->heap.nr > cap) {
		spin_unlock_irqrestore(&base->lock, flags);
		vunmap(mem);
		ret = -EAGAIN;
		goto out_free;
	}
	if (base->heap.mem)
		old = qt_heap_remap(&base->heap, mem, cap);
	else
		old = qt_heap_attach(&base->heap, mem, cap);
	spin_unlock_irqrestore(&base->lock, flags);

	/* Every heap access holds the base lock: nothing uses @old now. */
	if (old)
		vunmap(old);
	/*
	 * A shrink after a close of 10^6 timers frees 4096 pages: no
	 * rescheduling point in __free_page() on PREEMPT_VOLUNTARY.
	 */
	for (i = nr_pages; i < old_nr; i++) {
		__free_page(old_pages[i]);
		cond_resched();
	}
	kvfree(old_pages);
	base->pages = pages;
	base->nr_pages = nr_pages;
	return 0;

out_free:
	while (i-- > keep)
		__free_page(pages[i]);
	kvfree(pages);
	return ret;
}

/**
 * qt_storage_reserve() - Make room for @extra more entries in @base's heap.
 * @base: the base; its lock must not be held.
 * @extra: entries about to be pushed.
 *
 * Heaps grow in process context, before any lock is taken, so that neither
 * the arm path nor the hrtimer callback ever allocates.  Callers re-check
 * the room under the lock and come back here if others took it.
 *
 * Return: 0, or -ENOMEM.
 */
int qt_storage_reserve(struct qt_base *base, u32 extra)
{
	unsigned long flags, nr_pages;
	u32 cap, need;
	int ret = 0;

	might_sleep();
	/* Racy peek: the common case has room and takes no lock. */
	if (READ_ONCE(base->heap.nr) + extra <= READ_ONCE(base->heap.cap))
		return 0;
	mutex_lock(&base->resize);
	for (;;) {
		spin_lock_irqsave(&base->lock, flags);
		cap = base->heap.cap;
		need = base->heap.nr + extra;
		spin_unlock_irqrestore(&base->lock, flags);
		if (need <= cap)
			break;
		nr_pages = qt_storage_pages(qt_storage_grow_cap(cap, need));
		ret = nr_pages ? qt_storage_remap(base, nr_pages) : -ENOMEM;
		if (ret)
			break;
	}
	mutex_unlock(&base->resize);
	return ret;
}

/* At exit, or with the base otherwise unused: give all storage back. */
void qt_storage_free(struct qt_base *base)
{
	unsigned long i;

	if (base->heap.mem)
		vunmap(qt_heap_attach(&base->heap, NULL, 0));
	for (i = 0; i < base->nr_pages; i++)
		__free_page(base->pages[i]);
	kvfree(base->pages);
	base->pages = NULL;
	base->nr_pages = 0;
}

/* Heaps shrink back when a file's timers leave, so memory follows load. */
void qt_storage_shrink(struct qt_base *base)
{
	unsigned long nr_pages;
	u32 cap;

	cap = READ_ONCE(base->heap.cap);
	if (cap <= 256 || READ_ONCE(base->heap.nr) >= cap / 4)
		return;
	mutex_lock(&base->resize);
	nr_pages = qt_storage_pages(max(READ_ONCE(base->heap.nr) * 2, 64U));
	/* A failure keeps the larger array, which is harmless. */
	if (nr_pages < base->nr_pages)
		qt_storage_remap(base, nr_pages);
	mutex_unlock(&base->resize);
}
