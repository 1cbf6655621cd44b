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
 * hold of the file's lock.
 */

#include <linux/math64.h>
#include <linux/mm.h>
#include <linux/poll.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uio.h>
#include <linux/vmalloc.h>

#include "base.h"
#include "clockset.h"
#include "ctx.h"
#include "deliver.h"
#include "end.h"
#include "ring.h"

/* Records settled per hold of the file's lock outside the expirer. */
#define QT_RING_SETTLE_CHUNK	256
/* Records poll() looks at per hold of the file's lock. */
#define QT_RING_SCAN_CHUNK	1024
/* Chunks poll() and read() settle per call (qt_ring_settle_all()). */
#define QT_SETTLE_ALL_CHUNKS	64
/* Chunks the drain settles per run; the next run goes on from there. */
#define QT_DRAIN_CHUNKS		16

static void qt_ring_drain_work(struct work_struct *work);

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
	INIT_DELAYED_WORK(&ring->drain, qt_ring_drain_work);
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
 * @t is to die: if nothing can reach it any more, onto @dead, for the
 * caller to free once it dropped the file's lock, which the consumer and
 * the expirer both wait for.
 */
static void qt_ring_let_die(struct qt_timer *t, struct qt_base **held,
			    struct qt_timer **dead)
{
	if (qt_end_let_die(t, held)) {
		t->next = *dead;
		*dead = t;
	}
}

/*
 * The consumer is done with @t's record.  A one-shot (or a cancellation)
 * dies; a ticker fires again at once with the periods it missed counted,
 * or goes back into its heap for its next deadline, which needs room there:
 * -EAGAIN with *@need set when there is none, @t untouched.
 */
static int qt_ring_reap_one(struct qt_ctx *ctx, struct qt_timer *t,
			    struct qt_base **held, struct qt_base **need,
			    struct qt_timer **dead)
{
	struct qt_ring *ring = ctx->ring;
	struct qt_base *base;
	ktime_t now, next;

	if (!t->period || (t->flags & QT_TF_CANCELED)) {
		qt_deliver_detach(ring, t);
		qt_end_timer(t, held);
		return 0;
	}
	/*
	 * The clock was set after the consumer claimed it; or it is being
	 * set, and the walk has not reached this timer yet: the set came
	 * first, as for a timer that fires meanwhile (qt_expire_one()), so
	 * the periods it skipped are no catch-up to count.
	 */
	if ((t->flags & QT_TF_SET_WHILE_READ) ||
	    ((t->flags & QT_TF_CANCEL_ON_SET) && qt_clockset_pending(t->ctx))) {
		qt_deliver_detach(ring, t);
		qt_deliver_queue_canceled(ctx, t, 0);
		return 0;
	}
	base = qt_base_relock(*held, t);
	*held = base;
	now = qt_clock_now(qt_timer_clock(t));
	next = qt_deliver_expires_next(t);
	if (now >= next) {
		u64 missed = div64_u64(now - t->expires, t->period);

		qt_deliver_detach(ring, t);
		t->expires += missed * t->period;
		t->count = min_t(u64, missed, QTIMER_COUNT_MAX);
		qt_deliver_ring_add(ctx, t);
		return 0;
	}
	if (base->heap.nr >= base->heap.cap) {
		*need = base;
		return -EAGAIN;
	}
	qt_deliver_detach(ring, t);
	t->expires = next;
	t->count = 0;
	qt_ctx_timer_armed(t);
	qt_base_push(base, t);
	return 0;
}

