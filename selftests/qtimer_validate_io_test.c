// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * Input validation of user memory and commands (qtimer_validate.h): NULL,
 * unmapped and read-only ioctl arguments, unknown ioctl commands, and
 * read() buffers that are too small, NULL, unmapped, read-only or fault
 * part way, none of which may lose a record.
 */
#define _GNU_SOURCE
#include <termios.h>

#include "qtimer_validate.h"

/* Bad argument pointers: every command, NULL and an unmapped page. */
TEST_F(validate, null_and_unmapped_arg)
{
	unsigned long cmds[] = {
		QTIMER_IOC_VERSION, QTIMER_IOC_ARM, QTIMER_IOC_CANCEL,
		QTIMER_IOC_MODIFY, QTIMER_IOC_SUBMIT,
	};
	void *hole = t_unmapped_page();
	unsigned int i;

	ASSERT_NE(NULL, hole);
	for (i = 0; i < ARRAY_SIZE(cmds); i++) {
		EXPECT_EQ(-EFAULT, t_ioctl(self->fd, cmds[i], NULL)) {
			TH_LOG("cmd %#lx", cmds[i]);
		}
		EXPECT_EQ(-EFAULT, t_ioctl(self->fd, cmds[i], hole)) {
			TH_LOG("cmd %#lx", cmds[i]);
		}
	}
	/* Kernel addresses are user pointers that cannot be accessed. */
	EXPECT_EQ(-EFAULT, t_ioctl(self->fd, QTIMER_IOC_ARM,
				    (void *)0xffffffff81000000UL));
	EXPECT_NOTHING_ARMED(self->fd);
}

/*
 * A struct that can be read but not written: VERSION cannot answer, and an
 * ARM that cannot return its id must not leave a timer the caller cannot
 * name.
 */
TEST_F(validate, readonly_arg)
{
	struct qtimer_op arm = good_arm(), *op;

	op = t_readonly_copy(&arm, sizeof(arm));
	ASSERT_NE(NULL, op);
	EXPECT_EQ(-EFAULT, t_ioctl(self->fd, QTIMER_IOC_VERSION, op));
	EXPECT_EQ(-EFAULT, t_ioctl(self->fd, QTIMER_IOC_ARM, op));
	EXPECT_NOTHING_ARMED(self->fd);
	t_readonly_free(op);
}

TEST_F(validate, unknown_ioctl)
{
	struct qtimer_op op = good_arm();
	unsigned long cmds[] = {
		_IO(QTIMER_IOC_MAGIC, 0x00),	/* VERSION without its struct */
		_IOWR(QTIMER_IOC_MAGIC, 0x05, struct qtimer_op),
		_IOWR(QTIMER_IOC_MAGIC, 0x7f, struct qtimer_op),
		_IOWR(QTIMER_IOC_MAGIC, 0xff, struct qtimer_op),
		/* ARM's number with the wrong size or direction */
		_IOWR(QTIMER_IOC_MAGIC, 0x01, __u64),
		_IOWR(QTIMER_IOC_MAGIC, 0x01, struct qtimer_submit),
		_IOW(QTIMER_IOC_MAGIC, 0x01, struct qtimer_op),
		_IOR(QTIMER_IOC_MAGIC, 0x01, struct qtimer_op),
		_IO(QTIMER_IOC_MAGIC, 0x01),
		/* another driver's magic with ARM's number and size */
		_IOWR(QTIMER_IOC_MAGIC + 1, 0x01, struct qtimer_op),
		TCGETS,
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(cmds); i++) {
		EXPECT_EQ(-ENOTTY, t_ioctl(self->fd, cmds[i], &op)) {
			TH_LOG("cmd %#lx", cmds[i]);
		}
	}
	EXPECT_NOTHING_ARMED(self->fd);
}

/* Gets one record queued (expiry 0) and waits until poll reports it. */
static int queue_one(int fd, __u64 cookie)
{
	int ret = t_arm(fd, CLOCK_MONOTONIC, 0, 0, 0, cookie, NULL);

	if (ret)
		return ret;
	return t_wait_readable(fd, QT_ARRIVE_MS) == 1 ? 0 : -ETIME;
}

/*
 * Two records pending, @first's (of a timer on CPU 0, already queued when
 * the second is armed) ahead of @second's.
 */
static void queue_two(struct __test_metadata *_metadata, int fd, __u64 first,
		      __u64 second)
{
	ASSERT_EQ(0, t_arm_cpu(fd, CLOCK_MONOTONIC, 0, 0, 0, first, 0, NULL));
	ASSERT_EQ(1, t_wait_readable(fd, QT_ARRIVE_MS));
	ASSERT_EQ(0, queue_one(fd, second));
	ASSERT_EQ(1, t_wait_pending(fd, 2, QT_ARRIVE_MS));
}

