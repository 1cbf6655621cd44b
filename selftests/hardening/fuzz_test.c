// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * Hostile input: a randomized ioctl/read fuzzer.  Commands are the five
 * real ones, real numbers with the wrong size or direction, other numbers
 * of the qtimer magic and random numbers; arguments are mutated ops and
 * submit headers (opcodes, clocks, flags, ids valid, stale, forged and
 * random, expiries and periods at the edges of the range, slack around its
 * limit, CPUs around the number of CPUs, non-zero reserved fields) behind
 * pointers that are valid, NULL, unmapped, read-only, misaligned, kernel
 * addresses or running off the end of a mapping; SUBMIT counts around the
 * limits (0, 1, 4096, 4097, 2^31); reads of random sizes into the same
 * kinds of buffers, some of them blocking reads cut short by a signal.
 * With root, the per-file and per-user caps are lowered for the run so
 * that -ENOSPC and -EDQUOT come up too.
 *
 * Asserted: every failure is one of the documented errnos, successes are in
 * range (masks, SUBMIT counts, whole records with sane flags), the engine
 * still delivers a plain timer now and then, and when every file is closed
 * the user's timer count is back to zero.  Splats fail the run on the VM
 * console.  The run lasts QT_FUZZ_SECONDS (default: twice
 * QT_STRESS_SECONDS, i.e. 10 s); QT_SEED replays a run (the seed is
 * printed).
 */
#define _GNU_SOURCE
#include <signal.h>
#include <sys/time.h>

#include "kselftest_harness.h"
#include "helpers.h"

#define NR_FDS		4
#define IDS		256
#define OPS_MAX		(QTIMER_SUBMIT_MAX + 1)

static const int allowed[] = {
	EINVAL, EOVERFLOW, ENOENT, ENOSPC, EDQUOT, ENOMEM, EFAULT, EAGAIN,
	ENOTTY, EINTR,
};

struct fuzz {
	struct t_rng rng;
	int fds[NR_FDS];
	__u64 ids[IDS];			/* recently armed (maybe stale now) */
	unsigned int nr_ids;
	long page;
	char *rw;			/* big writable area, guard page after */
	size_t rw_len;
	char *ro;			/* a read-only page */
	char *hole;			/* an unmapped page */
	char *edge;			/* last writable page before a hole */
	int nr_cpus;
	long calls, ok, errs[256], bad;
	long records, reads, signals;
};

static void on_alarm(int sig)
{
}

static bool errno_allowed(int e)
{
	unsigned int i;

	for (i = 0; i < sizeof(allowed) / sizeof(allowed[0]); i++)
		if (allowed[i] == e)
			return true;
	return false;
}

static __u64 pick_id(struct fuzz *f)
{
	struct t_rng *r = &f->rng;
	__u64 id = f->nr_ids ? f->ids[t_rand_below(r, f->nr_ids < IDS ? f->nr_ids : IDS)] : 1;

	switch (t_rand_below(r, 8)) {
	case 0:
		return t_rand(r);
	case 1:
		return id ^ (1ULL << (34 + t_rand_below(r, 30)));	/* generation */
	case 2:
		return id ^ (1ULL << (32 + t_rand_below(r, 2)));	/* clock */
	case 3:
		return (id & ~0xffffffffULL) | (__u32)t_rand(r);	/* slot */
	case 4:
		return t_rand_below(r, 3) ? 0 : ~0ULL;
	default:
		return id;
	}
}

static __s64 pick_time(struct t_rng *r)
{
	switch (t_rand_below(r, 10)) {
	case 0:
		return INT64_MAX - t_rand_below(r, 5000000000ULL);
	case 1:
		return INT64_MIN + t_rand_below(r, 10);
	case 2:
		return -(__s64)t_rand_below(r, 1000);
	case 3:
		return (__s64)t_rand(r);
	case 4:
		return t_now(CLOCK_MONOTONIC) + t_rand_below(r, 50 * NSEC_PER_MSEC);
	case 5:
		return 0;
	default:
		return t_rand_below(r, 50 * NSEC_PER_MSEC);
	}
}

