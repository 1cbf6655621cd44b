/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * The helpers every qtimer test suite shares, compiled once into
 * libqttest.a (selftests/lib/lib.mk says how a Makefile links it), as
 * liburing's test/helpers.c is: thin wrappers around the raw ioctls of
 * uapi/linux/qtimer.h that return -errno (so a test can ASSERT_EQ(-EINVAL,
 * ...) in one line), record collection with poll() timeouts, the one
 * fdinfo parser, the one sysfs and /proc reader, the record ring's mapping
 * and its consumer, clocks, CPUs and processes, and what the hardening
 * suites add: tunable durations, a seedable PRNG and global knobs put back
 * after a test.  Only what the
 * engine's uapi promises is used: the suites deliberately do not link
 * libtimerdev, so that a library bug cannot hide an engine bug or the
 * other way round.  Nothing here includes kselftest_harness.h, which
 * defines main(): a helper reports, the test asserts.
 */
#ifndef _QT_TEST_HELPERS_H
#define _QT_TEST_HELPERS_H

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include <linux/qtimer.h>

#ifndef CLOCK_BOOTTIME
#define CLOCK_BOOTTIME 7
#endif

#define QT_DEV		"/dev/qtimer"
#define QT_PARAMS	"/sys/module/qtimer/parameters/"

#define NSEC_PER_USEC	1000LL
#define NSEC_PER_MSEC	1000000LL
#define NSEC_PER_SEC	1000000000LL

/* The clocks the spec names, as a VERSION clocks mask. */
#define QT_CLOCKS_SPEC	((1U << CLOCK_REALTIME) | (1U << CLOCK_MONOTONIC) | \
			 (1U << CLOCK_BOOTTIME))

/*
 * Guest time under QEMU TCG is slow and uneven: waits for something that
 * must happen use this generous bound (they return as soon as it happens,
 * so a passing run does not pay for it).
 */
#define QT_ARRIVE_MS	5000

/* --- the device (ioctl.c) ----------------------------------------------- */

/*
 * What CANCEL (or MODIFY) of a ticker returns when it may have fired again
 * meanwhile: any non-zero mask of the two bits, and only those.  Whether a
 * ticker whose record is queued also counts as ARMED is left open by the
 * header, so tests that do not control timing accept either.
 */
bool t_mask_ok(int mask);

int t_open(int extra_flags);
int t_ioctl(int fd, unsigned long cmd, void *arg);
int t_version(int fd, struct qtimer_version *v);

/* A valid relative one-shot on @clockid with no cpu, slack or period. */
struct qtimer_op t_op(int clockid, __u32 flags, __s64 expires_ns,
		       __u64 period_ns, __u64 cookie);
int t_arm_op(int fd, struct qtimer_op *op);
/* Arms a timer and returns 0 (id in *id, if id is not NULL) or -errno. */
int t_arm(int fd, int clockid, __u32 flags, __s64 expires_ns,
	   __u64 period_ns, __u64 cookie, __u64 *id);
/* Same, on the heap of @cpu (QTIMER_F_CPU). */
int t_arm_cpu(int fd, int clockid, __u32 flags, __s64 expires_ns,
	       __u64 period_ns, __u64 cookie, __u32 cpu, __u64 *id);
/*
 * Arms a one-shot at absolute CLOCK_MONOTONIC @when on CPU 0's heap (only
 * one heap fires in deadline order).
 */
int t_arm_at_cpu0(int fd, __s64 when, __u64 cookie, __u64 *id);

/* Makes op @k of the timers t_arm_many() arms (its opcode is set after). */
typedef void t_fill_op_fn(struct qtimer_op *op, long k, void *arg);
/*
 * Arms @n timers, op k made by @fill, in SUBMIT batches of
 * QTIMER_SUBMIT_MAX that stop at the first failure; the id of timer k goes
 * to ids[k] while k < @nr_ids.  Returns 0 or the first failure's -errno.
 */
