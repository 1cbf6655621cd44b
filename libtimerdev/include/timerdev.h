/* SPDX-License-Identifier: LGPL-2.1 OR MIT */
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * libtimerdev: a thin C library over /dev/qtimer (see <linux/qtimer.h>).
 *
 * A struct td_ctx owns one open file of /dev/qtimer, that is one independent
 * timer context.  Timers are armed, cancelled and modified one at a time
 * (td_arm, td_cancel, td_modify) or queued in a struct td_batch that is
 * submitted with one QTIMER_IOC_SUBMIT when it fills up or on td_batch_flush.
 * Expirations are struct qtimer_record entries, read with td_read, td_wait
 * or td_dispatch; td_fd gives the file descriptor for poll/epoll.
 *
 * Every function that can fail returns a negative errno value and leaves
 * errno alone as far as the caller can tell (liburing's convention).
 *
 * When the module offers the record ring (QTIMER_FEAT_RING), td_open maps
 * one of 4096 records (td_open2 chooses its size or turns it off), and td_read, td_wait and td_dispatch take records
 * from it with no system call while it holds any, going to read(2) or
 * poll(2) only when it is empty.  Nothing else changes: records, blocking
 * and errors are as without it, and td_fd stays readable exactly while
 * records are pending.
 *
 * Thread safety: any number of threads may call the functions that take a
 * td_ctx at the same time, except td_close, which must be the last call on
 * it.  The kernel serialises arming, cancelling and modifying; the ring has
 * one consumer at a time, so td_read, td_wait and td_dispatch serialise on
 * a lock of the context while they take records (never while a
 * td_dispatch callback runs), which a td_ring_peek that returned records
 * holds until its td_ring_advance.  A program that also read(2)s td_fd's
 * descriptor itself (io_uring's IORING_OP_READ included) is a second
 * consumer: it must not do so while another thread reads through the
 * library, and after fork only one process may read a shared context.  A
 * struct td_batch must be used by one thread at a time.  The helpers
 * td_now, td_ns_from_timespec and td_timespec_from_ns are MT-Safe.
 */
#ifndef _TIMERDEV_H
#define _TIMERDEV_H

#include <stdint.h>
#include <sys/types.h>	/* clockid_t */
#include <time.h>		/* struct timespec, CLOCK_*: C11 or POSIX */
/* <linux/qtimer.h> uses _IOR/_IOWR but includes only <linux/types.h>. */
#include <linux/ioctl.h>
#include <linux/qtimer.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The library's own version, apart from the device's (td_version).  These
 * lines are the one place it is said: the Makefile makes the soname
 * (libtimerdev.so.MAJOR), the file name and the pkg-config version from
 * them.  A new minor version only adds; a new major version is a new
 * soname.  TD_VERSION_HEX and td_lib_version() encode a version as
 * TD_VERSION_NUM(major, minor, patch), each part below 256.
 *
 * TD_CHECK_VERSION(major, minor), usable in #if, is true when this header
 * is of version major.minor or later: "may I use what major.minor added?".
 * That is GLIB_CHECK_VERSION's sense and the one liburing documents for
 * IO_URING_CHECK_VERSION, whose code does the opposite (true when the
 * library is major.minor or older; liburing issue 1074).
 * td_lib_version() says which library the program runs with, which may be
 * a later minor version than the header it was built with.
 */
#define TD_VERSION_MAJOR	2
#define TD_VERSION_MINOR	1
#define TD_VERSION_PATCH	0
#define TD_VERSION_NUM(major, minor, patch) \
	(((major) << 16) | ((minor) << 8) | (patch))
#define TD_VERSION_HEX \
	TD_VERSION_NUM(TD_VERSION_MAJOR, TD_VERSION_MINOR, TD_VERSION_PATCH)
#define TD_CHECK_VERSION(major, minor) \
	(TD_VERSION_HEX >= TD_VERSION_NUM(major, minor, 0))

unsigned int td_lib_version(void);

#define TD_DEVICE_PATH		"/dev/qtimer"

/*
 * td_open() flags.  The file is close-on-exec unless TD_NOCLOEXEC says
 * otherwise, as a library's descriptors should be (a program that execs
 * would otherwise hand its timers to whatever it runs).  TD_CLOEXEC, the
 * default, is accepted for code written for libtimerdev 1.
 */
#define TD_NONBLOCK		(1 << 0)	/* O_NONBLOCK: reads never block */
#define TD_CLOEXEC		(1 << 1)	/* O_CLOEXEC: the default */
#define TD_NOCLOEXEC		(1 << 2)	/* not O_CLOEXEC */
/*
 * libtimerdev 2.1: no timer table.  When the module offers one
 * (QTIMER_FEAT_TABLE), td_open() maps it in a 64-bit process, and
 * td_cancel() and td_modify() act through it with no system call where
 * they can, with the same results (see td_stop()); it costs 16 bytes of
 * kernel memory per timer and address space, not memory, per context.
 */
#define TD_NOTABLE		(1 << 3)

/* struct td_timer_spec.flags and td_modify() flags. */
#define TD_TIMER_ABSTIME	QTIMER_F_ABSTIME	/* expires_ns is absolute */
#define TD_TIMER_CANCEL_ON_SET	QTIMER_F_CANCEL_ON_SET	/* see <linux/qtimer.h> */
/* struct td_timer_spec.flags only: cpu says where the timer lives. */
#define TD_TIMER_CPU		QTIMER_F_CPU

/*
 * struct td_timer_spec.cpu without TD_TIMER_CPU, as libtimerdev 1 wanted
 * it for "no CPU": the same as leaving cpu 0.
 */
#define TD_CPU_ANY		(-1)

struct td_ctx;

/*
 * What a timer is to be: the fields of QTIMER_IOC_ARM.  Zero is every
 * field's default, so a designated initialiser names only what differs:
 * no flags (a relative expiry), one-shot, no slack, and no pinning (the
 * timer lives on the CPU that arms it).  clockid has no neutral zero:
 * name it (0 is CLOCK_REALTIME).
 *
 * Pinning is opt-in: cpu names the CPU whose heap holds the timer only
 * with TD_TIMER_CPU in flags, as the kernel's QTIMER_F_CPU and io_uring's
 * IORING_SETUP_SQ_AFF (with sq_thread_cpu) say it.  A flag rather than
 * storing cpu + 1 so that a spec reads as it means (cpu = 3 is CPU 3) and
 * CPU 0 needs no arithmetic.  Without the flag, cpu must be 0 or
 * TD_CPU_ANY: any other value is -EINVAL, so that code written for
 * libtimerdev 1, where cpu alone pinned, fails rather than silently runs
 * unpinned (except cpu = 0, which libtimerdev 1 took as CPU 0).
 *
 * reserved is room for later fields: it must be zero (-EINVAL otherwise),
 * which a zeroed or designated-initialised spec is, so that a later
 * library can tell a spec that uses a new field from one that does not.
 * The struct is 64 bytes on every target.
 */
struct td_timer_spec {
	clockid_t clockid;	/* CLOCK_MONOTONIC, CLOCK_REALTIME, CLOCK_BOOTTIME */
	unsigned int flags;	/* TD_TIMER_* */
	int64_t expires_ns;	/* relative, or absolute with TD_TIMER_ABSTIME */
	uint64_t period_ns;	/* 0: one-shot */
	uint64_t slack_ns;	/* may fire up to this late */
	uint64_t cookie;	/* returned in every record */
	int cpu;		/* with TD_TIMER_CPU: CPU whose heap holds the timer */
	uint32_t reserved[5];	/* must be zero */
};

int td_open(struct td_ctx **ctxp, int flags);
int td_open_path(struct td_ctx **ctxp, const char *path, int flags);

/*
 * td_open2() (libtimerdev 2.1): td_open_path() with the record ring's size
 * chosen, or the ring turned off.  A zeroed struct opens TD_DEVICE_PATH as
 * td_open(ctxp, 0) does, with the default ring.  ring_entries is 0 (the
 * default, TD_RING_DEFAULT_ENTRIES), TD_RING_OFF (no ring: every read is a
 * read(2), as a program that read(2)s the descriptor itself may want, and
 * no memory is mapped), or a power of two from QTIMER_RING_MIN to
 * QTIMER_RING_MAX; anything else is -EINVAL.  As with td_open(), the ring
 * is set up only where the device, the file's mode and memory allow:
 * td_ring_entries() says how many entries the context's ring has, 0 for
 * none.  reserved is room for later fields and must be zero (-EINVAL).
 */
#define TD_RING_DEFAULT_ENTRIES	4096U
#define TD_RING_OFF		UINT32_MAX

struct td_open_params {
	const char *path;	/* NULL: TD_DEVICE_PATH */
	unsigned int flags;	/* td_open() flags: TD_NONBLOCK, TD_NOCLOEXEC */
	uint32_t ring_entries;	/* 0: default; TD_RING_OFF; or a power of two */
	uint32_t reserved[8];	/* must be zero */
};

int td_open2(struct td_ctx **ctxp, const struct td_open_params *params);
int td_ring_entries(const struct td_ctx *ctx);

/*
 * Zero-copy consumption of the ring (libtimerdev 2.1): td_ring_peek()
 * claims up to max READY records in the mapping, in ring order, and stores
 * pointers to them in records; td_ring_advance(ctx, nr), with nr the
 * number the peek returned, gives their slots back to the kernel.  A
 * peeked record is the caller's until the advance: a CANCEL or MODIFY of
 * its timer meanwhile is told it was consumed (-ENOENT for a one-shot),
 * as after td_read.  Its flags carry the claim bits (QTIMER_REC_TAKEN):
 * mask them with ~QTIMER_REC_CLAIM.  A peek that returns records holds
 * the context's ring lock until the advance: other threads' reads and
 * peeks wait, and the peeking thread's own td_read, td_wait, td_dispatch
 * and td_ring_peek fail with -EBUSY.  A peek never makes a system call and
 * never blocks: it returns 0 when the ring holds nothing READY (wait with
 * poll(2) on td_fd, which also moves records that waited in the kernel
 * into the ring), and -ENODEV for a context without a ring.
 */
int td_ring_peek(struct td_ctx *ctx, const struct qtimer_record **records,
		 unsigned int max);
int td_ring_advance(struct td_ctx *ctx, unsigned int nr);
void td_close(struct td_ctx *ctx);
int td_fd(const struct td_ctx *ctx);
int td_version(struct td_ctx *ctx, struct qtimer_version *version);

int td_arm(struct td_ctx *ctx, const struct td_timer_spec *spec, uint64_t *idp);
int td_cancel(struct td_ctx *ctx, uint64_t id);
int td_modify(struct td_ctx *ctx, uint64_t id, int64_t expires_ns,
	      uint64_t period_ns, uint64_t slack_ns, unsigned int flags);

/*
 * td_get() (libtimerdev 2.1): timer id's schedule, as timerfd_gettime()
 * and uv_timer_get_due_in() give theirs, read from the module
 * (QTIMER_IOC_GET) without changing anything.  It fills spec so that it
 * would arm the same timer again: clockid; flags TD_TIMER_ABSTIME and
 * TD_TIMER_CPU, with TD_TIMER_CANCEL_ON_SET if the timer has it;
 * expires_ns, its next expiry, absolute on that clock; period_ns,
 * slack_ns, cookie; cpu, the CPU whose heap holds it.  Returns a mask of
 * its state: TD_TIMER_ARMED (waiting to fire at expires_ns), TD_TIMER_PENDING
 * (fired, a record waiting to be read; a periodic timer's expires_ns is
 * then the expiry that reading it now would re-arm it at), or 0 (another
 * thread is reading its record); -ENOENT when no timer has that id any
 * more; -ENOTTY from a module without QTIMER_FEAT_GET.  Its time until
 * due is spec.expires_ns - td_now(spec.clockid).
 */
#define TD_TIMER_ARMED		QTIMER_CANCEL_ARMED
#define TD_TIMER_PENDING	QTIMER_CANCEL_QUEUED

int td_get(struct td_ctx *ctx, uint64_t id, struct td_timer_spec *spec);

/*
 * The timer table's operations themselves (libtimerdev 2.1), for callers
 * who want the compare-and-swap's outcome: no system call, ever.
 * td_cancel() and td_modify() try them first and go to the ioctls when
 * they fail, with the ioctls' results.
 *
 * td_stop() stops timer id: 0 means it won, no record of the timer will be
 * read and the id is gone; its place under the module's caps comes back
 * when the kernel next looks at the timer, at the latest at its expiry, or
 * at once when an arm of this context needs it (the library then CANCELs
 * the timers it stopped).  td_push() moves id's expiry later, to
 * expires_ns (relative to now on the timer's clock, or absolute with
 * TD_TIMER_ABSTIME), keeping its period, slack and flags: 0 means the timer
 * fires no earlier than that.  Either returns -EAGAIN when the kernel holds
 * the timer (it fired and its record is or will be delivered, it is being
 * changed by an ioctl, or id is stale: td_cancel() and td_modify() say
 * which), -ERANGE from td_push() when expires_ns is not later than the
 * expiry the timer has or beyond 2^62 ns, -ENOTSUP when ctx has no timer table, and -EINVAL
 * for a NULL ctx, unknown flags or a negative expires_ns.  MT-Safe: the
 * swaps serialise on the slot.
 */
int td_stop(struct td_ctx *ctx, uint64_t id);
int td_push(struct td_ctx *ctx, uint64_t id, int64_t expires_ns,
	    unsigned int flags);

/*
 * The outcome of one batched operation, passed to the batch's completion
 * callback.  result is what the single call would have returned (0 for ARM,
 * the QTIMER_CANCEL_* mask for CANCEL and MODIFY) or -errno; -ECANCELED
 * means the op was never submitted.  id is the new timer's id after a
 * successful ARM, otherwise the id the op named (0 for a failed ARM).
 * Only the library fills one in, so a later minor version may append
 * fields.
 */
struct td_completion {
	uint64_t user_data;	/* as given to td_batch_arm/cancel/modify */
	uint64_t id;
	int opcode;		/* QTIMER_OP_ARM, QTIMER_OP_CANCEL, QTIMER_OP_MODIFY */
	int result;
};

typedef void (*td_completion_cb)(const struct td_completion *completion,
				 void *arg);

/*
 * A queue of up to capacity operations.  The caller owns the storage of the
 * struct, and td_batch_init() sets every field of it: the caller reads nr,
 * capacity, completed and failed, and writes nothing.  The library's own
 * state is behind state, allocated by td_batch_init(), so that it may
 * grow; reserved, which td_batch_init() zeroes, is room for public fields
 * of later minor versions, so that the struct keeps its size.
 */
struct td_batch_state;

struct td_batch {
	unsigned int nr;		/* ops queued and not yet submitted */
	unsigned int capacity;
	uint64_t completed;		/* ops completed since td_batch_init */
	uint64_t failed;		/* of those, ops with a negative result */
	struct td_batch_state *state;	/* private */
	void *reserved[3];		/* private: zero */
};

int td_batch_init(struct td_ctx *ctx, struct td_batch *batch,
		  unsigned int capacity);
void td_batch_set_callback(struct td_batch *batch, td_completion_cb cb,
			   void *arg);
int td_batch_arm(struct td_batch *batch, const struct td_timer_spec *spec,
		 uint64_t user_data);
int td_batch_cancel(struct td_batch *batch, uint64_t id, uint64_t user_data);
int td_batch_modify(struct td_batch *batch, uint64_t id, int64_t expires_ns,
		    uint64_t period_ns, uint64_t slack_ns, unsigned int flags,
		    uint64_t user_data);
int td_batch_flush(struct td_batch *batch);
void td_batch_free(struct td_batch *batch);

typedef void (*td_record_cb)(const struct qtimer_record *record, void *arg);

int td_read(struct td_ctx *ctx, struct qtimer_record *records,
	    unsigned int max);
int td_wait(struct td_ctx *ctx, struct qtimer_record *records,
	    unsigned int max, int64_t timeout_ns);
int td_dispatch(struct td_ctx *ctx, td_record_cb cb, void *arg,
		unsigned int max);

int64_t td_now(clockid_t clockid);
/*
 * A 32-bit program built with a 64-bit time_t (glibc's _TIME_BITS=64) has
 * a struct timespec of another size than the library's: its calls go to
 * the variants for that struct, as glibc's own time functions do.
 */
#if defined(__USE_TIME_BITS64) && defined(__TIMESIZE) && __TIMESIZE == 32
int64_t td_ns_from_timespec(const struct timespec *ts)
	__asm__("td_ns_from_timespec64");
struct timespec td_timespec_from_ns(int64_t ns)
	__asm__("td_timespec_from_ns64");
#else
int64_t td_ns_from_timespec(const struct timespec *ts);
struct timespec td_timespec_from_ns(int64_t ns);
#endif

#ifdef __cplusplus
}
#endif

#endif /* _TIMERDEV_H */
