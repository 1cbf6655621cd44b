// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * Timer bases: for every CPU and clock, a 4-ary heap of armed timers and
 * one hrtimer programmed to the heap's earliest deadline, as Go's runtime
 * keeps one timer heap per P.  The hrtimer's callback and the worker that
 * takes over from it belong to the expirer (expire.c), which pops what is
 * due with qt_base_collect(): a base knows timers, never the files that
 * own them.  Cancelled and re-timed
 * entries are left in place and skipped when they surface, and compacted
 * away, a chunk per lock hold in a work item, once they make up more than
 * a quarter of a heap.  When a CPU goes offline its heaps stay and keep
 * working from other CPUs.
 */

#include <linux/cpuhotplug.h>
#include <linux/jump_label.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/slab.h>

#include "base.h"

/*
 * The callback runs in softirq context (HRTIMER_SOFTIRQ), where a run that
 * delivers to many files and wakes their readers belongs, rather than in the
 * hard interrupt: there it would hold off every other hrtimer of the CPU,
 * and the deadlines of several bases whose hrtimers sit on one CPU (one per
 * clock, and those of other CPUs' bases last programmed from it) coming due
 * while the interrupt is handled keep hrtimer_interrupt() retrying until it
 * declares itself hung ("hrtimer: interrupt took").  A soft hrtimer makes
 * the interrupt retry at most once, to raise the softirq.  On PREEMPT_RT the
 * softirq runs in a thread, where the spinlock_t locks the callback takes
 * may sleep.
 */
#define QT_HRTIMER_MODE		HRTIMER_MODE_ABS_PINNED_SOFT

struct qt_base *qt_bases;
static enum cpuhp_state qt_cpuhp_state;

/*
 * The surface hook (qt_base_collect()): asked about each due timer before
 * it is popped, while any file has a timer table, whether the timer's
 * owner pushed it later.  Off, it costs a patched-out branch.
 */
static s64 (*qt_base_surface)(struct qt_timer *t, ktime_t now);
static DEFINE_STATIC_KEY_FALSE(qt_base_surfacing);

/* A file set up a timer table, or one with a table is gone.  Process context. */
void qt_base_surface_get(void)
{
	static_branch_inc(&qt_base_surfacing);
}

void qt_base_surface_put(void)
{
	static_branch_dec(&qt_base_surfacing);
}

/**
 * qt_base_lock_timer() - Lock the base that @t belongs to.
 * @t: a timer whose context lock the caller holds, with irqs off.
 *
 * A timer keeps the base of its first push (hotplug no longer moves heaps),
 * but the check once locked costs nothing and keeps this safe should a
 * timer ever move between the read of base_idx and the lock.
 *
 * Return: the locked base.
 */
struct qt_base *qt_base_lock_timer(struct qt_timer *t)
	__acquires(&qt_base_of(t)->lock)
{
	struct qt_base *base;

	for (;;) {
		base = qt_base_of(t);
		spin_lock(&base->lock);
		if (likely(t->base_idx == base->idx))
			return base;
		spin_unlock(&base->lock);
	}
}

/**
 * qt_base_program() - Program the hrtimer for the top of the heap.
 * @base: locked.
 * @not_before: no earlier than this (0 for no bound): later is allowed,
 *	early never.
 */
void qt_base_program(struct qt_base *base, ktime_t not_before)
{
	const struct qt_heap_entry *top;
	struct qt_timer *t;
	ktime_t soft;
	u64 delta = 0;

	lockdep_assert_held(&base->lock);
	/* A running expirer programs the hrtimer when it finishes. */
	if (base->expiring || base->deferred)
		return;
	top = qt_heap_top(&base->heap);
	if (!top)
		return;
	t = top->timer;
	soft = top->key;
	if (top->key == t->heap_key) {
		delta = t->slack;
		soft = top->key - delta;
	}
	if (soft < not_before) {
		delta = top->key > not_before ? top->key - not_before : 0;
		soft = not_before;
	}
	hrtimer_start_range_ns(&base->hrtimer, soft, delta, QT_HRTIMER_MODE);
}

/*
 * Timers that compaction found it may free, freed in bulk: one slab call
 * per few timers rather than one each, as compacting after a mass cancel
 * frees as many timers as it drops entries.
 */
#define QT_REAP_MAX		16

struct qt_reap {
	unsigned int nr;
	void *timers[QT_REAP_MAX];
};

/* @arg: a struct qt_reap to free the timer through, or NULL to free it now. */
static void qt_base_drop(void *timer, void *arg)
{
	struct qt_timer *t = timer;
	struct qt_reap *reap = arg;
	bool dead = t->state == QT_DEAD;
	u8 left = t->nr_entries - 1;

	/*
	 * Unless it is DEAD the timer has an owner, which may free it as soon
	 * as it sees no entry left (qt_end_unreachable()): the count is the
	 * last thing of it touched here, and published with release.
	 */
	smp_store_release(&t->nr_entries, left);
	if (left || !dead)
		return;
	if (!reap) {
		qt_timer_free(t);
		return;
	}
	reap->timers[reap->nr++] = t;
	if (reap->nr == QT_REAP_MAX) {
		qt_timer_free_bulk(reap->nr, reap->timers);
		reap->nr = 0;
	}
}