int t_arm_many(int fd, long n, t_fill_op_fn *fill, void *arg,
		__u64 *ids, long nr_ids);
/*
 * For t_arm_many(): a CLOCK_MONOTONIC one-shot due *(__s64 *)@arg ns from
 * now (NULL or 0: at once), cookie k.
 */
t_fill_op_fn t_fill_in_ns;

/* Both return the QTIMER_CANCEL_* mask or -errno. */
int t_cancel(int fd, __u64 id);
int t_modify(int fd, __u64 id, __u32 flags, __s64 expires_ns,
	      __u64 period_ns, __u64 slack_ns);
/*
 * QTIMER_IOC_GET of @id into *@op (zeroed but for the id first): the state
 * mask or -errno.
 */
int t_get(int fd, __u64 id, struct qtimer_op *op);
/* Returns the number of ops processed or -errno; *done gets the kernel's. */
int t_submit(int fd, struct qtimer_op *ops, __u32 nr, __u32 flags,
	      __u32 *done);

/* The number of whole records read (0..max) or -errno. */
int t_read(int fd, struct qtimer_record *recs, size_t max);
/* 1 when poll() reports EPOLLIN within @timeout_ms, 0 if not, or -errno. */
int t_wait_readable(int fd, int timeout_ms);
/* The revents poll() reports right now. */
int t_revents(int fd);
/*
 * Reads until @want records have arrived or @timeout_ms of CLOCK_MONOTONIC
 * passed, and returns how many arrived (or -errno); see ioctl.c for @stamp,
 * the never-early check.
 */
int t_collect_stamped(int fd, struct qtimer_record *recs, int want,
		       int timeout_ms, int clockid, __s64 *stamp);
int t_collect(int fd, struct qtimer_record *recs, int want, int timeout_ms);
/*
 * Nothing pending right now: no EPOLLIN and an O_NONBLOCK read gets
 * -EAGAIN.  Returns 0, or 1 (poll) / 2 (read) for what said otherwise.
 */
int t_nothing_pending(int fd);
/* Index of the record with @cookie in recs[0..n), or -1. */
int t_find_cookie(const struct qtimer_record *recs, int n, __u64 cookie);
/*
 * Reads until the record of @cookie (a sentinel timer's, due after those
 * under test on the same CPU's heap) has come, each wait bounded by
 * QT_ARRIVE_MS: how many other records came before it or with it (the
 * first @max copied to others[]), or -1 if it never came.
 */
int t_read_to_sentinel(int fd, __u64 cookie, struct qtimer_record *others,
		       int max);
/* A page the kernel can neither read nor write (mapped, then unmapped). */
void *t_unmapped_page(void);
/*
 * A page holding a copy of @len bytes of @src, which the kernel can read
 * but not write; NULL on failure.  Free it with t_readonly_free().
 */
void *t_readonly_copy(const void *src, size_t len);
void t_readonly_free(void *p);

/* --- /proc/self/fdinfo/<fd> (fdinfo.c) ---------------------------------- */

/* The keys the engine's show_fdinfo prints, in this order of t_fdinfo.v. */
enum t_fdinfo_key {
	QT_FI_TIMERS, QT_FI_PENDING, QT_FI_REALTIME, QT_FI_MONOTONIC,
	QT_FI_BOOTTIME, QT_FI_USER_TIMERS, QT_FI_MAX_PER_FD, QT_FI_MAX_PER_USER,
	QT_FI_NR
};

/* What t_fdinfo_get() returns for a missing key: no count is this. */
#define QT_FI_MISSING	(-1000LL)

struct t_fdinfo {
	union {
		long long v[QT_FI_NR];	/* -1 where not seen */
		struct {
			long long timers, pending, realtime, monotonic,
				  boottime, user_timers, max_timers_per_fd,
				  max_timers_per_user;
		};
	};
	bool seen[QT_FI_NR];
	int unknown;		/* lines that are neither the VFS's nor ours */
	int malformed;		/* lines not in "key:\tvalue" form */
	char text[4096];	/* the file as read */
};

