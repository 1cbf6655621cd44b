// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * The 4-ary min-heap behind every per-CPU timer base.  A 4-ary heap is half
 * as deep as a binary one, and with 16-byte entries the four children of a
 * node fill exactly one 64-byte cache line, so a sift-down step costs one
 * line however many children it compares; qt_heap_attach() places the array
 * so that this holds.  Sifts move a hole and write the travelling entry once
 * instead of swapping, and prefetch a level ahead so that a heap too big
 * for the caches does not wait for memory once per level.  Nothing here
 * depends on the kernel beyond a few types, prefetch() and string
 * functions, so the same file is unit-tested and benchmarked in user space
 * over stand-ins for those headers.
 */

#include <linux/compiler.h>
#include <linux/limits.h>
#include <linux/prefetch.h>
#include <linux/string.h>

#include "heap.h"

#define QT_HEAP_ARITY		4
#define QT_HEAP_LINE		64

/*
 * Index arithmetic is done in unsigned long so that child (4i + 4) and
 * grandchild (16i + 20, only formed while 4i + 4 < n) indices cannot wrap:
 * on 64-bit there is room for any u32 index, and on 32-bit the array
 * cannot hold even 2^29 entries.
 */

/*
 * The smallest child of @i in the @n-entry heap, or NULL if @i is a leaf.
 * All four children exist on every level but the last, so the common case
 * is a fixed tournament of the four keys in one cache line: the pairwise
 * picks compile to setcc/cmov, as which child wins is a coin toss that the
 * branch predictor cannot learn.  A short loop handles a partial group.
 *
 * While the children are compared, the four lines of grandchildren are
 * prefetched: one of them holds the next step's children whichever child
 * wins.  Without that, each level of a heap larger than the caches is one
 * serial miss; with it a pop at a million entries runs about twice as fast,
 * for about eight instructions a level.  Only lines that start below @n are
 * touched, so the prefetch never leaves the array.
 */
static __always_inline struct qt_heap_entry *
qt_heap_min_child(struct qt_heap_entry *v, unsigned long n, unsigned long i)
{
	unsigned long c = QT_HEAP_ARITY * i + 1;
	struct qt_heap_entry *p, *l, *r;

	if (likely(c + QT_HEAP_ARITY - 1 < n)) {
		if (likely(QT_HEAP_ARITY * c + 1 + 3 * QT_HEAP_ARITY < n)) {
			struct qt_heap_entry *g = v + QT_HEAP_ARITY * c + 1;

			prefetch(g);
			prefetch(g + QT_HEAP_ARITY);
			prefetch(g + 2 * QT_HEAP_ARITY);
			prefetch(g + 3 * QT_HEAP_ARITY);
		}
		p = v + c;
		l = p + (p[1].key < p[0].key);
		r = p + 2 + (p[3].key < p[2].key);
		return r->key < l->key ? r : l;
	}
	if (c >= n)
		return NULL;
	for (l = p = v + c; ++p < v + n; )
		if (p->key < l->key)
			l = p;
	return l;
}

/*
 * Move the hole at @i towards the root until its parent is not larger than
 * @key, then drop the entry in.  Stopping at an equal parent saves moves and
 * is why equal keys come out in no promised order.
 */
static __always_inline void qt_heap_sift_up(struct qt_heap_entry *v, unsigned long i,
					    s64 key, void *timer)
{
	while (i) {
		unsigned long parent = (i - 1) / QT_HEAP_ARITY;

		if (v[parent].key <= key)
			break;
		v[i] = v[parent];
		i = parent;
	}
	v[i].key = key;
	v[i].timer = timer;
}

/*
 * Move the hole at @i towards the leaves of the @n-entry heap until no child
 * is smaller than @key, then drop the entry in.  The hole travels as a
 * pointer: converting to and from indices cost a tenth of the instructions.
 */
static __always_inline void qt_heap_sift_down(struct qt_heap_entry *v, unsigned long n,
					      unsigned long i, s64 key, void *timer)
{
	struct qt_heap_entry *hole = v + i, *child;

	while ((child = qt_heap_min_child(v, n, hole - v)) && child->key < key) {
		*hole = *child;
		hole = child;
	}
	hole->key = key;
	hole->timer = timer;
}

/* Floyd's bottom-up construction: O(n), sifting down every inner node. */
static void qt_heap_heapify(struct qt_heap_entry *v, unsigned long n)
{
	unsigned long i;

	if (n < 2)
		return;
	for (i = (n - 2) / QT_HEAP_ARITY + 1; i-- > 0; )
		qt_heap_sift_down(v, n, i, v[i].key, v[i].timer);
}

/**
 * qt_heap_storage_size() - Bytes to allocate for a heap array.
 * @cap: number of entries the array must hold.
 *
 * Includes QT_HEAP_LINE - 1 bytes of slack for qt_heap_attach() to align the
 * array in, so any allocator's pointer (kvmalloc, malloc) will do.
 *
 * Return: the size in bytes; SIZE_MAX (which no allocator satisfies) if it
 * does not fit in a size_t, which can only happen on 32-bit.
 */
size_t qt_heap_storage_size(u32 cap)
{
	size_t limit = (SIZE_MAX - (QT_HEAP_LINE - 1)) / sizeof(struct qt_heap_entry);

	if (unlikely(cap > limit))
		return SIZE_MAX;
	return (size_t)cap * sizeof(struct qt_heap_entry) + QT_HEAP_LINE - 1;
}

