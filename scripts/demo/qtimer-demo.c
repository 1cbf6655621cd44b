// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * The demo "make demo" runs inside a test VM: it arms a few one-shot timers
 * and a ticker through libtimerdev and prints every record it reads, then
 * arms and cancels 100000 timers in batches and prints what that cost, and
 * ends with qtimerctl's view of the heaps.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <timerdev.h>

#define MS		((int64_t)1000000)
#define BULK		100000

static int fail(const char *what, int err)
{
	fprintf(stderr, "qtimer-demo: %s: %s\n", what, strerror(-err));
	return 1;
}

static void on_arm(const struct td_completion *c, void *arg)
{
	uint64_t *ids = arg;

	if (c->opcode == QTIMER_OP_ARM && c->result == 0)
		ids[c->user_data] = c->id;
}

static uint64_t ids[BULK];

/*
 * Arm BULK timers one minute out, or cancel them, through the batch (the
 * op for timer i has user_data i) and flush it: 0 with the time it took
 * in *ns, or 1 once the failure is said.
 */
static int bulk(struct td_batch *batch, bool cancel, int64_t *ns)
{
	int64_t t0 = td_now(CLOCK_MONOTONIC);
	int i, ret;

	for (i = 0; i < BULK; i++) {
		if (cancel)
			ret = td_batch_cancel(batch, ids[i], i);
		else
			ret = td_batch_arm(batch, &(struct td_timer_spec){
				.clockid = CLOCK_MONOTONIC,
				.expires_ns = 60000 * MS, .cookie = i,
				.cpu = TD_CPU_ANY }, i);
		if (ret)
			return fail(cancel ? "td_batch_cancel" : "td_batch_arm", ret);
	}
	ret = td_batch_flush(batch);
	if (ret < 0)
		return fail("td_batch_flush", ret);
	*ns = td_now(CLOCK_MONOTONIC) - t0;
	return 0;
}

int main(void)
{
	static const char *const names[] = { "tea", "eggs", "toast", "coffee" };
	struct qtimer_record recs[16];
	int64_t start, ns;
	struct td_batch batch;
	struct td_ctx *ctx;
	int ret, i, n, seen = 0, ticks = 0;
	uint64_t tick_id;

	ret = td_open(&ctx, TD_CLOEXEC);
	if (ret)
		return fail("td_open", ret);
	start = td_now(CLOCK_MONOTONIC);

	printf("arming 4 one-shot timers (400, 100, 300, 200 ms) and a 150 ms ticker\n");
	for (i = 0; i < 4; i++) {
		struct td_timer_spec spec = {
			.clockid = CLOCK_MONOTONIC,
			.expires_ns = (int64_t[]){ 400, 100, 300, 200 }[i] * MS,
			.cookie = i,
			.cpu = TD_CPU_ANY,
		};
		uint64_t id;

		ret = td_arm(ctx, &spec, &id);
		if (ret)
			return fail("td_arm", ret);
	}
	ret = td_arm(ctx, &(struct td_timer_spec){ .clockid = CLOCK_MONOTONIC,
		     .expires_ns = 150 * MS, .period_ns = 150 * MS, .cookie = 99,
		     .cpu = TD_CPU_ANY }, &tick_id);
	if (ret)
		return fail("td_arm", ret);

	while (seen < 4 || ticks < 3) {
		n = td_wait(ctx, recs, 16, 2000 * MS);
		if (n < 0)
			return fail("td_wait", n);
		for (i = 0; i < n; i++) {
			int64_t now = td_now(CLOCK_MONOTONIC);

			if (recs[i].cookie == 99) {
				ticks += recs[i].count;
				printf("  %4" PRId64 " ms  ticker fired (count %u)\n",
				       (now - start) / MS, recs[i].count);
				continue;
			}
			printf("  %4" PRId64 " ms  %-6s is ready (%" PRId64 " us late)%s\n",
			       (now - start) / MS, names[recs[i].cookie],
			       (int64_t)(now - recs[i].expires_ns) / 1000,
			       recs[i].flags & QTIMER_REC_LAST ? "" : " (more to come)");
			if (now < recs[i].expires_ns)
				return fail("a timer fired early", -EPROTO);
			seen++;
		}
	}
	ret = td_cancel(ctx, tick_id);
	if (ret < 0)
		return fail("td_cancel", ret);

	printf("\narming %d timers one minute out, in batches of 4096\n", BULK);
	ret = td_batch_init(ctx, &batch, 4096);
	if (ret)
		return fail("td_batch_init", ret);
	td_batch_set_callback(&batch, on_arm, ids);
	if (bulk(&batch, false, &ns))
		return 1;
	printf("  armed %" PRIu64 " (%" PRIu64 " failed): %.0f ns per timer\n",
	       batch.completed - batch.failed, batch.failed, (double)ns / BULK);
	fflush(stdout);
	if (system("qtimerctl stats") != 0)
		printf("  (qtimerctl stats is not available here)\n");

	if (bulk(&batch, true, &ns))
		return 1;
	printf("  cancelled them all: %.0f ns per timer (%" PRIu64 " ops failed in all)\n",
	       (double)ns / BULK, batch.failed);
	td_batch_free(&batch);
	td_close(ctx);
	printf("\nqtimer-demo: done\n");
	return batch.failed ? 1 : 0;
}
