// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * hello: the least a program does with libtimerdev.  A one-shot timer and
 * a ticker, from zero-initialised specs (no pinning), their records read,
 * the ticker cancelled.  Exits 0 when both delivered as armed.
 *
 *   cc -o hello hello.c $(pkg-config --cflags --libs libtimerdev)
 */
#include <errno.h>
#include <stdio.h>
#include <timerdev.h>

int main(void)
{
	struct td_timer_spec once = { .clockid = CLOCK_MONOTONIC,
				      .expires_ns = 10000000, .cookie = 1 };
	struct td_timer_spec tick = { .clockid = CLOCK_MONOTONIC,
				      .expires_ns = 5000000,
				      .period_ns = 5000000, .cookie = 2 };
	unsigned int ticks = 0, onces = 0;
	struct qtimer_record rec;
	uint64_t once_id, tick_id;
	struct td_ctx *ctx;

	if (td_open(&ctx, 0) || td_arm(ctx, &once, &once_id) ||
	    td_arm(ctx, &tick, &tick_id))
		return 1;
	while (!onces || ticks < 4) {	/* td_read blocks until one is due */
		if (td_read(ctx, &rec, 1) != 1)
			return 1;
		onces += rec.id == once_id && (rec.flags & QTIMER_REC_LAST);
		ticks += rec.id == tick_id ? rec.count : 0;
	}
	printf("one-shot fired %u time(s), ticker %u\n", onces, ticks);
	/* The one-shot is gone once its record was read; the ticker lives. */
	if (td_cancel(ctx, once_id) != -ENOENT || td_cancel(ctx, tick_id) < 0)
		return 1;
	td_close(ctx);
	return onces == 1 ? 0 : 1;
}