static bool qt_base_entry_live(const struct qt_heap_entry *e, void *arg)
{
	const struct qt_timer *t = e->timer;

	return e->key == t->heap_key;
}

/* Drop every entry that @keep rejects, freeing the timers in bulk. */
static __always_inline void
qt_base_filter(struct qt_base *base,
	       bool (*keep)(const struct qt_heap_entry *e, void *arg))
{
	struct qt_reap reap;

	reap.nr = 0;
	qt_heap_filter(&base->heap, keep, qt_base_drop, &reap);
	if (reap.nr)
		qt_timer_free_bulk(reap.nr, reap.timers);
}

/* All at once, O(n): only where no user can make it happen at will. */
static void qt_base_compact(struct qt_base *base)
{
	lockdep_assert_held(&base->lock);
	qt_base_filter(base, qt_base_entry_live);
	base->nr_dead = 0;
}

/*
 * Compaction that a user can trigger (cancels, modifies, closes) runs in
 * the base's compact work, never under the caller's locks: an O(n) pass
 * with the base lock held would keep interrupts off on that CPU for as
 * long as a million entries take, tens of milliseconds.
 */
static void qt_base_compact_later(struct qt_base *base)
{
	queue_work(system_unbound_wq, &base->compact_work);
}

/**
 * qt_base_push() - Insert @t's live entry, keyed by its hard deadline.
 * @base: locked, with room reserved.
 * @t: the timer; expires and slack are final.
 *
 * The heap orders by expires + slack, as the hrtimer core orders by hard
 * expiry: the callback then fires every entry whose soft deadline passed,
 * which lets neighbours within their slack share one interrupt.
 */
void qt_base_push(struct qt_base *base, struct qt_timer *t)
{
	s64 key = ktime_add_ns(t->expires, t->slack);

	lockdep_assert_held(&base->lock);
	/*
	 * MODIFY gives a timer re-timed earlier over and over a fresh object
	 * long before this (QT_TIMER_ENTRIES_MAX): a last resort only.
	 */
	if (WARN_ON_ONCE(t->nr_entries == U8_MAX))
		qt_base_compact(base);
	qt_heap_push(&base->heap, key, t);
	t->heap_key = key;
	t->nr_entries++;
	t->base_idx = base->idx;
	if (qt_heap_top(&base->heap)->timer == t)
		qt_base_program(base, 0);
}

/**
 * qt_base_unlink() - Turn @t's live entry stale (cancel, modify-earlier).
 * @base: @t's base, locked.
 * @t: a timer live in the heap.
 *
 * O(1): the entry stays where it is and is dropped when it surfaces, or by
 * compaction once stale entries exceed a quarter of the heap (Go's rule),
 * which the compact work does a chunk at a time.
 */
void qt_base_unlink(struct qt_base *base, struct qt_timer *t)
{
	lockdep_assert_held(&base->lock);
	t->heap_key = QT_KEY_NONE;
	base->nr_dead++;
	if (base->nr_dead > base->heap.nr / 4)
		qt_base_compact_later(base);
}

/**
 * qt_base_put_timer() - Give up the owner's hold on a DEAD timer.
 * @base: @t's base, locked.
 * @t: a timer its owner has just made DEAD.
 *
 * Stale heap entries may still point at it; the last one to be dropped
 * frees it then.
 */
void qt_base_put_timer(struct qt_base *base, struct qt_timer *t)
{
	lockdep_assert_held(&base->lock);
	if (!t->nr_entries)
		qt_timer_free(t);
}

/*
 * Pop due timers into @batch, up to @max in it.  Stale entries are dropped
 * and entries whose timer moved later (lazy modify) are re-keyed on the way.
 * A popped timer keeps its entry's reference (nr_entries) until
 * the expirer's delivery drops it, so nothing frees it while it is in
 * transit.
 * Returns true when more is due than @batch held or the scan budget allowed.
 */
