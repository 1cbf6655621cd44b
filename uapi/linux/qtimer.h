/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * qtimer: high-volume timers for user space through /dev/qtimer.
 *
 * Each open file of /dev/qtimer is an independent timer context.  Timers are
 * armed, cancelled and modified with ioctls, one at a time or in batches,
 * and every expiration comes back as a fixed-size struct qtimer_record read
 * from the file.  poll()/epoll report EPOLLIN exactly when records are
 * pending.  All of a context's timers die with the last close of its file.
 *
 * Times are nanoseconds.  Clocks are the POSIX clock ids CLOCK_REALTIME (0),
 * CLOCK_MONOTONIC (1) and CLOCK_BOOTTIME (7).
 *
 * Commands
 * --------
 * QTIMER_IOC_VERSION (struct qtimer_version, read)
 *	Handshake: the API version, the record and op sizes, the supported
 *	clocks and features, and the limits below.  Always succeeds.
 *
 * QTIMER_IOC_ARM (struct qtimer_op, read/write)
 *	Arms a new timer.  In: clockid; expires_ns (relative to now, or
 *	absolute on the clock with QTIMER_F_ABSTIME; a relative
 *	CLOCK_REALTIME timer is an interval, unmoved by clock sets, as for
 *	timerfd and POSIX timers: it runs on CLOCK_MONOTONIC, keeps a
 *	realtime id, and its records give expires_ns in wall time as of the
 *	read); period_ns (0: one-shot,
 *	otherwise periodic); slack_ns (the timer may fire up to slack_ns late,
 *	so that neighbours share one interrupt; at most max_slack_ns); cookie
 *	(returned in every record); cpu (with QTIMER_F_CPU: the CPU whose heap
 *	holds the timer; default: the CPU that arms it.  It must be online,
 *	not isolated from timers by nohz_full= or isolcpus=, and one the
 *	calling thread may run on now, as sched_getaffinity() reports
 *	(which keeps it inside the caller's cpuset), unless the caller has
 *	CAP_SYS_NICE).  Out: id.
 *	opcode must be 0 or QTIMER_OP_ARM.  Returns 0.  If id cannot be
 *	written, -EFAULT and nothing is armed.
 *
 * QTIMER_IOC_CANCEL (struct qtimer_op, read/write)
 *	Cancels timer id.  After it returns, no record of that timer is ever
 *	read, including one that was queued but not yet read, and the id is
 *	invalid.  Returns a mask saying what it prevented: QTIMER_CANCEL_ARMED
 *	(the timer was waiting to fire) or QTIMER_CANCEL_QUEUED (a queued,
 *	unread record was discarded; a periodic timer with an unread record is
 *	not armed meanwhile, see Reading), or 0 when a concurrent read() had
 *	already taken a periodic timer's record (the read wins).  Once a read()
 *	has taken a one-shot timer's record, the timer is gone: -ENOENT, and
 *	that record is delivered by that read or never (should its copy to
 *	user space fault, it is dropped, not queued again): no record of a
 *	timer is read after a call was told that the timer does not exist.
 *	Only opcode (0 or QTIMER_OP_CANCEL), id and result (an output,
 *	ignored on input) may be non-zero.
 *
 * QTIMER_IOC_MODIFY (struct qtimer_op, read/write)
 *	Re-arms timer id with a new expires_ns, period_ns and slack_ns, as ARM
 *	reads them (QTIMER_F_ABSTIME and QTIMER_F_CANCEL_ON_SET allowed); the
 *	timer keeps its id, clock, CPU and cookie.  Like CANCEL, no record of
 *	the old schedule is read after it returns.  A one-shot timer whose
 *	record was already read no longer exists (-ENOENT).  clockid, cpu and
 *	cookie must be zero.  Returns the same mask as CANCEL.
 *
 * QTIMER_IOC_GET (struct qtimer_op, read/write)
 *	Reads timer id's schedule, as timerfd_gettime() does, changing
 *	nothing.  In: id; every other field zero.  Out, the whole op:
 *	clockid, the clock it was armed on; flags, QTIMER_F_ABSTIME (always:
 *	expires_ns is absolute) and QTIMER_F_CANCEL_ON_SET if it has it;
 *	expires_ns, its next expiry on that clock as the caller sees it (in
 *	its time namespace; for a relative CLOCK_REALTIME timer, wall time as
 *	of the call); period_ns, slack_ns and cookie as armed or modified;
 *	cpu, the CPU whose heap holds it; result, the return value.  Returns
 *	a mask of its state: QTIMER_CANCEL_ARMED, waiting to fire at
 *	expires_ns (a MODIFY that pushed it later counts already);
 *	QTIMER_CANCEL_QUEUED, fired, its record pending, in the ready queue
 *	or READY in the ring; 0, a read() is taking a periodic timer's
 *	record, or the consumer claimed it in the ring and the kernel has not
 *	reaped it yet (a claimed one-shot is consumed: -ENOENT, as for
 *	CANCEL).  A periodic timer with a pending record is not armed (see
 *	Reading): its expires_ns is then the expiry that would follow a read()
 *	at the moment of the call; a one-shot's, the expiry it fired at.
 *	-ENOENT when CANCEL would say so: no timer has that id (any more).
 *	Without QTIMER_FEAT_GET, -ENOTTY.  Not an op of SUBMIT.
 *
 * QTIMER_IOC_SUBMIT (struct qtimer_submit, read/write)
 *	Runs nr operations (1..QTIMER_SUBMIT_MAX) from the user array ops,
 *	in order.  Each op's opcode says what it is; each gets its own result
 *	written back (result: the return value the single ioctl would give, or
 *	-errno; id for ARM), and a failing op does not undo earlier ones.
 *	Processing continues after a failed op unless QTIMER_SUBMIT_STOP_ON_ERROR
 *	is set, in which case it stops after it.  Returns the number of ops
 *	processed (also stored in done).  If the array cannot be read or a
 *	result cannot be written back, processing stops there: that op has no
 *	effect, and the call returns the number processed before it, or
 *	-EFAULT if that is zero.  (Results are made writable before the ops
 *	run, a few ops at a time, so only another thread unmapping the array
 *	during the call can leave an op run and unreported; an ARM whose id
 *	cannot be written back is then cancelled.)  Errors in struct
 *	qtimer_submit itself, done not being writable included, fail the
 *	whole call with nothing processed.
 *
 * Reading
 * -------
 * read() returns whole struct qtimer_record entries, as many as fit in the
 * buffer and are pending (a signal that arrives meanwhile ends it early with
 * those it has).  It blocks until at least one is pending, unless
 * the file is O_NONBLOCK (then -EAGAIN).  readv() fills its iovecs in turn
 * (a record may straddle two); io_uring's IORING_OP_READ waits for EPOLLIN
 * without a worker thread, whether or not the file is O_NONBLOCK.  A buffer smaller than one record
 * is -EINVAL.  If the buffer cannot be written, the records stay pending and
 * read returns the number of bytes delivered before the fault, or -EFAULT
 * (except a one-shot's record that a CANCEL or MODIFY was meanwhile told is
 * gone: see QTIMER_IOC_CANCEL).
 * Likewise if a periodic timer cannot be re-armed for want of memory: its
 * record and those after it stay pending, and read returns the bytes before
 * it, or -ENOMEM.
 *
 * A one-shot timer produces one record and then no longer exists (its
 * record has QTIMER_REC_LAST).  A periodic timer has at most one pending
 * record: expirations that occur before it is read add to its count, which
 * saturates at count_max.  Meanwhile it is not armed at all: read() counts
 * the periods that passed and re-arms it, as timerfd does, so an unread
 * ticker costs nothing however short its period.  Its period is kept without drift: the expiry
 * after a late delivery is when + period * (1 + late / period).
 *
 * Expirations are never delivered before their expiry time.  A timer with
 * QTIMER_F_CANCEL_ON_SET (only CLOCK_REALTIME with QTIMER_F_ABSTIME) is
 * cancelled when the realtime clock is set: it delivers one record with
 * QTIMER_REC_CANCELED | QTIMER_REC_LAST and count 0 (or the expirations it
 * had pending), like timerfd's TFD_TIMER_CANCEL_ON_SET.  As for timerfd, a
 * set is a change that moves CLOCK_REALTIME against CLOCK_MONOTONIC: a new
 * TAI offset or clocksource is none.  That holds from the
 * moment clock_settime() returns, for a fired timer whose record was not
 * read yet too (its record becomes the cancellation).  A periodic one whose
 * record a read() is copying out when the clock is set delivers that record
 * and then the cancellation record; if that copy fails, the record stays
 * pending as the cancellation (a one-shot's too), with or without a ring.
 *
 * In a time namespace, absolute CLOCK_MONOTONIC and CLOCK_BOOTTIME expiries
 * and the expires_ns of records are in the namespace's view of the clock.
 * An absolute expiry before the host clock's epoch (possible in a namespace
 * ahead of the host) has passed: it fires at once, and its record's
 * expires_ns is that epoch in the namespace's view, not the value armed.
 *
 * The record ring
 * ---------------
 * QTIMER_IOC_RING_SETUP (struct qtimer_ring_setup, read/write)
 *	Gives the file a ring of records that user space maps with mmap()
 *	and consumes without system calls.  In: entries, a power of two from
 *	QTIMER_RING_MIN to QTIMER_RING_MAX; flags and reserved zero.  Out: the
 *	offsets of head, tail, flags and the records in the mapping, and its
 *	size; mmap() it MAP_SHARED, read and write, at offset 0.  Once per
 *	file (-EBUSY after); without QTIMER_FEAT_RING, -ENOTTY.  If the
 *	struct cannot be written, -EFAULT and no ring is set up; unless
 *	another thread made it unwritable during the call (munmap,
 *	mprotect): then the ring is set up and the call still says -EFAULT.
 *	Its layout is that of any ring of its entries (the offsets depend
 *	on nothing else), so such a caller may set up another file's ring
 *	of as many entries to learn it, or close the file.  The ring's
 *	memory is charged to the caller's memory cgroup.  A read() blocked
 *	on the file when the ring is set up goes on with the ring's records.
 *
 * From then on the kernel writes each expiry's record into the ring when the
 * timer fires, at index head (modulo entries), and then advances head with
 * release semantics.  Records [tail, head) are pending.  Each carries its
 * claim in the top bits of flags: QTIMER_REC_READY when written.  The
 * consumer owns a record only after it changed the claim from READY to
 * QTIMER_REC_TAKEN with an atomic compare-and-swap; a CANCEL or MODIFY of
 * its timer changes it from READY to QTIMER_REC_VOID the same way, and
 * exactly one of them succeeds.  A record found VOID (or anything but
 * READY) is skipped.  The consumer then stores the new tail with release
 * semantics, once it is done with the records before it: the kernel reuses
 * their slots, and re-arms a periodic timer once tail passed its record.
 *
 *	head = __atomic_load_n(head_p, __ATOMIC_ACQUIRE);
 *	while (tail != head) {
 *		struct qtimer_record *r = &recs[tail++ & (entries - 1)];
 *		__u32 f = __atomic_load_n(&r->flags, __ATOMIC_RELAXED);
 *		if ((f & QTIMER_REC_CLAIM) == QTIMER_REC_READY &&
 *		    __atomic_compare_exchange_n(&r->flags, &f,
 *				(f & ~QTIMER_REC_CLAIM) | QTIMER_REC_TAKEN, 0,
 *				__ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
 *			use(r);
 *	}
 *	__atomic_store_n(tail_p, tail, __ATOMIC_RELEASE);
 *
 * A ring has one consumer at a time: user space serialises its threads and
 * its read() calls on the file.  read() on a file with a ring takes records
 * from the ring the same way, and returns them with the claim bits clear.
 *
 * So CANCEL and MODIFY keep their rule for a mapped consumer: after they
 * return, no record of the old schedule can be claimed.  That holds
 * whatever user space writes into the mapping: a record they say they
 * voided is QTIMER_REC_VOID when they return, and read() only takes a
 * record whose timer the kernel still stands behind, so it never returns
 * one that was voided or that tail already passed.  What user space
 * writes there otherwise (READY written back into a record, a tail moved
 * by hand) affects only what its own claims see.  Their result says
 * who won: QTIMER_CANCEL_QUEUED if they voided a pending record; for a
 * record the consumer had claimed, -ENOENT for a one-shot, which its claim
 * consumed, as a read() does, and for a periodic timer
 * QTIMER_CANCEL_ARMED once tail has passed the record (the timer is as
 * good as re-armed, as after a read()), 0 before.
 *
 * Nothing is dropped when the ring is full: later records wait in the
 * kernel, in order, and QTIMER_RING_OVERFLOW is set in the ring's flags
 * while any do.  They move into the ring as tail frees room, on the next
 * expiry, poll() or read(), and with none of those the kernel looks at
 * tail by itself: within a few milliseconds while it moves, and at least
 * every 64 ms while it does not.  Likewise a periodic timer whose record
 * tail passed is re-armed (or fires at once, its missed periods counted)
 * on the next expiry, poll() or read(), or at the latest when the kernel
 * looks, which it does about a period after the record was written.  Each
 * record that so becomes claimable wakes the file's waiters, so
 * edge-triggered consumers (epoll's EPOLLET, io_uring's multishot
 * POLL_ADD) that only claim from the mapping and advance tail never
 * stall.  A periodic timer still has at most one pending record, the
 * ring's or the kernel's; its expirations meanwhile are counted into its
 * next record.
 * A clock set reaches the ring's records of cancel-on-set timers once
 * poll() or read() on the file returns after clock_settime() did (they
 * wait for it): a record claimed from the mapping before then may still be
 * the plain expiry (a periodic timer's cancellation record then follows,
 * as for a read() under way).  A program that
 * must not use an expiry the clock set overtook calls poll() after setting
 * the clock and before claiming.
 * expires_ns is in the time namespace of the thread that set the ring up.
 * poll() reports EPOLLIN while a READY record is in [tail, head) or records
 * wait in the kernel.  Neither poll() nor an O_NONBLOCK read() (nor
 * io_uring's non-blocking attempt) sleeps: a periodic timer whose record
 * tail passed and whose heap must grow to take it back is re-armed by the
 * kernel's own work, soon after, and fires as usual (never early).  A
 * blocking read() grows the heap itself; if that fails for want of memory
 * it returns the READY records there are, or -ENOMEM, and the kernel keeps
 * trying.
 *
 * The timer table
 * ---------------
 * QTIMER_IOC_TABLE_SETUP (struct qtimer_table_setup, read/write)
 *	Gives the file a table of timer slots that user space maps with
 *	mmap() and writes with atomic operations, to push a timer's expiry
 *	later or stop it with no system call.  In: flags and reserved zero.
 *	Out: nr_shards, the shards the file's ids name (bits 24-31 of an
 *	id); shard_size, the bytes of the mapping per shard; mmap_off, the
 *	offset to mmap() at (MAP_SHARED, read and write), up to nr_shards *
 *	shard_size bytes, or any page-aligned part of that.  Once per file
 *	(-EBUSY after); without QTIMER_FEAT_TABLE, -ENOTTY.  Its memory is
 *	charged to the memory cgroup of the task whose ARM grows it.
 *
 * Timer id's slot is struct qtimer_slot number QTIMER_ID_SLOT(id) of
 * shard QTIMER_ID_SHARD(id): at mmap_off + shard * shard_size + slot *
 * sizeof(struct qtimer_slot) in the file.  A slot's page exists once the
 * file has armed a timer whose id names a slot in it; touching one that
 * does not is SIGBUS.  ctl holds a state (QTIMER_SLOT_STATE), the
 * generation of the id it speaks of (QTIMER_SLOT_GEN, compare
 * QTIMER_ID_GEN(id)), the bit QTIMER_SLOT_PLAIN and a sequence number
 * (QTIMER_SLOT_SEQ); deadline is the timer's expiry as an absolute
 * expires_ns on its clock (QTIMER_ID_CLOCK(id)), in the time namespace of
 * the thread that set the table up.  The kernel sets QTIMER_SLOT_PLAIN
 * with ARMED for a one-shot timer with no slack and no
 * QTIMER_F_CANCEL_ON_SET: pushing it leaves it as a MODIFY to the same
 * absolute expiry with period and slack 0 would.  It informs user space
 * only; the kernel never reads it.  States:
 *
 *	QTIMER_SLOT_KERNEL	not waiting in a heap (fired, cancelled, armed
 *				before the table existed, or a relative
 *				CLOCK_REALTIME interval): use the ioctls.
 *	QTIMER_SLOT_ARMED	waiting to fire at deadline.
 *	QTIMER_SLOT_LATER	waiting; user space pushed deadline later.
 *	QTIMER_SLOT_STOPPED	stopped by user space.
 *
 * Push later: load ctl (acquire); it must have the id's generation and be
 * ARMED or LATER, and the new expiry above deadline.  Compare-and-swap
 * deadline from its value to the new one, then compare-and-swap ctl from
 * the value loaded to QTIMER_SLOT_NEXT(ctl, QTIMER_SLOT_LATER) (release).
 * Success: the timer fires no earlier than the new expiry.  Stop:
 * compare-and-swap ctl from ARMED or LATER (the id's generation) to
 * QTIMER_SLOT_NEXT(ctl, QTIMER_SLOT_STOPPED).  Success: no record of the timer
 * is ever delivered, and the id names nothing for every later call
 * (CANCEL, MODIFY and GET say -ENOENT); its place under the caps comes back
 * when its entry surfaces, at the latest when its deadline passes, or at
 * once on a CANCEL of it.  When ctl's swap fails, load it again: KERNEL (or
 * another generation) means the kernel took the timer first, exactly as a
 * CANCEL returning -ENOENT or 0 says: its record is or will be delivered,
 * or the id is gone; a MODIFY of the timer under way shows KERNEL until it
 * returns, then ARMED.  The kernel reads each word once and accepts only
 * later expiries: whatever is written into a slot, a timer never fires
 * early or twice, and no other timer is touched; garbage written over the
 * protocol may make the writer's own timer late, or stopped.
 *
 * Errors
 * ------
 * EINVAL	unknown command flags, opcode or clock; non-zero reserved or
 *		padding fields; a negative expiry (relative, or absolute
 *		before the clock's epoch); slack above the
 *		limit; CANCEL_ON_SET without CLOCK_REALTIME + ABSTIME; a cpu
 *		that is not online, isolated from timers, or (without
 *		CAP_SYS_NICE) outside the caller's affinity; a SUBMIT nr of
 *		0 or above QTIMER_SUBMIT_MAX; a read buffer smaller than one
 *		record.
 * EOVERFLOW	the expiry or period does not fit the clock's range.
 * ENOENT	the id does not name a live timer of this file (stale, forged,
 *		or another file's: ids start from a random generation per
 *		file, so another file's id names one of this file's timers
 *		only by a chance of one in 2^30).
 * ENOSPC	the file holds its maximum number of timers (module parameter
 *		max_timers_per_fd, or the netlink config).
 * EDQUOT	the user holds its maximum number of timers across all files
 *		(max_timers_per_user).  As with the kernel's ucounts, a uid
 *		is counted per user namespace, and every timer of a user
 *		namespace counts against its owner's allowance in the parent
 *		namespace too, up to the initial one.  Both counts are
 *		taken for a SUBMIT's chunk of arms before they are made and
 *		given back for those that fail: at a cap, a call racing such
 *		a chunk may see EDQUOT (or, on the same file, ENOSPC) for
 *		places it gives back a moment later.  No cap is ever
 *		exceeded.
 * ENOMEM	out of memory; nothing was changed.
 * EFAULT	a user pointer could not be read or written.
 * EAGAIN	read() on an O_NONBLOCK file with nothing pending; on a file
 *		with a ring, also while another read() of the file is under
 *		way (it holds the ring's reader lock, and what is pending is
 *		its to take; it may be held up in copying out, by a fault).
 *		An O_NONBLOCK read() never waits for another.
 * EBUSY	RING_SETUP on a file that has a ring; TABLE_SETUP on a file that
 *		has a table.
 * ENODEV	mmap() of a file without a ring (at offset 0) or without a
 *		table (at mmap_off).
 * EINVAL	mmap() of the ring at an offset other than 0, longer than
 *		mmap_size, or without MAP_SHARED.
 * EACCES	mmap() for writing of a file not opened for writing (the
 *		consumer must write tail and the claims).
 * ENOTTY	unknown ioctl command.
 */
#ifndef _UAPI_LINUX_QTIMER_H
#define _UAPI_LINUX_QTIMER_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define QTIMER_API_VERSION	1

/* Limits, also reported by QTIMER_IOC_VERSION. */
#define QTIMER_SUBMIT_MAX	4096
#define QTIMER_COUNT_MAX	0xffffffffU
#define QTIMER_SLACK_MAX_NS	4000000000ULL	/* 4 s */

/* struct qtimer_version.features */
#define QTIMER_FEAT_SUBMIT		(1ULL << 0)
#define QTIMER_FEAT_PERIODIC		(1ULL << 1)
#define QTIMER_FEAT_SLACK		(1ULL << 2)
#define QTIMER_FEAT_CPU			(1ULL << 3)
#define QTIMER_FEAT_CANCEL_ON_SET	(1ULL << 4)
#define QTIMER_FEAT_TIME_NS		(1ULL << 5)
#define QTIMER_FEAT_RING		(1ULL << 6)
/*
 * The ring keeps itself going: the kernel moves records that wait into
 * the ring and re-arms tickers whose records tail passed without a poll()
 * or read() (see The record ring), so edge-triggered consumers need none.
 */
#define QTIMER_FEAT_RING_DRAIN		(1ULL << 7)
#define QTIMER_FEAT_GET			(1ULL << 8)	/* QTIMER_IOC_GET */
#define QTIMER_FEAT_TABLE		(1ULL << 9)	/* QTIMER_IOC_TABLE_SETUP */

struct qtimer_version {
	__u32 api_version;	/* QTIMER_API_VERSION */
	__u32 record_size;	/* sizeof(struct qtimer_record) */
	__u64 features;		/* QTIMER_FEAT_* */
	__u32 op_size;		/* sizeof(struct qtimer_op) */
	__u32 submit_max;	/* QTIMER_SUBMIT_MAX */
	__u32 clocks;		/* (1 << clockid) for each supported clock */
	__u32 count_max;	/* QTIMER_COUNT_MAX */
	__u64 max_slack_ns;	/* QTIMER_SLACK_MAX_NS */
	__u64 max_timers_per_fd;	/* current caps */
	__u64 max_timers_per_user;
	__u64 reserved[3];	/* zero */
};

/* struct qtimer_op.opcode */
#define QTIMER_OP_ARM		1
#define QTIMER_OP_CANCEL	2
#define QTIMER_OP_MODIFY	3

/* struct qtimer_op.flags */
#define QTIMER_F_ABSTIME	(1U << 0)	/* expires_ns is absolute */
#define QTIMER_F_CANCEL_ON_SET	(1U << 1)	/* see the top of this file */
#define QTIMER_F_CPU		(1U << 2)	/* ARM only: use cpu */
#define QTIMER_F_ALL		(QTIMER_F_ABSTIME | QTIMER_F_CANCEL_ON_SET | \
				 QTIMER_F_CPU)

/* Non-negative results of CANCEL and MODIFY: what the call prevented. */
#define QTIMER_CANCEL_ARMED	(1 << 0)
#define QTIMER_CANCEL_QUEUED	(1 << 1)

struct qtimer_op {
	__u16 opcode;		/* QTIMER_OP_*; 0 in the single ioctls */
	__u16 clockid;		/* ARM: CLOCK_*; otherwise 0 */
	__u32 flags;		/* QTIMER_F_* */
	__u64 id;		/* CANCEL/MODIFY: in; ARM: out */
	__s64 expires_ns;	/* ARM/MODIFY */
	__u64 period_ns;	/* ARM/MODIFY: 0 for one-shot */
	__u64 slack_ns;		/* ARM/MODIFY */
	__u64 cookie;		/* ARM */
	__u32 cpu;		/* ARM with QTIMER_F_CPU */
	__s32 result;		/* SUBMIT: out, >= 0 or -errno */
	__u64 reserved;		/* zero */
};

/* struct qtimer_submit.flags */
#define QTIMER_SUBMIT_STOP_ON_ERROR	(1U << 0)
#define QTIMER_SUBMIT_ALL		QTIMER_SUBMIT_STOP_ON_ERROR

struct qtimer_submit {
	__u64 ops;		/* user pointer to struct qtimer_op[nr] */
	__u32 nr;		/* 1..QTIMER_SUBMIT_MAX */
	__u32 flags;		/* QTIMER_SUBMIT_* */
	__u32 done;		/* out: ops processed */
	__u32 pad;		/* zero */
	__u64 reserved;		/* zero */
};

/* struct qtimer_record.flags */
#define QTIMER_REC_LAST		(1U << 0)	/* the timer no longer exists */
#define QTIMER_REC_CANCELED	(1U << 1)	/* cancelled: clock was set */
/* The claim of a record in the ring (see The record ring); 0 from read(). */
#define QTIMER_REC_CLAIM	(3U << 30)
#define QTIMER_REC_READY	(1U << 30)
#define QTIMER_REC_TAKEN	(2U << 30)
#define QTIMER_REC_VOID		(3U << 30)

struct qtimer_record {
	__u64 id;
	__u64 cookie;
	__s64 expires_ns;	/* scheduled expiry of the latest expiration counted */
	__u32 count;		/* expirations this record stands for */
	__u32 flags;		/* QTIMER_REC_* */
};

/* Ring sizes, in records. */
#define QTIMER_RING_MIN		8
#define QTIMER_RING_MAX		65536

/* Bits of the ring's flags word, written by the kernel. */
#define QTIMER_RING_OVERFLOW	(1U << 0)	/* records wait in the kernel */

struct qtimer_ring_setup {
	__u32 entries;		/* in: power of two, RING_MIN..RING_MAX */
	__u32 flags;		/* in: zero */
	__u32 head_off;		/* out: offsets in the mapping of the __u32s */
	__u32 tail_off;
	__u32 flags_off;
	__u32 recs_off;		/* out: of struct qtimer_record[entries] */
	__u64 mmap_size;	/* out: bytes to map at offset 0 */
	__u64 reserved[2];	/* zero */
};

struct qtimer_table_setup {
	__u32 flags;		/* in: zero */
	__u32 nr_shards;	/* out */
	__u64 mmap_off;		/* out: the mmap() offset of shard 0 */
	__u64 shard_size;	/* out: bytes of the mapping per shard */
	__u64 reserved[2];	/* zero */
};

/* A timer id's shard, slot and generation, for finding its table slot. */
#define QTIMER_ID_SHARD(id)	((__u32)((id) >> 24) & 0xff)
#define QTIMER_ID_SLOT(id)	((__u32)((id) & 0xffffff) - 1)
#define QTIMER_ID_GEN(id)	((__u32)((id) >> 34))
/* Its clock: 0 CLOCK_REALTIME, 1 CLOCK_MONOTONIC, 2 CLOCK_BOOTTIME. */
#define QTIMER_ID_CLOCK(id)	((__u32)((id) >> 32) & 3)

/* struct qtimer_slot.ctl */
#define QTIMER_SLOT_KERNEL	0
#define QTIMER_SLOT_ARMED	1
#define QTIMER_SLOT_LATER	2
#define QTIMER_SLOT_STOPPED	3
#define QTIMER_SLOT_STATE(ctl)	((__u32)(ctl) & 3)
#define QTIMER_SLOT_GEN(ctl)	((__u32)((ctl) >> 2) & 0x3fffffff)
#define QTIMER_SLOT_PLAIN	((__u64)1 << 32)
#define QTIMER_SLOT_SEQ(ctl)	((__u32)((ctl) >> 33))
#define QTIMER_SLOT_CTL(state, gen, seq) \
	((__u64)(seq) << 33 | ((__u64)(gen) & 0x3fffffff) << 2 | (state))
/* ctl's next value in @state: generation and PLAIN kept, sequence + 1. */
#define QTIMER_SLOT_NEXT(ctl, state) \
	((((__u64)(ctl) & ~(__u64)3) + ((__u64)1 << 33)) | (state))

struct qtimer_slot {
	__u64 ctl;		/* state, generation, sequence */
	__s64 deadline;		/* absolute expires_ns on the timer's clock */
};

#define QTIMER_IOC_MAGIC	0xE7
#define QTIMER_IOC_VERSION	_IOR(QTIMER_IOC_MAGIC, 0x00, struct qtimer_version)
#define QTIMER_IOC_ARM		_IOWR(QTIMER_IOC_MAGIC, 0x01, struct qtimer_op)
#define QTIMER_IOC_CANCEL	_IOWR(QTIMER_IOC_MAGIC, 0x02, struct qtimer_op)
#define QTIMER_IOC_MODIFY	_IOWR(QTIMER_IOC_MAGIC, 0x03, struct qtimer_op)
#define QTIMER_IOC_SUBMIT	_IOWR(QTIMER_IOC_MAGIC, 0x04, struct qtimer_submit)
#define QTIMER_IOC_RING_SETUP	_IOWR(QTIMER_IOC_MAGIC, 0x05, struct qtimer_ring_setup)
#define QTIMER_IOC_GET		_IOWR(QTIMER_IOC_MAGIC, 0x06, struct qtimer_op)
#define QTIMER_IOC_TABLE_SETUP	_IOWR(QTIMER_IOC_MAGIC, 0x07, struct qtimer_table_setup)

#endif /* _UAPI_LINUX_QTIMER_H */
