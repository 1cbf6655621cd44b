// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * Allocation-failure sweeps (Documentation/fault-injection, "Systematic
 * faults using fail-nth"): for open() and each operation that allocates
 * (ARM on a new file and on a file whose id table and heap must grow past
 * kmalloc sizes, MODIFY of a fired-unread timer, SUBMIT, and the read of a
 * ticker that must re-enter a full heap, with a ring or without), fail the
 * 1st, 2nd, ... allocation of the call in turn, until the call no longer
 * reaches the n-th one.  Every
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
 */
#define _GNU_SOURCE
#include "kselftest_harness.h"
#include "helpers.h"

#define FAILSLAB	"/sys/kernel/debug/failslab/"
#define FAILPAGE	"/sys/kernel/debug/fail_page_alloc/"
#define FAIL_NTH	"/proc/thread-self/fail-nth"

/* No call here makes anywhere near this many allocations. */
#define MAX_NTH		400

#define MAX_KNOBS	16

/* Fillers ring_rearm_regrows_heap adds: its heap grows several times. */
#define RING_FILLERS	300

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

static int nth_arm(int fd, unsigned int n)
{
	char buf[16];
	int len = snprintf(buf, sizeof(buf), "%u", n);

	return pwrite(fd, buf, len, 0) == len ? 0 : -errno;
}

/*
 * After the call under test: true when the n-th allocation was reached (and
 * failed).  Disarms what is left, so that nothing after fails by accident.
 */
static bool nth_fired(int fd)
{
	char buf[16] = "";
	bool fired;

	if (pread(fd, buf, sizeof(buf) - 1, 0) <= 0)
		return false;
	fired = atoi(buf) == 0;
	nth_arm(fd, 0);
	return fired;
}

/*
 * What happened at each allocation point, for the log: 'E' the call failed
 * with -ENOMEM, 's' it succeeded anyway (the failed allocation had a
 * fallback, e.g. kvmalloc's vmalloc or kmemleak's pool).
 */
struct outcomes {
	char s[MAX_NTH + 1];
	int n;
};

static void outcome(struct outcomes *o, bool nomem)
{
	if (o->n < MAX_NTH)
		o->s[o->n++] = nomem ? 'E' : 's';
	o->s[o->n] = '\0';
}

/* Heaps keep their size until files close; halve them back to <= 256. */
static void shrink_heaps(void)
{
	int i;

	for (i = 0; i < 32; i++) {
		int fd = t_open(0);

		if (fd >= 0)
			close(fd);
	}
}

