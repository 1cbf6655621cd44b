// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * What a file's timers must keep doing when its context is split into
 * per-CPU shards (issue 20; Documentation/design.rst, "Planned: context
 * shards"), asserted on today's single-lock context so that the rewrite is
 * held to it.  An id armed on one CPU is cancelled and modified from
 * another with the results it gets at home, singly and in a SUBMIT that
 * hops between CPUs' timers; threads on several CPUs share one file and
 * its ids.  Nothing is judged by time, only by results, counts and order.
 */
#define _GNU_SOURCE
#include <pthread.h>

#include "kselftest_harness.h"
#include "helpers.h"

#define MAX_CPUS	64
/* The most CPUs a test spreads its work over. */
#define MAX_THREADS	4
/* Far enough that no test outlives it: such a timer is armed throughout. */
#define FAR_NS		(3600 * NSEC_PER_SEC)

static int min_int(int a, int b)
{
	return a < b ? a : b;
}

/* The clocks far timers cycle through: an id carries its clock. */
static const int far_clocks[] = { CLOCK_MONOTONIC, CLOCK_BOOTTIME, CLOCK_REALTIME };
#define NR_FAR_CLOCKS	3

static int far_clock(long cookie)
{
	return far_clocks[cookie % NR_FAR_CLOCKS];
}

/* An ARM, an hour or so away, on the clock @cookie picks. */
static struct qtimer_op far_op(long cookie)
{
	struct qtimer_op op = qt_op(far_clock(cookie), 0,
				    FAR_NS + cookie * NSEC_PER_USEC, 0, cookie);

	op.opcode = QTIMER_OP_ARM;
	return op;
}

static void far_fill(struct qtimer_op *op, long k, void *arg)
{
	*op = far_op(*(long *)arg + k);
}

/*
 * Arms @n one-shots an hour away on this CPU (no QTIMER_F_CPU, so on its
 * heaps and, with shards, in its shard), cookies from @cookie0 on: the
 * first half in SUBMIT batches, the rest one ARM each, which take the
 * file's locks differently.  0 or the first failure's -errno.
 */
static int arm_far(int fd, __u64 *ids, int n, long cookie0)
{
	int half = n / 2, k, ret;

	ret = qt_arm_many(fd, half, far_fill, &cookie0, ids, half);
	for (k = half; !ret && k < n; k++) {
		struct qtimer_op op = far_op(cookie0 + k);

		ret = qt_arm_op(fd, &op);
		ids[k] = op.id;
	}
	return ret;
}

static int cmp_u64(const void *a, const void *b)
{
	__u64 x = *(const __u64 *)a, y = *(const __u64 *)b;

	return x < y ? -1 : x > y;
}

/* How many of ids[0..n) repeat another, or -1. */
static int count_repeats(const __u64 *ids, int n)
{
	__u64 *sorted = malloc(n * sizeof(*sorted) + 1);
	int k, repeats = 0;

	if (!sorted)
		return -1;
	memcpy(sorted, ids, n * sizeof(*sorted));
	qsort(sorted, n, sizeof(*sorted), cmp_u64);
	for (k = 1; k < n; k++)
		repeats += sorted[k] == sorted[k - 1];
	free(sorted);
	return repeats;
}

static struct qtimer_op id_op(__u16 opcode, __u64 id)
{
	struct qtimer_op op;

	memset(&op, 0, sizeof(op));
	op.opcode = opcode;
	op.id = id;
	return op;
}

/* SUBMITs ops[0..n) in batches, each op run: 0 or -errno. */
static int submit_all(int fd, struct qtimer_op *ops, int n)
{
	int done = 0;

	while (done < n) {
		int b = min_int(n - done, QTIMER_SUBMIT_MAX);
		int ret = qt_submit(fd, ops + done, b, 0, NULL);

		if (ret != b)
			return ret < 0 ? ret : -EIO;
		done += b;
	}
	return 0;
}

/*
 * MODIFY (@modify) or CANCEL of ids[order[0..n)], the first half one
 * ioctl each, the rest through SUBMIT; results into res[], indexed like
 * ids.  A MODIFY gets schedule when[k] (absolute if @abs, else relative).
 */
static int act_each(int fd, const __u64 *ids, const int *order, int n,
		    bool modify, const __s64 *when, bool abs, int *res)
{
	struct qtimer_op *ops = calloc(n + 1, sizeof(*ops));
	__u32 flags = abs ? QTIMER_F_ABSTIME : 0;
	int half = n / 2, i, ret;

	if (!ops)
		return -ENOMEM;
	for (i = 0; i < half; i++) {
		int k = order[i];

		res[k] = modify ? qt_modify(fd, ids[k], flags, when[k], 0, 0) :
				  qt_cancel(fd, ids[k]);
	}
	for (i = half; i < n; i++) {
		int k = order[i];

		ops[i - half] = id_op(modify ? QTIMER_OP_MODIFY : QTIMER_OP_CANCEL,
				      ids[k]);
		if (modify) {
			ops[i - half].flags = flags;
			ops[i - half].expires_ns = when[k];
		}
	}
	ret = submit_all(fd, ops, n - half);
	for (i = half; !ret && i < n; i++)
		res[order[i]] = ops[i - half].result;
	free(ops);
	return ret;
}

/* How many of res[0..n) are not @want, the first few shown. */
static int count_unlike(const int *res, int n, int want, const char *what)
{
	int k, unlike = 0;

	for (k = 0; k < n; k++) {
		if (res[k] == want)
			continue;
		if (unlike++ < 5)
			qt_diag("%s of timer %d returned %d, not %d", what, k,
				res[k], want);
	}
	return unlike;
}

FIXTURE(shard)
{
	int fd;
	int cpus[MAX_CPUS];
	int nr_cpus;
};

FIXTURE_SETUP(shard)
{
	/* Before any pinning: the CPUs this test may spread over. */
	self->nr_cpus = qt_allowed_cpus(self->cpus, MAX_CPUS);
	ASSERT_LT(0, self->nr_cpus);
	self->fd = qt_open(O_NONBLOCK);
	ASSERT_LE(0, self->fd);
}

FIXTURE_TEARDOWN(shard)
{
	if (self->fd >= 0)
		close(self->fd);
}

#define REQUIRE_CPUS(n) do {						\
	if (self->nr_cpus < (n))					\
		SKIP(return, "needs %d CPUs to run on, has %d", (n),	\
		     self->nr_cpus);					\
} while (0)