/* A plausible op with a few fields made hostile. */
static void mutate_op(struct fuzz *f, struct qtimer_op *op, int opcode)
{
	static const int clks[] = { 0, 1, 7, 2, 3, 4, 5, 6, 8, 11, 0xffff };
	struct t_rng *r = &f->rng;
	int n = t_rand_below(r, 4);

	memset(op, 0, sizeof(*op));
	op->opcode = opcode;
	op->clockid = t_chance(r, 80) ? clks[t_rand_below(r, 3)] : clks[t_rand_below(r, 11)];
	op->flags = t_chance(r, 70) ? (__u32)t_rand_below(r, QTIMER_F_ALL + 1) & ~QTIMER_F_CANCEL_ON_SET : 0;
	op->expires_ns = t_rand_below(r, 50 * NSEC_PER_MSEC);
	op->cookie = t_rand(r);
	if (opcode != QTIMER_OP_ARM && opcode)
		op->id = pick_id(f);
	if (opcode == QTIMER_OP_CANCEL || (opcode == QTIMER_OP_MODIFY && t_chance(r, 80))) {
		op->clockid = 0;
		op->cookie = 0;
		if (opcode == QTIMER_OP_CANCEL) {
			op->flags = 0;
			op->expires_ns = 0;
		}
	}
	while (n--) {
		switch (t_rand_below(r, 12)) {
		case 0:
			op->opcode = t_rand_below(r, 3) ? t_rand_below(r, 6) : (__u16)t_rand(r);
			break;
		case 1:
			op->flags = t_chance(r, 50) ? (__u32)t_rand(r) :
				    1U << t_rand_below(r, 32);
			break;
		case 2:
			op->id = pick_id(f);
			break;
		case 3:
			op->expires_ns = pick_time(r);
			break;
		case 4:
			op->period_ns = t_chance(r, 50) ? t_rand_below(r, 3) :
					(__u64)pick_time(r);
			break;
		case 5:
			op->slack_ns = QTIMER_SLACK_MAX_NS + t_rand_below(r, 3) - 1;
			break;
		case 6:
			op->slack_ns = t_rand(r);
			break;
		case 7:
			op->cpu = f->nr_cpus + t_rand_below(r, 3) - 1;
			op->flags |= QTIMER_F_CPU;
			break;
		case 8:
			op->cpu = t_chance(r, 50) ? (__u32)t_rand(r) : 4096;
			break;
		case 9:
			op->reserved = t_rand(r) | 1;
			break;
		case 10:
			op->result = (__s32)t_rand(r);
			break;
		case 11:
			op->flags |= QTIMER_F_CANCEL_ON_SET |
				     (t_chance(r, 50) ? QTIMER_F_ABSTIME : 0);
			op->clockid = t_chance(r, 70) ? CLOCK_REALTIME : op->clockid;
			op->expires_ns = t_now(CLOCK_REALTIME) + t_rand_below(r, NSEC_PER_SEC);
			break;
		}
	}
}

/* A pointer for an argument of @len bytes whose good contents are @good. */
static void *pick_ptr(struct fuzz *f, const void *good, size_t len)
{
	struct t_rng *r = &f->rng;
	char *p;

	switch (t_rand_below(r, 14)) {
	case 0:
		return NULL;
	case 1:
		return f->hole + t_rand_below(r, f->page);
	case 2:
		memcpy(f->ro, good, len < (size_t)f->page ? len : f->page);
		return f->ro;
	case 3:
		return (void *)(0xffff888000000000ULL + t_rand_below(r, 1 << 20) * 64);
	case 4:
		/* Runs off the end of the mapping into the hole. */
		p = f->edge + f->page - 1 - t_rand_below(r, len > 1 ? len - 1 : 1);
		memcpy(p, good, f->edge + f->page - p);
		return p;
	case 5:
		p = f->rw + 1 + t_rand_below(r, 7);
		memcpy(p, good, len);
		return p;
	default:
		memcpy(f->rw, good, len);
		return f->rw;
	}
}

/* The read-only page is writable only while pick_ptr() fills it. */
static void ro_lock(struct fuzz *f)
{
	mprotect(f->ro, f->page, PROT_READ);
}

static void ro_unlock(struct fuzz *f)
{
	mprotect(f->ro, f->page, PROT_READ | PROT_WRITE);
}

