// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * Fail-nth sweeps (failnth.h) of open() and the calls that arm: ARM on a
 * new file, ARM on a file whose id table and heap must grow past kmalloc
 * sizes, MODIFY of a fired, unread one-shot, and the timer table: its
 * setup on a file with timers, and an ARM that must give it a page.
 */
#define _GNU_SOURCE
#include <sys/mman.h>

#include "kselftest_harness.h"
#include "failnth.h"

static int open_dev(struct failnth_try *t)
{
	t->fd = t_open(O_NONBLOCK);
	return t->fd < 0 ? t->fd : 0;
}

/* Opened or not, the file (or the next one) works. */
static bool check_open(struct __test_metadata *_metadata,
		       FIXTURE_DATA(failnth) *self, struct failnth_try *t)
{
	if (t->ret) {
		ASSERT_EQ(-ENOMEM, t->ret) TH_LOG("%s, allocation %d", t->what, t->n);
		ASSERT_TRUE(t->fired);
		/* Nothing is left half-made: the next open works. */
		t->fd = t_open(O_NONBLOCK);
		ASSERT_LE(0, t->fd);
	}
	ASSERT_EQ(0, t_arm(t->fd, CLOCK_MONOTONIC, 0, 0, 0, t->n, NULL));
	ASSERT_EQ(0, expect_one(t->fd, t->n, 0, 0))
		TH_LOG("%s, allocation %d", t->what, t->n);
	return t->ret;
}

static const struct failnth_call open_call = {
	.call = open_dev,
	.check = check_open,
};

TEST_F_TIMEOUT(failnth, open, 120)
{
	REQUIRE_FAILNTH();
	ASSERT_LT(0, failnth_sweep(_metadata, self, &open_call, "open", NULL));
}

/*
 * ARM of a one-shot 20 ms ahead on a file already holding *@t->arg far
 * away timers.
 */
static void prepare_arm(struct __test_metadata *_metadata,
			FIXTURE_DATA(failnth) *self, struct failnth_try *t)
{
	long pre = *(const long *)t->arg;

	t->fd = t_open(O_NONBLOCK);
	ASSERT_LE(0, t->fd);
	if (pre) {
		ASSERT_EQ(0, arm_many(t->fd, pre, 1ULL << 32));
	}
	t->t0 = t_now(CLOCK_MONOTONIC);
}

static int arm_soon(struct failnth_try *t)
{
	return t_arm_cpu(t->fd, CLOCK_MONOTONIC, 0, 20 * NSEC_PER_MSEC, 0,
			 t->n, 0, &t->id);
}

/*
 * A failed ARM left the counts as they were and never fires; armed again,
 * or armed at once, the one-shot fires once and is gone.
 */
static bool check_arm(struct __test_metadata *_metadata,
		      FIXTURE_DATA(failnth) *self, struct failnth_try *t)
{
	long pre = *(const long *)t->arg;
	struct t_fdinfo fi;

	ASSERT_EQ(0, t_fdinfo(t->fd, &fi));
	if (t->ret) {
		ASSERT_EQ(-ENOMEM, t->ret) TH_LOG("%s, allocation %d", t->what, t->n);
		EXPECT_EQ(pre, fi.timers);
		EXPECT_EQ(self->user_base + pre, fi.user_timers);
		/* It must never fire. */
		t_sleep_ms(80);
		EXPECT_EQ(0, t_nothing_pending(t->fd));
		t->t0 = t_now(CLOCK_MONOTONIC);
		ASSERT_EQ(0, arm_soon(t));
	} else {
		EXPECT_EQ(pre + 1, fi.timers);
		/* (The user's count is checked on a new file only.) */
		if (!pre) {
			EXPECT_EQ(self->user_base + 1, fi.user_timers);
		}
	}
	EXPECT_EQ(0, expect_one(t->fd, t->n, t->id, t->t0 + 20 * NSEC_PER_MSEC))
		TH_LOG("%s, allocation %d", t->what, t->n);
	ASSERT_EQ(0, t_fdinfo(t->fd, &fi));
	EXPECT_EQ(pre, fi.timers);
	return t->ret;
}

static const struct failnth_call arm_call = {
	.prepare = prepare_arm,
	.call = arm_soon,
	.check = check_arm,
};

/* ARM on a new file: the timer, the first id table and maybe the heap. */
TEST_F_TIMEOUT(failnth, arm_new_file, 120)
{
	long pre = 0;

	REQUIRE_FAILNTH();
	ASSERT_LT(0, failnth_sweep(_metadata, self, &arm_call, "arm (new file)",
				   &pre));
}