/* --- an id used from another CPU ----------------------------------------- */

/* Timers cross_cpu_cancel and cross_cpu_modify arm, and each CPU for submit_hops. */
#define CROSS_TIMERS	5000
#define HOP_TIMERS	600

/*
 * One-shots armed on one CPU (its shard, once there are shards) and
 * cancelled from another: each CANCEL finds its timer armed, exactly once;
 * after that CANCEL and MODIFY find nothing, asked from either CPU (a
 * MODIFY that found one would fire it now), and the file's count of
 * timers is back at zero.
 */
TEST_F_TIMEOUT(shard, cross_cpu_cancel, 120)
{
	const int n = CROSS_TIMERS;
	__u64 *ids = calloc(n, sizeof(*ids));
	__s64 *now = calloc(n, sizeof(*now));
	int *order = calloc(n, sizeof(*order)), *res = calloc(n, sizeof(*res));
	struct qt_rng rng;
	int c;

	REQUIRE_CPUS(2);
	ASSERT_TRUE(ids && now && order && res);
	qt_rng_seed(&rng, qt_now(CLOCK_MONOTONIC));
	ASSERT_EQ(0, qt_pin_self(self->cpus[0]));
	ASSERT_EQ(0, arm_far(self->fd, ids, n, 0));
	EXPECT_EQ(0, count_repeats(ids, n));
	EXPECT_EQ(n, qt_fdinfo_get(self->fd, QT_FI_TIMERS));

	ASSERT_EQ(0, qt_pin_self(self->cpus[1]));
	qt_shuffle(order, n, &rng);
	ASSERT_EQ(0, act_each(self->fd, ids, order, n, false, NULL, false, res));
	EXPECT_EQ(0, count_unlike(res, n, QTIMER_CANCEL_ARMED,
				  "CANCEL from another CPU"));
	EXPECT_EQ(0, qt_fdinfo_get(self->fd, QT_FI_TIMERS));

	for (c = 1; c >= 0; c--) {
		ASSERT_EQ(0, qt_pin_self(self->cpus[c]));
		qt_shuffle(order, n, &rng);
		ASSERT_EQ(0, act_each(self->fd, ids, order, n, false, NULL,
				      false, res));
		EXPECT_EQ(0, count_unlike(res, n, -ENOENT, "second CANCEL"));
		ASSERT_EQ(0, act_each(self->fd, ids, order, n, true, now,
				      false, res));
		EXPECT_EQ(0, count_unlike(res, n, -ENOENT,
					  "MODIFY after CANCEL"));
	}
	qt_sleep_ms(50);
	EXPECT_EQ(0, qt_nothing_pending(self->fd));
	EXPECT_EQ(0, qt_fdinfo_get(self->fd, QT_FI_TIMERS));
	free(ids);
	free(now);
	free(order);
	free(res);
}