/* Parses the file: 0 or -errno (fi->seen says which keys were there). */
int t_fdinfo_read(int fd, struct t_fdinfo *fi);
/* Same, and -ENODATA when a count (timers .. user_timers) is missing. */
int t_fdinfo(int fd, struct t_fdinfo *fi);
/* "timers", "pending", ...: @key as the file names it. */
const char *t_fdinfo_key_name(enum t_fdinfo_key key);
/* The value of @key, or QT_FI_MISSING. */
long long t_fdinfo_get(int fd, enum t_fdinfo_key key);
/*
 * The value of the key named @name, one of those above or one that only
 * some files show ("ring_entries", with a ring), or QT_FI_MISSING.
 */
long long t_fdinfo_named(int fd, const char *name);
/*
 * Waits until at least @n records are pending on @fd, to set up a test that
 * needs them queued at once: 1 when they are there (or presumed, see
 * fdinfo.c), 0 on timeout.
 */
int t_wait_pending(int fd, unsigned int n, int timeout_ms);

/* --- sysfs, debugfs, procfs, tracefs (sysfs.c) -------------------------- */

/* Small text files: the whole value, trailing newline and blanks cut. */
int t_read_str(const char *path, char *buf, size_t len);
int t_write_str(const char *path, const char *val);
/* One unsigned number; 0 or -errno. */
int t_sysfs_read(const char *path, unsigned long long *val);
int t_sysfs_write(const char *path, unsigned long long val);
/* A module parameter: its value or -1; 0 or -errno. */
long long t_param_get(const char *name);
int t_param_set(const char *name, long long val);

/*
 * A global knob changed for a test and put back in its teardown (which the
 * harness runs after a failed ASSERT too).
 */
struct t_knob {
	char path[160];
	char saved[128];
	bool changed;
};

int t_knob_set(struct t_knob *k, const char *path, const char *val);
int t_knob_restore(struct t_knob *k);

/* Where tracefs is mounted ("/sys/kernel/tracing" or debugfs's), or NULL. */
const char *t_tracefs_root(void);
/* A kernel with kmemleak or fault injection: a debug kernel. */
bool t_debug_kernel(void);
/* Under KVM (kvm-clock is offered), not QEMU's TCG: see sysfs.c. */
bool t_fast_machine(void);

/* --- CPUs (cpu.c) ------------------------------------------------------- */

/* CPUs the kernel may have, online or not (cached). */
int t_nr_cpus(void);
int t_pin_self(int cpu);
/*
 * The CPUs the calling thread may run on now (its affinity, which keeps it
 * inside its cpuset), lowest first, at most @max of them in cpus[]: how
 * many, or -errno.  Ask before pinning: a pinned thread has one.
 */
int t_allowed_cpus(int *cpus, int max);
char *t_cpu_online_path(int cpu, char *buf, size_t len);
bool t_cpu_online(int cpu);
/* Takes @cpu offline (0) or online (1), retrying while hotplug is busy. */
int t_cpu_set_online(int cpu, int on);

/* One "cpu" line of /proc/stat, in USER_HZ ticks. */
struct t_cpu_stat {
	unsigned long long user, nice, system, idle, iowait, irq, softirq,
			   steal;
};

/* @cpu's line (-1: the "cpu" line of all of them): 0 or -errno. */
int t_proc_stat(int cpu, struct t_cpu_stat *st);
/*
 * Ticks of @cpu (-1: all CPUs) so far: *busy counts user, nice, system,
 * irq and softirq time, *total adds idle, iowait and steal.
 */
int t_cpu_ticks(int cpu, unsigned long long *busy, unsigned long long *total);

/* --- clocks, processes, time namespaces (proc.c) ------------------------ */

