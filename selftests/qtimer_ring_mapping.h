/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * The record ring's setup and its mapping, as uapi/linux/qtimer.h
 * specifies them ("The record ring"), split by feature: RING_SETUP's
 * validation and layout (qtimer_ring_setup_test.c), mmap()'s validation
 * and the mapping outliving close() and crossing fork()
 * (qtimer_ring_mmap_test.c), and a consumer that writes garbage into the
 * words the kernel shares with it (qtimer_ring_consumer_test.c).  What
 * goes through the mapping is qtimer_ring_test's.
 *
 * The consumer is selftests/lib/ring.c's, which follows the header to the
 * letter.  A module without QTIMER_FEAT_RING fails version_offers_ring and
 * the others skip.  What the three share, beside lib/ring_harness.h, is
 * here; each includes it once.
 */
#ifndef _QT_TEST_RING_MAPPING_H
#define _QT_TEST_RING_MAPPING_H

#include "ring_harness.h"

static inline long page_size(void)
{
	return sysconf(_SC_PAGESIZE);
}

/* A fresh file with a ring delivers a record through its mapping. */
static inline int fresh_file_works(void)
{
	struct qtimer_record rec;
	struct t_ring r;
	int fd, ret = 0;
	__u64 id;

	fd = t_open(O_NONBLOCK);
	if (fd < 0)
		return fd;
	ret = t_ring_map(&r, fd, 8);
	if (!ret)
		ret = t_arm(fd, CLOCK_MONOTONIC, 0, NSEC_PER_MSEC, 0, 0xf7e5,
			     &id);
	if (!ret && t_ring_collect(&r, &rec, 1, QT_ARRIVE_MS,
				    CLOCK_MONOTONIC, NULL) != 1)
		ret = -ETIME;
	if (!ret && (rec.id != id || rec.cookie != 0xf7e5 ||
		     rec.flags != (QTIMER_REC_TAKEN | QTIMER_REC_LAST)))
		ret = -EPROTO;
	t_ring_unmap(&r);
	close(fd);
	return ret;
}


#endif /* _QT_TEST_RING_MAPPING_H */