/*
 * MODIFY from other CPUs: timers armed on one CPU are moved later from a
 * second (the lazy path: only the fields change) and then earlier, to fire
 * soon, from a third (a new heap entry; for the relative CLOCK_REALTIME
 * ones, made absolute, a move to the realtime heap).  Every MODIFY finds
 * its timer armed.  Each timer keeps its id and cookie and fires exactly
 * once, at its last time and not before, in the order of those times on
 * each clock (MODIFY keeps the CPU, so one heap per clock fires them);
 * after that its id names nothing.
 */
TEST_F_TIMEOUT(shard, cross_cpu_modify, 120)
{
	const int n = CROSS_TIMERS;
	const __s64 spacing = 10 * NSEC_PER_USEC;
	__u64 *ids = calloc(n, sizeof(*ids));
	__s64 *when = calloc(n, sizeof(*when));
	int *order = calloc(n, sizeof(*order)), *res = calloc(n, sizeof(*res));
	unsigned char *seen = calloc(n, 1);
	struct qtimer_record recs[256];
	__s64 last[NR_FAR_CLOCKS] = { 0 }, start[NR_FAR_CLOCKS];
	int got = 0, wrong = 0, early = 0, disorder = 0, twice = 0;
	struct qt_rng rng;
	int k, c;

	REQUIRE_CPUS(2);
	ASSERT_TRUE(ids && when && order && res && seen);
	qt_rng_seed(&rng, qt_now(CLOCK_MONOTONIC));
	ASSERT_EQ(0, qt_pin_self(self->cpus[0]));
	ASSERT_EQ(0, arm_far(self->fd, ids, n, 0));

	ASSERT_EQ(0, qt_pin_self(self->cpus[1]));
	for (k = 0; k < n; k++)
		when[k] = 2 * FAR_NS + k;
	qt_shuffle(order, n, &rng);
	ASSERT_EQ(0, act_each(self->fd, ids, order, n, true, when, false, res));
	EXPECT_EQ(0, count_unlike(res, n, QTIMER_CANCEL_ARMED,
				  "MODIFY later from another CPU"));

	ASSERT_EQ(0, qt_pin_self(self->cpus[2 % self->nr_cpus]));
	for (c = 0; c < NR_FAR_CLOCKS; c++)
		start[c] = qt_now(far_clocks[c]) + 100 * NSEC_PER_MSEC;
	for (k = 0; k < n; k++) {
		when[k] = start[k % NR_FAR_CLOCKS] + k * spacing;
		order[k] = k;
	}
	ASSERT_EQ(0, act_each(self->fd, ids, order, n, true, when, true, res));
	EXPECT_EQ(0, count_unlike(res, n, QTIMER_CANCEL_ARMED,
				  "MODIFY earlier from another CPU"));

	while (got < n) {
		__s64 stamp[NR_FAR_CLOCKS];
		int i, nr;

		if (qt_wait_readable(self->fd, QT_ARRIVE_MS) != 1)
			break;
		nr = qt_read(self->fd, recs, 256);
		for (c = 0; c < NR_FAR_CLOCKS; c++)
			stamp[c] = qt_now(far_clocks[c]);
		if (nr == -EAGAIN)
			continue;
		ASSERT_LT(0, nr);
		for (i = 0; i < nr; i++) {
			const struct qtimer_record *r = &recs[i];

			got++;
			k = r->cookie;
			if (r->cookie >= (__u64)n || r->id != ids[k] ||
			    r->expires_ns != when[k] || r->count != 1 ||
			    r->flags != QTIMER_REC_LAST) {
				if (wrong++ < 5)
					qt_diag("record id %#llx cookie %llu expires %lld count %u flags %#x",
						(unsigned long long)r->id,
						(unsigned long long)r->cookie,
						(long long)r->expires_ns, r->count,
						r->flags);
				continue;
			}
			c = k % NR_FAR_CLOCKS;
			twice += seen[k]++ > 0;
			early += stamp[c] < r->expires_ns;
			disorder += r->expires_ns < last[c];
			last[c] = r->expires_ns;
		}
	}
	EXPECT_EQ(n, got);
	EXPECT_EQ(0, wrong);
	EXPECT_EQ(0, twice);
	EXPECT_EQ(0, early);
	EXPECT_EQ(0, disorder);

	/* Fired and read: gone, and the hour-away schedules with them. */
	qt_shuffle(order, n, &rng);
	ASSERT_EQ(0, act_each(self->fd, ids, order, n, false, NULL, false, res));
	EXPECT_EQ(0, count_unlike(res, n, -ENOENT, "CANCEL after the record"));
	EXPECT_EQ(0, qt_nothing_pending(self->fd));
	EXPECT_EQ(0, qt_fdinfo_get(self->fd, QT_FI_TIMERS));
	free(ids);
	free(when);
	free(order);
	free(res);
	free(seen);
}

