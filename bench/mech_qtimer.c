// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * /dev/qtimer straight through its ioctls, as <linux/qtimer.h> describes
 * them: "qtimer" issues one ARM/MODIFY/CANCEL ioctl per op, "qtimer-batch"
 * packs r->batch ops into each QTIMER_IOC_SUBMIT.  Expirations are read
 * from the file, up to 256 records per read(), the file being O_NONBLOCK so
 * that a wait polls only when nothing is pending.  "qtimer-ring" submits as
 * qtimer-batch does and takes its records from the mapped record ring
 * instead, by claim, with a system call (poll) only when the ring is empty.
 * "qtimer-table" arms as qtimer-batch does and pushes timers later and
 * stops them through the mapped timer table, with no system call, falling
 * back to the batch's MODIFY or CANCEL when the swap finds the kernel's
 * word (the timer fired, or the push is not later).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <linux/qtimer.h>

#include "helpers.h"
#include "qtbench.h"

#define QT_READ_RECORDS	256
/* The largest ring: 1M timers due in a second overflow less. */
#define QT_RING_ENTRIES	QTIMER_RING_MAX
/* qtimer-table: ops left for the kernel, gathered before each SUBMIT. */
#define LAZY_TABLE_CHUNK	4096

struct qt_priv {
	int fd;
	bool shared;			/* another run's file: not ours to close */
	uint64_t *ids;			/* per timer index */
	struct qtimer_op *ops;		/* r->batch of them */
	struct qtimer_record recs[QT_READ_RECORDS];
	/* qtimer-ring: the mapping and where its parts are */
	char *map;
	size_t map_size;
	uint32_t *head, *tail, entries;
	struct qtimer_record *ring;
	/* qtimer-table: the table, and the ops of a chunk that need a call */
	struct t_table table;
	struct mop *left;
};

