// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * The judge of an event-loop example's delivery log: see delivery_log.h.
 * It keeps only a count per cookie (0, 1 or more), so 100k-line logs cost
 * little.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "delivery_log.h"

/* Keep the first problem: the rest usually follow from it. */
static void note(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (!len || why[0])
		return;
	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
}

int delivery_log_check(const char *path, unsigned long nr, int64_t max_late_ns,
		       struct delivery_summary *sum, char *why, size_t len)
{
	unsigned long long cookie;
	long long due, expires, arrival;
	unsigned long lineno = 0, i;
	unsigned char *seen;
	char line[256];
	FILE *f;
	int ret;

	memset(sum, 0, sizeof(*sum));
	if (len)
		why[0] = '\0';
	f = fopen(path, "r");
	if (!f)
		return -errno;
	seen = calloc(nr ? nr : 1, 1);
	if (!seen) {
		fclose(f);
		return -ENOMEM;
	}
	while (fgets(line, sizeof(line), f)) {
		lineno++;
		sum->lines++;
		if (sscanf(line, "%llu %lld %lld %lld", &cookie, &due, &expires,
			   &arrival) != 4 || cookie >= nr) {
			sum->unknown++;
			note(why, len, "line %lu: not a record of cookie 0..%lu: %s",
			     lineno, nr - 1, line);
			continue;
		}
		if (seen[cookie]) {
			sum->repeated++;
			note(why, len, "line %lu: cookie %llu delivered again",
			     lineno, cookie);
		}
		if (seen[cookie] < 2)
			seen[cookie]++;
		if (expires < due || arrival < expires) {
			sum->early++;
			note(why, len, "line %lu: cookie %llu early: due %lld, "
			     "expires %lld, arrived %lld", lineno, cookie, due,
			     expires, arrival);
		}
		if (arrival - due > sum->max_late_ns)
			sum->max_late_ns = arrival - due;
		if (arrival - due > max_late_ns) {
			sum->too_late++;
			note(why, len, "line %lu: cookie %llu arrived %.1f ms after "
			     "its due time (bound %.1f ms)", lineno, cookie,
			     (arrival - due) / 1e6, max_late_ns / 1e6);
		}
	}
	ret = ferror(f) ? -EIO : 0;
	fclose(f);
	for (i = 0; i < nr; i++) {
		if (seen[i] == 1) {
			sum->once++;
		} else if (!seen[i]) {
			sum->missing++;
			note(why, len, "cookie %lu never delivered", i);
		}
	}
	free(seen);
	if (ret)
		return ret;
	return sum->missing || sum->repeated || sum->unknown || sum->early ||
	       sum->too_late ? -1 : 0;
}