/*
 * ARM of timer 1025: the id table grows from 1024 to 2048 slots (16 KiB of
 * slots, 8 KiB of generations) and the CPU's heap from 1024 entries, all
 * beyond kmalloc's page-sized caches, so kvmalloc may take its vmalloc path.
 */
TEST_F_TIMEOUT(failnth, arm_grows_tables, 600)
{
	long pre = 1024;

	REQUIRE_FAILNTH();
	ASSERT_LT(0, failnth_sweep(_metadata, self, &arm_call,
				   "arm (growing tables)", &pre));
}

/*
 * MODIFY of a fired, unread one-shot needs a fresh timer object (the old
 * one stays on the ready queue to die).  On -ENOMEM the old record must
 * still be there, and be the only one.
 */
static void prepare_fired(struct __test_metadata *_metadata,
			  FIXTURE_DATA(failnth) *self, struct failnth_try *t)
{
	t->fd = t_open(O_NONBLOCK);
	ASSERT_LE(0, t->fd);
	ASSERT_EQ(0, arm_fired(t->fd, t->n, &t->id));
	t->t0 = t_now(CLOCK_MONOTONIC);
}

/* Far enough out that it is still armed when fdinfo is read. */
static int modify_later(struct failnth_try *t)
{
	return t_modify(t->fd, t->id, 0, 300 * NSEC_PER_MSEC, 0, 0);
}

static bool check_modify(struct __test_metadata *_metadata,
			 FIXTURE_DATA(failnth) *self, struct failnth_try *t)
{
	struct qtimer_record rec;
	struct t_fdinfo fi;

	ASSERT_EQ(0, t_fdinfo(t->fd, &fi));
	EXPECT_EQ(1, fi.timers);
	if (t->ret < 0) {
		ASSERT_EQ(-ENOMEM, t->ret) TH_LOG("%s, allocation %d", t->what, t->n);
		EXPECT_EQ(1, fi.pending);
		ASSERT_EQ(1, t_read(t->fd, &rec, 1));
		EXPECT_EQ(t->id, rec.id);
		EXPECT_EQ(t->n, rec.cookie);
		EXPECT_LT(rec.expires_ns, t->t0);
		EXPECT_EQ(QTIMER_REC_LAST, rec.flags);
		/* It was read: the one-shot is gone. */
		EXPECT_EQ(-ENOENT, t_modify(t->fd, t->id, 0, 0, 0, 0));
		t_sleep_ms(80);
		EXPECT_EQ(0, t_nothing_pending(t->fd));
	} else {
		EXPECT_EQ(QTIMER_CANCEL_QUEUED, t->ret);
		EXPECT_EQ(0, fi.pending);
		EXPECT_EQ(0, expect_one(t->fd, t->n, t->id,
					t->t0 + 300 * NSEC_PER_MSEC))
			TH_LOG("%s, allocation %d", t->what, t->n);
	}
	ASSERT_EQ(0, t_fdinfo(t->fd, &fi));
	EXPECT_EQ(0, fi.timers);
	return t->ret < 0;
}

static const struct failnth_call modify_call = {
	.prepare = prepare_fired,
	.call = modify_later,
	.check = check_modify,
};

TEST_F_TIMEOUT(failnth, modify_fired, 120)
{
	REQUIRE_FAILNTH();
	ASSERT_LT(0, failnth_sweep(_metadata, self, &modify_call,
				   "modify (fired)", NULL));
}

/* Slots of the timer table per page (4 KiB pages, 16-byte slots). */
#define TABLE_PAGE_SLOTS	(4096 / (long)sizeof(struct qtimer_slot))

/*
 * QTIMER_IOC_TABLE_SETUP on a file holding *@t->arg timers: the table and
 * pages for their slots.
 */
static void prepare_table_setup(struct __test_metadata *_metadata,
				FIXTURE_DATA(failnth) *self,
				struct failnth_try *t)
{
	t->fd = t_open(O_NONBLOCK);
	ASSERT_LE(0, t->fd);
	ASSERT_EQ(0, arm_many(t->fd, *(const long *)t->arg, 1ULL << 32));
}

/* What the last setup said (one try at a time). */
static struct qtimer_table_setup setup_out;

static int table_setup(struct failnth_try *t)
{
	return t_table_setup(t->fd, &setup_out);
}

/*
 * A failed setup left no table behind: a second one works.  Set up, the
 * table maps, and the next ARM's slot says ARMED.
 */
