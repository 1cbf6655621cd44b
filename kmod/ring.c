// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * The record ring: the expirer writes a fired timer's record into pages
 * the file's owner maps, so that expirations reach user space with no
 * system call and no touch of the timer or its id on the way.
 *
 * The timer stays behind its record (RINGED, in owner[]) until it is
 * settled: CANCEL or MODIFY void the record by claim (qt_deliver_void()), or
 * the consumer's tail passes it and the ring is reaped, which frees a
 * one-shot and re-arms a ticker, so that a ticker has at most one record
 * pending, as on the ready queue.  When the ring is full, records wait on
 * the ready queue (the overflow) and move into the ring as it drains:
 * nothing is dropped.  Reaping and refilling happen on the expirer's
 * delivery into the file, in poll() and in read(), a bounded amount per
 * hold of the file's lock: ring_settle.c.
 *
 * This file sets the ring up and maps it, and takes its records back by
 * claim: for CANCEL and MODIFY, and as the consumer when read() is called
 * on a ringed file; poll() looks for a record to claim.
 */

#include <linux/mm.h>
#include <linux/poll.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uio.h>
#include <linux/vmalloc.h>

#include "clockset.h"
#include "ctx.h"
#include "deliver.h"
#include "end.h"
#include "ring.h"

/* Records poll() and read() look at per hold of the file's lock. */
#define QT_RING_SCAN_CHUNK	1024

int qt_ring_setup(struct qt_ctx *ctx, struct qtimer_ring_setup *setup)
{
	size_t size = QT_RING_RECS_OFF +
		      (size_t)setup->entries * sizeof(struct qtimer_record);
	unsigned int i, clock;
	struct qt_ring *ring;
	int ret = -ENOMEM;

	BUILD_BUG_ON(QT_RING_FLAGS_OFF + sizeof(u32) > QT_RING_RECS_OFF);
	if (READ_ONCE(ctx->ring))
		return -EBUSY;
	ring = kzalloc(sizeof(*ring), GFP_KERNEL_ACCOUNT);
	if (!ring)
		return -ENOMEM;
	ring->ctx = ctx;
	INIT_DELAYED_WORK(&ring->drain, qt_ring_settle_drain_work);
	ring->entries = setup->entries;
	ring->nr_pages = PAGE_ALIGN(size) >> PAGE_SHIFT;
	ring->pages = kcalloc(ring->nr_pages, sizeof(*ring->pages),
			      GFP_KERNEL_ACCOUNT);
	if (!ring->pages)
		goto out;
	/* Order-0 pages: no high-order allocation however large the ring. */
	for (i = 0; i < ring->nr_pages; i++) {
		ring->pages[i] = alloc_page(GFP_KERNEL_ACCOUNT | __GFP_ZERO);
		if (!ring->pages[i])
			goto out;
	}
	ring->vaddr = vmap(ring->pages, ring->nr_pages, VM_MAP, PAGE_KERNEL);
	if (!ring->vaddr)
		goto out;
	ring->owner = kvcalloc(ring->entries, sizeof(*ring->owner),
			       GFP_KERNEL_ACCOUNT);
	if (!ring->owner)
		goto out;
	ring->head_p = ring->vaddr + QT_RING_HEAD_OFF;
	ring->tail_p = ring->vaddr + QT_RING_TAIL_OFF;
	ring->flags_p = ring->vaddr + QT_RING_FLAGS_OFF;
	ring->recs = ring->vaddr + QT_RING_RECS_OFF;
	mutex_init(&ring->read_mutex);
	/* A file keeps the namespace of whoever set its ring up. */
	for (clock = 0; clock < QT_NR_CLOCKS; clock++)
		ring->ns_offset[clock] =
			qt_clock_timens_offset(qt_clock_id(clock));

	spin_lock_irq(&ctx->wqh.lock);
	if (ctx->ring) {
		ret = -EBUSY;
	} else {
		/* Records already queued are the overflow from now on. */
		if (ctx->ready)
			WRITE_ONCE(*ring->flags_p, QTIMER_RING_OVERFLOW);
		/* Unlocked readers (read, poll, mmap) see it set up. */
		smp_store_release(&ctx->ring, ring);
		/* A read() asleep without it goes on (qt_read_records()). */
		wake_up_locked(&ctx->wqh);
		ret = 0;
	}
	spin_unlock_irq(&ctx->wqh.lock);
	if (ret)
		goto out;

	setup->head_off = QT_RING_HEAD_OFF;
	setup->tail_off = QT_RING_TAIL_OFF;
	setup->flags_off = QT_RING_FLAGS_OFF;
	setup->recs_off = QT_RING_RECS_OFF;
	setup->mmap_size = (u64)ring->nr_pages << PAGE_SHIFT;
	return 0;
out:
	qt_ring_destroy(ring);
	return ret;
}

