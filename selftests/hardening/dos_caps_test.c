// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * The per-file and per-user caps under concurrent arming (dos.h): exact,
 * freed up again, untouched by invalid SUBMIT arms, and per user.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sys/wait.h>

#include "dos.h"

struct armer {
	int fd;
	long ok;
	long other;
	int want_err;
	int last_err;
	pthread_barrier_t *bar;
};

/* Arms until the expected error; counts successes and anything else. */
static void *armer_fn(void *p)
{
	struct armer *a = p;
	int ret;

	pthread_barrier_wait(a->bar);
	for (;;) {
		ret = t_arm(a->fd, CLOCK_MONOTONIC, 0, 3600 * NSEC_PER_SEC, 0,
			     0, NULL);
		if (!ret) {
			a->ok++;
			continue;
		}
		a->last_err = ret;
		if (ret != a->want_err)
			a->other++;
		break;
	}
	return NULL;
}

static long run_armers(int *fds, int nr, int want_err, long *other)
{
	pthread_t th[8];
	struct armer a[8];
	pthread_barrier_t bar;
	long ok = 0;
	int i;

	pthread_barrier_init(&bar, NULL, nr);
	for (i = 0; i < nr; i++) {
		a[i] = (struct armer){ .fd = fds[i], .want_err = want_err, .bar = &bar };
		pthread_create(&th[i], NULL, armer_fn, &a[i]);
	}
	*other = 0;
	for (i = 0; i < nr; i++) {
		pthread_join(th[i], NULL);
		ok += a[i].ok;
		*other += a[i].other;
	}
	pthread_barrier_destroy(&bar);
	return ok;
}

TEST_F(dos, per_file_cap_is_exact_under_concurrency)
{
	enum { CAP = 2000 };
	int fds[8], i;
	struct t_fdinfo fi;
	long other;

	if (!self->root)
		SKIP(return, "needs root for the module parameters");
	ASSERT_EQ(0, set_param(self, PARAM_FD, CAP));
	fds[0] = t_open(0);
	ASSERT_LE(0, fds[0]);
	for (i = 1; i < 8; i++)
		fds[i] = fds[0];
	EXPECT_EQ(CAP, run_armers(fds, 8, -ENOSPC, &other));
	EXPECT_EQ(0, other);
	ASSERT_EQ(0, t_fdinfo(fds[0], &fi));
	EXPECT_EQ(CAP, fi.timers);
	EXPECT_EQ(CAP, fi.user_timers);
	EXPECT_EQ(-ENOSPC, t_arm(fds[0], CLOCK_MONOTONIC, 0, 0, 0, 1, NULL));
	/* Another file is not full. */
	fds[1] = t_open(0);
	ASSERT_LE(0, fds[1]);
	EXPECT_EQ(0, t_arm(fds[1], CLOCK_MONOTONIC, 0, 0, 0, 1, NULL));
	close(fds[1]);
	close(fds[0]);
}

TEST_F(dos, per_file_cap_frees_up)
{
	enum { CAP = 100 };
	int fd = t_open(0), i;
	__u64 ids[CAP];

	if (!self->root)
		SKIP(return, "needs root for the module parameters");
	ASSERT_EQ(0, set_param(self, PARAM_FD, CAP));
	ASSERT_LE(0, fd);
	for (i = 0; i < CAP; i++)
		ASSERT_EQ(0, t_arm(fd, CLOCK_MONOTONIC, 0, 3600 * NSEC_PER_SEC,
				    0, i, &ids[i]));
	EXPECT_EQ(-ENOSPC, t_arm(fd, CLOCK_MONOTONIC, 0, 0, 0, 0, NULL));
	EXPECT_EQ(QTIMER_CANCEL_ARMED, t_cancel(fd, ids[0]));
	EXPECT_EQ(0, t_arm(fd, CLOCK_MONOTONIC, 0, 3600 * NSEC_PER_SEC, 0, 0,
			    &ids[0]));
	EXPECT_EQ(-ENOSPC, t_arm(fd, CLOCK_MONOTONIC, 0, 0, 0, 0, NULL));
	close(fd);
}

struct bad_submitter {
	int fd;
	volatile int stop;
	long submits;
	long not_einval;	/* ops whose result was not -EINVAL */
};

