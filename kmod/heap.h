/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * The timer heap: a 4-ary min-heap of (expiry, timer) pairs, after the Go
 * runtime's timer heap.  Each CPU's base (base.c) keeps one per clock and
 * drives its hrtimer from the top.  The heap orders by key alone and never
 * looks behind the timer pointer, so cancellation and "modify to a later
 * time" stay O(1) outside it (the engine marks timers dead or late and lets
 * the heap catch up lazily through qt_heap_replace_top() and
 * qt_heap_filter()).  It neither allocates nor locks: the caller owns the
 * storage and serialises every call.  This header and heap.c build
 * unchanged in user space, over a tree of stand-ins for the kernel headers
 * they include, so the heap is unit-tested, differentially tested and
 * benchmarked natively.
 */
#ifndef _QT_HEAP_H
#define _QT_HEAP_H

#include <linux/types.h>

struct qt_heap_entry {
	s64 key;	/* expiry in ns; smallest on top, any s64 allowed */
	void *timer;	/* opaque to the heap, never dereferenced by it */
};

/*
 * A zeroed struct qt_heap is a valid empty heap without storage; give it an
 * array with qt_heap_attach() before the first push.  Entries with equal keys
 * come out in no particular order (neither FIFO nor LIFO is promised).
 */
struct qt_heap {
	struct qt_heap_entry *v;	/* entries, &v[1] 64-byte aligned */
	void *mem;			/* raw allocation that v points into */
	u32 nr;				/* entries in use */
	u32 cap;			/* entries that fit */
};

size_t qt_heap_storage_size(u32 cap);
void *qt_heap_attach(struct qt_heap *h, void *mem, u32 cap);
void *qt_heap_remap(struct qt_heap *h, void *mem, u32 cap);

static inline bool qt_heap_empty(const struct qt_heap *h)
{
	return h->nr == 0;
}

/* The entry with the smallest key, or NULL when the heap is empty. */
static inline const struct qt_heap_entry *qt_heap_top(const struct qt_heap *h)
{
	return h->nr ? &h->v[0] : NULL;
}

void qt_heap_push(struct qt_heap *h, s64 key, void *timer);
void qt_heap_pop(struct qt_heap *h);
void qt_heap_replace_top(struct qt_heap *h, s64 key);
void qt_heap_delete(struct qt_heap *h, u32 i);
void qt_heap_rebuild(struct qt_heap *h);

/**
 * qt_heap_filter() - Remove every entry that @keep rejects.
 * @h: the heap.
 * @keep: called exactly once per entry, in array order; false removes it.
 *        It sees the whole entry because a timer may have several (a
 *        modify-earlier leaves the old one behind), and only the caller
 *        can tell from the key which of them is live.
 * @drop: called exactly once per removed entry, right after @keep rejected
 *        it; it may free the timer once no other entry refers to it, as the
 *        heap never looks at the timer pointer.
 * @arg: passed to both callbacks.
 *
 * Neither callback may call into this heap.  Removal compacts the array in
 * one pass and Floyd's heapify restores order in O(n), which beats one
 * O(log n) deletion per entry once a sizeable fraction is dead (the engine
 * compacts when more than a quarter is) or when a whole file's timers go.
 *
 * Inline so that the callbacks, called once per entry of a heap that may
 * hold millions, are inlined too rather than called through pointers.
 *
 * Return: the number of entries removed.
 */
static __always_inline u32
qt_heap_filter(struct qt_heap *h,
	       bool (*keep)(const struct qt_heap_entry *e, void *arg),
	       void (*drop)(void *timer, void *arg), void *arg)
{
	struct qt_heap_entry *v = h->v;
	u32 n = h->nr, kept = 0, i;

	for (i = 0; i < n; i++) {
		if (keep(&v[i], arg))
			v[kept++] = v[i];
		else
			drop(v[i].timer, arg);
	}
	h->nr = kept;
	/* Compaction moved entries to new indices; if none went, none moved. */
	if (kept != n)
		qt_heap_rebuild(h);
	return n - kept;
}

#endif /* _QT_HEAP_H */