__s64 t_now(int clockid);
void t_sleep_ns(__s64 ns);
void t_sleep_ms(int ms);
/*
 * Spins for @ns of CLOCK_MONOTONIC: for the races that start one side a
 * little after the other, finer than a sleep's wakeup.
 */
void t_busy_wait_ns(__s64 ns);
/* Sets CLOCK_REALTIME to @ns: 0 or -errno. */
int t_set_realtime(__s64 ns);
/* Puts CLOCK_REALTIME back: @rt0 plus the CLOCK_MONOTONIC time since @mono0. */
int t_restore_realtime(__s64 rt0, __s64 mono0);

/*
 * Steps CLOCK_REALTIME by @delta, in a kselftest_harness test whose fixture
 * has a bool stepped (its teardown puts the clock back with
 * t_restore_realtime()); SKIPs the test without CAP_SYS_TIME.
 */
#define QT_STEP_REALTIME(delta) do {					\
	int __r = t_set_realtime(t_now(CLOCK_REALTIME) + (delta));	\
									\
	if (__r == -EPERM)						\
		SKIP(return, "cannot set CLOCK_REALTIME (needs CAP_SYS_TIME)"); \
	ASSERT_EQ(0, __r);						\
	self->stepped = true;						\
} while (0)

/* The exit status of child @pid, 128 + the signal that killed it, or -1. */
int t_wait_child(pid_t pid);
/* What t_run() saw of a program. */
struct t_run {
	int status;		/* exit status, 128 + signal; 126: no unshare or setuid */
	char out[65536];	/* stdout, cut to fit */
	char err[8192];		/* stderr, cut to fit */
};

/*
 * Runs @argv (argv[0] looked up on PATH, 127 when it is not there), in new
 * namespaces @unshare_flags (CLONE_NEW*; 0: none), as @uid with gid @uid
 * and no supplementary groups unless @uid is 0, waits for it and keeps its
 * output.  0, or -errno when it could not start.
 */
int t_run(struct t_run *r, uid_t uid, int unshare_flags, char *const argv[]);
/* fork + exec + wait of /bin/true: nanoseconds, or -errno. */
__s64 t_spawn_true_ns(void);
/*
 * What the suites run is bundled with them: in a kselftest tree
 * (selftests/kselftest-install.sh) the programs are in bin/ and the
 * libraries and the YNL CLI in lib/ beside the suites; in a payload
 * (make guest-user) in ../bin and ../lib.  t_beside() is the first of
 * <dir of this program>/@rel and <dir>/../@rel that exists, malloc()ed, or
 * NULL.  t_program() is t_beside("bin/@name"), else @name (for PATH).
 */
char *t_beside(const char *rel);
const char *t_program(const char *name);

/*
 * Mappings of @path in this process (/proc/self/maps) at file offset 0
 * (@at_zero: a device's ring) or beyond it (its timer table); -1 if the
 * maps cannot be read.
 */
int t_mappings_of(const char *path, bool at_zero);

/* What t_fork_into_timens() returns where time namespaces are not there. */
#define QT_NO_TIMENS	1
/*
 * Forks a child into a fresh time namespace with offsets @offs (lines of
 * /proc/self/timens_offsets): its pid to the parent, 0 in the child,
 * -errno, or QT_NO_TIMENS without CONFIG_TIME_NS or the privilege.
 */
int t_fork_into_timens(const char *offs);
/*
 * A check in a forked child, where the harness's asserts do not reach the
 * parent: a failure says where on stderr and exits with its line number
 * (mod 254, never 0), which t_wait_child() turns into a failure.
 */
#define QT_CHILD_CHECK(cond) do {					\
	if (!(cond)) {							\
		fprintf(stderr, "# child: %s:%d: %s\n", __FILE__,	\
			__LINE__, #cond);				\
		_exit(1 + __LINE__ % 254);				\
	}								\
} while (0)