/*
 * The file is gone: so is any mapping (each held the file).  Its context
 * no longer points at the ring, so the drain no longer queues itself.
 */
void qt_ring_destroy(struct qt_ring *ring)
{
	unsigned int i;

	if (!ring)
		return;
	cancel_delayed_work_sync(&ring->drain);
	kvfree(ring->owner);
	if (ring->vaddr)
		vunmap(ring->vaddr);
	for (i = 0; ring->pages && i < ring->nr_pages && ring->pages[i]; i++)
		__free_page(ring->pages[i]);
	kfree(ring->pages);
	kfree(ring);
}

int qt_ring_mmap(struct qt_ctx *ctx, struct vm_area_struct *vma)
{
	unsigned long nr = vma_pages(vma);
	struct qt_ring *ring;

	/* Pairs with qt_ring_setup()'s release: the ring is set up. */
	ring = smp_load_acquire(&ctx->ring);
	if (!ring)
		return -ENODEV;
	/* Both sides write it: a private copy would consume nothing. */
	if (vma->vm_pgoff || nr > ring->nr_pages || !(vma->vm_flags & VM_SHARED))
		return -EINVAL;
	vm_flags_set(vma, VM_DONTEXPAND | VM_DONTDUMP);
	return vm_insert_pages(vma, vma->vm_start, ring->pages, &nr);
}

/*
 * Take @t's record back for CANCEL or MODIFY, by the claim: the mask of
 * what that prevented, or -ENOENT for a one-shot whose record the consumer
 * claimed (it is consumed, as by a read()).  A ticker the consumer is done
 * with (tail passed its record) is as good as re-armed, as after a read();
 * one whose record it holds is not armed.  @t stays behind its record.
 */
int qt_ring_cancel(struct qt_ring *ring, struct qt_timer *t)
{
	if (qt_deliver_void(ring, t))
		return QTIMER_CANCEL_QUEUED;
	if (!t->period || (t->flags & QT_TF_CANCELED))
		return -ENOENT;
	if (t->ring_pos - ring->reaped < qt_ring_tail(ring) - ring->reaped)
		return QTIMER_CANCEL_ARMED;
	return 0;
}

/*
 * Whether a READY record is in [tail, head) or records wait in the kernel:
 * 1 or 0, or -EAGAIN when it looked at QT_RING_SCAN_CHUNK records without
 * finding out.  A record stops being READY when it is claimed or voided,
 * and is READY again only when its slot is written anew, at head; so the
 * records before ring->scanned that an earlier call found not READY need
 * no second look, and each record is looked at about once, however often
 * poll() asks.  Without that, a consumer that claims records and leaves
 * its tail behind them would make every poll() walk the whole ring with
 * interrupts off.  (A consumer that writes READY back into a slot it took
 * may not be woken for it: its own doing.)
 */
static int qt_ring_scan(struct qt_ctx *ctx)
{
	struct qt_ring *ring = ctx->ring;
	unsigned int budget = QT_RING_SCAN_CHUNK;
	u32 tail, pos;

	lockdep_assert_held(&ctx->wqh.lock);
	if (ctx->nr_ready)
		return 1;
	tail = qt_ring_tail(ring);
	pos = ring->scanned;
	/* The tail moved past it, or back before it: start at the tail. */
	if (pos - tail > ring->head - tail)
		pos = tail;
	for (; pos != ring->head; pos++) {
		u32 idx = qt_ring_types_idx(ring, pos);
		u32 flags = READ_ONCE(ring->recs[idx].flags);

		if ((flags & QTIMER_REC_CLAIM) == QTIMER_REC_READY)
			break;
		if (!--budget) {
			ring->scanned = pos + 1;
			return -EAGAIN;
		}
	}
	ring->scanned = pos;
	return pos != ring->head;
}

/* For read()'s wait: a scan cut short wakes it to look again. */
static bool qt_ring_pending(struct qt_ctx *ctx)
{
	return qt_ring_scan(ctx) != 0;
}

