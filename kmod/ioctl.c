// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * The ioctl commands: validation first, so that bad input changes nothing,
 * then one call into the context.  uapi/linux/qtimer.h is the contract; every
 * errno returned here is documented there.
 */

#include <linux/capability.h>
#include <linux/cpumask.h>
#include <linux/fs.h>
#include <linux/log2.h>
#include <linux/overflow.h>
#include <linux/sched.h>
#include <linux/sched/isolation.h>
#include <linux/uaccess.h>

#include "base.h"
#include "batch.h"
#include "clock.h"
#include "ctx.h"
#include "ring.h"
#include "ioctl.h"
#include "user.h"

static int qt_ioctl_clock_index(u32 clockid)
{
	switch (clockid) {
	case CLOCK_REALTIME:
		return QT_CLOCK_REALTIME;
	case CLOCK_MONOTONIC:
		return QT_CLOCK_MONOTONIC;
	case CLOCK_BOOTTIME:
		return QT_CLOCK_BOOTTIME;
	}
	return -EINVAL;
}

/* Turn a user expiry into absolute host time on @clock. */
static int qt_resolve_expires(unsigned int clock, u32 flags, s64 expires,
			      ktime_t *out)
{
	ktime_t now;

	if (expires < 0)
		return -EINVAL;
	if (flags & QTIMER_F_ABSTIME) {
		/*
		 * A time namespace sees MONOTONIC/BOOTTIME shifted.  Host time
		 * is expires - offset, which overflows for a namespace behind
		 * the host (negative offset) and an expiry near the top: that
		 * is beyond any host time, not a time long past.  An expiry
		 * before the host's epoch has passed already: fire at once.
		 */
		if (clock != QT_CLOCK_REALTIME) {
			ktime_t offset;

			offset = qt_clock_timens_offset(qt_clock_id(clock));
			if (check_sub_overflow(expires, offset, &expires))
				return -EOVERFLOW;
			expires = max_t(s64, expires, 0);
		}
		if (expires > QT_EXPIRES_MAX)
			return -EOVERFLOW;
		*out = expires;
		return 0;
	}
	now = qt_clock_now(clock);
	if (expires > QT_EXPIRES_MAX - now)
		return -EOVERFLOW;
	*out = now + expires;
	return 0;
}

/* The checks ARM and MODIFY share; @clock is the timer's. */
static int qt_check_schedule(const struct qtimer_op *op, unsigned int clock,
			     struct qt_arm_args *args)
{
	if (op->flags & ~QTIMER_F_ALL || op->reserved)
		return -EINVAL;
	if (op->slack_ns > QTIMER_SLACK_MAX_NS)
		return -EINVAL;
	if ((op->flags & QTIMER_F_CANCEL_ON_SET) &&
	    (clock != QT_CLOCK_REALTIME || !(op->flags & QTIMER_F_ABSTIME)))
		return -EINVAL;
	if (op->period_ns > QT_EXPIRES_MAX)
		return -EOVERFLOW;
	args->flags = op->flags;
	/* Relative CLOCK_REALTIME is an interval, as for timerfd. */
	if (clock == QT_CLOCK_REALTIME && !(op->flags & QTIMER_F_ABSTIME)) {
		clock = QT_CLOCK_MONOTONIC;
		args->flags |= QT_ARM_RELATIVE_REAL;
	}
	args->clock = clock;
	args->period = op->period_ns;
	args->slack = op->slack_ns;
	return qt_resolve_expires(clock, op->flags, op->expires_ns,
				  &args->expires);
}

/*
 * QTIMER_F_CPU puts a timer's interrupt and expiry work on another CPU.  The
 * caller may name a CPU it may run on now (its affinity, which the scheduler
 * keeps inside its cpuset; the cpuset itself is not visible to a module),
 * or any CPU with CAP_SYS_NICE, which may move tasks there anyway; never an
 * offline one, nor one the admin isolated from timers (nohz_full=,
 * isolcpus=timer).  Without the flag a timer goes to the arming CPU.
 */