static int valid_clock(struct t_rng *r)
{
	static const int c[] = { CLOCK_REALTIME, CLOCK_MONOTONIC, CLOCK_BOOTTIME };

	return c[t_rand_below(r, 3)];
}

static void note(struct fuzz *f, long ret, const char *what, unsigned long cmd)
{
	f->calls++;
	if (ret >= 0) {
		f->ok++;
		return;
	}
	f->errs[-ret & 255]++;
	if (!errno_allowed(-ret)) {
		f->bad++;
		t_diag("%s (cmd %#lx): undocumented errno %ld (%s)", what, cmd,
			-ret, strerror(-ret));
	}
}

static void harvest(struct fuzz *f, __u64 id)
{
	f->ids[f->nr_ids++ % IDS] = id;
}

static unsigned long pick_cmd(struct fuzz *f)
{
	static const unsigned long real[] = {
		QTIMER_IOC_VERSION, QTIMER_IOC_ARM, QTIMER_IOC_CANCEL,
		QTIMER_IOC_MODIFY, QTIMER_IOC_SUBMIT,
	};
	/* Types the VFS handles itself for any file (FIONBIO, FIFREEZE...). */
	static const unsigned char vfs_types[] = { 0x00, 0x12, 0x15, 0x54, 0x58, 0x66, 0x94 };
	struct t_rng *r = &f->rng;
	unsigned long cmd;
	unsigned int i;

	switch (t_rand_below(r, 10)) {
	case 0:
	case 1:
		return _IOC(t_rand_below(r, 4), QTIMER_IOC_MAGIC, t_rand_below(r, 8),
			    t_rand_below(r, 300));
	case 2:
		return _IOC(t_rand_below(r, 4), QTIMER_IOC_MAGIC, t_rand_below(r, 256),
			    t_chance(r, 50) ? sizeof(struct qtimer_op) : t_rand_below(r, 1 << 14));
	case 3:
		for (;;) {
			cmd = (__u32)t_rand(r);
			for (i = 0; i < sizeof(vfs_types); i++)
				if (_IOC_TYPE(cmd) == vfs_types[i])
					break;
			if (i == sizeof(vfs_types))
				return cmd;
		}
	default:
		return real[t_rand_below(r, 5)];
	}
}

static void fuzz_submit(struct fuzz *f, int fd)
{
	static const __u32 nrs[] = { 0, 1, 2, 8, 9, 4095, 4096, 4097, 1U << 31, ~0U };
	struct t_rng *r = &f->rng;
	struct qtimer_op *ops = (struct qtimer_op *)(f->rw + f->page);
	struct qtimer_submit s, *sp;
	__u32 nr, i, nfill;
	long ret;

	memset(&s, 0, sizeof(s));
	nr = t_chance(r, 60) ? 1 + t_rand_below(r, 16) : nrs[t_rand_below(r, 10)];
	nfill = nr < OPS_MAX ? nr : OPS_MAX;
	for (i = 0; i < nfill; i++)
		mutate_op(f, &ops[i], 1 + t_rand_below(r, 3));
	s.ops = (uintptr_t)ops;
	s.nr = nr;
	switch (t_rand_below(r, 12)) {
	case 0:
		s.ops = 0;
		break;
	case 1:
		s.ops = (uintptr_t)f->hole;
		break;
	case 2:
		/* The array runs into the hole after a few ops. */
		s.ops = (uintptr_t)(f->edge + f->page - sizeof(*ops) * (1 + t_rand_below(r, 4)));
		memcpy((void *)(uintptr_t)s.ops, ops, f->edge + f->page - (char *)(uintptr_t)s.ops);
		break;
	case 3:
		s.ops = (uintptr_t)f->ro;
		memcpy(f->ro, ops, f->page);
		break;
	case 4:
		s.ops = t_rand(r);
		break;
	}
	s.flags = t_chance(r, 80) ? (__u32)t_rand_below(r, 2) : (__u32)t_rand(r);
	if (t_chance(r, 5))
		s.pad = t_rand(r);
	if (t_chance(r, 5))
		s.reserved = t_rand(r);
	s.done = t_rand(r);
	sp = pick_ptr(f, &s, sizeof(s));
	ro_lock(f);
	ret = t_ioctl(fd, QTIMER_IOC_SUBMIT, sp);
	ro_unlock(f);
	note(f, ret, "SUBMIT", QTIMER_IOC_SUBMIT);
	if (ret > (long)nr) {
		f->bad++;
		t_diag("SUBMIT of %u ops returned %ld", nr, ret);
	}
	if (ret > 0 && s.ops == (uintptr_t)ops) {
		for (i = 0; i < (__u32)ret; i++) {
			if (ops[i].result > 3 || (ops[i].result < 0 &&
						  !errno_allowed(-ops[i].result))) {
				f->bad++;
				t_diag("SUBMIT op %u: result %d", i, ops[i].result);
			}
			if (ops[i].opcode == QTIMER_OP_ARM && !ops[i].result)
				harvest(f, ops[i].id);
		}
	}
}

