/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * qtimer's generic netlink family: statistics and the module-wide caps.
 * Documentation/netlink/specs/qtimer.yaml describes the same family in the
 * kernel's YNL format; keep the two in step.
 *
 * The family is named QTIMER_GENL_NAME; resolve its id through the generic
 * netlink controller (CTRL_CMD_GETFAMILY).  It exists only in the initial
 * network namespace, since what it reports and sets is global to the host.
 * Integers are host byte order; 64-bit ones are padded to 8-byte alignment
 * with the set's PAD attribute.  Requests are validated strictly: unknown
 * attributes, attributes in a request that takes none, and non-zero
 * genlmsghdr.reserved fail with EINVAL and an extended ack message.
 *
 * Commands
 * --------
 * QTIMER_CMD_GET_STATS (do, dump)
 *	Request: no attributes.  Attribute set: stats.
 *	do:   one message with the totals over all possible CPUs (no CPU).
 *	dump: one message per possible CPU, with QTIMER_A_STATS_CPU.
 *	Counters only grow while the module is loaded; MAX_RUN_NS is a
 *	high-water mark.  A message carries one HEAP nest per clock and one
 *	LATENESS nest per histogram bucket, in order of MIN_NS.
 *	Needs CAP_NET_ADMIN (GENL_ADMIN_PERM), EPERM otherwise, for the dump
 *	too: the counts would tell one user when another's timers fire.
 *
 * QTIMER_CMD_GET_CONFIG (do)
 *	Request: no attributes.  Reply (attribute set config): both caps.
 *	Any user may ask.
 *
 * QTIMER_CMD_SET_CONFIG (do)
 *	Request (attribute set config): one or both caps; the others keep
 *	their value.  The caps are those of the module parameters of the
 *	same name, and the same variables: a change is seen by ARM at once
 *	and by QTIMER_IOC_VERSION, and never takes timers away from anyone
 *	(a file or user above a lowered cap just cannot arm more).
 *	Needs CAP_NET_ADMIN (GENL_ADMIN_PERM) and CAP_SYS_ADMIN in the
 *	initial user namespace: EPERM otherwise.  EINVAL with no attribute;
 *	ERANGE for a value outside the range below (the extended ack names
 *	the attribute).  Nothing changes unless every value is valid.
 *
 * Ranges
 * ------
 * max_timers_per_fd	1 .. QTIMER_MAX_TIMERS_PER_FD_LIMIT (a file's ids
 *			live in a 24-bit slot index)
 * max_timers_per_user	1 .. QTIMER_MAX_TIMERS_PER_USER_LIMIT
 */
#ifndef _UAPI_LINUX_QTIMER_NETLINK_H
#define _UAPI_LINUX_QTIMER_NETLINK_H

#include <linux/types.h>

#define QTIMER_GENL_NAME	"qtimer"
#define QTIMER_GENL_VERSION	1

#define QTIMER_MAX_TIMERS_PER_FD_LIMIT		(1ULL << 24)
#define QTIMER_MAX_TIMERS_PER_USER_LIMIT	0xffffffffULL

/* Attribute set "stats": one CPU's counters, or the totals. */
enum {
	QTIMER_A_STATS_PAD = 1,
	QTIMER_A_STATS_CPU,		/* u32: dump only */
	QTIMER_A_STATS_ARMED,		/* u64: timers armed (ARM, SUBMIT) */
	QTIMER_A_STATS_FIRED,		/* u64: expirations delivered */
	QTIMER_A_STATS_CANCELLED,	/* u64: timers cancelled or closed */
	QTIMER_A_STATS_MODIFIED,	/* u64: armed timers re-timed */
	QTIMER_A_STATS_COALESCED,	/* u64: shared an expiry run */
	QTIMER_A_STATS_DEFERRED_RUNS,	/* u64: runs left to the worker */
	QTIMER_A_STATS_MAX_RUN_NS,	/* u64: longest hrtimer callback */
	QTIMER_A_STATS_HEAP,		/* nest (heap), one per clock */
	QTIMER_A_STATS_LATENESS,	/* nest (bucket), one per bucket */

	__QTIMER_A_STATS_MAX,
};

#define QTIMER_A_STATS_MAX (__QTIMER_A_STATS_MAX - 1)

/* Attribute set "heap": the heap(s) of one clock. */
enum {
	QTIMER_A_HEAP_PAD = 1,
	QTIMER_A_HEAP_CLOCK,		/* u32: CLOCK_REALTIME, ... */
	QTIMER_A_HEAP_ENTRIES,		/* u64: entries, live and dead */
	QTIMER_A_HEAP_DEAD,		/* u64: stale entries not yet dropped */

	__QTIMER_A_HEAP_MAX,
};

#define QTIMER_A_HEAP_MAX (__QTIMER_A_HEAP_MAX - 1)

/*
 * Attribute set "bucket": one bucket of the histogram of expiry lateness,
 * the time from a timer's expiry (without its slack) to the moment the
 * interrupt or worker took it off the heap.  A bucket counts lateness from
 * its MIN_NS up to the next bucket's; the last is open-ended.
 */
enum {
	QTIMER_A_BUCKET_PAD = 1,
	QTIMER_A_BUCKET_MIN_NS,		/* u64 */
	QTIMER_A_BUCKET_COUNT,		/* u64 */

	__QTIMER_A_BUCKET_MAX,
};

#define QTIMER_A_BUCKET_MAX (__QTIMER_A_BUCKET_MAX - 1)

/* Attribute set "config": the module-wide caps. */
enum {
	QTIMER_A_CONFIG_PAD = 1,
	QTIMER_A_CONFIG_MAX_TIMERS_PER_FD,	/* u64 */
	QTIMER_A_CONFIG_MAX_TIMERS_PER_USER,	/* u64 */

	__QTIMER_A_CONFIG_MAX,
};

#define QTIMER_A_CONFIG_MAX (__QTIMER_A_CONFIG_MAX - 1)

enum {
	QTIMER_CMD_GET_STATS = 1,
	QTIMER_CMD_GET_CONFIG,
	QTIMER_CMD_SET_CONFIG,

	__QTIMER_CMD_MAX,
};

#define QTIMER_CMD_MAX (__QTIMER_CMD_MAX - 1)

#endif /* _UAPI_LINUX_QTIMER_NETLINK_H */