static bool qt_cpu_allowed(u32 cpu)
{
	if (cpu >= nr_cpu_ids || !cpu_online(cpu) ||
	    !housekeeping_cpu(cpu, HK_TYPE_TIMER))
		return false;
	return cpumask_test_cpu(cpu, current->cpus_ptr) ||
	       capable(CAP_SYS_NICE);
}

/* Check an ARM and make @args of it: 0, or the error the ARM fails with. */
static int qt_arm_prepare(const struct qtimer_op *op, struct qt_arm_args *args)
{
	int clock = qt_ioctl_clock_index(op->clockid);

	if (clock < 0)
		return clock;
	*args = (struct qt_arm_args){ .cookie = op->cookie };
	if (op->flags & QTIMER_F_CPU) {
		if (!qt_cpu_allowed(op->cpu))
			return -EINVAL;
		args->cpu = op->cpu;
	} else if (op->cpu) {
		return -EINVAL;
	}
	return qt_check_schedule(op, clock, args);
}

static int qt_ioctl_op_arm(struct qt_ctx *ctx, struct qtimer_op *op,
			   struct qt_batch *batch)
{
	struct qt_arm_args args;
	int ret;

	ret = qt_arm_prepare(op, &args);
	if (ret)
		return ret;
	return qt_ops_arm(ctx, &args, batch, &op->id);
}

static int qt_ioctl_op_cancel(struct qt_ctx *ctx, const struct qtimer_op *op,
			      struct qt_batch *batch)
{
	if (op->clockid || op->flags || op->expires_ns || op->period_ns ||
	    op->slack_ns || op->cookie || op->cpu || op->reserved)
		return -EINVAL;
	return qt_ops_cancel(ctx, op->id, batch);
}

static int qt_ioctl_op_modify(struct qt_ctx *ctx, const struct qtimer_op *op,
			      struct qt_batch *batch)
{
	unsigned int clock = qt_ids_clock(op->id);
	struct qt_arm_args args = {};
	int ret;

	if (op->clockid || op->cpu || op->cookie ||
	    (op->flags & QTIMER_F_CPU))
		return -EINVAL;
	/* The id carries the clock; an id with none names no timer. */
	if (clock >= QT_NR_CLOCKS)
		return -ENOENT;
	ret = qt_check_schedule(op, clock, &args);
	if (ret)
		return ret;
	return qt_ops_modify(ctx, op->id, &args, batch);
}

/* @batch: the SUBMIT chunk's, or one op's own (qt_ioctl_op_run_alone()). */
static int qt_ioctl_op_run(struct qt_ctx *ctx, struct qtimer_op *op,
			   struct qt_batch *batch)
{
	switch (op->opcode) {
	case QTIMER_OP_ARM:
		return qt_ioctl_op_arm(ctx, op, batch);
	case QTIMER_OP_CANCEL:
		return qt_ioctl_op_cancel(ctx, op, batch);
	case QTIMER_OP_MODIFY:
		return qt_ioctl_op_modify(ctx, op, batch);
	}
	return -EINVAL;
}

static long qt_ioctl_version(void __user *argp)
{
	struct qtimer_version v = {
		.api_version = QTIMER_API_VERSION,
		.record_size = sizeof(struct qtimer_record),
		.features = QTIMER_FEAT_SUBMIT | QTIMER_FEAT_PERIODIC |
			    QTIMER_FEAT_SLACK | QTIMER_FEAT_CPU |
			    QTIMER_FEAT_CANCEL_ON_SET | QTIMER_FEAT_TIME_NS |
			    QTIMER_FEAT_RING | QTIMER_FEAT_RING_DRAIN |
			    QTIMER_FEAT_GET | QTIMER_FEAT_TABLE,
		.op_size = sizeof(struct qtimer_op),
		.submit_max = QTIMER_SUBMIT_MAX,
		.clocks = BIT(CLOCK_REALTIME) | BIT(CLOCK_MONOTONIC) |
			  BIT(CLOCK_BOOTTIME),
		.count_max = QTIMER_COUNT_MAX,
		.max_slack_ns = QTIMER_SLACK_MAX_NS,
		.max_timers_per_fd = READ_ONCE(qt_max_timers_per_fd),
		.max_timers_per_user = READ_ONCE(qt_max_timers_per_user),
	};

	return copy_to_user(argp, &v, sizeof(v)) ? -EFAULT : 0;
}

