// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * The shard suites' far timers and id lists (qtimer_shard.h): timers an
 * hour away that no test outlives, their ids, and how those repeat.
 */
#define _GNU_SOURCE

#include "qtimer_shard.h"

const int far_clocks[NR_FAR_CLOCKS] = {
	CLOCK_MONOTONIC, CLOCK_BOOTTIME, CLOCK_REALTIME
};

int far_clock(long cookie)
{
	return far_clocks[cookie % NR_FAR_CLOCKS];
}

/* An ARM, an hour or so away, on the clock @cookie picks. */
struct qtimer_op far_op(long cookie)
{
	struct qtimer_op op = t_op(far_clock(cookie), 0,
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
 * heaps and in its shard), cookies from @cookie0 on: the
 * first half in SUBMIT batches, the rest one ARM each, which take the
 * file's locks differently.  0 or the first failure's -errno.
 */
int arm_far(int fd, __u64 *ids, int n, long cookie0)
{
	int half = n / 2, k, ret;

	ret = t_arm_many(fd, half, far_fill, &cookie0, ids, half);
	for (k = half; !ret && k < n; k++) {
		struct qtimer_op op = far_op(cookie0 + k);

		ret = t_arm_op(fd, &op);
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
int count_repeats(const __u64 *ids, int n)
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

bool id_in(const __u64 *ids, int n, __u64 id)
{
	int k;

	for (k = 0; k < n; k++)
		if (ids[k] == id)
			return true;
	return false;
}

struct qtimer_op id_op(__u16 opcode, __u64 id)
{
	struct qtimer_op op;

	memset(&op, 0, sizeof(op));
	op.opcode = opcode;
	op.id = id;
	return op;
}

