/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * Tracepoints at the points of a timer's life that user space can observe:
 * arm, cancel, modify, expiry (the timer queued on its file) and read (its
 * record copied out).  Ids are printed in hex, as they are built from bit
 * fields (see ids.h); times are nanoseconds of the timer's clock, in the
 * host's view (no time namespace offset).
 *
 * This header lives outside include/trace/events, so define_trace.h finds
 * it through TRACE_INCLUDE_PATH, relative to a -I$(src) that kmod/Kbuild
 * gives the one file that defines CREATE_TRACE_POINTS (trace.c).
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM qtimer

#if !defined(_QT_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _QT_TRACE_H

#include <linux/ktime.h>
#include <linux/time.h>
#include <linux/tracepoint.h>
#include <linux/qtimer.h>

#include "clock.h"
#include "timer.h"

#define qt_show_clock(clockid)					\
	__print_symbolic(clockid,				\
			 { CLOCK_REALTIME,	"REALTIME" },	\
			 { CLOCK_MONOTONIC,	"MONOTONIC" },	\
			 { CLOCK_BOOTTIME,	"BOOTTIME" })

TRACE_EVENT(qtimer_arm,

	TP_PROTO(u64 id, const struct qt_arm_args *args, unsigned int cpu),

	TP_ARGS(id, args, cpu),

	TP_STRUCT__entry(
		__field(u64,		id)
		__field(s64,		expires)
		__field(u64,		period)
		__field(u32,		slack)
		__field(u32,		cpu)
		__field(int,		clockid)
	),

	TP_fast_assign(
		__entry->id = id;
		__entry->expires = args->expires;
		__entry->period = args->period;
		__entry->slack = args->slack;
		__entry->cpu = cpu;
		__entry->clockid = qt_clock_id(args->clock);
	),

	TP_printk("id=0x%llx clock=%s expires=%lld period=%llu slack=%u cpu=%u",
		  __entry->id, qt_show_clock(__entry->clockid),
		  __entry->expires, __entry->period, __entry->slack,
		  __entry->cpu)
);

TRACE_EVENT(qtimer_cancel,

	TP_PROTO(u64 id, int result),

	TP_ARGS(id, result),

	TP_STRUCT__entry(
		__field(u64,		id)
		__field(int,		result)
	),

	TP_fast_assign(
		__entry->id = id;
		__entry->result = result;
	),

	/* result: the QTIMER_CANCEL_* mask, or -errno. */
	TP_printk("id=0x%llx result=%d", __entry->id, __entry->result)
);

TRACE_EVENT(qtimer_modify,

	TP_PROTO(u64 id, const struct qt_arm_args *args, int result, int cpu),

	TP_ARGS(id, args, result, cpu),

	TP_STRUCT__entry(
		__field(u64,		id)
		__field(s64,		expires)
		__field(u64,		period)
		__field(u32,		slack)
		__field(int,		result)
		__field(int,		cpu)
	),

	TP_fast_assign(
		__entry->id = id;
		__entry->expires = args->expires;
		__entry->period = args->period;
		__entry->slack = args->slack;
		__entry->result = result;
		__entry->cpu = cpu;
	),

	TP_printk("id=0x%llx expires=%lld period=%llu slack=%u result=%d cpu=%d",
		  __entry->id, __entry->expires, __entry->period,
		  __entry->slack, __entry->result, __entry->cpu)
);

TRACE_EVENT(qtimer_expire,

	TP_PROTO(u64 id, ktime_t expires, ktime_t now),

	TP_ARGS(id, expires, now),

	TP_STRUCT__entry(
		__field(u64,		id)
		__field(s64,		expires)
		__field(s64,		now)
	),

	TP_fast_assign(
		__entry->id = id;
		__entry->expires = expires;
		__entry->now = now;
	),

	TP_printk("id=0x%llx expires=%lld now=%lld late=%lld",
		  __entry->id, __entry->expires, __entry->now,
		  __entry->now - __entry->expires)
);

TRACE_EVENT(qtimer_read,

	TP_PROTO(u64 id, u32 count, u32 flags),

	TP_ARGS(id, count, flags),

	TP_STRUCT__entry(
		__field(u64,		id)
		__field(u32,		count)
		__field(u32,		flags)
	),

	TP_fast_assign(
		__entry->id = id;
		__entry->count = count;
		__entry->flags = flags;
	),

	TP_printk("id=0x%llx count=%u flags=%s", __entry->id, __entry->count,
		  __print_flags(__entry->flags, "|",
				{ QTIMER_REC_LAST,	"LAST" },
				{ QTIMER_REC_CANCELED,	"CANCELED" }))
);

#endif /* _QT_TRACE_H */

/* This part must be outside the header guard. */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE trace
#include <trace/define_trace.h>