/* One op on its own: a chunk of one. */
static int qt_ioctl_op_run_alone(struct qt_ctx *ctx, struct qtimer_op *op)
{
	struct qt_batch batch;
	int ret;

	qt_batch_begin(ctx, &batch, 0);
	ret = qt_ioctl_op_run(ctx, op, &batch);
	qt_batch_end(ctx, &batch);
	return ret;
}

/* Cancel a timer whose id its caller cannot learn: it must not exist. */
static void qt_cancel_unreported(struct qt_ctx *ctx, u64 id)
{
	struct qtimer_op op = { .opcode = QTIMER_OP_CANCEL, .id = id };

	qt_ioctl_op_run_alone(ctx, &op);
}

/* ARM, CANCEL and MODIFY, one at a time. */
static long qt_ioctl_single(struct qt_ctx *ctx, struct qtimer_op __user *uop,
			    u16 opcode)
{
	struct qtimer_op op;
	int ret;

	if (copy_from_user(&op, uop, sizeof(op)))
		return -EFAULT;
	if (op.opcode && op.opcode != opcode)
		return -EINVAL;
	op.opcode = opcode;
	/*
	 * An ARM whose id cannot be written back must not run: armed and
	 * then cancelled, its timer could fire in between and its record
	 * reach a reader, under an id the caller never learns.  Only a
	 * mapping changed by another thread meanwhile is left for the
	 * cancel below.
	 */
	if (opcode == QTIMER_OP_ARM && put_user(0ULL, &uop->id))
		return -EFAULT;
	ret = qt_ioctl_op_run_alone(ctx, &op);
	if (opcode == QTIMER_OP_ARM && !ret && put_user(op.id, &uop->id)) {
		qt_cancel_unreported(ctx, op.id);
		return -EFAULT;
	}
	return ret;
}

/*
 * SUBMIT works a chunk of ops at a time: one copy in, one user-access
 * window to mark the chunk's results, the ops (with their timers allocated
 * in bulk and the context lock held from one op to the next, see struct
 * qt_batch), one window to report them.  Per op, four user copies, a slab
 * round trip and an irq-off lock round trip cost more than the timer work
 * itself.  A chunk lives on the stack, so SUBMIT allocates nothing of its
 * own that could fail.
 */
#define QT_SUBMIT_CHUNK		QT_BATCH_MAX

/*
 * Mark ops[0..nr) in progress (result -EINPROGRESS, an ARM's id 0) before
 * any of them runs, so that an op whose outcome could not be reported never
 * runs.  Returns how many were marked: a fault stops there.
 */
static unsigned int qt_submit_mark(struct qtimer_op __user *uops,
				   const struct qtimer_op *ops, unsigned int nr)
{
	unsigned int i = 0;

	if (!user_access_begin(uops, nr * sizeof(*uops)))
		return 0;
	for (; i < nr; i++) {
		unsafe_put_user(-EINPROGRESS, &uops[i].result, out);
		if (ops[i].opcode == QTIMER_OP_ARM)
			unsafe_put_user(0, &uops[i].id, out);
	}
out:
	user_access_end();
	return i;
}

/*
 * Write back the results of ops[0..ran) and restore ops[ran..marked), which
 * were marked but did not run, to what the caller wrote.  Returns how many
 * results were written: only an unmap racing with the call makes that fewer
 * than @ran, as the marks went through.
 */
static unsigned int qt_submit_report(struct qtimer_op __user *uops,
				     const struct qtimer_op *ops,
				     const int *results, unsigned int ran,
				     unsigned int marked)
{
	unsigned int i = 0;

	if (!user_access_begin(uops, marked * sizeof(*uops)))
		return 0;
	for (; i < marked; i++) {
		const struct qtimer_op *op = &ops[i];

		unsafe_put_user(i < ran ? results[i] : op->result,
				&uops[i].result, out);
		if (op->opcode == QTIMER_OP_ARM)
			unsafe_put_user(op->id, &uops[i].id, out);
	}
out:
	user_access_end();
	return min(i, ran);
}