static bool check_table_setup(struct __test_metadata *_metadata,
			      FIXTURE_DATA(failnth) *self,
			      struct failnth_try *t)
{
	struct t_table tb;
	__u64 id;

	if (t->ret) {
		ASSERT_EQ(-ENOMEM, t->ret) TH_LOG("%s, allocation %d", t->what, t->n);
		EXPECT_EQ(QT_FI_MISSING, t_fdinfo_named(t->fd, "table_pages"));
		ASSERT_EQ(0, t_table_map(&tb, t->fd));
	} else {
		struct qtimer_table_setup again;

		EXPECT_EQ(-EBUSY, t_table_setup(t->fd, &again));
		memset(&tb, 0, sizeof(tb));
		tb.fd = t->fd;
		tb.setup = setup_out;
		tb.map_len = setup_out.nr_shards * setup_out.shard_size;
		tb.map = mmap(NULL, tb.map_len, PROT_READ | PROT_WRITE,
			      MAP_SHARED, t->fd, setup_out.mmap_off);
		ASSERT_NE(MAP_FAILED, tb.map);
	}
	ASSERT_EQ(0, t_arm(t->fd, CLOCK_MONOTONIC, 0, 1ULL << 32, 0, t->n, &id));
	EXPECT_EQ(QTIMER_SLOT_ARMED, QTIMER_SLOT_STATE(t_table_ctl(&tb, id)));
	t_table_unmap(&tb);
	return t->ret;
}

static const struct failnth_call table_setup_call = {
	.prepare = prepare_table_setup,
	.call = table_setup,
	.check = check_table_setup,
};

TEST_F_TIMEOUT(failnth, table_setup, 300)
{
	long pre = 2 * TABLE_PAGE_SLOTS + 1;

	REQUIRE_FAILNTH();
	if (!t_table_offered())
		SKIP(return, "QTIMER_FEAT_TABLE not advertised");
	ASSERT_LT(0, failnth_sweep(_metadata, self, &table_setup_call,
				   "table setup", &pre));
}

/*
 * The ARM that grows a file's table past its first pages: its id table
 * grows past the slots the table covers, and the table must give the new
 * slots a page (qt_table_reserve(), with the locks dropped).  Found
 * once on a throwaway file, watching fdinfo's table_pages, with the test
 * pinned to CPU 0 so that every ARM goes to the same shard.
 */
static long first_table_growth(void)
{
	long pages, k;
	struct qtimer_table_setup s;
	int fd = t_open(O_NONBLOCK);

	if (fd < 0 || t_table_setup(fd, &s))
		return -1;
	pages = t_fdinfo_named(fd, "table_pages");
	for (k = 1; k <= 1L << 16; k++) {
		long now;

		if (t_arm(fd, CLOCK_MONOTONIC, 0, 1ULL << 32, 0, k, NULL))
			break;
		now = t_fdinfo_named(fd, "table_pages");
		/* Not the first ARM's page: a growth with timers in the table. */
		if (now > pages && pages > 0) {
			close(fd);
			return k;
		}
		pages = now;
	}
	close(fd);
	return -1;
}

static void prepare_arm_table(struct __test_metadata *_metadata,
			      FIXTURE_DATA(failnth) *self, struct failnth_try *t)
{
	long pre = *(const long *)t->arg;
	struct qtimer_table_setup s;

	t->fd = t_open(O_NONBLOCK);
	ASSERT_LE(0, t->fd);
	ASSERT_EQ(0, t_table_setup(t->fd, &s));
	ASSERT_EQ(0, arm_many(t->fd, pre, 1ULL << 32));
	t->t0 = t_now(CLOCK_MONOTONIC);
}

static const struct failnth_call arm_table_call = {
	.prepare = prepare_arm_table,
	.call = arm_soon,
	.check = check_arm,
};

TEST_F_TIMEOUT(failnth, arm_grows_the_table, 600)
{
	long pre;

	REQUIRE_FAILNTH();
	if (!t_table_offered())
		SKIP(return, "QTIMER_FEAT_TABLE not advertised");
	ASSERT_EQ(0, t_pin_self(0));
	pre = first_table_growth() - 1;
	ASSERT_LT(0, pre);
	TH_LOG("the table grows at ARM %ld", pre + 1);
	ASSERT_LT(0, failnth_sweep(_metadata, self, &arm_table_call,
				   "arm (growing the table)", &pre));
}

TEST_HARNESS_MAIN
