// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * The timer table's mapping and the protocol of uapi "The timer table",
 * spelt out once for every suite: push later and stop by compare-and-swap.
 */
#include <sys/mman.h>

#include "helpers.h"

bool t_table_offered(void)
{
	struct qtimer_version v;
	int fd = t_open(0), ret;

	if (fd < 0)
		return false;
	ret = t_version(fd, &v);
	close(fd);
	return !ret && (v.features & QTIMER_FEAT_TABLE);
}

int t_table_setup(int fd, struct qtimer_table_setup *s)
{
	memset(s, 0, sizeof(*s));
	return t_ioctl(fd, QTIMER_IOC_TABLE_SETUP, s);
}

int t_table_map(struct t_table *tb, int fd)
{
	int ret;

	memset(tb, 0, sizeof(*tb));
	tb->fd = fd;
	ret = t_table_setup(fd, &tb->setup);
	if (ret)
		return ret;
	tb->map_len = tb->setup.nr_shards * tb->setup.shard_size;
	tb->map = mmap(NULL, tb->map_len, PROT_READ | PROT_WRITE, MAP_SHARED,
		       fd, tb->setup.mmap_off);
	if (tb->map == MAP_FAILED) {
		tb->map = NULL;
		return -errno;
	}
	return 0;
}

void t_table_unmap(struct t_table *tb)
{
	if (tb->map)
		munmap(tb->map, tb->map_len);
	tb->map = NULL;
}

struct qtimer_slot *t_table_slot(const struct t_table *tb, __u64 id)
{
	char *shard = (char *)tb->map +
		      (size_t)QTIMER_ID_SHARD(id) * tb->setup.shard_size;

	return (struct qtimer_slot *)shard + QTIMER_ID_SLOT(id);
}

__u64 t_table_ctl(const struct t_table *tb, __u64 id)
{
	return __atomic_load_n(&t_table_slot(tb, id)->ctl, __ATOMIC_ACQUIRE);
}

/* ctl, if it is @id's and user space may act on it; else 0. */
static bool t_table_actionable(__u64 ctl, __u64 id)
{
	__u32 state = QTIMER_SLOT_STATE(ctl);

	return QTIMER_SLOT_GEN(ctl) == QTIMER_ID_GEN(id) &&
	       (state == QTIMER_SLOT_ARMED || state == QTIMER_SLOT_LATER);
}

enum t_table_result t_table_push(const struct t_table *tb, __u64 id,
				 __s64 deadline)
{
	struct qtimer_slot *slot = t_table_slot(tb, id);

	for (;;) {
		__u64 ctl = __atomic_load_n(&slot->ctl, __ATOMIC_ACQUIRE);
		__s64 old = __atomic_load_n(&slot->deadline, __ATOMIC_RELAXED);
		__u64 later;

		if (!t_table_actionable(ctl, id))
			return T_TABLE_KERNEL;
		if (deadline <= old)
			return T_TABLE_EARLIER;
		if (!__atomic_compare_exchange_n(&slot->deadline, &old, deadline,
						 false, __ATOMIC_RELAXED,
						 __ATOMIC_RELAXED))
			continue;
		later = QTIMER_SLOT_NEXT(ctl, QTIMER_SLOT_LATER);
		if (__atomic_compare_exchange_n(&slot->ctl, &ctl, later, false,
						__ATOMIC_RELEASE,
						__ATOMIC_RELAXED))
			return T_TABLE_DONE;
	}
}

enum t_table_result t_table_stop(const struct t_table *tb, __u64 id)
{
	struct qtimer_slot *slot = t_table_slot(tb, id);
	__u64 ctl = __atomic_load_n(&slot->ctl, __ATOMIC_ACQUIRE);

	for (;;) {
		__u64 stopped;

		if (!t_table_actionable(ctl, id))
			return T_TABLE_KERNEL;
		stopped = QTIMER_SLOT_NEXT(ctl, QTIMER_SLOT_STOPPED);
		if (__atomic_compare_exchange_n(&slot->ctl, &ctl, stopped, false,
						__ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE))
			return T_TABLE_DONE;
	}
}
