/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * The ENDED window's race (qtimer_shard_window_test.c): a reader ends a
 * one-shot while CANCEL or MODIFY looks its id up.  qtimer_shard_window.c
 * runs the two sides of a round, the duel, declared here.
 *
 * The window's races are mostly handshakes, as in qtimer_ring_race_test:
 * the reader offers the record it is about to take, the other side
 * answers with CANCEL or MODIFY of its timer, and a lead that moves
 * towards whichever side lost keeps them meeting.  The test fails if
 * either side never won: it would not have tested the window.  Nothing
 * is judged by time, only by results, counts and order.
 */
#ifndef _QT_TEST_SHARD_WINDOW_H
#define _QT_TEST_SHARD_WINDOW_H

#include "qtimer_shard.h"

/*
 * How the reader takes records: read() on a plain file, read() on a file
 * with a ring (the kernel claims from the ring), or claims in the mapping.
 */
enum taker { BY_READ, BY_RING_READ, BY_RING_MAP };

#define WIN_ROUNDS	9
#define WIN_TIMERS	200	/* a round's */
#define WIN_MAX		256	/* room for them */
#define WIN_RING	256	/* ring entries: a round's records fit */
#define WIN_LOG		(4 * WIN_MAX)
/* The most records the reader takes at once. */
#define WIN_READ_MAX	8
/* How far ahead a racing MODIFY moves its timer. */
#define WIN_MODIFY_NS	(2 * NSEC_PER_MSEC)
/* However slow the kernel, a round's racing ends by then. */
#define WIN_ROUND_NS	(60 * NSEC_PER_SEC)
/* lead_ns's least step and its bound either way (see struct duel). */
#define WIN_LEAD_STEP_NS	200
#define WIN_LEAD_MAX_NS		(5 * NSEC_PER_MSEC)

struct took {
	struct qtimer_record rec;
	__s64 stamp;		/* CLOCK_MONOTONIC right after taking it */
};

/*
 * One round of the race: n one-shots, their records taken by the reader
 * thread, CANCEL or MODIFY of each by the op side (the test's thread),
 * one timer at a time by handshake.  The reader names the timer whose
 * record it is about to take (target) and bumps offer; the op side
 * answers with fire = offer, goes for that timer, and says done = offer
 * when its result is in res[].  Who starts first, and by how much, is
 * lead_ns: above zero the reader waits a random time of up to twice that
 * before it takes, below zero the op side waits so before it acts.  After
 * each race the reader moves it towards the loser, so that the races
 * gather where either side may win, on a fast kernel or a slow one.
 */
struct duel {
	/* Set up before the threads start. */
	int fd;
	struct t_ring *ring;	/* BY_RING_MAP: the mapping */
	enum taker taker;
	bool modify;
	bool free_run;		/* no handshake: the op side chases the reader */
	int n, round, reader_cpu;
	__s64 deadline;
	__u64 ids[WIN_MAX];
	__s64 old_when[WIN_MAX];	/* even: as armed */
	struct t_rng rng;		/* the reader's */

	/* The op side's, read by the reader after done. */
	int res[WIN_MAX];
	bool acted[WIN_MAX];
	__s64 new_when[WIN_MAX];	/* odd: as a MODIFY moved it */

	/* The reader's. */
	struct took log[WIN_LOG];
	int nr_log, lost_log, take_errors;
	bool old_taken[WIN_MAX];
	int steps, reader_won, op_won, op_armed;
	bool timed_out;

	_Atomic bool over;
	_Atomic int head;	/* free_run: the first timer the reader awaits */
	_Atomic unsigned int offer, fire, done;
	_Atomic int target;
	_Atomic __s64 lead_ns;
};

void *duel_reader(void *arg);
void duel_act(struct duel *d, struct t_rng *rng);
int duel_arm(struct duel *d, const int *cpus, int nc, int heap_cpu);
void duel_drain(struct duel *d);
int duel_verdict(struct duel *d);

#endif /* _QT_TEST_SHARD_WINDOW_H */