/*
 * Run up to QT_SUBMIT_CHUNK ops.  Returns how many were processed; *stop
 * says that processing ends with them (an op that could not be read or
 * reported, STOP_ON_ERROR, a fatal signal).
 */
static unsigned int qt_submit_chunk(struct qt_ctx *ctx,
				    struct qtimer_op __user *uops,
				    struct qtimer_op *ops, unsigned int nr,
				    u32 flags, bool *stop)
{
	struct qt_arm_args args[QT_SUBMIT_CHUNK];
	int results[QT_SUBMIT_CHUNK];
	struct qt_batch batch;
	unsigned int readable, marked, ran, reported, nr_arm = 0, i;

	readable = nr - DIV_ROUND_UP(copy_from_user(ops, uops, nr * sizeof(*ops)),
				     sizeof(*ops));
	marked = qt_submit_mark(uops, ops, readable);
	if (marked < nr)
		*stop = true;

	/*
	 * The chunk's ARMs are checked first, and only those that pass take
	 * places under the caps for it: places taken for ARMs that fail
	 * anyway would make a concurrent ARM on the file, or anywhere of the
	 * user's, fail against a cap nobody reached.
	 */
	for (i = 0; i < marked; i++) {
		if (ops[i].opcode != QTIMER_OP_ARM)
			continue;
		results[i] = qt_arm_prepare(&ops[i], &args[i]);
		if (!results[i])
			nr_arm++;
	}
	qt_batch_begin(ctx, &batch, nr_arm);

	for (ran = 0; ran < marked; ) {
		if (ops[ran].opcode != QTIMER_OP_ARM)
			results[ran] = qt_ioctl_op_run(ctx, &ops[ran], &batch);
		else if (!results[ran])
			results[ran] = qt_ops_arm(ctx, &args[ran], &batch,
						  &ops[ran].id);
		if (results[ran++] < 0 && (flags & QTIMER_SUBMIT_STOP_ON_ERROR)) {
			*stop = true;
			break;
		}
	}
	qt_batch_end(ctx, &batch);

	/*
	 * A failed ARM leaves its id as marked, 0.  Ops that did not run
	 * still hold the caller's id and result, which go back.
	 */
	for (i = 0; i < ran; i++)
		if (ops[i].opcode == QTIMER_OP_ARM && results[i])
			ops[i].id = 0;
	reported = qt_submit_report(uops, ops, results, ran, marked);
	if (reported < ran) {
		/* Unmapped under us: the caller cannot learn these ids. */
		for (i = reported; i < ran; i++)
			if (ops[i].opcode == QTIMER_OP_ARM && !results[i])
				qt_cancel_unreported(ctx, ops[i].id);
		*stop = true;
	}
	return reported;
}

static long qt_ioctl_submit(struct qt_ctx *ctx,
			    struct qtimer_submit __user *usub)
{
	struct qtimer_op ops[QT_SUBMIT_CHUNK];
	struct qtimer_op __user *uops;
	struct qtimer_submit sub;
	bool stop = false;
	u32 done = 0;

	if (copy_from_user(&sub, usub, sizeof(sub)))
		return -EFAULT;
	if (sub.flags & ~QTIMER_SUBMIT_ALL || sub.pad || sub.reserved)
		return -EINVAL;
	if (!sub.nr || sub.nr > QTIMER_SUBMIT_MAX)
		return -EINVAL;
	uops = u64_to_user_ptr(sub.ops);
	/* done must be writable before any op runs, like the results. */
	if (put_user(0, &usub->done))
		return -EFAULT;

	while (done < sub.nr && !stop) {
		done += qt_submit_chunk(ctx, uops + done, ops,
					min_t(u32, sub.nr - done, QT_SUBMIT_CHUNK),
					sub.flags, &stop);
		if (done < sub.nr && !stop) {
			if (fatal_signal_pending(current))
				break;
			cond_resched();
		}
	}
	if (!done)
		return -EFAULT;
	/*
	 * It was writable above: only another thread unmapping it meanwhile
	 * makes this fail, and the return value says the same anyway.
	 */
	if (put_user(done, &usub->done))
		return done;
	return done;
}

