/* SPDX-License-Identifier: LGPL-2.1 OR MIT */
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * The layout of the public structs of libtimerdev.so.2, as a program built
 * against timerdev.h sees it: part of the ABI as much as the symbols in
 * abi.baseline.  Included by abi_test.c (native) and time_test.c (built
 * also as 32-bit programs with either time_t), so that every ABI the tests
 * build is checked.  A change here is a new soname.
 */
#ifndef _ABI_LAYOUT_H
#define _ABI_LAYOUT_H

#include <stddef.h>

#include "timerdev.h"

#define TD_ABI_LAYOUT(type, member, offset)				\
	_Static_assert(offsetof(type, member) == (offset),		\
		       #type "." #member " moved")

/* Fixed-size fields only: the same on every target. */
_Static_assert(sizeof(struct td_timer_spec) == 64, "struct td_timer_spec size");
TD_ABI_LAYOUT(struct td_timer_spec, clockid, 0);
TD_ABI_LAYOUT(struct td_timer_spec, flags, 4);
TD_ABI_LAYOUT(struct td_timer_spec, expires_ns, 8);
TD_ABI_LAYOUT(struct td_timer_spec, period_ns, 16);
TD_ABI_LAYOUT(struct td_timer_spec, slack_ns, 24);
TD_ABI_LAYOUT(struct td_timer_spec, cookie, 32);
TD_ABI_LAYOUT(struct td_timer_spec, cpu, 40);
TD_ABI_LAYOUT(struct td_timer_spec, reserved, 44);

_Static_assert(sizeof(struct td_completion) == 24, "struct td_completion size");
TD_ABI_LAYOUT(struct td_completion, user_data, 0);
TD_ABI_LAYOUT(struct td_completion, id, 8);
TD_ABI_LAYOUT(struct td_completion, opcode, 16);
TD_ABI_LAYOUT(struct td_completion, result, 20);

/* The caller allocates it: its size is ABI, its private part a pointer. */
_Static_assert(sizeof(struct td_batch) == 24 + 4 * sizeof(void *),
	       "struct td_batch size");
TD_ABI_LAYOUT(struct td_batch, nr, 0);
TD_ABI_LAYOUT(struct td_batch, capacity, 4);
TD_ABI_LAYOUT(struct td_batch, completed, 8);
TD_ABI_LAYOUT(struct td_batch, failed, 16);
TD_ABI_LAYOUT(struct td_batch, state, 24);
TD_ABI_LAYOUT(struct td_batch, reserved, 24 + sizeof(void *));

/* libtimerdev 2.1.  Caller-allocated; its size follows the path pointer. */
_Static_assert(sizeof(struct td_open_params) == sizeof(void *) + 40,
	       "struct td_open_params size");
TD_ABI_LAYOUT(struct td_open_params, path, 0);
TD_ABI_LAYOUT(struct td_open_params, flags, sizeof(void *));
TD_ABI_LAYOUT(struct td_open_params, ring_entries, sizeof(void *) + 4);
TD_ABI_LAYOUT(struct td_open_params, reserved, sizeof(void *) + 8);

#endif /* _ABI_LAYOUT_H */