__poll_t qt_ring_poll(struct qt_ctx *ctx)
{
	struct qt_timer *dead = NULL;
	int pending;

	/* Records a clock set cancelled are void by the time poll() says. */
	qt_clockset_sync(ctx);
	spin_lock_irq(&ctx->wqh.lock);
	/*
	 * Never sleeps: a ticker that needs room in a full heap is the
	 * drain's to re-arm, and wakes the file when it fires.
	 */
	qt_ring_settle_all(ctx, false, &dead);
	while ((pending = qt_ring_scan(ctx)) < 0) {
		spin_unlock_irq(&ctx->wqh.lock);
		cond_resched();
		spin_lock_irq(&ctx->wqh.lock);
	}
	spin_unlock_irq(&ctx->wqh.lock);
	qt_end_ctx(ctx, &dead);
	return pending ? EPOLLIN | EPOLLRDNORM : 0;
}

/*
 * Claim up to @max READY records from the tail on, as a mapped consumer
 * would, into @recs (claim bits clear) with their positions in @pos.
 * *@tail becomes where the scan stopped: it looks at QT_RING_SCAN_CHUNK
 * records at most, claimed or not, as a consumer that claims records and
 * puts its tail back could otherwise have each call walk the whole ring
 * with interrupts off.  A record is taken only if its timer still stands
 * behind it: whatever user space writes into a slot the kernel voided, or
 * into one whose record it no longer owns, read() does not return it.
 */
static unsigned int qt_ring_claim(struct qt_ring *ring, u32 *tail,
				  struct qtimer_record *recs, u32 *pos,
				  unsigned int max)
{
	unsigned int nr = 0, looked = 0;

	while (*tail != ring->head && nr < max && looked++ < QT_RING_SCAN_CHUNK) {
		u32 idx = qt_ring_types_idx(ring, *tail);
		struct qtimer_record *slot = &ring->recs[idx];
		struct qt_timer *t = ring->owner[idx];
		u32 flags = READ_ONCE(slot->flags);

		if (t && t->ring_pos == *tail &&
		    (flags & QTIMER_REC_CLAIM) == QTIMER_REC_READY &&
		    cmpxchg(&slot->flags, flags,
			    (flags & ~QTIMER_REC_CLAIM) | QTIMER_REC_TAKEN) == flags) {
			recs[nr].id = READ_ONCE(slot->id);
			recs[nr].cookie = READ_ONCE(slot->cookie);
			recs[nr].expires_ns = READ_ONCE(slot->expires_ns);
			recs[nr].count = READ_ONCE(slot->count);
			recs[nr].flags = flags & ~QTIMER_REC_CLAIM;
			pos[nr++] = *tail;
		}
		(*tail)++;
	}
	return nr;
}

/*
 * read() claimed the record at @pos, with @flags, and could not copy it out:
 * it is READY again, unless CANCEL or MODIFY came meanwhile (they were told
 * it was consumed, and its timer no longer stands behind it).  If the clock
 * was set meanwhile, nobody read it, so it becomes the cancellation record,
 * as one still READY would have (qt_clockset_cancel()), and as read()
 * without a ring puts back (qt_read_settle()).
 */
static void qt_ring_unclaim(struct qt_ring *ring, u32 pos, u32 flags)
{
	u32 idx = qt_ring_types_idx(ring, pos);
	struct qt_timer *t = ring->owner[idx];

	if (!t || t->ring_pos != pos)
		return;
	if (t->flags & QT_TF_SET_WHILE_READ) {
		t->flags = (t->flags & ~QT_TF_SET_WHILE_READ) | QT_TF_CANCELED;
		flags |= QTIMER_REC_CANCELED | QTIMER_REC_LAST;
	}
	WRITE_ONCE(ring->recs[idx].flags, flags | QTIMER_REC_READY);
}

/*
 * read() on a file with a ring: the kernel is the consumer, by the same
 * claims, and moves the tail on only past records it copied out.  A record
 * it claimed but could not copy goes back to READY, unless CANCEL or
 * MODIFY came meanwhile: they were told it was consumed, so it is dropped.
 */