bool qt_base_collect(struct qt_base *base, ktime_t now,
		     struct qt_timer **batch, unsigned int *nr,
		     unsigned int max, unsigned int *scan)
{
	const struct qt_heap_entry *top;
	unsigned int bucket;
	struct qt_timer *t;
	s64 hard;

	lockdep_assert_held(&base->lock);
	while ((top = qt_heap_top(&base->heap))) {
		if (!*scan)
			return true;
		(*scan)--;
		t = top->timer;
		if (top->key != t->heap_key) {
			qt_heap_pop(&base->heap);
			if (base->nr_dead)
				base->nr_dead--;
			qt_base_drop(t, NULL);
			continue;
		}
		hard = ktime_add_ns(t->expires, t->slack);
		if (hard > top->key) {
			qt_heap_replace_top(&base->heap, hard);
			t->heap_key = hard;
			continue;
		}
		if (t->expires > now)
			return false;
		if (*nr == max)
			return true;
		if (static_branch_unlikely(&qt_base_surfacing)) {
			/* Its owner may have pushed it later: re-key, once. */
			hard = qt_base_surface(t, now);
			if (hard) {
				t->expires = hard;
				hard = ktime_add_ns(hard, t->slack);
				qt_heap_replace_top(&base->heap, hard);
				t->heap_key = hard;
				continue;
			}
		}
		qt_heap_pop(&base->heap);
		t->heap_key = QT_KEY_NONE;
		bucket = qt_base_lateness_bucket(now - t->expires);
		base->stats.lateness[bucket]++;
		batch[(*nr)++] = t;
	}
	return false;
}

/* Entries the compact work looks at per base-lock hold. */
#define QT_COMPACT_CHUNK	1024
/* ... and how many at least before it lets a waiter in. */
#define QT_COMPACT_YIELD	16

/*
 * Drop the stale entries of @base's heap, QT_COMPACT_CHUNK entries per lock
 * hold with a rescheduling point between holds, then shrink its array if
 * it is mostly empty.  Each removal is an O(log n) qt_heap_delete() rather
 * than qt_heap_filter()'s single O(n) sweep, so that no hold is longer
 * than a chunk.  A hold ends sooner when someone waits for the lock or
 * when it has timers to free: the compaction a mass CANCEL triggers runs
 * beside the SUBMIT that goes on cancelling from another CPU, and waiting
 * for a chunk of deletions and slab calls per chunk of its ops was most of
 * a batched CANCEL's time at a million timers.  The heap changes between
 * holds (arms, expiries), so the walk may miss an entry moved behind it:
 * the entry is dropped when it surfaces, or by a later pass; nr_dead
 * counts exactly what is left.
 */
static void qt_base_compact_fn(struct work_struct *work)
{
	struct qt_base *base = container_of(work, struct qt_base, compact_work);
	unsigned long flags;
	struct qt_reap reap;
	u32 pos = 0, end, looked;
	bool done;

	do {
		reap.nr = 0;
		looked = 0;
		spin_lock_irqsave(&base->lock, flags);
		end = pos + QT_COMPACT_CHUNK;
		while (pos < min(end, base->heap.nr)) {
			const struct qt_heap_entry *e = &base->heap.v[pos];
			void *timer = e->timer;

			/*
			 * The timers it frees are freed after the hold: the
			 * slab calls cost more than the deletions.
			 */
			if (reap.nr == QT_REAP_MAX - 1 ||
			    (!(++looked % QT_COMPACT_YIELD) &&
			     spin_is_contended(&base->lock)))
				break;
			if (qt_base_entry_live(e, NULL)) {
				pos++;
				continue;
			}
			/* v[pos] is now an entry not yet looked at. */
			qt_heap_delete(&base->heap, pos);
			end--;
			if (base->nr_dead)
				base->nr_dead--;
			qt_base_drop(timer, &reap);
		}
		/*
		 * A deletion never makes the top earlier, so the hrtimer is
		 * at worst early, which a run shrugs off.
		 */
		done = pos >= base->heap.nr;
		spin_unlock_irqrestore(&base->lock, flags);
		if (reap.nr)
			qt_timer_free_bulk(reap.nr, reap.timers);
		cond_resched();
	} while (!done);
	qt_storage_shrink(base);
}

/*
 * Called after a file released its timers.  Its dead entries make the
 * heaps grow stale past the quarter that qt_base_unlink() allows only if
 * it held many; compact (and shrink) where they are a sixteenth or the
 * array is mostly empty, so memory follows load without letting a loop of
 * opens and closes cost a pass each.
 */
void qt_base_trim(void)
{
	unsigned int i;

	for (i = 0; i < nr_cpu_ids * QT_NR_CLOCKS; i++) {
		struct qt_base *base = &qt_bases[i];
		u32 cap = READ_ONCE(base->heap.cap), nr = READ_ONCE(base->heap.nr);

		if (!cap)
			continue;
		if (READ_ONCE(base->nr_dead) > nr / 16 ||
		    (cap > 256 && nr < cap / 4))
			qt_base_compact_later(base);
	}
}