/*
 * GET: only id in; the rest of the op is the answer, written back whole
 * with the result, which is also the return value.
 */
static long qt_ioctl_get(struct qt_ctx *ctx, struct qtimer_op __user *uop)
{
	struct qtimer_op op;
	struct qt_batch batch;
	int ret;

	if (copy_from_user(&op, uop, sizeof(op)))
		return -EFAULT;
	if (op.opcode || op.clockid || op.flags || op.expires_ns ||
	    op.period_ns || op.slack_ns || op.cookie || op.cpu || op.result ||
	    op.reserved)
		return -EINVAL;
	qt_batch_begin(ctx, &batch, 0);
	ret = qt_ops_get(ctx, op.id, &batch, &op);
	qt_batch_end(ctx, &batch);
	if (ret < 0)
		return ret;
	op.result = ret;
	return copy_to_user(uop, &op, sizeof(op)) ? -EFAULT : ret;
}

static long qt_ioctl_ring_setup(struct qt_ctx *ctx,
				struct qtimer_ring_setup __user *usetup)
{
	struct qtimer_ring_setup setup;
	int ret;

	if (copy_from_user(&setup, usetup, sizeof(setup)))
		return -EFAULT;
	if (setup.flags || setup.reserved[0] || setup.reserved[1])
		return -EINVAL;
	if (setup.entries < QTIMER_RING_MIN || setup.entries > QTIMER_RING_MAX ||
	    !is_power_of_2(setup.entries))
		return -EINVAL;
	/*
	 * A struct that cannot take the answer sets nothing up: the ring
	 * would take over the file's records with no way to map it, and a
	 * second try would be -EBUSY.
	 */
	if (copy_to_user(usetup, &setup, sizeof(setup)))
		return -EFAULT;
	ret = qt_ring_setup(ctx, &setup);
	if (ret)
		return ret;
	/*
	 * Unwritable only if another thread changed the mapping meanwhile:
	 * the ring stays (its layout is fixed, and the file works without it).
	 */
	return copy_to_user(usetup, &setup, sizeof(setup)) ? -EFAULT : 0;
}

static long qt_ioctl_table_setup(struct qt_ctx *ctx,
				 struct qtimer_table_setup __user *usetup)
{
	struct qtimer_table_setup setup;
	int ret;

	if (copy_from_user(&setup, usetup, sizeof(setup)))
		return -EFAULT;
	if (setup.flags || setup.nr_shards || setup.mmap_off ||
	    setup.shard_size || setup.reserved[0] || setup.reserved[1])
		return -EINVAL;
	/* As for the ring: a struct that cannot take the answer sets up nothing. */
	if (copy_to_user(usetup, &setup, sizeof(setup)))
		return -EFAULT;
	ret = qt_table_setup(ctx, &setup);
	if (ret)
		return ret;
	/* Its layout is fixed: the answer is the same for every file. */
	return copy_to_user(usetup, &setup, sizeof(setup)) ? -EFAULT : 0;
}

long qt_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct qt_ctx *ctx = file->private_data;
	void __user *argp = (void __user *)arg;

	switch (cmd) {
	case QTIMER_IOC_VERSION:
		return qt_ioctl_version(argp);
	case QTIMER_IOC_ARM:
		return qt_ioctl_single(ctx, argp, QTIMER_OP_ARM);
	case QTIMER_IOC_CANCEL:
		return qt_ioctl_single(ctx, argp, QTIMER_OP_CANCEL);
	case QTIMER_IOC_MODIFY:
		return qt_ioctl_single(ctx, argp, QTIMER_OP_MODIFY);
	case QTIMER_IOC_SUBMIT:
		return qt_ioctl_submit(ctx, argp);
	case QTIMER_IOC_RING_SETUP:
		return qt_ioctl_ring_setup(ctx, argp);
	case QTIMER_IOC_GET:
		return qt_ioctl_get(ctx, argp);
	case QTIMER_IOC_TABLE_SETUP:
		return qt_ioctl_table_setup(ctx, argp);
	}
	return -ENOTTY;
}