/*
 * One SUBMIT whose ops name the timers of several CPUs in turn, CANCEL and
 * MODIFY, between ARMs on the CPU that submits: a chunk that carries one
 * shard's lock into an op on another shard's timer must let go of it
 * first.  Every op gets the result it would get alone, and afterwards
 * exactly the timers that should be armed are.
 */
TEST_F_TIMEOUT(shard, submit_hops_between_cpus, 120)
{
	const int nc = min_int(self->nr_cpus, MAX_THREADS);
	const int per = HOP_TIMERS;
	const int n = nc * per;
	__u64 *ids = calloc(2 * n, sizeof(*ids));
	struct qtimer_op *ops = calloc(n, sizeof(*ops));
	int *res = calloc(2 * n, sizeof(*res)), *want = calloc(2 * n, sizeof(*want));
	int *order = calloc(2 * n, sizeof(*order));
	int i, c, k, wrong = 0, nr_ids = n;

	REQUIRE_CPUS(2);
	ASSERT_TRUE(ids && ops && res && want && order);
	for (c = 0; c < nc; c++) {
		ASSERT_EQ(0, qt_pin_self(self->cpus[c]));
		ASSERT_EQ(0, arm_far(self->fd, ids + c * per, per, c * per));
	}
	ASSERT_EQ(0, qt_pin_self(self->cpus[nc - 1]));
	/* Op i names timer i / nc of CPU i % nc: every op changes shard. */
	for (i = 0; i < n; i++) {
		k = (i % nc) * per + i / nc;
		switch (i % 3) {
		case 0:
			ops[i] = id_op(QTIMER_OP_CANCEL, ids[k]);
			want[k] = -ENOENT;
			break;
		case 1:
			ops[i] = id_op(QTIMER_OP_MODIFY, ids[k]);
			ops[i].expires_ns = 2 * FAR_NS;
			want[k] = QTIMER_CANCEL_ARMED;
			break;
		default:
			ops[i] = far_op(n + i);
			want[k] = QTIMER_CANCEL_ARMED;
			break;
		}
	}
	ASSERT_EQ(0, submit_all(self->fd, ops, n));
	for (i = 0; i < n; i++) {
		int expect = i % 3 == 2 ? 0 : QTIMER_CANCEL_ARMED;

		if (ops[i].result != expect && wrong++ < 5)
			qt_diag("op %d (opcode %u) returned %d, not %d", i,
				ops[i].opcode, ops[i].result, expect);
		if (i % 3 == 2 && !ops[i].result) {
			want[nr_ids] = QTIMER_CANCEL_ARMED;
			ids[nr_ids++] = ops[i].id;
		}
	}
	EXPECT_EQ(0, wrong);
	EXPECT_EQ(n + n / 3, nr_ids);
	EXPECT_EQ(0, count_repeats(ids, nr_ids));
	EXPECT_EQ(nr_ids - (n + 2) / 3, qt_fdinfo_get(self->fd, QT_FI_TIMERS));

	/* From yet another CPU: armed exactly where nothing cancelled them. */
	ASSERT_EQ(0, qt_pin_self(self->cpus[0]));
	for (k = 0; k < nr_ids; k++)
		order[k] = k;
	ASSERT_EQ(0, act_each(self->fd, ids, order, nr_ids, false, NULL, false,
			      res));
	for (k = 0, wrong = 0; k < nr_ids; k++)
		if (res[k] != want[k] && wrong++ < 5)
			qt_diag("CANCEL of timer %d returned %d, not %d", k,
				res[k], want[k]);
	EXPECT_EQ(0, wrong);
	EXPECT_EQ(0, qt_fdinfo_get(self->fd, QT_FI_TIMERS));
	free(ids);
	free(ops);
	free(res);
	free(want);
	free(order);
}