static void fuzz_ioctl(struct fuzz *f, int fd)
{
	struct t_rng *r = &f->rng;
	unsigned long cmd = pick_cmd(f);
	struct qtimer_op op;
	void *p;
	long ret;

	if (cmd == QTIMER_IOC_SUBMIT) {
		fuzz_submit(f, fd);
		return;
	}
	mutate_op(f, &op, cmd == QTIMER_IOC_ARM ? QTIMER_OP_ARM :
		  cmd == QTIMER_IOC_CANCEL ? QTIMER_OP_CANCEL :
		  cmd == QTIMER_IOC_MODIFY ? QTIMER_OP_MODIFY : t_rand_below(r, 4));
	if (t_chance(r, 70))
		op.opcode = 0;
	p = pick_ptr(f, &op, sizeof(op));
	ro_lock(f);
	ret = t_ioctl(fd, cmd, p);
	ro_unlock(f);
	note(f, ret, "ioctl", cmd);
	if (ret < 0)
		return;
	if (cmd == QTIMER_IOC_ARM && ret == 0 && p == f->rw) {
		harvest(f, ((struct qtimer_op *)p)->id);
	} else if ((cmd == QTIMER_IOC_CANCEL || cmd == QTIMER_IOC_MODIFY) &&
		   ret > 3) {
		f->bad++;
		t_diag("cmd %#lx returned %ld", cmd, ret);
	} else if (cmd != QTIMER_IOC_CANCEL && cmd != QTIMER_IOC_MODIFY && ret) {
		f->bad++;
		t_diag("cmd %#lx returned %ld", cmd, ret);
	}
}

static void fuzz_read(struct fuzz *f, int fd, bool blocking)
{
	static const size_t sizes[] = { 0, 1, 31, 32, 33, 64, 4096, 1UL << 31 };
	struct t_rng *r = &f->rng;
	size_t len = t_chance(r, 50) ? sizes[t_rand_below(r, 8)] :
		     t_rand_below(r, 64 * 1024);
	char *buf;
	ssize_t n;

	switch (t_rand_below(r, 10)) {
	case 0:
		buf = NULL;
		break;
	case 1:
		buf = f->hole;
		break;
	case 2:
		buf = f->ro;
		break;
	case 3:
		buf = f->edge + f->page - t_rand_below(r, 100);
		break;
	case 4:
		buf = (char *)0xffff888000000000ULL;
		break;
	case 5:
		buf = f->rw + f->rw_len - f->page + 1 + t_rand_below(r, 31);
		break;
	default:
		/* The whole area; whatever overflows hits the guard page. */
		buf = f->rw + f->rw_len - (len < f->rw_len ? len : f->rw_len);
		break;
	}
	if (blocking) {
		/*
		 * Periodic: a first tick that lands before read() blocks must
		 * not leave it blocked for good.
		 */
		struct itimerval it = {
			.it_value = { .tv_usec = 5000 },
			.it_interval = { .tv_usec = 5000 },
		};

		setitimer(ITIMER_REAL, &it, NULL);
	}
	ro_lock(f);
	n = read(fd, buf, len);
	ro_unlock(f);
	if (blocking) {
		struct itimerval it = {};

		setitimer(ITIMER_REAL, &it, NULL);
	}
	f->reads++;
	note(f, n < 0 ? -errno : n, "read", 0);
	if (n < 0) {
		f->signals += errno == EINTR;
		return;
	}
	if (n % sizeof(struct qtimer_record) || (size_t)n > len) {
		f->bad++;
		t_diag("read of %zu returned %zd", len, n);
		return;
	}
	if (buf >= f->rw && buf < f->rw + f->rw_len &&
	    buf + n <= f->rw + f->rw_len) {
		struct qtimer_record rec;
		ssize_t i;

		for (i = 0; i < n; i += sizeof(rec)) {
			memcpy(&rec, buf + i, sizeof(rec));
			f->records++;
			if ((rec.flags & ~(QTIMER_REC_LAST | QTIMER_REC_CANCELED)) ||
			    (!rec.count && !(rec.flags & QTIMER_REC_CANCELED)) ||
			    !(__u32)rec.id || ((rec.id >> 32) & 3) == 3) {
				f->bad++;
				t_diag("bad record: id %#llx flags %#x count %u",
					(unsigned long long)rec.id, rec.flags,
					rec.count);
			}
		}
	}
}