/*
 * A tunable: the environment variable @name, else a "@name=value" word on
 * the kernel command line, else @def (see proc.c).
 */
long t_tunable(const char *name, long def);
/* Seconds a stress loop runs: QT_STRESS_SECONDS, or the suite's default. */
int t_stress_seconds(int def);
/*
 * What `qtimerctl stats --json` printed (the module's counters per base
 * and in total), in a static buffer, or NULL if it failed (see proc.c).
 */
const char *t_stats_json(void);

/* --- the record ring (ring.c) ------------------------------------------ */

/*
 * A file's ring as RING_SETUP described it and mmap() mapped it, and what
 * the consumer saw while it consumed (so that a test can assert on it).
 */
struct t_ring {
	int fd;
	__u32 entries;
	struct qtimer_ring_setup setup;	/* as RING_SETUP returned it */
	void *map;			/* NULL: not mapped */
	size_t map_len;
	__u32 *head, *tail, *flags;
	struct qtimer_record *recs;
	/* Counted by t_ring_consume(). */
	long claimed;		/* records it claimed READY -> TAKEN */
	long skipped;		/* records in [tail, head) that were not READY */
	__u32 max_pending;	/* the largest head - tail it found */
	bool overflow_seen;	/* QTIMER_RING_OVERFLOW was set at some look */
};

/* Whether the module offers the ring (VERSION's QTIMER_FEAT_RING). */
bool t_ring_offered(void);
/* RING_SETUP of @entries, every other field zero: 0 or -errno. */
int t_ring_setup(int fd, __u32 entries, struct qtimer_ring_setup *s);
/*
 * RING_SETUP of @entries on @fd, then mmap() of it as the header says
 * (MAP_SHARED, read and write, offset 0, mmap_size bytes): 0 or -errno,
 * -ERANGE if the layout RING_SETUP returned does not fit in mmap_size.
 */
int t_ring_map(struct t_ring *r, int fd, __u32 entries);
/* munmap() (if mapped); leaves the file alone. */
void t_ring_unmap(struct t_ring *r);
/* Whether the layout in @s fits @entries records in mmap_size bytes. */
bool t_ring_layout_ok(const struct qtimer_ring_setup *s, __u32 entries);

/* head (acquire), tail and the ring's flags word as the mapping has them. */
__u32 t_ring_head(const struct t_ring *r);
__u32 t_ring_tail(const struct t_ring *r);
__u32 t_ring_flags(const struct t_ring *r);
/* Stores the consumer's tail with release semantics. */
void t_ring_set_tail(struct t_ring *r, __u32 tail);
/* The slot of free-running index @idx. */
struct qtimer_record *t_ring_rec(const struct t_ring *r, __u32 idx);
/* The claim bits (QTIMER_REC_CLAIM) of slot @idx, read atomically. */
__u32 t_ring_claim_of(const struct t_ring *r, __u32 idx);
/* A record's flags split into its claim bits and the rest. */
#define CLAIM(f)	((f) & QTIMER_REC_CLAIM)
#define LOW(f)		((f) & ~QTIMER_REC_CLAIM)
/*
 * Claims slot @idx READY -> TAKEN with the header's compare-and-swap,
 * without moving tail: true and a copy in *out (flags as after the claim)
 * if it won, false if the slot was not READY.
 */
bool t_ring_claim(struct t_ring *r, __u32 idx, struct qtimer_record *out);
/*
 * The header's consumer, once: claims the READY records of [tail, head)
 * into out[0..max), skips the rest, and stores the tail after the last
 * record it looked at.  Returns how many it claimed, or -EOVERFLOW when
 * head - tail exceeds the ring (the kernel published records it has no
 * room for).
 */