/* SUBMITs of 16 ARMs that are all invalid (clockid 99), until told. */
static void *bad_submitter_fn(void *p)
{
	struct bad_submitter *b = p;
	struct qtimer_op ops[16];
	__u32 done;
	int i;

	while (!b->stop) {
		for (i = 0; i < 16; i++) {
			ops[i] = t_op(CLOCK_MONOTONIC, 0, 3600 * NSEC_PER_SEC, 0, i);
			ops[i].opcode = QTIMER_OP_ARM;
			ops[i].clockid = 99;
		}
		if (t_submit(b->fd, ops, 16, 0, &done) != 16)
			b->not_einval++;
		for (i = 0; i < 16; i++)
			if (ops[i].result != -EINVAL)
				b->not_einval++;
		b->submits++;
	}
	return NULL;
}

/*
 * A file 16 below its cap, one thread SUBMITting chunks of 16 invalid ARMs
 * and another arming and cancelling one timer at a time, with a pause
 * between (so that chunks start while it holds no place): the invalid ARMs
 * create nothing, so the valid ARM never finds the file full.  (A chunk
 * used to take places under the caps for all its ARMs before checking
 * them, so the valid ARM got ENOSPC whenever it landed inside a chunk.)
 */
TEST_F(dos, submit_of_invalid_arms_takes_no_places)
{
	enum { CAP = 64, ROUNDS = 3000 };
	struct bad_submitter b = { 0 };
	long enospc = 0, other = 0, i;
	pthread_t th;
	__u64 id;
	int ret;

	if (!self->root)
		SKIP(return, "needs root for the module parameters");
	ASSERT_EQ(0, set_param(self, PARAM_FD, CAP));
	b.fd = t_open(0);
	ASSERT_LE(0, b.fd);
	for (i = 0; i < CAP - 16; i++)
		ASSERT_EQ(0, t_arm(b.fd, CLOCK_MONOTONIC, 0, 3600 * NSEC_PER_SEC,
				    0, i, NULL));
	ASSERT_EQ(0, pthread_create(&th, NULL, bad_submitter_fn, &b));
	for (i = 0; i < ROUNDS; i++) {
		ret = t_arm(b.fd, CLOCK_MONOTONIC, 0, 3600 * NSEC_PER_SEC, 0,
			     0, &id);
		if (!ret) {
			if (t_cancel(b.fd, id) != QTIMER_CANCEL_ARMED)
				other++;
		} else if (ret == -ENOSPC) {
			enospc++;
		} else {
			other++;
		}
		usleep(20);
	}
	b.stop = 1;
	pthread_join(th, NULL);
	TH_LOG("%ld ARMs, %ld of them ENOSPC, against %ld SUBMITs", (long)ROUNDS,
	       enospc, b.submits);
	EXPECT_EQ(0, enospc);
	EXPECT_EQ(0, other);
	EXPECT_EQ(0, b.not_einval);
	close(b.fd);
}

TEST_F(dos, per_user_cap_is_exact_and_per_user)
{
	enum { CAP = 3000 };
	int fds[8], i, status;
	struct t_fdinfo fi;
	long other;
	pid_t pid;

	if (!self->root)
		SKIP(return, "needs root for the module parameters");
	ASSERT_EQ(0, set_param(self, PARAM_USER, CAP));
	for (i = 0; i < 8; i++) {
		fds[i] = t_open(0);
		ASSERT_LE(0, fds[i]);
	}
	EXPECT_EQ(CAP, run_armers(fds, 8, -EDQUOT, &other));
	EXPECT_EQ(0, other);
	ASSERT_EQ(0, t_fdinfo(fds[0], &fi));
	EXPECT_EQ(CAP, fi.user_timers);
	EXPECT_EQ(-EDQUOT, t_arm(fds[0], CLOCK_MONOTONIC, 0, 0, 0, 0, NULL));

	/* Another user has a quota of its own. */
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		int fd, k;

		if (setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
			_exit(10);
		fd = t_open(0);
		if (fd < 0)
			_exit(11);
		for (k = 0; k < 100; k++)
			if (t_arm(fd, CLOCK_MONOTONIC, 0, 3600 * NSEC_PER_SEC,
				   0, k, NULL))
				_exit(12);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
		TH_LOG("status %#x", status);

	/* A closed file gives its timers back (one that has some). */
	for (i = 7; i > 0; i--) {
		ASSERT_EQ(0, t_fdinfo(fds[i], &fi));
		if (fi.timers)
			break;
	}
	ASSERT_LT(0, i) TH_LOG("all %d timers in one file", CAP);
	close(fds[i]);
	fds[i] = -1;
	EXPECT_EQ(0, t_arm(fds[0], CLOCK_MONOTONIC, 0, 3600 * NSEC_PER_SEC,
			    0, 0, NULL));
	for (i = 0; i < 8; i++)
		if (fds[i] >= 0)
			close(fds[i]);
}

TEST_HARNESS_MAIN
