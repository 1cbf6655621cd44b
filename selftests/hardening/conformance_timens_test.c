// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * Time namespaces with positive and negative offsets: absolute monotonic
 * and boottime expiries in the namespace's view, in both.  Needs
 * CONFIG_TIME_NS.
 *
 * Part of the differential conformance with timerfd: conformance.h says
 * how a pair is run and judged.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <sys/timerfd.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "conformance.h"

/* --- time namespaces --------------------------------------------------- */

/* The namespace's offsets are @mono and @boot seconds. */
static int check_offsets(long long mono, long long boot)
{
	FILE *f = fopen("/proc/self/timens_offsets", "re");
	char line[128], name[16];
	long long sec;
	long nsec;
	int seen = 0;

	CHK(f, "%s", strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%15s %lld %ld", name, &sec, &nsec) != 3)
			continue;
		if (!strcmp(name, "monotonic") && sec == mono && !nsec)
			seen |= 1;
		if (!strcmp(name, "boottime") && sec == boot && !nsec)
			seen |= 2;
	}
	fclose(f);
	CHK(seen == 3, "offsets are not %lld/%lld", mono, boot);
	return 0;
}

/*
 * In the namespace: absolute monotonic and boottime one-shots in its view
 * (with negative offsets, 150 ms ahead in its view is long past in the
 * host's: a timer armed in the wrong view fires early), relative ones, an
 * absolute expiry long past in its view but 20 s ahead in the host's
 * (positive offsets; in the wrong view it would be 20 s late) or at 1 ns
 * (negative), and an absolute boottime ticker.
 */
static int timens_pairs(long long mono, long long boot)
{
	__s64 m = t_now(CLOCK_MONOTONIC), b = t_now(CLOCK_BOOTTIME);

	if (check_offsets(mono, boot) ||
	    one_shot("ns absolute monotonic +150 ms", CLOCK_MONOTONIC, true,
		     m + 150 * MS) ||
	    one_shot("ns absolute boottime +150 ms", CLOCK_BOOTTIME, true,
		     b + 150 * MS) ||
	    one_shot("ns relative monotonic 100 ms", CLOCK_MONOTONIC, false,
		     100 * MS) ||
	    one_shot("ns relative boottime 100 ms", CLOCK_BOOTTIME, false,
		     100 * MS))
		return -1;
	if (mono > 0 && one_shot("ns absolute, host +20 s", CLOCK_MONOTONIC, true,
				 m - mono * NSEC_PER_SEC + 20 * NSEC_PER_SEC))
		return -1;
	if (mono < 0 && one_shot("ns absolute 1 ns", CLOCK_MONOTONIC, true, 1))
		return -1;
	return ticker("ns absolute boottime ticker", CLOCK_BOOTTIME, true,
		      t_now(CLOCK_BOOTTIME) + 50 * MS, 50 * MS, 600 * MS);
}

static void run_in_timens(struct __test_metadata *_metadata, long long mono,
			  long long boot)
{
	char offs[128];
	int pid, status;

	ASSERT_EQ(0, pin_here());
	snprintf(offs, sizeof(offs), "monotonic %lld 0\nboottime %lld 0\n",
		 mono, boot);
	pid = t_fork_into_timens(offs);
	if (!pid)
		_exit(timens_pairs(mono, boot) ? 1 : 0);
	if (pid == QT_NO_TIMENS)
		SKIP(return, "no time namespaces (CONFIG_TIME_NS) or no privilege");
	ASSERT_LT(1, pid) TH_LOG("%s", strerror(-pid));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
		TH_LOG("child status %#x", status);
}

TEST(timens_positive_offsets)
{
	run_in_timens(_metadata, 100, 200);
}

/* Behind the host by most of its uptime (a namespace's clocks stay >= 0). */
TEST(timens_negative_offsets)
{
	long long mono = t_now(CLOCK_MONOTONIC) / NSEC_PER_SEC;
	long long boot = t_now(CLOCK_BOOTTIME) / NSEC_PER_SEC;

	run_in_timens(_metadata, mono > 2 ? 1 - mono : -1,
		      boot > 2 ? 1 - boot : -1);
}

TEST_HARNESS_MAIN