int t_ring_consume(struct t_ring *r, struct qtimer_record *out, int max);
/*
 * Consumes until @want records are claimed or @timeout_ms passed, calling
 * poll() whenever the ring is empty, as the header tells a consumer to:
 * how many it claimed, or -errno.  @stamp as for t_collect_stamped(): the
 * time on @clockid right after the claims that got record i.
 */
int t_ring_collect(struct t_ring *r, struct qtimer_record *out, int want,
		    int timeout_ms, int clockid, __s64 *stamp);
/*
 * Waits, without a system call on the file (so without moving records
 * that wait in the kernel or re-arming a ticker), until head - tail >= @n:
 * 1, or 0 on timeout.
 */
int t_ring_wait_pending(const struct t_ring *r, __u32 n, int timeout_ms);
/*
 * Waits, without a system call on the file, until the ring's flags say
 * QTIMER_RING_OVERFLOW (records wait in the kernel): 1, or 0 on timeout.
 */
int t_ring_wait_overflow(const struct t_ring *r, int timeout_ms);
/*
 * Arms a one-shot that fires at once and waits until its record is in the
 * ring: its slot's index, or -1 if it never came.
 */
long t_ring_fire_one(struct t_ring *r, __u64 cookie, __u64 *id);
/* Nothing arrives in the ring for @ms, with poll() called meanwhile. */
bool t_ring_stays_empty(struct t_ring *r, int ms);

/* --- the timer table (table.c) ----------------------------------------- */

/* A file's timer table as TABLE_SETUP described it, mapped whole. */
struct t_table {
	int fd;
	struct qtimer_table_setup setup;
	void *map;			/* NULL: not mapped */
	size_t map_len;
};

/* Whether the module offers the table (VERSION's QTIMER_FEAT_TABLE). */
bool t_table_offered(void);
/* TABLE_SETUP: 0 or -errno. */
int t_table_setup(int fd, struct qtimer_table_setup *s);
/* Sets @fd's table up and maps all of it: 0 or -errno. */
int t_table_map(struct t_table *tb, int fd);
void t_table_unmap(struct t_table *tb);
/* @id's slot in the mapping (its page exists once @id was armed). */
struct qtimer_slot *t_table_slot(const struct t_table *tb, __u64 id);
/* ctl, loaded with acquire. */
__u64 t_table_ctl(const struct t_table *tb, __u64 id);

/* What a push or a stop through the table came to. */
enum t_table_result {
	T_TABLE_DONE,		/* the swap won */
	T_TABLE_KERNEL,		/* the kernel took the timer (or the id is stale) */
	T_TABLE_EARLIER,	/* push: not later than the slot's deadline */
};
/* The uapi's push-later protocol: @deadline absolute on the timer's clock. */
enum t_table_result t_table_push(const struct t_table *tb, __u64 id,
				 __s64 deadline);
/* The uapi's stop protocol. */
enum t_table_result t_table_stop(const struct t_table *tb, __u64 id);

/* --- a seedable PRNG (rng.c) -------------------------------------------- */

/* xorshift64*: small, fast, reproducible from a printed seed. */
struct t_rng {
	uint64_t s;
};

void t_rng_seed(struct t_rng *r, uint64_t seed);
uint64_t t_rand(struct t_rng *r);
/* Uniform in [0, n), n > 0. */
uint64_t t_rand_below(struct t_rng *r, uint64_t n);
bool t_chance(struct t_rng *r, unsigned int percent);
/* order[0..n) becomes a random permutation of 0..n-1 (Fisher-Yates). */
void t_shuffle(int *order, int n, struct t_rng *r);

/*
 * "# " diagnostics on stderr, a bounded number per process, so that a
 * broken engine cannot flood the console.
 */
extern _Atomic int t_diag_budget;

#define t_diag(fmt, ...) do {						\
	if (atomic_fetch_sub(&t_diag_budget, 1) > 0)			\
		fprintf(stderr, "# " fmt "\n", ##__VA_ARGS__);		\
} while (0)

#endif /* _QT_TEST_HELPERS_H */