/*
 * Valid far-away timers in bulk, so the caps come into play (-ENOSPC,
 * -EDQUOT in the results) and heaps grow and shrink under the fuzzing.
 */
static void fill(struct fuzz *f, int fd)
{
	struct qtimer_op *ops = (struct qtimer_op *)(f->rw + f->page);
	int i, ret, nr = 1 + t_rand_below(&f->rng, 2048);

	for (i = 0; i < nr; i++) {
		ops[i] = t_op(valid_clock(&f->rng), 0,
			       t_rand_below(&f->rng, 3600 * NSEC_PER_SEC), 0, i);
		ops[i].opcode = QTIMER_OP_ARM;
	}
	ret = t_submit(fd, ops, nr, 0, NULL);
	note(f, ret, "SUBMIT (fill)", QTIMER_IOC_SUBMIT);
	for (i = 0; i < ret; i++) {
		note(f, ops[i].result, "SUBMIT (fill) op", QTIMER_IOC_SUBMIT);
		if (!ops[i].result && t_chance(&f->rng, 10))
			harvest(f, ops[i].id);
	}
}

/*
 * The engine still works: a plain timer on a clean file arrives, once.  At
 * the per-user cap, fuzz files are closed (and reopened) until it fits.
 */
static int liveness(struct fuzz *f)
{
	struct qtimer_record rec;
	int fd = t_open(O_NONBLOCK), ret = 0, k = 0;
	__u64 id;

	if (fd < 0)
		return 1;
	while ((ret = t_arm(fd, CLOCK_MONOTONIC, 0, NSEC_PER_MSEC, 0, 4242,
			     &id)) == -EDQUOT && k < NR_FDS) {
		close(f->fds[k]);
		f->fds[k] = t_open(k ? O_NONBLOCK : 0);
		k++;
	}
	if (ret)
		ret = 2;
	else if (t_collect(fd, &rec, 1, QT_ARRIVE_MS) != 1 || rec.id != id ||
		 rec.cookie != 4242)
		ret = 3;
	close(fd);
	return ret;
}

FIXTURE(fuzz)
{
	struct t_knob knobs[2];
	int nr_knobs;
};

FIXTURE_SETUP(fuzz)
{
	if (!geteuid() && !access(QT_PARAMS "max_timers_per_fd", W_OK)) {
		ASSERT_EQ(0, t_knob_set(&self->knobs[0],
					 QT_PARAMS "max_timers_per_fd", "3000"));
		ASSERT_EQ(0, t_knob_set(&self->knobs[1],
					 QT_PARAMS "max_timers_per_user", "10000"));
		self->nr_knobs = 2;
	}
}

FIXTURE_TEARDOWN(fuzz)
{
	int i;

	for (i = self->nr_knobs - 1; i >= 0; i--)
		EXPECT_EQ(0, t_knob_restore(&self->knobs[i]));
}