/* The record is still there after a failed read, and a good read gets it. */
#define EXPECT_RECORD_KEPT(fd, want_cookie) do {			\
	struct qtimer_record __r;					\
									\
	EXPECT_EQ(POLLIN, t_revents(fd) & POLLIN);			\
	EXPECT_EQ(1, t_read(fd, &__r, 1));				\
	EXPECT_EQ(want_cookie, __r.cookie);				\
	EXPECT_EQ(0, t_nothing_pending(fd));				\
} while (0)

TEST_F(validate, read_buffer_too_small)
{
	char buf[sizeof(struct qtimer_record)];

	ASSERT_EQ(0, queue_one(self->fd, 21));
	EXPECT_EQ(-1, read(self->fd, buf, sizeof(buf) - 1));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, read(self->fd, buf, 1));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, read(self->fd, buf, 0));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_RECORD_KEPT(self->fd, 21);
}

/* The size check is not hidden behind "nothing pending". */
TEST_F(validate, read_buffer_too_small_nothing_pending)
{
	char buf[sizeof(struct qtimer_record)];

	EXPECT_EQ(-1, read(self->fd, buf, sizeof(buf) - 1));
	EXPECT_EQ(EINVAL, errno);
}

TEST_F(validate, read_null_buffer)
{
	void *volatile null = NULL;	/* hidden from -Wnonnull */

	ASSERT_EQ(0, queue_one(self->fd, 22));
	EXPECT_EQ(-1, read(self->fd, null, sizeof(struct qtimer_record)));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_RECORD_KEPT(self->fd, 22);
}

TEST_F(validate, read_unmapped_buffer)
{
	void *hole = t_unmapped_page();

	ASSERT_NE(NULL, hole);
	ASSERT_EQ(0, queue_one(self->fd, 23));
	EXPECT_EQ(-1, read(self->fd, hole, sizeof(struct qtimer_record)));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_RECORD_KEPT(self->fd, 23);
}

TEST_F(validate, read_readonly_buffer)
{
	long page = sysconf(_SC_PAGESIZE);
	void *ro = mmap(NULL, page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS,
			-1, 0);

	ASSERT_NE(MAP_FAILED, ro);
	ASSERT_EQ(0, queue_one(self->fd, 24));
	EXPECT_EQ(-1, read(self->fd, ro, sizeof(struct qtimer_record)));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_RECORD_KEPT(self->fd, 24);
	munmap(ro, page);
}

/*
 * Two records pending, room for the first only before a read-only page:
 * read returns the one record delivered, and the second stays pending.
 */
TEST_F(validate, read_partial_fault)
{
	const size_t rs = sizeof(struct qtimer_record);
	long page = sysconf(_SC_PAGESIZE);
	struct qtimer_record *first;
	char *map;

	map = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, map);
	ASSERT_EQ(0, mprotect(map + page, page, PROT_READ));
	first = (struct qtimer_record *)(map + page - rs);
	queue_two(_metadata, self->fd, 25, 26);
	EXPECT_EQ((ssize_t)rs, read(self->fd, first, 2 * rs));
	EXPECT_EQ(25, first->cookie);
	EXPECT_RECORD_KEPT(self->fd, 26);
	munmap(map, 2 * page);
}

/*
 * The fault falls inside a record: that record was not delivered (a reader
 * cannot use half a record), so it stays pending.  One record, cut: -EFAULT.
 */
TEST_F(validate, read_fault_inside_only_record)
{
	const size_t rs = sizeof(struct qtimer_record);
	long page = sysconf(_SC_PAGESIZE);
	char *map;

	map = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, map);
	ASSERT_EQ(0, mprotect(map + page, page, PROT_READ));
	ASSERT_EQ(0, queue_one(self->fd, 27));
	EXPECT_EQ(-1, read(self->fd, map + page - rs / 2, rs));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_RECORD_KEPT(self->fd, 27);
	munmap(map, 2 * page);
}

/* Two records, the second cut by the fault: one delivered, one kept. */
TEST_F(validate, read_fault_inside_second_record)
{
	const size_t rs = sizeof(struct qtimer_record);
	long page = sysconf(_SC_PAGESIZE);
	struct qtimer_record first;
	char *map, *buf;

	map = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, map);
	ASSERT_EQ(0, mprotect(map + page, page, PROT_READ));
	buf = map + page - rs - rs / 2;
	queue_two(_metadata, self->fd, 28, 29);
	EXPECT_EQ((ssize_t)rs, read(self->fd, buf, 2 * rs));
	memcpy(&first, buf, rs);
	EXPECT_EQ(28, first.cookie);
	EXPECT_RECORD_KEPT(self->fd, 29);
	munmap(map, 2 * page);
}

TEST_HARNESS_MAIN
