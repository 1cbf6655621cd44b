// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * The "qtimer" generic netlink family, for qtimerctl and monitoring: the
 * per-CPU counters and lateness histograms of the timer bases, and the
 * module-wide caps, which it reads and sets through the same variables as
 * the module parameters.  uapi/linux/qtimer_netlink.h is the contract and
 * Documentation/netlink/specs/qtimer.yaml describes it for YNL.
 *
 * The family lives in the initial network namespace only: what it reports
 * and sets is global to the host, and a container must not see other
 * tenants' timer activity or change their caps.
 */

#include <linux/capability.h>
#include <linux/cpumask.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <net/genetlink.h>
#include <linux/qtimer_netlink.h>

#include "base.h"
#include "clock.h"
#include "netlink.h"
#include "user.h"

/* One CPU's bases, or all of them. */
struct qt_nl_stats {
	struct qt_base_stats base;
	u64 entries[QT_NR_CLOCKS];
	u64 dead[QT_NR_CLOCKS];
};

static struct genl_family qt_nl_family;

static void qt_nl_stats_add_cpu(struct qt_nl_stats *st, unsigned int cpu)
{
	u32 entries[QT_NR_CLOCKS], dead[QT_NR_CLOCKS];
	unsigned int clock;

	qt_base_stats_sum(cpu, &st->base, entries, dead);
	for (clock = 0; clock < QT_NR_CLOCKS; clock++) {
		st->entries[clock] += entries[clock];
		st->dead[clock] += dead[clock];
	}
}

/* The lower bound of lateness bucket @i; see qt_base_lateness_bucket(). */
static u64 qt_nl_bucket_min_ns(unsigned int i)
{
	return i ? 1ULL << (QT_LATENESS_SHIFT + i - 1) : 0;
}

static int qt_nl_put_heaps(struct sk_buff *skb, const struct qt_nl_stats *st)
{
	unsigned int clock;

	for (clock = 0; clock < QT_NR_CLOCKS; clock++) {
		struct nlattr *nest = nla_nest_start(skb, QTIMER_A_STATS_HEAP);

		if (!nest)
			return -EMSGSIZE;
		if (nla_put_u32(skb, QTIMER_A_HEAP_CLOCK, qt_clock_id(clock)) ||
		    nla_put_u64_64bit(skb, QTIMER_A_HEAP_ENTRIES,
				      st->entries[clock], QTIMER_A_HEAP_PAD) ||
		    nla_put_u64_64bit(skb, QTIMER_A_HEAP_DEAD, st->dead[clock],
				      QTIMER_A_HEAP_PAD)) {
			nla_nest_cancel(skb, nest);
			return -EMSGSIZE;
		}
		nla_nest_end(skb, nest);
	}
	return 0;
}

static int qt_nl_put_lateness(struct sk_buff *skb, const struct qt_nl_stats *st)
{
	unsigned int i;

	for (i = 0; i < QT_LATENESS_BUCKETS; i++) {
		struct nlattr *nest = nla_nest_start(skb, QTIMER_A_STATS_LATENESS);

		if (!nest)
			return -EMSGSIZE;
		if (nla_put_u64_64bit(skb, QTIMER_A_BUCKET_MIN_NS,
				      qt_nl_bucket_min_ns(i), QTIMER_A_BUCKET_PAD) ||
		    nla_put_u64_64bit(skb, QTIMER_A_BUCKET_COUNT,
				      st->base.lateness[i], QTIMER_A_BUCKET_PAD)) {
			nla_nest_cancel(skb, nest);
			return -EMSGSIZE;
		}
		nla_nest_end(skb, nest);
	}
	return 0;
}

static int qt_nl_put_stats(struct sk_buff *skb, const struct qt_nl_stats *st)
{
	const struct qt_base_stats *s = &st->base;

	if (nla_put_u64_64bit(skb, QTIMER_A_STATS_ARMED, s->armed,
			      QTIMER_A_STATS_PAD) ||
	    nla_put_u64_64bit(skb, QTIMER_A_STATS_FIRED, s->fired,
			      QTIMER_A_STATS_PAD) ||
	    nla_put_u64_64bit(skb, QTIMER_A_STATS_CANCELLED, s->cancelled,
			      QTIMER_A_STATS_PAD) ||
	    nla_put_u64_64bit(skb, QTIMER_A_STATS_MODIFIED, s->modified,
			      QTIMER_A_STATS_PAD) ||
	    nla_put_u64_64bit(skb, QTIMER_A_STATS_COALESCED, s->coalesced,
			      QTIMER_A_STATS_PAD) ||
	    nla_put_u64_64bit(skb, QTIMER_A_STATS_DEFERRED_RUNS,
			      s->deferred_runs, QTIMER_A_STATS_PAD) ||
	    nla_put_u64_64bit(skb, QTIMER_A_STATS_MAX_RUN_NS, s->max_run_ns,
			      QTIMER_A_STATS_PAD))
		return -EMSGSIZE;
	if (qt_nl_put_heaps(skb, st))
		return -EMSGSIZE;
	return qt_nl_put_lateness(skb, st);
}

static int qt_nl_get_stats_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct qt_nl_stats st = {};
	struct sk_buff *msg;
	unsigned int cpu;
	void *hdr;

	for_each_possible_cpu(cpu)
		qt_nl_stats_add_cpu(&st, cpu);

	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	hdr = genlmsg_put(msg, info->snd_portid, info->snd_seq, &qt_nl_family,
			  0, QTIMER_CMD_GET_STATS);
	if (!hdr || qt_nl_put_stats(msg, &st)) {
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);
}

/* cb->args[0]: the next CPU to report. */
static int qt_nl_get_stats_dumpit(struct sk_buff *skb,
				  struct netlink_callback *cb)
{
	unsigned int cpu;
	void *hdr;

