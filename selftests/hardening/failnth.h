/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * Allocation-failure sweeps (Documentation/fault-injection, "Systematic
 * faults using fail-nth"), one suite a kind of call: open() and the calls
 * that arm, ARM on a new file and on a file whose id table and heap must
 * grow past kmalloc sizes and MODIFY of a fired-unread timer
 * (failnth_arm_test.c); SUBMIT (failnth_submit_test.c); and the read of a
 * ticker that must re-enter a full heap, with a ring or without
 * (failnth_read_test.c).  Each fails the 1st, 2nd, ... allocation of the
 * call in turn, until the call no longer reaches the n-th one.  Every
 * call must then return success or a clean -ENOMEM that changed nothing:
 * the timer counts in fdinfo are unchanged, a failed ARM never fires, a
 * failed MODIFY leaves the old record pending, and the file keeps working.
 * Leaks are caught by the VM's kmemleak scan after rmmod.
 *
 * Two variants: "slab" makes failslab count sleeping allocations (its
 * default skips them); "pages" also makes fail_page_alloc count order-0
 * sleeping page allocations, which reaches kvmalloc's vmalloc fallback and
 * large kmalloc.  Both leave probability at 0: only fail-nth injects, and
 * only into this task.  Needs root and a kernel with CONFIG_FAILSLAB and
 * fault-injection debugfs (the debug kernel); skipped elsewhere.
 *
 * The sweep's pieces are failnth.c's; the `failnth` fixture, which sets
 * the knobs and puts them back, and failnth_sweep(), the loop every sweep
 * runs, are declared only where kselftest_harness.h was included first, so
 * that failnth.c can include this header too.
 */
#ifndef _QT_FAILNTH_H
#define _QT_FAILNTH_H

#include "helpers.h"

#define FAILSLAB	"/sys/kernel/debug/failslab/"
#define FAILPAGE	"/sys/kernel/debug/fail_page_alloc/"
#define FAIL_NTH	"/proc/thread-self/fail-nth"

/* No call here makes anywhere near this many allocations. */
#define MAX_NTH		400

int nth_arm(int fd, unsigned int n);
bool nth_fired(int fd);

/*
 * What happened at each allocation point, for the log: 'E' the call failed
 * with -ENOMEM, 's' it succeeded anyway (the failed allocation had a
 * fallback, e.g. kvmalloc's vmalloc or kmemleak's pool).
 */
struct outcomes {
	char s[MAX_NTH + 1];
	int n;
};

void outcome(struct outcomes *o, bool nomem);
void shrink_heaps(void);
long long user_timers(void);

/* Arms a far-away one-shot on CPU 0 without fault injection. */
int arm_far(int fd, __u64 cookie, __u64 *id);
/* n far-away one-shots on CPU 0 in SUBMIT batches; 0 or -errno. */
int arm_many(int fd, int n, __u64 cookie0);
/* Arms a one-shot due now and waits until its record is pending. */
int arm_fired(int fd, __u64 cookie, __u64 *id);
int expect_one(int fd, __u64 cookie, __u64 id, __s64 not_before);

#ifdef __KSELFTEST_HARNESS_H

#define MAX_KNOBS	16

FIXTURE(failnth)
{
	int nth;		/* /proc/thread-self/fail-nth */
	struct t_knob knobs[MAX_KNOBS];
	int nr_knobs;
	long long user_base;	/* user_timers before the test */
	const char *skip;	/* why every test here skips, or NULL */
};

/*
 * The 6.1 harness runs the test body after a SKIP() in the fixture setup,
 * so the setup records the reason and each test skips itself.
 */
#define REQUIRE_FAILNTH() do {						\
	if (self->skip)							\
		SKIP(return, "%s", self->skip);				\
} while (0)

FIXTURE_VARIANT(failnth)
{
	bool pages;
};

FIXTURE_VARIANT_ADD(failnth, slab)
{
	.pages = false,
};

FIXTURE_VARIANT_ADD(failnth, pages)
{
	.pages = true,
};

static int knob(FIXTURE_DATA(failnth) *self, const char *dir,
		const char *name, const char *val)
{
	char path[160];

	snprintf(path, sizeof(path), "%s%s", dir, name);
	return t_knob_set(&self->knobs[self->nr_knobs++], path, val);
}