TEST_F_TIMEOUT(fuzz, random_ops, 3700)
{
	int secs = t_tunable("QT_FUZZ_SECONDS", 2 * t_stress_seconds(5));
	uint64_t seed = t_tunable("QT_SEED", 0) ?: (uint64_t)t_now(CLOCK_REALTIME);
	struct sigaction sa = { .sa_handler = on_alarm };
	static struct fuzz fz;
	struct fuzz *f = &fz;
	struct t_fdinfo fi;
	__s64 end, next_live;
	int i, e;

	printf("# seed %llu (QT_SEED=%llu replays this run)\n",
	       (unsigned long long)seed, (unsigned long long)seed);
	fflush(stdout);
	t_rng_seed(&f->rng, seed);
	f->page = sysconf(_SC_PAGESIZE);
	f->nr_cpus = t_nr_cpus();
	/* [rw: 300 KiB][guard] [ro] [hole] [edge][hole] */
	f->rw_len = 300 * 1024;
	f->rw = mmap(NULL, f->rw_len + f->page, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, f->rw);
	ASSERT_EQ(0, munmap(f->rw + f->rw_len, f->page));
	f->ro = mmap(NULL, f->page, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, f->ro);
	f->hole = t_unmapped_page();
	ASSERT_NE(NULL, f->hole);
	f->edge = mmap(NULL, 2 * f->page, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, f->edge);
	ASSERT_EQ(0, munmap(f->edge + f->page, f->page));
	sigaction(SIGALRM, &sa, NULL);	/* no SA_RESTART: reads see EINTR */

	for (i = 0; i < NR_FDS; i++) {
		f->fds[i] = t_open(i ? O_NONBLOCK : 0);
		ASSERT_LE(0, f->fds[i]);
	}
	end = t_now(CLOCK_MONOTONIC) + (__s64)secs * NSEC_PER_SEC;
	next_live = 0;
	while (t_now(CLOCK_MONOTONIC) < end) {
		unsigned int p = t_rand_below(&f->rng, 100);
		int k = t_rand_below(&f->rng, NR_FDS);

		if (p < 60) {
			fuzz_ioctl(f, f->fds[k]);
		} else if (p < 88) {
			fuzz_read(f, f->fds[k], k == 0);
		} else if (p < 92) {
			note(f, t_revents(f->fds[k]), "poll", 0);
			note(f, t_fdinfo(f->fds[k], &fi), "fdinfo", 0);
		} else if (p < 94) {
			close(f->fds[k]);
			f->fds[k] = t_open(k ? O_NONBLOCK : 0);
			ASSERT_LE(0, f->fds[k]);
		} else if (p < 95) {
			fill(f, f->fds[k]);
		} else {
			/* Valid timers, so that records flow. */
			note(f, t_arm(f->fds[k], valid_clock(&f->rng), 0,
				       t_rand_below(&f->rng, 5 * NSEC_PER_MSEC),
				       t_chance(&f->rng, 10) ? NSEC_PER_MSEC : 0,
				       0, NULL), "arm", QTIMER_IOC_ARM);
		}
		if (t_now(CLOCK_MONOTONIC) >= next_live) {
			ASSERT_EQ(0, liveness(f));
			next_live = t_now(CLOCK_MONOTONIC) + NSEC_PER_SEC;
		}
		ASSERT_EQ(0, f->bad);
	}
	ASSERT_EQ(0, liveness(f));
	for (i = 0; i < NR_FDS; i++)
		close(f->fds[i]);
	/* Every timer went with its file. */
	i = t_open(0);
	ASSERT_LE(0, i);
	ASSERT_EQ(0, t_fdinfo(i, &fi));
	EXPECT_EQ(0, fi.user_timers);
	close(i);

	TH_LOG("%ld calls, %ld succeeded, %ld reads (%ld interrupted), %ld records",
	       f->calls, f->ok, f->reads, f->signals, f->records);
	for (e = 1; e < 256; e++)
		if (f->errs[e])
			TH_LOG("  %-10s %ld", strerrorname_np(e) ?: "?", f->errs[e]);
	EXPECT_EQ(0, f->bad);
	EXPECT_LT(0, f->errs[EINVAL]);
	EXPECT_LT(0, f->errs[EFAULT]);
	EXPECT_LT(0, f->errs[ENOTTY]);
	EXPECT_LT(0, f->ok);
}

TEST_HARNESS_MAIN