static long long user_timers(void)
{
	struct t_fdinfo fi;
	int fd = t_open(0);
	long long v = -1;

	if (fd < 0)
		return -1;
	if (!t_fdinfo(fd, &fi))
		v = fi.user_timers;
	close(fd);
	return v;
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

/* Arms a far-away one-shot on CPU 0 without fault injection. */
static int arm_far(int fd, __u64 cookie, __u64 *id)
{
	return t_arm_cpu(fd, CLOCK_MONOTONIC, 0, 60 * NSEC_PER_SEC, 0,
			  cookie, 0, id);
}

static void far_op(struct qtimer_op *op, long k, void *cookie0)
{
	*op = t_op(CLOCK_MONOTONIC, QTIMER_F_CPU, 60 * NSEC_PER_SEC, 0,
		    *(__u64 *)cookie0 + k);
}

/* n far-away one-shots on CPU 0 in SUBMIT batches; 0 or -errno. */
static int arm_many(int fd, int n, __u64 cookie0)
{
	return t_arm_many(fd, n, far_op, &cookie0, NULL, 0);
}

/*
 * Exactly one record arrives, of @cookie (and @id if non-zero), and then
 * nothing more within 100 ms.  Returns 0 or a step number.
 */
static int expect_one(int fd, __u64 cookie, __u64 id, __s64 not_before)
{
	struct qtimer_record rec;
	__s64 stamp;

	if (t_collect_stamped(fd, &rec, 1, QT_ARRIVE_MS, CLOCK_MONOTONIC,
			       &stamp) != 1)
		return 1;
	if (rec.cookie != cookie || (id && rec.id != id))
		return 2;
	if (rec.expires_ns < not_before || stamp < rec.expires_ns)
		return 3;
	if (rec.count != 1 || rec.flags != QTIMER_REC_LAST)
		return 4;
	t_sleep_ms(100);
	return t_nothing_pending(fd) ? 5 : 0;
}

TEST_F_TIMEOUT(failnth, open, 120)
{
	int n, fd = -1, failures = 0;
	struct outcomes o = { .n = 0 };
	bool fired;

	REQUIRE_FAILNTH();

	for (n = 1; n < MAX_NTH; n++) {
		ASSERT_EQ(0, nth_arm(self->nth, n));
		fd = open(QT_DEV, O_RDWR | O_NONBLOCK | O_CLOEXEC);
		fired = nth_fired(self->nth);
		if (fired)
			outcome(&o, fd < 0);
		if (fd < 0) {
			ASSERT_EQ(ENOMEM, errno) TH_LOG("open, allocation %d", n);
			ASSERT_TRUE(fired);
			failures++;
			/* Nothing is left half-made: the next open works. */
			fd = t_open(O_NONBLOCK);
			ASSERT_LE(0, fd);
		}
		ASSERT_EQ(0, t_arm(fd, CLOCK_MONOTONIC, 0, 0, 0, n, NULL));
		ASSERT_EQ(0, expect_one(fd, n, 0, 0)) TH_LOG("open, allocation %d", n);
		close(fd);
		if (!fired)
			break;
	}
	ASSERT_LT(n, MAX_NTH);
	ASSERT_LT(0, failures);
	TH_LOG("open: %d allocation points, %d failed cleanly: %s", n - 1,
	       failures, o.s);
}

/* ARM on a new file: the timer, the first id table and maybe the heap. */
TEST_F_TIMEOUT(failnth, arm_new_file, 120)
{
	int n, ret, failures = 0;
	struct t_fdinfo fi;
	bool fired;
	__u64 id;
	struct outcomes o = { .n = 0 };

	REQUIRE_FAILNTH();

	for (n = 1; n < MAX_NTH; n++) {
		int fd = t_open(O_NONBLOCK);
		__s64 t0 = t_now(CLOCK_MONOTONIC);

		ASSERT_LE(0, fd);
		id = 0;
		ASSERT_EQ(0, nth_arm(self->nth, n));
		ret = t_arm_cpu(fd, CLOCK_MONOTONIC, 0, 20 * NSEC_PER_MSEC, 0,
				 n, 0, &id);
		fired = nth_fired(self->nth);
		if (fired)
			outcome(&o, ret == -ENOMEM);
		ASSERT_EQ(0, t_fdinfo(fd, &fi));
		if (ret) {
			ASSERT_EQ(-ENOMEM, ret) TH_LOG("arm, allocation %d", n);
			failures++;
			EXPECT_EQ(0, fi.timers);
			EXPECT_EQ(self->user_base, fi.user_timers);
			/* It must never fire. */
			t_sleep_ms(80);
			EXPECT_EQ(0, t_nothing_pending(fd));
			t0 = t_now(CLOCK_MONOTONIC);
			ASSERT_EQ(0, t_arm_cpu(fd, CLOCK_MONOTONIC, 0,
						20 * NSEC_PER_MSEC, 0, n, 0, &id));
		} else {
			EXPECT_EQ(1, fi.timers);
			EXPECT_EQ(self->user_base + 1, fi.user_timers);
		}
		EXPECT_EQ(0, expect_one(fd, n, id, t0 + 20 * NSEC_PER_MSEC))
			TH_LOG("arm, allocation %d", n);
		ASSERT_EQ(0, t_fdinfo(fd, &fi));
		EXPECT_EQ(0, fi.timers);
		close(fd);
		if (!fired)
			break;
	}
	ASSERT_LT(n, MAX_NTH);
	ASSERT_LT(0, failures);
	TH_LOG("arm (new file): %d allocation points: %s", n - 1, o.s);
}

/*
 * ARM of timer 1025: the id table grows from 1024 to 2048 slots (16 KiB of
 * slots, 8 KiB of generations) and the CPU's heap from 1024 entries, all
 * beyond kmalloc's page-sized caches, so kvmalloc may take its vmalloc path.
 */
TEST_F_TIMEOUT(failnth, arm_grows_tables, 600)
{
	enum { PRE = 1024 };
	int n, ret, failures = 0;
	struct t_fdinfo fi;
	bool fired;
	__u64 id;
	struct outcomes o = { .n = 0 };

	REQUIRE_FAILNTH();

	for (n = 1; n < MAX_NTH; n++) {
		int fd = t_open(O_NONBLOCK);
		__s64 t0;

		ASSERT_LE(0, fd);
		ASSERT_EQ(0, arm_many(fd, PRE, 1ULL << 32));
		id = 0;
		t0 = t_now(CLOCK_MONOTONIC);
		ASSERT_EQ(0, nth_arm(self->nth, n));
		ret = t_arm_cpu(fd, CLOCK_MONOTONIC, 0, 20 * NSEC_PER_MSEC, 0,
				 n, 0, &id);
		fired = nth_fired(self->nth);
		if (fired)
			outcome(&o, ret == -ENOMEM);
		ASSERT_EQ(0, t_fdinfo(fd, &fi));
		if (ret) {
			ASSERT_EQ(-ENOMEM, ret) TH_LOG("arm 1025, allocation %d", n);
			failures++;
			EXPECT_EQ(PRE, fi.timers);
			EXPECT_EQ(self->user_base + PRE, fi.user_timers);
			t_sleep_ms(80);
			EXPECT_EQ(0, t_nothing_pending(fd));
			t0 = t_now(CLOCK_MONOTONIC);
			ASSERT_EQ(0, t_arm_cpu(fd, CLOCK_MONOTONIC, 0,
						20 * NSEC_PER_MSEC, 0, n, 0, &id));
		} else {
			EXPECT_EQ(PRE + 1, fi.timers);
		}
		EXPECT_EQ(0, expect_one(fd, n, id, t0 + 20 * NSEC_PER_MSEC))
			TH_LOG("arm 1025, allocation %d", n);
		ASSERT_EQ(0, t_fdinfo(fd, &fi));
		EXPECT_EQ(PRE, fi.timers);
		close(fd);
		if (!fired)
			break;
	}
	ASSERT_LT(n, MAX_NTH);
	ASSERT_LT(0, failures);
	TH_LOG("arm (growing tables): %d allocation points: %s", n - 1, o.s);
}

/* Arms a one-shot due now and waits until its record is pending. */
static int arm_fired(int fd, __u64 cookie, __u64 *id)
{
	int ret = t_arm_cpu(fd, CLOCK_MONOTONIC, 0, 0, 0, cookie, 0, id);

	if (ret)
		return ret;
	return t_wait_readable(fd, QT_ARRIVE_MS) == 1 ? 0 : -ETIME;
}

/*
 * MODIFY of a fired, unread one-shot needs a fresh timer object (the old
 * one stays on the ready queue to die).  On -ENOMEM the old record must
 * still be there, and be the only one.
 */
TEST_F_TIMEOUT(failnth, modify_fired, 120)
{
	int n, ret, failures = 0;
	struct qtimer_record rec;
	struct t_fdinfo fi;
	bool fired;
	__u64 id;
	struct outcomes o = { .n = 0 };

	REQUIRE_FAILNTH();

	for (n = 1; n < MAX_NTH; n++) {
		int fd = t_open(O_NONBLOCK);
		__s64 t0;

		ASSERT_LE(0, fd);
		ASSERT_EQ(0, arm_fired(fd, n, &id));
		t0 = t_now(CLOCK_MONOTONIC);
		ASSERT_EQ(0, nth_arm(self->nth, n));
		/* Far enough out that it is still armed when fdinfo is read. */
		ret = t_modify(fd, id, 0, 300 * NSEC_PER_MSEC, 0, 0);
		fired = nth_fired(self->nth);
		if (fired)
			outcome(&o, ret == -ENOMEM);
		ASSERT_EQ(0, t_fdinfo(fd, &fi));
		EXPECT_EQ(1, fi.timers);
		if (ret < 0) {
			ASSERT_EQ(-ENOMEM, ret) TH_LOG("modify, allocation %d", n);
			failures++;
			EXPECT_EQ(1, fi.pending);
			ASSERT_EQ(1, t_read(fd, &rec, 1));
			EXPECT_EQ(id, rec.id);
			EXPECT_EQ(n, rec.cookie);
			EXPECT_LT(rec.expires_ns, t0);
			EXPECT_EQ(QTIMER_REC_LAST, rec.flags);
			/* It was read: the one-shot is gone. */
			EXPECT_EQ(-ENOENT, t_modify(fd, id, 0, 0, 0, 0));
			t_sleep_ms(80);
			EXPECT_EQ(0, t_nothing_pending(fd));
		} else {
			EXPECT_EQ(QTIMER_CANCEL_QUEUED, ret);
			EXPECT_EQ(0, fi.pending);
			EXPECT_EQ(0, expect_one(fd, n, id, t0 + 300 * NSEC_PER_MSEC))
				TH_LOG("modify, allocation %d", n);
		}
		ASSERT_EQ(0, t_fdinfo(fd, &fi));
		EXPECT_EQ(0, fi.timers);
		close(fd);
		if (!fired)
			break;
	}
	ASSERT_LT(n, MAX_NTH);
	ASSERT_LT(0, failures);
	TH_LOG("modify (fired): %d allocation points: %s", n - 1, o.s);
}

/*
 * SUBMIT with arms, a cancel and two modifies (one of a fired timer, which
 * allocates).  Every op that failed says -ENOMEM in its result and had no
 * effect; every other op did exactly what it does without injection.  With
 * STOP_ON_ERROR the batch stops after the failed op.
 */
TEST_F_TIMEOUT(failnth, submit, 180)
{
	enum { NARM = 8, NOPS = NARM + 3 };
	struct qtimer_op ops[NOPS];
	struct qtimer_record recs[NOPS + 2];
	int pass, n, i, ret, nomem_total = 0;
	struct t_fdinfo fi;
	bool fired;

	REQUIRE_FAILNTH();

	for (pass = 0; pass < 2; pass++) {
		__u32 flags = pass ? QTIMER_SUBMIT_STOP_ON_ERROR : 0;

		for (n = 1; n < MAX_NTH; n++) {
			int fd = t_open(O_NONBLOCK), expect_recs = 0, got;
			int nomem = -1, last;
			__u64 cancel_id, fired_id;
			__u32 done = 0;
			__s64 t0;

			ASSERT_LE(0, fd);
			ASSERT_EQ(0, arm_far(fd, 900, &cancel_id));
			ASSERT_EQ(0, arm_fired(fd, 901, &fired_id));
			t0 = t_now(CLOCK_MONOTONIC);
			for (i = 0; i < NARM; i++) {
				ops[i] = t_op(CLOCK_MONOTONIC, 0,
					       20 * NSEC_PER_MSEC, 0, 1000 + i);
				ops[i].opcode = QTIMER_OP_ARM;
			}
			memset(&ops[NARM], 0, 3 * sizeof(ops[0]));
			ops[NARM].opcode = QTIMER_OP_CANCEL;
			ops[NARM].id = cancel_id;
			ops[NARM + 1].opcode = QTIMER_OP_MODIFY;
			ops[NARM + 1].id = fired_id;
			ops[NARM + 1].expires_ns = 30 * NSEC_PER_MSEC;
			ops[NARM + 2] = t_op(CLOCK_MONOTONIC, 0,
					      25 * NSEC_PER_MSEC, 0, 1000 + NARM);
			ops[NARM + 2].opcode = QTIMER_OP_ARM;
			for (i = 0; i < NOPS; i++)
				ops[i].result = 0x5a5a5a5a;

			ASSERT_EQ(0, nth_arm(self->nth, n));
			ret = t_submit(fd, ops, NOPS, flags, &done);
			fired = nth_fired(self->nth);

			for (i = 0; i < NOPS; i++) {
				if (ops[i].result != -ENOMEM)
					continue;
				ASSERT_EQ(-1, nomem) TH_LOG("two ops failed");
				nomem = i;
			}
			last = flags && nomem >= 0 ? nomem + 1 : NOPS;
			ASSERT_EQ(last, ret) TH_LOG("submit, allocation %d", n);
			EXPECT_EQ(last, done);
			for (i = 0; i < NOPS; i++) {
				int want = i < NARM || i == NARM + 2 ? 0 :
					   i == NARM ? QTIMER_CANCEL_ARMED :
					   QTIMER_CANCEL_QUEUED;

				if (i >= last) {
					/* Not processed: untouched. */
					EXPECT_EQ(0x5a5a5a5a, ops[i].result);
					continue;
				}
				if (i == nomem)
					continue;
				EXPECT_EQ(want, ops[i].result)
					TH_LOG("op %d, allocation %d", i, n);
				if (i < NARM || i == NARM + 2 || i == NARM + 1)
					expect_recs++;
			}
			/* The fired timer's old record, if not replaced. */
			if (last <= NARM + 1 || nomem == NARM + 1)
				expect_recs++;
			if (nomem >= 0)
				nomem_total++;

			ASSERT_EQ(0, t_fdinfo(fd, &fi));
			got = t_collect(fd, recs, NOPS + 2, 300);
			EXPECT_EQ(expect_recs, got) TH_LOG("allocation %d, failed op %d", n, nomem);
			for (i = 0; i < got; i++) {
				int op = recs[i].cookie == 901 ? NARM + 1 :
					 recs[i].cookie == 1000 + NARM ? NARM + 2 :
					 (int)recs[i].cookie - 1000;

				ASSERT_TRUE(op >= 0 && op < NOPS &&
					    recs[i].cookie != 900)
					TH_LOG("stray record, cookie %llu",
					       (unsigned long long)recs[i].cookie);
				EXPECT_EQ(QTIMER_REC_LAST, recs[i].flags);
				if (op != NARM + 1) {
					/* A failed ARM armed nothing. */
					EXPECT_NE(nomem, op);
				} else if (nomem != NARM + 1 && last > NARM + 1) {
					/* Replaced: the new schedule only. */
					EXPECT_LE(t0 + 30 * NSEC_PER_MSEC,
						  recs[i].expires_ns);
				} else {
					/* Not replaced: the old record. */
					EXPECT_GT(t0, recs[i].expires_ns);
				}
			}
			t_sleep_ms(50);
			EXPECT_EQ(0, t_nothing_pending(fd));
			ASSERT_EQ(0, t_fdinfo(fd, &fi));
			/* The cancel target is left if the batch stopped early. */
			EXPECT_EQ(last <= NARM || nomem == NARM ? 1 : 0, fi.timers);
			close(fd);
			if (!fired)
				break;
		}
		ASSERT_LT(n, MAX_NTH);
		TH_LOG("submit%s: %d allocation points", pass ? " (stop on error)" : "",
		       n - 1);
	}
	/*
	 * With failed page allocations counted too, which of them an op
	 * needs depends on the slabs' and shards' state (a slab with room,
	 * an id block already there): on one boot of debug-6.1 none of the
	 * 12 failed an op, every op succeeded and all was as without
	 * injection.  The slab variant must fail some.
	 */
	if (variant->pages)
		TH_LOG("%d ops failed with -ENOMEM", nomem_total);
	else
		ASSERT_LT(0, nomem_total);
}

/*
 * A ticker's record is read while its heap is full: read() must put it
 * back and so needs to grow the heap.  With that allocation failed, the
 * record is not delivered: read() fails with ENOMEM and the record stays
 * pending, with its count, for the next read(), which delivers it (a page
 * allocation failure may be absorbed by the slab instead); the
 * ticker keeps ticking and the timer count is right.  Fillers are added one at a
 * time while the ticker is out of the heap until a read allocates.  The
 * heap is CLOCK_BOOTTIME's on the last CPU, which other suites rarely use,
 * so that it is small: a small heap grows with kmalloc alone, so failing
 * that one allocation fails the growth (a big one has kvmalloc's vmalloc
 * fallback, which single-shot fail-nth cannot get past).
 */
TEST_F_TIMEOUT(failnth, read_regrows_heap, 300)
{
	struct qtimer_record rec;
	int fd = t_open(O_NONBLOCK), fillers = 0, cpu = t_nr_cpus() - 1, n;
	struct t_fdinfo fi;
	bool fired = false;
	__u64 tick;

	REQUIRE_FAILNTH();
	ASSERT_LE(0, fd);
	if (!t_cpu_online(cpu))
		cpu = 0;
	ASSERT_EQ(0, t_pin_self(cpu));
	ASSERT_EQ(0, t_arm_cpu(fd, CLOCK_BOOTTIME, 0, 0, NSEC_PER_MSEC,
				7, cpu, &tick));
	while (!fired && fillers < 5000) {
		ASSERT_EQ(1, t_wait_readable(fd, QT_ARRIVE_MS));
		ASSERT_EQ(0, t_arm_cpu(fd, CLOCK_BOOTTIME, 0, 60 * NSEC_PER_SEC,
					0, 1000 + fillers, cpu, NULL));
		fillers++;
		ASSERT_EQ(0, nth_arm(self->nth, 1));
		n = t_read(fd, &rec, 1);
		fired = nth_fired(self->nth);
		/*
		 * A failed slab allocation fails the growth; a failed page
		 * allocation may be absorbed by the slab's fallback to a
		 * smaller order, and then the read simply succeeds.
		 */
		if (fired && (!variant->pages || n == -ENOMEM)) {
			/* Not delivered: still pending, and readable. */
			ASSERT_EQ(-ENOMEM, n);
			ASSERT_EQ(1, t_wait_readable(fd, 0));
			n = t_read(fd, &rec, 1);
		}
		ASSERT_EQ(1, n);
		ASSERT_EQ(tick, rec.id);
		ASSERT_EQ(7, rec.cookie);
		ASSERT_EQ(0, rec.flags);
		ASSERT_LE(1, rec.count);
	}
	ASSERT_TRUE(fired) TH_LOG("no read needed to grow the heap");
	TH_LOG("the read after %d fillers grew the heap (its first allocation failed)",
	       fillers);
	/* Still ticking, and nothing lost or doubled. */
	ASSERT_EQ(1, t_collect(fd, &rec, 1, QT_ARRIVE_MS));
	EXPECT_EQ(tick, rec.id);
	ASSERT_EQ(0, t_fdinfo(fd, &fi));
	EXPECT_EQ(fillers + 1, fi.timers);
	EXPECT_LE(0, t_cancel(fd, tick));
	close(fd);
}

/*
 * The same with a ring: the consumer is done with a ticker's record, and
 * re-arming the ticker may need its full heap to grow.  poll() and an
 * O_NONBLOCK read() must not sleep for that (the resize mutex may be held
 * by another user's growth, and the allocation may reclaim): they leave it
 * to the file's drain, which grows the heap and re-arms the ticker.  So
 * with fail-nth armed, neither fails for want of memory, at any filler
 * count, while the ticker keeps ticking.  Same heap and fillers as above, one
 * filler at a time, so that the heap is exactly full at each of its
 * growths; the period is long enough that the re-arm usually goes into
 * the heap rather than firing at once for periods missed.
 */
TEST_F_TIMEOUT(failnth, ring_rearm_regrows_heap, 300)
{
	int fd, fillers, cpu = t_nr_cpus() - 1, n, ready, read = 0;
	struct qtimer_record rec;
	struct t_ring ring;
	struct t_fdinfo fi;
	__u64 tick;

	REQUIRE_FAILNTH();
	if (!t_ring_offered())
		SKIP(return, "the module offers no ring");
	fd = t_open(O_NONBLOCK);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, t_ring_map(&ring, fd, 64));
	if (!t_cpu_online(cpu))
		cpu = 0;
	ASSERT_EQ(0, t_pin_self(cpu));
	ASSERT_EQ(0, t_arm_cpu(fd, CLOCK_BOOTTIME, 0, 0, 20 * NSEC_PER_MSEC,
				7, cpu, &tick));
	for (fillers = 0; fillers < RING_FILLERS; ) {
		/* Its record is in the ring: the ticker is out of its heap. */
		ASSERT_EQ(1, t_ring_wait_pending(&ring, 1, QT_ARRIVE_MS))
			TH_LOG("the ticker stopped after %d fillers", fillers);
		ASSERT_EQ(0, t_arm_cpu(fd, CLOCK_BOOTTIME, 0, 60 * NSEC_PER_SEC,
					0, 1000 + fillers, cpu, NULL));
		fillers++;
		ASSERT_EQ(1, t_ring_consume(&ring, &rec, 1));
		ASSERT_EQ(tick, rec.id);
		ASSERT_EQ(7, rec.cookie);
		ASSERT_LE(1, rec.count);
		/*
		 * The tail passed it: re-arming it is the kernel's now.  Had
		 * poll() tried to grow the heap, the failed allocation would
		 * leave the ticker stuck and poll() saying EPOLLIN with
		 * nothing to take; had read(), it would say -ENOMEM.  (An
		 * allocation may still be failed harmlessly: the debug
		 * kernel's object trackers take one from a pool that refills
		 * when a re-armed ticker starts the base's hrtimer.)
		 */
		ASSERT_EQ(0, nth_arm(self->nth, 1));
		ready = t_wait_readable(fd, 0);
		nth_fired(self->nth);
		ASSERT_LE(0, ready);
		if (ready) {
			ASSERT_EQ(1, t_ring_wait_pending(&ring, 1, 0))
				TH_LOG("poll() said EPOLLIN with nothing to take, after %d fillers: it tried to grow the heap",
				       fillers);
		}
		ASSERT_EQ(0, nth_arm(self->nth, 1));
		n = t_read(fd, &rec, 1);
		nth_fired(self->nth);
		ASSERT_NE(-ENOMEM, n)
			TH_LOG("an O_NONBLOCK read() tried to grow the heap, after %d fillers",
			       fillers);
		if (n == -EAGAIN)
			continue;
		/* Re-armed and already due again. */
		ASSERT_EQ(1, n) TH_LOG("read(): %d", n);
		ASSERT_EQ(tick, rec.id);
		read++;
	}
	TH_LOG("%d fillers, neither call grew the heap (%d read() took the next record)",
	       fillers, read);
	/* Still ticking, nothing lost. */
	ASSERT_EQ(1, t_ring_collect(&ring, &rec, 1, QT_ARRIVE_MS,
				     CLOCK_BOOTTIME, NULL));
	EXPECT_EQ(tick, rec.id);
	EXPECT_EQ(7, rec.cookie);
	EXPECT_LE(1, rec.count);
	ASSERT_EQ(0, t_fdinfo(fd, &fi));
	EXPECT_EQ(fillers + 1, fi.timers);
	EXPECT_LE(0, t_cancel(fd, tick));
	t_ring_unmap(&ring);
	close(fd);
}

TEST_HARNESS_MAIN