FIXTURE_SETUP(failnth)
{
	int ret = 0;

	self->nth = -1;
	if (geteuid())
		self->skip = "needs root for the fault-injection knobs";
	else if (access(FAILSLAB "ignore-gfp-wait", W_OK))
		self->skip = "no failslab in debugfs (needs CONFIG_FAILSLAB and CONFIG_FAULT_INJECTION_DEBUG_FS)";
	else if (variant->pages && access(FAILPAGE "min-order", W_OK))
		self->skip = "no fail_page_alloc in debugfs (needs CONFIG_FAIL_PAGE_ALLOC)";
	else if ((self->nth = open(FAIL_NTH, O_RDWR | O_CLOEXEC)) < 0)
		self->skip = "no " FAIL_NTH " (needs CONFIG_FAULT_INJECTION)";
	if (self->skip)
		return;

	/* fail-nth only; nobody else's allocations, no console noise. */
	ret |= knob(self, FAILSLAB, "probability", "0");
	ret |= knob(self, FAILSLAB, "task-filter", "Y");
	ret |= knob(self, FAILSLAB, "verbose", "0");
	ret |= knob(self, FAILSLAB, "ignore-gfp-wait", "N");
	if (variant->pages) {
		ret |= knob(self, FAILPAGE, "probability", "0");
		ret |= knob(self, FAILPAGE, "task-filter", "Y");
		ret |= knob(self, FAILPAGE, "verbose", "0");
		ret |= knob(self, FAILPAGE, "ignore-gfp-wait", "N");
		ret |= knob(self, FAILPAGE, "ignore-gfp-highmem", "N");
		ret |= knob(self, FAILPAGE, "min-order", "0");
	}
	ASSERT_EQ(0, ret);
	/* One CPU, so the heap under test is the same every time. */
	ASSERT_EQ(0, t_pin_self(0));
	shrink_heaps();
	self->user_base = user_timers();
	ASSERT_LE(0, self->user_base);
}

FIXTURE_TEARDOWN(failnth)
{
	int i;

	if (self->nth >= 0) {
		nth_arm(self->nth, 0);
		close(self->nth);
	}
	for (i = self->nr_knobs - 1; i >= 0; i--)
		EXPECT_EQ(0, t_knob_restore(&self->knobs[i]));
	if (self->nth >= 0)
		EXPECT_EQ(self->user_base, user_timers());
}

/*
 * One try of a sweep: the call under test with its n-th allocation failed
 * (if it gets that far), what it works on, and what it did.
 */
struct failnth_try {
	const char *what;	/* the sweep's, for the log */
	int n;
	int fd;			/* the file, closed after the check; or -1 */
	__u64 id;		/* the timer the call works on or armed */
	__s64 t0;		/* taken before the call */
	int ret;		/* the call's result, or -errno */
	bool fired;		/* it reached the n-th allocation */
	void *arg;		/* the sweep's own */
};

/* A kind of call to sweep, in three steps. */
struct failnth_call {
	/* Without fault injection: the file and what the call needs. */
	void (*prepare)(struct __test_metadata *_metadata,
			FIXTURE_DATA(failnth) *self, struct failnth_try *t);
	/* The call, with fail-nth armed: its result, or -errno. */
	int (*call)(struct failnth_try *t);
	/* What the call did, failed or not; true if it said -ENOMEM. */
	bool (*check)(struct __test_metadata *_metadata,
		      FIXTURE_DATA(failnth) *self, struct failnth_try *t);
};

/*
 * The sweep: fail the 1st, 2nd, ... allocation of the call in turn, each
 * try on a file of its own, until the call no longer reaches the n-th.
 * Logs what happened at each allocation point; returns how many tries
 * the call failed with -ENOMEM.
 */
static inline int failnth_sweep(struct __test_metadata *_metadata,
				FIXTURE_DATA(failnth) *self,
				const struct failnth_call *c, const char *what,
				void *arg)
{
	struct outcomes o = { .n = 0 };
	int n, failures = 0;

	for (n = 1; n < MAX_NTH; n++) {
		struct failnth_try t = {
			.what = what, .n = n, .fd = -1, .arg = arg,
		};

		if (c->prepare)
			c->prepare(_metadata, self, &t);
		ASSERT_EQ(0, nth_arm(self->nth, n));
		t.ret = c->call(&t);
		t.fired = nth_fired(self->nth);
		if (t.fired)
			outcome(&o, t.ret == -ENOMEM);
		failures += c->check(_metadata, self, &t);
		if (t.fd >= 0)
			close(t.fd);
		if (!t.fired)
			break;
	}
	ASSERT_LT(n, MAX_NTH);
	TH_LOG("%s: %d allocation points, %d failed cleanly: %s", what, n - 1,
	       failures, o.s);
	return failures;
}

#endif /* __KSELFTEST_HARNESS_H */

#endif /* _QT_FAILNTH_H */
