// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * The single operations: one ioctl each, but for the stops and pushes that
 * the timer table takes with none (table.c).  The library checks only what the
 * kernel cannot see (its own flag words, that cpu says nothing without
 * TD_TIMER_CPU, and that the spec's reserved fields are zero); everything
 * else is left for the kernel to validate, so that the library never
 * disagrees with the device about what is valid.
 */
#include <string.h>

#include "internal.h"

#define TD_MODIFY_FLAGS	(TD_TIMER_ABSTIME | TD_TIMER_CANCEL_ON_SET)
#define TD_SPEC_FLAGS	(TD_MODIFY_FLAGS | TD_TIMER_CPU)

int td_op_from_spec(struct qtimer_op *op, const struct td_timer_spec *spec)
{
	size_t i;

	memset(op, 0, sizeof(*op));
	if (!spec || (spec->flags & ~TD_SPEC_FLAGS))
		return -EINVAL;
	/* Room for later fields: a spec that fills it is not for us. */
	for (i = 0; i < sizeof(spec->reserved) / sizeof(spec->reserved[0]); i++)
		if (spec->reserved[i])
			return -EINVAL;
	/* struct qtimer_op has 16 bits for it; larger ids cannot be clocks. */
	if (spec->clockid < 0 || spec->clockid > 0xffff)
		return -EINVAL;
	if (spec->flags & TD_TIMER_CPU) {
		if (spec->cpu < 0)
			return -EINVAL;
		op->cpu = spec->cpu;
	} else if (spec->cpu != 0 && spec->cpu != TD_CPU_ANY) {
		/* A CPU without the flag: meant to pin, would not. */
		return -EINVAL;
	}

	op->opcode = QTIMER_OP_ARM;
	op->clockid = spec->clockid;
	op->flags = spec->flags;	/* TD_TIMER_* are QTIMER_F_* */
	op->expires_ns = spec->expires_ns;
	op->period_ns = spec->period_ns;
	op->slack_ns = spec->slack_ns;
	op->cookie = spec->cookie;
	return 0;
}

int td_op_modify(struct qtimer_op *op, uint64_t id, int64_t expires_ns,
		 uint64_t period_ns, uint64_t slack_ns, unsigned int flags)
{
	memset(op, 0, sizeof(*op));
	if (flags & ~TD_MODIFY_FLAGS)
		return -EINVAL;
	op->opcode = QTIMER_OP_MODIFY;
	op->flags = flags;
	op->id = id;
	op->expires_ns = expires_ns;
	op->period_ns = period_ns;
	op->slack_ns = slack_ns;
	return 0;
}

TD_EXPORT int td_arm(struct td_ctx *ctx, const struct td_timer_spec *spec,
		     uint64_t *idp)
{
	struct qtimer_op op;
	int ret;

	if (!ctx)
		return -EINVAL;
	ret = td_op_from_spec(&op, spec);
	if (ret)
		return ret;
	ret = td_sys_ioctl(ctx->fd, QTIMER_IOC_ARM, &op);
	/* Places that stops through the table still hold: take them back. */
	if (td_table_cap_error(ctx, ret) && td_table_reclaim(ctx))
		ret = td_sys_ioctl(ctx->fd, QTIMER_IOC_ARM, &op);
	if (ret < 0)
		return ret;
	td_table_note(ctx, op.id);
	if (idp)
		*idp = op.id;
	return 0;
}

TD_EXPORT int td_cancel(struct td_ctx *ctx, uint64_t id)
{
	struct qtimer_op op = {
		.opcode = QTIMER_OP_CANCEL,
		.id = id,
	};

	if (!ctx)
		return -EINVAL;
	/* A stop that wins is a CANCEL of an armed timer. */
	if (!td_table_stop(ctx, id))
		return QTIMER_CANCEL_ARMED;
	return td_sys_ioctl(ctx->fd, QTIMER_IOC_CANCEL, &op);
}

TD_EXPORT int td_get(struct td_ctx *ctx, uint64_t id,
		     struct td_timer_spec *spec)
{
	struct qtimer_op op = { .id = id };
	int ret;

	if (!ctx || !spec)
		return -EINVAL;
	ret = td_sys_ioctl(ctx->fd, QTIMER_IOC_GET, &op);
	if (ret < 0)
		return ret;
	memset(spec, 0, sizeof(*spec));
	spec->clockid = op.clockid;
	spec->flags = (op.flags & (TD_TIMER_ABSTIME | TD_TIMER_CANCEL_ON_SET)) |
		      TD_TIMER_CPU;
	spec->expires_ns = op.expires_ns;
	spec->period_ns = op.period_ns;
	spec->slack_ns = op.slack_ns;
	spec->cookie = op.cookie;
	spec->cpu = (int)op.cpu;
	return ret;
}

TD_EXPORT int td_modify(struct td_ctx *ctx, uint64_t id, int64_t expires_ns,
			uint64_t period_ns, uint64_t slack_ns,
			unsigned int flags)
{
	struct qtimer_op op;
	int64_t when;

	if (!ctx || td_op_modify(&op, id, expires_ns, period_ns, slack_ns, flags))
		return -EINVAL;
	/*
	 * A one-shot with no slack nor cancel-on-set (the slot says PLAIN),
	 * kept so, and pushed later: the push is the whole MODIFY.
	 */
	if (td_has_table(ctx) && !period_ns && !slack_ns &&
	    !(flags & TD_TIMER_CANCEL_ON_SET) &&
	    !td_table_when(id, expires_ns, flags, false, &when) &&
	    !td_table_push(ctx, id, when, true))
		return QTIMER_CANCEL_ARMED;
	return td_sys_ioctl(ctx->fd, QTIMER_IOC_MODIFY, &op);
}
