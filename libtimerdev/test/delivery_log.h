/* SPDX-License-Identifier: LGPL-2.1 OR MIT */
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * The judge of an event-loop example's delivery log (its -o file: one line
 * per record, "cookie due expires_ns arrival" in CLOCK_MONOTONIC ns).  The
 * examples check themselves too; this checks what they say they received,
 * independently of their own bookkeeping.
 */
#ifndef _TD_DELIVERY_LOG_H
#define _TD_DELIVERY_LOG_H

#include <stddef.h>
#include <stdint.h>

struct delivery_summary {
	unsigned long lines;		/* records in the log */
	unsigned long once;		/* cookies seen exactly once */
	unsigned long missing;		/* cookies never seen */
	unsigned long repeated;		/* records of a cookie seen before */
	unsigned long unknown;		/* cookies >= nr, or unreadable lines */
	unsigned long early;		/* expiry before due, or arrival before expiry */
	unsigned long too_late;		/* arrival more than max_late_ns after due */
	int64_t max_late_ns;		/* latest arrival after due */
};

/*
 * Read the log at path of an example that expected nr cookies (0..nr-1).
 * Fills *sum; returns 0 when every cookie arrived exactly once, none early
 * and none more than max_late_ns after its due time, else -1 with the first
 * problem described in why.  -errno if the log cannot be read.
 */
int delivery_log_check(const char *path, unsigned long nr, int64_t max_late_ns,
		       struct delivery_summary *sum, char *why, size_t len);

#endif /* _TD_DELIVERY_LOG_H */