/* --- one file, threads on several CPUs ------------------------------------ */

/* Timers each sharer arms; its ops go in SUBMITs of SHARE_BATCH, or singly. */
#define SHARE_TIMERS	2000
#define SHARE_BATCH	32

struct sharer {
	int fd, idx, nr, per;
	int arm_cpu, cancel_cpu;
	bool arm, cancel;
	pthread_barrier_t *bar;
	__u64 *ids;		/* nr * per: sharer i's at [i * per] */
	_Atomic int *armed;	/* per id: CANCELs that found it armed */
	_Atomic int *gone;	/* per id: CANCELs that found nothing */
	int failed;		/* pinning, ARMs, CANCELs returning else */
};

static void share_arm(struct sharer *s)
{
	struct qtimer_op ops[SHARE_BATCH];
	int first = s->idx * s->per, k = 0, i, b;

	while (k < s->per) {
		b = min_int(s->per - k, SHARE_BATCH);
		for (i = 0; i < b; i++)
			ops[i] = far_op(first + k + i);
		/* Every third batch one ARM at a time. */
		if ((k / SHARE_BATCH) % 3 == 2) {
			for (i = 0; i < b; i++)
				ops[i].result = qt_arm_op(s->fd, &ops[i]);
		} else if (qt_submit(s->fd, ops, b, 0, NULL) != b) {
			s->failed++;
			return;
		}
		for (i = 0; i < b; i++) {
			s->failed += ops[i].result != 0;
			s->ids[first + k + i] = ops[i].id;
		}
		k += b;
	}
}

/*
 * CANCEL every other sharer's ids, walking them forwards or backwards by
 * the parity of this sharer, so that several CPUs go for the same id at
 * about the same time; in SUBMITs and singly, by turns.
 */
static void share_cancel(struct sharer *s)
{
	struct qtimer_op ops[SHARE_BATCH];
	int gid[SHARE_BATCH];
	int j, k, i, b;

	for (j = 1; j < s->nr; j++) {
		int first = ((s->idx + j) % s->nr) * s->per;

		for (k = 0; k < s->per; k += b) {
			b = min_int(s->per - k, SHARE_BATCH);
			for (i = 0; i < b; i++) {
				gid[i] = first + (s->idx % 2 ? s->per - 1 - (k + i) : k + i);
				ops[i] = id_op(QTIMER_OP_CANCEL, s->ids[gid[i]]);
			}
			if ((k / SHARE_BATCH) % 2) {
				for (i = 0; i < b; i++)
					ops[i].result = qt_cancel(s->fd, ops[i].id);
			} else if (qt_submit(s->fd, ops, b, 0, NULL) != b) {
				s->failed++;
				return;
			}
			for (i = 0; i < b; i++) {
				if (ops[i].result == QTIMER_CANCEL_ARMED)
					atomic_fetch_add(&s->armed[gid[i]], 1);
				else if (ops[i].result == -ENOENT)
					atomic_fetch_add(&s->gone[gid[i]], 1);
				else
					s->failed++;
			}
		}
	}
}