/**
 * qt_heap_attach() - Give a heap a new entry array, keeping its entries.
 * @h: the heap.
 * @mem: a fresh allocation of qt_heap_storage_size(@cap) bytes, or NULL to
 *       take the storage away from an empty heap.
 * @cap: entries the new array holds; at least @h->nr.
 *
 * Used for the first array and to grow or shrink later.  The entries are
 * copied to the same indices, so heap order carries over unchanged.
 *
 * The children of node i are at 4i+1..4i+4, that is at byte offsets
 * 64i + 16 .. 64i + 79 from v.  If v + 16 is 64-byte aligned, every child
 * group is exactly one cache line and a sift-down step touches one line
 * instead of straddling two.  So v is put 16 bytes below a 64-byte boundary:
 * v = ALIGN(mem + 16, 64) - 16, which is at most 63 bytes above mem (the
 * slack in qt_heap_storage_size()).  The root then sits alone at the end of
 * the line before the first group, and at most 63 bytes are wasted.  (With
 * 12-byte entries on 32-bit only the first group is aligned; harmless.)
 *
 * Return: the allocation previously attached (NULL the first time), for the
 * caller to free once it no longer needs the old entries.
 */
void *qt_heap_attach(struct qt_heap *h, void *mem, u32 cap)
{
	const uintptr_t line_mask = QT_HEAP_LINE - 1;
	void *old = h->mem;
	struct qt_heap_entry *v = NULL;

	if (mem) {
		uintptr_t group = (uintptr_t)mem + sizeof(*v);

		group = (group + line_mask) & ~line_mask;
		v = (struct qt_heap_entry *)(group - sizeof(*v));
		if (h->nr)
			memcpy(v, h->v, h->nr * sizeof(*v));
	} else {
		cap = 0;
	}
	h->v = v;
	h->mem = mem;
	h->cap = cap;
	return old;
}

/**
 * qt_heap_remap() - Give a heap a new view of the storage it already has.
 * @h: the heap.
 * @mem: an address at which the memory behind @h->mem is mapped anew, the
 *       same bytes at the same offsets (vmap() of the same pages, perhaps
 *       with more after them), with room for @cap entries.
 * @cap: entries the new mapping holds; at least @h->nr.
 *
 * As qt_heap_attach() but without the copy: the entries are there already,
 * since v keeps its offset from the start of the mapping.  Growing a large
 * heap this way costs no time proportional to its size.
 *
 * Return: the mapping previously attached, for the caller to unmap.
 */
void *qt_heap_remap(struct qt_heap *h, void *mem, u32 cap)
{
	void *old = h->mem;

	h->v = (struct qt_heap_entry *)((char *)mem + ((char *)h->v - (char *)old));
	h->mem = mem;
	h->cap = cap;
	return old;
}

/**
 * qt_heap_push() - Insert a timer.
 * @h: the heap; the caller guarantees @h->nr < @h->cap.
 * @key: its expiry.
 * @timer: stored as is and handed back by qt_heap_top() and the filter
 *         callbacks; never dereferenced here.
 */
void qt_heap_push(struct qt_heap *h, s64 key, void *timer)
{
	qt_heap_sift_up(h->v, h->nr++, key, timer);
}

/**
 * qt_heap_pop() - Remove the top entry.
 * @h: the heap; the caller guarantees it is not empty.
 *
 * The last entry fills the hole left at the root and finds its place.
 */
void qt_heap_pop(struct qt_heap *h)
{
	struct qt_heap_entry *v = h->v, *hole = v, *child;
	unsigned long n = --h->nr;

	if (!n)
		return;
	/*
	 * The last entry came from the bottom and nearly always belongs back
	 * there, so walk the hole down to a leaf along the smallest children
	 * without comparing against it (one comparison a level fewer), then
	 * sift it up the usually short way back (Wegener's bottom-up heapsort).
	 * v[n] is outside the shrunk heap, so the walk leaves it alone.
	 */
	while ((child = qt_heap_min_child(v, n, hole - v))) {
		*hole = *child;
		hole = child;
	}
	qt_heap_sift_up(v, hole - v, v[n].key, v[n].timer);
}

/**
 * qt_heap_delete() - Remove the entry at index @i.
 * @h: the heap.
 * @i: an index below @h->nr.
 *
 * The last entry fills the hole and sifts whichever way it must: O(log n).
 * Entries may move, within the path through @i and the path the last entry
 * takes; v[i] afterwards holds an entry not yet seen by a caller that walks
 * the array upward from @i, or @i == nr.  For incremental compaction, which
 * must never hold the heap for O(n) at once.
 */
void qt_heap_delete(struct qt_heap *h, u32 i)
{
	struct qt_heap_entry *v = h->v;
	unsigned long n = --h->nr;

	if (i == n)
		return;
	if (i && v[(i - 1) / QT_HEAP_ARITY].key > v[n].key)
		qt_heap_sift_up(v, i, v[n].key, v[n].timer);
	else
		qt_heap_sift_down(v, n, i, v[n].key, v[n].timer);
}

/**
 * qt_heap_replace_top() - Change the key of the top entry and re-sift it.
 * @h: the heap; the caller guarantees it is not empty.
 * @key: the new key, usually later (a timer found modified to a later
 *       time, a periodic timer re-armed) but any value is fine: a smaller
 *       key leaves the entry on top.
 *
 * Cheaper than pop followed by push, and the timer pointer stays the same.
 */
void qt_heap_replace_top(struct qt_heap *h, s64 key)
{
	qt_heap_sift_down(h->v, h->nr, 0, key, h->v[0].timer);
}

/**
 * qt_heap_rebuild() - Restore heap order over all entries in O(n).
 * @h: the heap, its entries in any order.
 *
 * For qt_heap_filter(), which moves the kept entries to new indices.
 */
void qt_heap_rebuild(struct qt_heap *h)
{
	qt_heap_heapify(h->v, h->nr);
}