	for (cpu = cb->args[0]; cpu < nr_cpu_ids; cpu++) {
		struct qt_nl_stats st = {};

		if (!cpu_possible(cpu))
			continue;
		qt_nl_stats_add_cpu(&st, cpu);

		hdr = genlmsg_put(skb, NETLINK_CB(cb->skb).portid,
				  cb->nlh->nlmsg_seq, &qt_nl_family,
				  NLM_F_MULTI, QTIMER_CMD_GET_STATS);
		if (!hdr)
			break;
		if (nla_put_u32(skb, QTIMER_A_STATS_CPU, cpu) ||
		    qt_nl_put_stats(skb, &st)) {
			/* The skb is full: this CPU opens the next one. */
			genlmsg_cancel(skb, hdr);
			break;
		}
		genlmsg_end(skb, hdr);
	}
	cb->args[0] = cpu;
	return skb->len;
}

static int qt_nl_get_config_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct sk_buff *msg;
	void *hdr;

	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	hdr = genlmsg_put(msg, info->snd_portid, info->snd_seq, &qt_nl_family,
			  0, QTIMER_CMD_GET_CONFIG);
	if (!hdr)
		goto err;
	if (nla_put_u64_64bit(msg, QTIMER_A_CONFIG_MAX_TIMERS_PER_FD,
			      READ_ONCE(qt_max_timers_per_fd),
			      QTIMER_A_CONFIG_PAD) ||
	    nla_put_u64_64bit(msg, QTIMER_A_CONFIG_MAX_TIMERS_PER_USER,
			      READ_ONCE(qt_max_timers_per_user),
			      QTIMER_A_CONFIG_PAD))
		goto err;
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);

err:
	nlmsg_free(msg);
	return -EMSGSIZE;
}

static int qt_nl_set_config_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr *per_fd = info->attrs[QTIMER_A_CONFIG_MAX_TIMERS_PER_FD];
	struct nlattr *per_user = info->attrs[QTIMER_A_CONFIG_MAX_TIMERS_PER_USER];

	/*
	 * GENL_ADMIN_PERM checked CAP_NET_ADMIN, the netlink convention; the
	 * caps are also module parameters, which only root may write, so ask
	 * for what changing a system-wide resource limit takes.
	 */
	if (!netlink_capable(skb, CAP_SYS_ADMIN)) {
		GENL_SET_ERR_MSG(info, "setting qtimer caps needs CAP_SYS_ADMIN");
		return -EPERM;
	}
	if (!per_fd && !per_user) {
		GENL_SET_ERR_MSG(info, "no configuration attribute given");
		return -EINVAL;
	}

	/* The sysfs writers of the same variables hold this lock too. */
	kernel_param_lock(THIS_MODULE);
	if (per_fd)
		WRITE_ONCE(qt_max_timers_per_fd, nla_get_u64(per_fd));
	if (per_user)
		WRITE_ONCE(qt_max_timers_per_user, nla_get_u64(per_user));
	kernel_param_unlock(THIS_MODULE);
	return 0;
}

QT_NL_RANGE(qt_nl_per_fd_range) = {
	.min = 1,
	.max = QTIMER_MAX_TIMERS_PER_FD_LIMIT,
};

QT_NL_RANGE(qt_nl_per_user_range) = {
	.min = 1,
	.max = QTIMER_MAX_TIMERS_PER_USER_LIMIT,
};

static const struct nla_policy qt_nl_config_policy[QTIMER_A_CONFIG_MAX + 1] = {
	[QTIMER_A_CONFIG_MAX_TIMERS_PER_FD] =
		NLA_POLICY_FULL_RANGE(NLA_U64, &qt_nl_per_fd_range),
	[QTIMER_A_CONFIG_MAX_TIMERS_PER_USER] =
		NLA_POLICY_FULL_RANGE(NLA_U64, &qt_nl_per_user_range),
};

/*
 * GET_STATS and GET_CONFIG take no attributes: with no policy, the core
 * rejects any, since every command is at or above resv_start_op (0) and so
 * validated strictly.
 */
static const struct genl_ops qt_nl_ops[] = {
	{
		/*
		 * Per-CPU counts and lateness tell one user when another's
		 * timers fire: for the administrator only, as the netlink
		 * convention has it (CAP_NET_ADMIN).
		 */
		.cmd	= QTIMER_CMD_GET_STATS,
		.doit	= qt_nl_get_stats_doit,
		.dumpit	= qt_nl_get_stats_dumpit,
		.flags	= GENL_ADMIN_PERM,
	},
	{
		.cmd	= QTIMER_CMD_GET_CONFIG,
		.doit	= qt_nl_get_config_doit,
	},
	{
		.cmd	= QTIMER_CMD_SET_CONFIG,
		.doit	= qt_nl_set_config_doit,
		.policy	= qt_nl_config_policy,
		.maxattr = QTIMER_A_CONFIG_MAX,
		.flags	= GENL_ADMIN_PERM,
	},
};

static struct genl_family qt_nl_family __ro_after_init = {
	.name		= QTIMER_GENL_NAME,
	.version	= QTIMER_GENL_VERSION,
	.module		= THIS_MODULE,
	.ops		= qt_nl_ops,
	.n_ops		= ARRAY_SIZE(qt_nl_ops),
	/* Not netnsok: see the top of this file. */
};

int __init qt_netlink_init(void)
{
	return genl_register_family(&qt_nl_family);
}

void qt_netlink_exit(void)
{
	genl_unregister_family(&qt_nl_family);
}

/* A request for the family by name loads the module (qtimerctl, ynl). */
MODULE_ALIAS_GENL_FAMILY(QTIMER_GENL_NAME);