static void *share_run(void *arg)
{
	struct sharer *s = arg;

	if (s->arm) {
		if (qt_pin_self(s->arm_cpu))
			s->failed++;
		pthread_barrier_wait(s->bar);	/* all arm at once */
		share_arm(s);
		if (!s->cancel)
			return NULL;
		pthread_barrier_wait(s->bar);	/* all armed: the count */
	}
	if (qt_pin_self(s->cancel_cpu))
		s->failed++;
	pthread_barrier_wait(s->bar);		/* all cancel at once */
	share_cancel(s);
	return NULL;
}

/*
 * Sharers, each on its own CPU, arm on one file at once: every id is
 * distinct and the file counts them all.  Then each cancels the timers
 * all the others armed, so that up to three CPUs race for each id:
 * exactly one CANCEL finds it armed, the others find nothing.  With
 * @armers_exit the arming threads are gone before new ones, each on the
 * CPU of another armer, cancel.
 */
static void shared_fd_threads(struct __test_metadata *_metadata,
			      FIXTURE_DATA(shard) *self, bool armers_exit)
{
	const int nr = min_int(self->nr_cpus, MAX_THREADS);
	const int per = SHARE_TIMERS;
	const int n = nr * per;
	struct sharer s[MAX_THREADS];
	pthread_t thr[MAX_THREADS];
	pthread_barrier_t bar;
	__u64 *ids = calloc(n, sizeof(*ids));
	_Atomic int *armed = calloc(n, sizeof(*armed));
	_Atomic int *gone = calloc(n, sizeof(*gone));
	int i, k, failed = 0, wrong = 0;

	ASSERT_TRUE(ids && armed && gone);
	ASSERT_EQ(0, pthread_barrier_init(&bar, NULL, nr + 1));
	for (i = 0; i < nr; i++) {
		s[i] = (struct sharer){
			.fd = self->fd, .idx = i, .nr = nr, .per = per,
			.arm_cpu = self->cpus[i],
			.cancel_cpu = self->cpus[armers_exit ? (i + 1) % nr : i],
			.arm = true, .cancel = !armers_exit, .bar = &bar,
			.ids = ids, .armed = armed, .gone = gone,
		};
		ASSERT_EQ(0, pthread_create(&thr[i], NULL, share_run, &s[i]));
	}
	pthread_barrier_wait(&bar);
	if (armers_exit) {
		for (i = 0; i < nr; i++)
			ASSERT_EQ(0, pthread_join(thr[i], NULL));
	} else {
		pthread_barrier_wait(&bar);
	}
	EXPECT_EQ(0, count_repeats(ids, n));
	EXPECT_EQ(n, qt_fdinfo_get(self->fd, QT_FI_TIMERS));
	if (armers_exit) {
		for (i = 0; i < nr; i++) {
			failed += s[i].failed;
			s[i].failed = 0;
			s[i].arm = false;
			s[i].cancel = true;
			ASSERT_EQ(0, pthread_create(&thr[i], NULL, share_run,
						    &s[i]));
		}
	}
	pthread_barrier_wait(&bar);
	for (i = 0; i < nr; i++) {
		ASSERT_EQ(0, pthread_join(thr[i], NULL));
		failed += s[i].failed;
	}
	EXPECT_EQ(0, failed);
	for (k = 0; k < n; k++) {
		if (armed[k] == 1 && gone[k] == nr - 2)
			continue;
		if (wrong++ < 5)
			qt_diag("timer %d: %d CANCELs found it armed, %d found nothing",
				k, armed[k], gone[k]);
	}
	EXPECT_EQ(0, wrong);
	EXPECT_EQ(0, qt_fdinfo_get(self->fd, QT_FI_TIMERS));
	EXPECT_EQ(0, qt_nothing_pending(self->fd));
	pthread_barrier_destroy(&bar);
	free(ids);
	free((void *)armed);
	free((void *)gone);
}

TEST_F_TIMEOUT(shard, shared_fd_threads, 120)
{
	REQUIRE_CPUS(2);
	shared_fd_threads(_metadata, self, false);
}

TEST_F_TIMEOUT(shard, shared_fd_threads_armers_exited, 120)
{
	REQUIRE_CPUS(2);
	shared_fd_threads(_metadata, self, true);
}

TEST_HARNESS_MAIN