/* The consumer's tail, or where reaping stands if it is out of range. */
static u32 qt_ring_tail(const struct qt_ring *ring)
{
	/* Pairs with the consumer's release: it is done with what is before. */
	u32 tail = smp_load_acquire(ring->tail_p);

	if (tail - ring->reaped > ring->head - ring->reaped)
		return ring->reaped;
	return tail;
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

/**
 * qt_ring_settle() - Reap what the consumer is done with, then refill.
 * @ctx: a file with a ring, locked.
 * @held: the base the caller carries locked, or NULL (see qt_base_relock()).
 * @budget: records to look at, reaped and refilled together; it takes
 *	what it looked at off *@budget.
 * @need: set to the base whose heap needs room, on -EAGAIN.
 * @dead: where timers that died go, linked by ->next, for the caller to
 *	free with qt_end_ctx() once it dropped the file's lock.
 *
 * Wakes the file's waiters when it wrote records.
 *
 * Return: 0 when done, 1 when the budget ran out first, -EAGAIN when a
 * ticker needs room in *@need's heap before the reap can go on.
 */
int qt_ring_settle(struct qt_ctx *ctx, struct qt_base **held,
		   unsigned int *budget, struct qt_base **need,
		   struct qt_timer **dead)
{
	struct qt_ring *ring = ctx->ring;
	u32 tail = qt_ring_tail(ring), head = ring->head;
	struct qt_timer *t;
	int ret = 0;

	lockdep_assert_held(&ctx->wqh.lock);
	for (; ring->reaped != tail; ring->reaped++) {
		if (!*budget) {
			ret = 1;
			goto out;
		}
		(*budget)--;
		t = ring->owner[qt_ring_types_idx(ring, ring->reaped)];
		if (!t)
			continue;
		ret = qt_ring_reap_one(ctx, t, held, need, dead);
		if (ret)
			goto out;
	}
	while (ctx->ready && ring->head - ring->reaped < ring->entries) {
		if (!*budget) {
			ret = 1;
			goto out;
		}
		(*budget)--;
		t = qt_ctx_ready_pop(ctx);
		if (t->state == QT_GHOST) {
			ctx->nr_ghosts--;
			qt_ring_let_die(t, held, dead);
			continue;
		}
		ctx->nr_ready--;
		qt_deliver_fold(t);
		qt_deliver_ring_write(ctx, ring, t);
	}
	if (!ctx->ready)
		WRITE_ONCE(*ring->flags_p, 0);
out:
	/*
	 * qt_ring_scan()'s cursor never falls behind the reap: a cursor left
	 * 2^32 records behind would look in range again.
	 */
	if (ring->scanned - ring->reaped > ring->head - ring->reaped)
		ring->scanned = ring->reaped;
	if (ring->head != head)
		wake_up_locked_poll(&ctx->wqh, EPOLLIN | EPOLLRDNORM);
	return ret;
}

/* What qt_ring_settle_some() came to. */
enum qt_settle_end {
	QT_SETTLED,		/* nothing left to reap or move in */
	QT_SETTLE_MORE,		/* the chunks ran out first */
	QT_SETTLE_ROOM,		/* a ticker needs room, which only a sleep gives */
	QT_SETTLE_STUCK,	/* a ticker needs room and there is no memory */
	QT_SETTLE_GONE,		/* the file is being released */
};

/*
 * Settle up to @chunks chunks of @ring, dropping the lock between them:
 * tickers with a period of 1 ns re-fire as they are reaped, so a thread
 * that keeps moving the tail to the head would make "all" last as long as
 * it cared to.  A ticker that needs room in a full heap gets it here only
 * if @may_sleep: growing a heap takes the base's resize mutex, which
 * another user's growth may hold, and allocates, so a caller that must not
 * sleep (poll(), O_NONBLOCK read()) leaves that to the drain.  Process
 * context; called and returns with the lock held.  The timers of the last
 * chunk that died are left on @dead (see qt_ring_settle()); the others it
 * frees itself.
 */
static enum qt_settle_end qt_ring_settle_some(struct qt_ctx *ctx,
					      struct qt_ring *ring,
					      unsigned int chunks,
					      bool may_sleep,
					      struct qt_timer **dead)
	__must_hold(&ctx->wqh.lock)
{
	struct qt_base *base, *need;
	unsigned int budget;
	int ret;

	for (;;) {
		base = NULL;
		budget = QT_RING_SETTLE_CHUNK;
		ret = qt_ring_settle(ctx, &base, &budget, &need, dead);
		if (base)
			qt_base_unlock_carried(base);
		if (!ret)
			return QT_SETTLED;
		if (ret == -EAGAIN && !may_sleep)
			return QT_SETTLE_ROOM;
		if (!--chunks)
			return QT_SETTLE_MORE;
		spin_unlock_irq(&ctx->wqh.lock);
		qt_end_ctx(ctx, dead);
		if (ret == -EAGAIN && qt_storage_reserve(need, 1)) {
			spin_lock_irq(&ctx->wqh.lock);
			return QT_SETTLE_STUCK;
		}
		cond_resched();
		spin_lock_irq(&ctx->wqh.lock);
		if (ctx->ring != ring)
			return QT_SETTLE_GONE;
	}
}

/*
 * Settle what poll() or read() can, QT_SETTLE_ALL_CHUNKS chunks at most:
 * the drain, queued at once, goes on from where it stops, and makes room
 * for a ticker when the caller may not sleep.  Called and returns with the
 * lock held.
 *
 * Return: QT_SETTLE_STUCK when a ticker the consumer is done with could
 * not be re-armed for want of memory (it stays behind its record, and the
 * next poll() or read() tries again), QT_SETTLE_ROOM when one waits for the
 * drain to make room, QT_SETTLED otherwise.
 */
static enum qt_settle_end qt_ring_settle_all(struct qt_ctx *ctx,
					     bool may_sleep,
					     struct qt_timer **dead)
	__must_hold(&ctx->wqh.lock)
{
	enum qt_settle_end end;

	end = qt_ring_settle_some(ctx, ctx->ring, QT_SETTLE_ALL_CHUNKS,
				  may_sleep, dead);
	if (end == QT_SETTLE_MORE || end == QT_SETTLE_ROOM)
		qt_deliver_drain_arm(ctx->ring, 0);
	return end == QT_SETTLE_MORE ? QT_SETTLED : end;
}

/*
 * After a run of the drain: run again while a ticker stands behind a
 * record (its period after the shortest one's) or records wait for room
 * (soon), backing off while the tail stays where it was.
 */
static void qt_ring_drain_again(struct qt_ctx *ctx, struct qt_ring *ring)
{
	u32 tail = qt_ring_tail(ring);
	u64 ns = 0;

	lockdep_assert_held(&ctx->wqh.lock);
	ring->drain_armed = false;
	if (!ring->nr_owned)
		ring->drain_period = 0;
	if (ring->drain_period)
		ns = max_t(u64, ring->drain_period, QT_DRAIN_MIN_NS);
	if (ctx->ready)
		ns = QT_DRAIN_MIN_NS;
	if (!ns) {
		ring->drain_idle = 0;
		return;
	}
	if (tail != ring->drain_tail)
		ring->drain_idle = 0;
	else if (ring->drain_idle < QT_DRAIN_BACKOFF)
		ring->drain_idle++;
	ring->drain_tail = tail;
	qt_deliver_drain_arm(ring, min_t(u64, ns << ring->drain_idle,
					 max_t(u64, ns, QT_DRAIN_MAX_NS)));
}

/*
 * The drain: reap what the consumer passed and move waiting records in, as
 * poll() does, for consumers that never call it.  An edge-triggered epoll
 * or an io_uring multishot poll calls ->poll() only after a wakeup, and a
 * mapped consumer that advances the tail makes none: without this, a
 * ticker whose record it took would never fire again and records waiting
 * for room would never arrive.  It runs in process context, a chunk per
 * hold of the file's lock, at most QT_DRAIN_CHUNKS chunks a run.
 */
static void qt_ring_drain_work(struct work_struct *work)
{
	struct qt_ring *ring = container_of(to_delayed_work(work),
					    struct qt_ring, drain);
	struct qt_ctx *ctx = ring->ctx;
	struct qt_timer *dead = NULL;

	spin_lock_irq(&ctx->wqh.lock);
	/* The file is being released: its timers are all dying. */
	if (ctx->ring == ring &&
	    qt_ring_settle_some(ctx, ring, QT_DRAIN_CHUNKS, true,
				&dead) != QT_SETTLE_GONE)
		qt_ring_drain_again(ctx, ring);
	spin_unlock_irq(&ctx->wqh.lock);
	qt_end_ctx(ctx, &dead);
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
