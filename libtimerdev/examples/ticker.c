// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * ticker: periodic timers read by a consumer slower than all of them.  A
 * periodic timer has at most one pending record, whose count says how many
 * periods passed, so a slow reader loses nothing: per ticker, the counts add
 * up to the number of periods elapsed, and each record's expiry lies on the
 * ticker's grid (first + k * period, no drift).
 *
 *   ticker [-p period_ms[,period_ms...]] [-s sleep_ms] [-d duration_ms]
 *
 * Reads block (the context is opened without TD_NONBLOCK).  Exits 0 when
 * the counts and the grid check out.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <timerdev.h>

#include "common.h"

#define MAX_TICKERS	8
#define MSEC		1000000LL

struct ticker {
	uint64_t id;
	int64_t period, first, last;
	uint64_t total;		/* expirations counted by the records */
	unsigned int records;
};

int main(int argc, char **argv)
{
	struct td_timer_spec spec = {
		.clockid = CLOCK_MONOTONIC,
		.flags = TD_TIMER_ABSTIME,
	};
	int64_t sleep_ms = 45, duration_ms = 1000, start, end, now;
	struct qtimer_record recs[MAX_TICKERS];
	struct ticker tickers[MAX_TICKERS];
	char default_periods[] = "5,10,25", *periods = default_periods, *tok;
	unsigned int nr = 0, reads = 0, errors = 0, i;
	struct td_ctx *ctx;
	int ret, j;
	struct example_option options[] = {
		{ 'p', "period_ms[,...]", OPTION_STRING, &periods },
		{ 's', "sleep_ms", OPTION_INT64, &sleep_ms },
		{ 'd', "duration_ms", OPTION_INT64, &duration_ms },
		{ 0 }
	};

	if (example_options(argc, argv, options))
		return 2;
	memset(tickers, 0, sizeof(tickers));
	for (tok = strtok(periods, ","); tok && nr < MAX_TICKERS;
	     tok = strtok(NULL, ","))
		tickers[nr++].period = strtoll(tok, NULL, 0) * MSEC;
	for (i = 0; i < nr; i++) {
		if (tickers[i].period <= 0) {
			fprintf(stderr, "ticker: bad period\n");
			return 2;
		}
	}

	ret = td_open(&ctx, 0);
	if (ret) {
		fprintf(stderr, "ticker: td_open: %s\n", strerror(-ret));
		return 1;
	}

	/* All start one period from a common origin; cookie = ticker index. */
	start = td_now(CLOCK_MONOTONIC);
	for (i = 0; i < nr; i++) {
		tickers[i].first = start + tickers[i].period;
		spec.expires_ns = tickers[i].first;
		spec.period_ns = tickers[i].period;
		spec.cookie = i;
		ret = td_arm(ctx, &spec, &tickers[i].id);
		if (ret) {
			fprintf(stderr, "ticker: td_arm: %s\n", strerror(-ret));
			return 1;
		}
		printf("ticker %u: every %lld ms\n", i,
		       (long long)(tickers[i].period / MSEC));
	}
	printf("consumer: sleeps %lld ms between reads, for %lld ms\n",
	       (long long)sleep_ms, (long long)duration_ms);

	end = start + duration_ms * MSEC;
	while (td_now(CLOCK_MONOTONIC) < end) {
		usleep(sleep_ms * 1000);
		ret = td_read(ctx, recs, MAX_TICKERS);	/* blocks for the first */
		if (ret <= 0) {
			fprintf(stderr, "ticker: td_read: %s\n", strerror(-ret));
			return 1;
		}
		now = td_now(CLOCK_MONOTONIC);
		reads++;
		printf("read %2u at %4lld ms: %d record%s:", reads,
		       (long long)((now - start) / MSEC), ret, ret == 1 ? "" : "s");
		for (j = 0; j < ret; j++) {
			struct ticker *t;

			if (recs[j].cookie >= nr) {
				errors++;
				continue;
			}
			t = &tickers[recs[j].cookie];
			printf("  [%llu] x%u", (unsigned long long)recs[j].cookie,
			       recs[j].count);
			if (recs[j].id != t->id || recs[j].flags || !recs[j].count ||
			    (recs[j].expires_ns - t->first) % t->period ||
			    recs[j].expires_ns <= t->last || recs[j].expires_ns > now) {
				printf(" (BAD)");
				errors++;
			}
			t->last = recs[j].expires_ns;
			t->total += recs[j].count;
			t->records++;
		}
		printf("\n");
	}

	now = td_now(CLOCK_MONOTONIC);
	for (i = 0; i < nr; i++) {
		struct ticker *t = &tickers[i];
		/* Periods covered by what was read, and elapsed by now. */
		uint64_t covered = t->records ? (t->last - t->first) / t->period + 1 : 0;
		uint64_t elapsed = (now - t->first) / t->period + 1;

		printf("ticker %u: %u reads, %llu expirations counted; "
		       "%llu periods up to its last record, %llu elapsed by now\n",
		       i, t->records, (unsigned long long)t->total,
		       (unsigned long long)covered, (unsigned long long)elapsed);
		if (t->total != covered || t->total > elapsed || !t->records)
			errors++;
		/*
		 * ARMED, or QUEUED if it fired again since the last read, or
		 * 0 if that read took its record from the record ring and
		 * nothing has re-armed it since; never -ENOENT.
		 */
		if (td_cancel(ctx, t->id) < 0)
			errors++;
	}
	td_close(ctx);
	return example_verdict("ticker", errors,
			       "one record per ticker per read, counts match elapsed/period");
}