void qt_base_stats_sum(unsigned int cpu, struct qt_base_stats *sum,
		       u32 *nr_entries, u32 *nr_dead)
{
	unsigned int clock;

	for (clock = 0; clock < QT_NR_CLOCKS; clock++) {
		struct qt_base *base = qt_base_get(cpu, clock);
		unsigned long flags;

		spin_lock_irqsave(&base->lock, flags);
		sum->armed += base->stats.armed;
		sum->fired += base->stats.fired;
		sum->cancelled += base->stats.cancelled;
		sum->modified += base->stats.modified;
		sum->coalesced += base->stats.coalesced;
		sum->deferred_runs += base->stats.deferred_runs;
		sum->max_run_ns = max(sum->max_run_ns, base->stats.max_run_ns);
		qt_base_lateness_add(sum->lateness, base->stats.lateness);
		nr_entries[clock] = base->heap.nr;
		nr_dead[clock] = base->nr_dead;
		spin_unlock_irqrestore(&base->lock, flags);
	}
}

/* Whether @cpu's bases take new timers pinned to it (QTIMER_F_CPU). */
static void qt_cpu_set_online(unsigned int cpu, bool online)
{
	unsigned int clock;

	for (clock = 0; clock < QT_NR_CLOCKS; clock++) {
		struct qt_base *base = qt_base_get(cpu, clock);

		spin_lock_irq(&base->lock);
		base->online = online;
		spin_unlock_irq(&base->lock);
	}
}

static int qt_cpu_online(unsigned int cpu)
{
	qt_cpu_set_online(cpu, true);
	return 0;
}

/*
 * Runs on a surviving CPU after @cpu died (a BP-side teardown state).  The
 * dead CPU's heaps stay where they are and keep working: the hrtimer core
 * moves their hrtimers to a live CPU, each run re-arms its hrtimer on the
 * CPU it runs on, and reads, MODIFYs and expiries find the timers through
 * their base as before.  The base only refuses new timers pinned to it with
 * QTIMER_F_CPU until the CPU returns.  (Merging them into a live CPU's
 * heaps cost O(n) with interrupts off, and the hrtimer cancel after it could
 * undo a re-arm made meanwhile.)
 */
static int qt_cpu_dead(unsigned int cpu)
{
	qt_cpu_set_online(cpu, false);
	return 0;
}

/*
 * @expire and @expire_work are the expirer's hrtimer callback and worker
 * (expire.c), which run a base's expiries.
 */
int qt_base_init(enum hrtimer_restart (*expire)(struct hrtimer *),
		 work_func_t expire_work, s64 (*surface)(struct qt_timer *, ktime_t))
{
	unsigned int cpu, clock;
	int ret;

	qt_base_surface = surface;
	qt_bases = kvcalloc(nr_cpu_ids * QT_NR_CLOCKS, sizeof(*qt_bases),
			    GFP_KERNEL);
	if (!qt_bases)
		return -ENOMEM;
	for (cpu = 0; cpu < nr_cpu_ids; cpu++) {
		for (clock = 0; clock < QT_NR_CLOCKS; clock++) {
			struct qt_base *base = qt_base_get(cpu, clock);

			spin_lock_init(&base->lock);
			mutex_init(&base->resize);
			base->idx = cpu * QT_NR_CLOCKS + clock;
			base->clock = clock;
			hrtimer_setup(&base->hrtimer, expire,
				      qt_clock_id(clock), QT_HRTIMER_MODE);
			INIT_WORK(&base->work, expire_work);
			INIT_WORK(&base->compact_work, qt_base_compact_fn);
		}
	}

	ret = cpuhp_setup_state(CPUHP_BP_PREPARE_DYN, "qtimer:dead",
				qt_cpu_online, qt_cpu_dead);
	if (ret < 0) {
		kvfree(qt_bases);
		return ret;
	}
	qt_cpuhp_state = ret;
	return 0;
}

/* At exit every timer is dead, so no entry can still be live. */
static bool qt_base_keep_none(const struct qt_heap_entry *e, void *arg)
{
	WARN_ON_ONCE(qt_base_entry_live(e, arg));
	return false;
}

/* Every file is closed: what is left are stale entries of dead timers. */
void qt_base_exit(void)
{
	unsigned int i;

	/* At exit no base may change its state under us. */
	cpuhp_remove_state_nocalls(qt_cpuhp_state);
	for (i = 0; i < nr_cpu_ids * QT_NR_CLOCKS; i++) {
		struct qt_base *base = &qt_bases[i];

		/* No file is left to queue it again. */
		cancel_work_sync(&base->compact_work);
		/*
		 * Emptied first: a run that is under way, from the hrtimer
		 * or the worker, then has nothing left to program the
		 * hrtimer for, and the hrtimer can at most queue the worker.
		 */
		spin_lock_irq(&base->lock);
		qt_base_filter(base, qt_base_keep_none);
		spin_unlock_irq(&base->lock);
		hrtimer_cancel(&base->hrtimer);
		cancel_work_sync(&base->work);
		qt_storage_free(base);
	}
	kvfree(qt_bases);
}
