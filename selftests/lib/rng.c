// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * A seedable PRNG, so that a failing random run can be replayed from the
 * seed its log printed, and the budget of the suites' "# " diagnostics.
 */
#include "helpers.h"

_Atomic int t_diag_budget = 40;

void t_rng_seed(struct t_rng *r, uint64_t seed)
{
	r->s = seed ? seed : 0x9e3779b97f4a7c15ULL;
}

uint64_t t_rand(struct t_rng *r)
{
	r->s ^= r->s >> 12;
	r->s ^= r->s << 25;
	r->s ^= r->s >> 27;
	return r->s * 0x2545f4914f6cdd1dULL;
}

uint64_t t_rand_below(struct t_rng *r, uint64_t n)
{
	return t_rand(r) % n;
}

bool t_chance(struct t_rng *r, unsigned int percent)
{
	return t_rand_below(r, 100) < percent;
}

void t_shuffle(int *order, int n, struct t_rng *r)
{
	int k;

	for (k = 0; k < n; k++)
		order[k] = k;
	for (k = n - 1; k > 0; k--) {
		int j = t_rand_below(r, k + 1), t = order[k];

		order[k] = order[j];
		order[j] = t;
	}
}