static int qt_open(struct run *r)
{
	struct qtimer_version v;
	struct qt_priv *p;
	int fd, ret;

	fd = open("/dev/qtimer", O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	memset(&v, 0, sizeof(v));
	if (ioctl(fd, QTIMER_IOC_VERSION, &v) < 0) {
		ret = -errno;
		note(r, "QTIMER_IOC_VERSION failed: %s", strerror(-ret));
		close(fd);
		return ret;
	}
	if (v.api_version != QTIMER_API_VERSION || v.record_size != sizeof(struct qtimer_record) ||
	    v.op_size != sizeof(struct qtimer_op) || !(v.clocks & (1U << CLOCK_MONOTONIC)) ||
	    (r->mech->batched && (!(v.features & QTIMER_FEAT_SUBMIT) || r->batch > v.submit_max))) {
		note(r, "handshake mismatch: api %u record %u op %u clocks %#x features %#llx submit_max %u",
		     v.api_version, v.record_size, v.op_size, v.clocks,
		     (unsigned long long)v.features, v.submit_max);
		close(fd);
		return -EPROTO;
	}
	if (v.max_timers_per_fd < r->n || v.max_timers_per_user < r->n)
		note(r, "limits below N: max_timers_per_fd %llu, max_timers_per_user %llu",
		     (unsigned long long)v.max_timers_per_fd,
		     (unsigned long long)v.max_timers_per_user);

	p = xcalloc(1, sizeof(*p));
	p->fd = fd;
	p->ids = xcalloc(r->n, sizeof(*p->ids));
	p->ops = xcalloc(r->batch ? r->batch : 1, sizeof(*p->ops));
	r->priv = p;
	return 0;
}

/* One file for many threads: each keeps its own ids and ops. */
static int qt_share(struct run *r, const struct run *owner)
{
	const struct qt_priv *o = owner->priv;
	struct qt_priv *p = xcalloc(1, sizeof(*p));

	p->fd = o->fd;
	p->shared = true;
	p->ids = xcalloc(r->n, sizeof(*p->ids));
	p->ops = xcalloc(r->batch ? r->batch : 1, sizeof(*p->ops));
	r->priv = p;
	return 0;
}

static void qt_close(struct run *r)
{
	struct qt_priv *p = r->priv;

	if (p->map)
		munmap(p->map, p->map_size);
	t_table_unmap(&p->table);
	free(p->left);
	if (!p->shared)
		close(p->fd);
	free(p->ids);
	free(p->ops);
	free(p);
}

static void qt_fill(struct qtimer_op *op, const struct mop *m, const uint64_t *ids)
{
	memset(op, 0, sizeof(*op));
	switch (m->code) {
	case MOP_ARM:
		op->opcode = QTIMER_OP_ARM;
		op->clockid = CLOCK_MONOTONIC;
		op->flags = QTIMER_F_ABSTIME;
		op->expires_ns = m->when;
		op->period_ns = m->period;
		op->cookie = m->idx;
		break;
	case MOP_MODIFY:
		op->opcode = QTIMER_OP_MODIFY;
		op->flags = QTIMER_F_ABSTIME;
		op->id = ids[m->idx];
		op->expires_ns = m->when;
		break;
	default:
		op->opcode = QTIMER_OP_CANCEL;
		op->id = ids[m->idx];
		break;
	}
}

static int qt_submit_single(struct run *r, const struct mop *ops, size_t nr)
{
	static const unsigned long cmd[] = {
		[MOP_ARM] = QTIMER_IOC_ARM,
		[MOP_MODIFY] = QTIMER_IOC_MODIFY,
		[MOP_CANCEL] = QTIMER_IOC_CANCEL,
	};
	struct qt_priv *p = r->priv;
	struct qtimer_op op;
	size_t k;

	for (k = 0; k < nr; k++) {
		int ret;

		qt_fill(&op, &ops[k], p->ids);
		op.opcode = 0;	/* the single ioctls take 0 or their own opcode */
		ret = ioctl(p->fd, cmd[ops[k].code], &op);
		if (ret < 0)
			return -errno;
		/* CANCEL and MODIFY of a live, unfired timer prevent its expiry. */
		if (ops[k].code != MOP_ARM && !(ret & QTIMER_CANCEL_ARMED))
			return -ENOENT;
		if (ops[k].code == MOP_ARM)
			p->ids[ops[k].idx] = op.id;
	}
	return 0;
}

static int qt_submit_batch(struct run *r, const struct mop *ops, size_t nr)
{
	struct qt_priv *p = r->priv;
	size_t k, j;

	for (k = 0; k < nr; k += r->batch) {
		size_t len = nr - k < r->batch ? nr - k : r->batch;
		struct qtimer_submit s = {
			.ops = (uintptr_t)p->ops,
			.nr = len,
		};
		int ret;

		for (j = 0; j < len; j++)
			qt_fill(&p->ops[j], &ops[k + j], p->ids);
		ret = ioctl(p->fd, QTIMER_IOC_SUBMIT, &s);
		if (ret < 0)
			return -errno;
		if ((size_t)ret != len || s.done != len)
			return -EIO;
		for (j = 0; j < len; j++) {
			const struct qtimer_op *op = &p->ops[j];

			if (op->result < 0)
				return op->result;
			if (op->opcode == QTIMER_OP_ARM)
				p->ids[ops[k + j].idx] = op->id;
			else if (!(op->result & QTIMER_CANCEL_ARMED))
				return -ENOENT;
		}
	}
	return 0;
}

static int qt_wait(struct run *r, int timeout_ms)
{
	struct qt_priv *p = r->priv;
	ssize_t len = read_or_wait(p->fd, p->recs, sizeof(p->recs), timeout_ms);
	size_t i, nr;

	if (len <= 0)
		return len;
	if (len % sizeof(p->recs[0]))
		return -EIO;
	nr = len / sizeof(p->recs[0]);
	for (i = 0; i < nr; i++)
		run_expired(r, p->recs[i].cookie, p->recs[i].count, p->recs[i].expires_ns);
	return nr;
}

static int qt_open_ring(struct run *r)
{
	struct qtimer_ring_setup setup = { .entries = QT_RING_ENTRIES };
	struct qt_priv *p;
	int ret = qt_open(r);

	if (ret)
		return ret;
	p = r->priv;
	if (ioctl(p->fd, QTIMER_IOC_RING_SETUP, &setup) < 0) {
		ret = -errno;
		note(r, "QTIMER_IOC_RING_SETUP failed: %s", strerror(-ret));
		goto fail;
	}
	p->map = mmap(NULL, setup.mmap_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		      p->fd, 0);
	if (p->map == MAP_FAILED) {
		ret = -errno;
		p->map = NULL;
		goto fail;
	}
	p->map_size = setup.mmap_size;
	p->head = (uint32_t *)(p->map + setup.head_off);
	p->tail = (uint32_t *)(p->map + setup.tail_off);
	p->ring = (struct qtimer_record *)(p->map + setup.recs_off);
	p->entries = setup.entries;
	return 0;
fail:
	qt_close(r);
	return ret;
}

/* Claim what the ring holds, as the uapi header's loop does. */
static int qt_take_ring(struct run *r)
{
	struct qt_priv *p = r->priv;
	uint32_t tail = *p->tail;
	uint32_t head = __atomic_load_n(p->head, __ATOMIC_ACQUIRE);
	int nr = 0;

	while (tail != head) {
		struct qtimer_record *rec = &p->ring[tail++ & (p->entries - 1)];
		uint32_t f = __atomic_load_n(&rec->flags, __ATOMIC_RELAXED);

		if ((f & QTIMER_REC_CLAIM) != QTIMER_REC_READY ||
		    !__atomic_compare_exchange_n(&rec->flags, &f,
						 (f & ~QTIMER_REC_CLAIM) | QTIMER_REC_TAKEN,
						 false, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
			continue;
		run_expired(r, rec->cookie, rec->count, rec->expires_ns);
		nr++;
	}
	__atomic_store_n(p->tail, tail, __ATOMIC_RELEASE);
	return nr;
}

static int qt_wait_ring(struct run *r, int timeout_ms)
{
	struct qt_priv *p = r->priv;
	int nr, ret;

	for (;;) {
		nr = qt_take_ring(r);
		if (nr)
			return nr;
		/* Empty: poll() moves waiting records in, or sleeps. */
		ret = poll_in(p->fd, timeout_ms);
		if (ret <= 0)
			return ret;
		if (!timeout_ms)
			return qt_take_ring(r);
		timeout_ms = 0;
	}
}

static int qt_open_table(struct run *r)
{
	struct qt_priv *p;
	int ret = qt_open(r);

	if (ret)
		return ret;
	p = r->priv;
	ret = t_table_map(&p->table, p->fd);
	if (ret) {
		note(r, "the timer table: %s", strerror(-ret));
		qt_close(r);
		return ret;
	}
	p->left = xcalloc(LAZY_TABLE_CHUNK, sizeof(*p->left));
	return 0;
}

/* The table's pages, which are no slab: fdinfo counts them. */
static int64_t qt_table_bytes(struct run *r)
{
	struct qt_priv *p = r->priv;
	long long pages = t_fdinfo_named(p->fd, "table_pages");

	return pages < 0 ? 0 : pages * sysconf(_SC_PAGESIZE);
}

/*
 * Pushes and stops through the table; what the table cannot do goes to
 * the kernel in SUBMIT batches, in order, with the ARMs.
 */
static int qt_submit_table(struct run *r, const struct mop *ops, size_t nr)
{
	struct qt_priv *p = r->priv;
	size_t k, nr_left = 0;
	int ret;

	for (k = 0; k < nr; k++) {
		const struct mop *m = &ops[k];

		if (m->code == MOP_MODIFY &&
		    t_table_push(&p->table, p->ids[m->idx], m->when) == T_TABLE_DONE)
			continue;
		if (m->code == MOP_CANCEL &&
		    t_table_stop(&p->table, p->ids[m->idx]) == T_TABLE_DONE)
			continue;
		p->left[nr_left++] = *m;
		if (nr_left == LAZY_TABLE_CHUNK) {
			ret = qt_submit_batch(r, p->left, nr_left);
			if (ret)
				return ret;
			nr_left = 0;
		}
	}
	return nr_left ? qt_submit_batch(r, p->left, nr_left) : 0;
}

const struct mech mech_qtimer = {
	.name = "qtimer",
	.kernel_timers = true,
	.engine_stats = true,
	.open = qt_open,
	.close = qt_close,
	.submit = qt_submit_single,
	.wait = qt_wait,
	.share = qt_share,
};

const struct mech mech_qtimer_batch = {
	.name = "qtimer-batch",
	.batched = true,
	.kernel_timers = true,
	.engine_stats = true,
	.open = qt_open,
	.close = qt_close,
	.submit = qt_submit_batch,
	.wait = qt_wait,
	.share = qt_share,
};

/* One file per run: the table's ids are this run's. */
const struct mech mech_qtimer_table = {
	.name = "qtimer-table",
	.batched = true,
	.kernel_timers = true,
	.engine_stats = true,
	.open = qt_open_table,
	.close = qt_close,
	.submit = qt_submit_table,
	.wait = qt_wait,
	.hidden_bytes = qt_table_bytes,
};

/* One consumer per ring: no shared file. */
const struct mech mech_qtimer_ring = {
	.name = "qtimer-ring",
	.batched = true,
	.kernel_timers = true,
	.engine_stats = true,
	.open = qt_open_ring,
	.close = qt_close,
	.submit = qt_submit_batch,
	.wait = qt_wait_ring,
};