ssize_t qt_ring_read(struct qt_ctx *ctx, struct iov_iter *to, bool nonblock)
{
	struct qtimer_record recs[QT_RING_READ_CHUNK];
	size_t max = iov_iter_count(to) / sizeof(recs[0]), got = 0;
	struct qt_ring *ring = ctx->ring;
	u32 pos[QT_RING_READ_CHUNK], tail;
	struct qt_timer *dead = NULL;
	unsigned int nr, copied, i;
	enum qt_settle_end end;
	ssize_t ret = 0;

	if (!max)
		return -EINVAL;
	if (nonblock) {
		if (!mutex_trylock(&ring->read_mutex))
			return -EAGAIN;
	} else if (mutex_lock_interruptible(&ring->read_mutex)) {
		return -ERESTARTSYS;
	}
	qt_clockset_sync(ctx);
	spin_lock_irq(&ctx->wqh.lock);
	while (got < max) {
		end = qt_ring_settle_all(ctx, !nonblock, &dead);
		tail = qt_ring_tail(ring);
		nr = qt_ring_claim(ring, &tail, recs, pos,
				   min_t(size_t, QT_RING_READ_CHUNK, max - got));
		/* The kernel's claims, for qt_deliver_void() while we copy. */
		memcpy(ring->taken, pos, nr * sizeof(pos[0]));
		ring->nr_taken = nr;
		if (!nr) {
			/* Past the void records, if any. */
			smp_store_release(ring->tail_p, tail);
			if (got)
				break;
			/*
			 * A look that found nothing to take, but ended before
			 * head, or moved the tail past records a reap may turn
			 * into new ones (tickers, the overflow): look again,
			 * O_NONBLOCK too, but let go first and end on a
			 * signal, as another thread that keeps putting the
			 * tail back can make such looks follow each other for
			 * ever.
			 */
			if (end == QT_SETTLED &&
			    (tail != ring->head || ring->reaped != tail)) {
				spin_unlock_irq(&ctx->wqh.lock);
				qt_end_ctx(ctx, &dead);
				cond_resched();
				spin_lock_irq(&ctx->wqh.lock);
				if (signal_pending(current)) {
					ret = -ERESTARTSYS;
					break;
				}
				continue;
			}
			/*
			 * A ticker could not be re-armed for want of memory:
			 * say so, as read() without a ring does, rather than
			 * wait for an expiry that cannot come.
			 */
			if (end == QT_SETTLE_STUCK) {
				ret = -ENOMEM;
				break;
			}
			/*
			 * O_NONBLOCK: nothing to take now.  A ticker that
			 * waits for room (QT_SETTLE_ROOM) is the drain's.
			 */
			if (nonblock)
				break;
			/* Not kept while we sleep. */
			if (dead || qt_ctx_ending(ctx)) {
				spin_unlock_irq(&ctx->wqh.lock);
				qt_end_ctx(ctx, &dead);
				spin_lock_irq(&ctx->wqh.lock);
				continue;
			}
			ret = wait_event_interruptible_locked_irq(ctx->wqh,
								  qt_ring_pending(ctx));
			if (ret)
				break;
			continue;
		}
		spin_unlock_irq(&ctx->wqh.lock);
		qt_end_ctx(ctx, &dead);
		/* One read() may take a million: see qt_read_records(). */
		cond_resched();
		/* A record cut in the middle was not delivered. */
		copied = copy_to_iter(recs, nr * sizeof(recs[0]), to) /
			 sizeof(recs[0]);
		spin_lock_irq(&ctx->wqh.lock);
		ring->nr_taken = 0;
		for (i = copied; i < nr; i++)
			qt_ring_unclaim(ring, pos[i], recs[i].flags);
		/* READY again behind qt_ring_scan()'s cursor: look again. */
		if (copied < nr)
			ring->scanned = pos[copied];
		/* The consumer's release, for the reap that follows. */
		smp_store_release(ring->tail_p, copied < nr ? pos[copied] : tail);
		got += copied;
		if (copied < nr) {
			ret = -EFAULT;
			break;
		}
		if (signal_pending(current))
			break;
	}
	/* Re-arm the tickers whose records this read took (if it can). */
	if (ret != -ENOMEM)
		qt_ring_settle_all(ctx, !nonblock, &dead);
	spin_unlock_irq(&ctx->wqh.lock);
	mutex_unlock(&ring->read_mutex);
	qt_end_ctx(ctx, &dead);
	if (got)
		return got * sizeof(recs[0]);
	return ret ? ret : -EAGAIN;
}
