// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * /dev/qtimer: a misc device whose every open file is a timer context.
 * read() returns whole records, poll() reports EPOLLIN exactly when records
 * are pending, and the last close takes every timer of the file with it.
 */

#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/poll.h>
#include <linux/seq_file.h>

#include "ctx.h"
#include "dev.h"
#include "ioctl.h"
#include "ring.h"

static int qt_dev_open(struct inode *inode, struct file *file)
{
	struct qt_ctx *ctx = qt_ctx_create();

	if (!ctx)
		return -ENOMEM;
	file->private_data = ctx;
	/* read_iter() honours IOCB_NOWAIT: io_uring may try it inline. */
	file->f_mode |= FMODE_NOWAIT;
	return stream_open(inode, file);
}

static int qt_dev_release(struct inode *inode, struct file *file)
{
	qt_ctx_release(file->private_data);
	return 0;
}

/*
 * read(), readv() and io_uring's IORING_OP_READ.  IOCB_NOWAIT is how
 * io_uring asks for an attempt that must not sleep: with it, an empty
 * queue is -EAGAIN, and io_uring waits for EPOLLIN and tries again instead
 * of blocking a worker thread in here.
 */
static ssize_t qt_dev_read_iter(struct kiocb *iocb, struct iov_iter *to)
{
	struct file *file = iocb->ki_filp;

	return qt_read_records(file->private_data, to,
			       (file->f_flags & O_NONBLOCK) ||
			       (iocb->ki_flags & IOCB_NOWAIT));
}

static __poll_t qt_dev_poll(struct file *file, poll_table *wait)
{
	struct qt_ctx *ctx = file->private_data;

	poll_wait(file, &ctx->wqh, wait);
	/* Pairs with qt_ring_setup()'s release: the ring is set up. */
	if (smp_load_acquire(&ctx->ring))
		return qt_ring_poll(ctx);
	/*
	 * poll_wait() queued us on wqh (under wqh.lock) before this read, and
	 * every change of nr_ready to non-zero happens under wqh.lock and is
	 * followed by a wakeup (under that lock or, from the expirer, after
	 * it), so a record that arrives after the read still wakes us:
	 * the unlocked read can only be stale in the harmless direction.
	 */
	return READ_ONCE(ctx->nr_ready) ? EPOLLIN | EPOLLRDNORM : 0;
}

static int qt_dev_mmap(struct file *file, struct vm_area_struct *vma)
{
	/* The ring at offset 0, the timer table far above it. */
	if (vma->vm_pgoff >= QT_TABLE_MMAP_OFF >> PAGE_SHIFT)
		return qt_table_mmap(file->private_data, vma);
	return qt_ring_mmap(file->private_data, vma);
}

static void qt_dev_show_fdinfo(struct seq_file *m, struct file *file)
{
	qt_ctx_show_fdinfo(file->private_data, m);
}

static const struct file_operations qt_fops = {
	.owner		= THIS_MODULE,
	.open		= qt_dev_open,
	.release	= qt_dev_release,
	.read_iter	= qt_dev_read_iter,
	.poll		= qt_dev_poll,
	.mmap		= qt_dev_mmap,
	.unlocked_ioctl	= qt_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
	.show_fdinfo	= qt_dev_show_fdinfo,
};

/*
 * A fixed minor, from the range devices.txt reserves for local use
 * (243-254), so that the node can exist before the module is loaded: depmod
 * lists the "devname:" alias below in modules.devname, kmod static-nodes
 * (systemd-tmpfiles at boot) creates /dev/qtimer from it, and the first
 * open() loads the module through the char-major-10-243 alias, as for
 * /dev/fuse.  Should a local driver hold that minor, the device takes a
 * dynamic one and only the autoload is lost.
 */
#define QT_MISC_MINOR	243

static struct miscdevice qt_misc = {
	.minor	= QT_MISC_MINOR,
	.name	= "qtimer",
	.fops	= &qt_fops,
	/* Any user may hold timers; caps bound what each can take. */
	.mode	= 0666,
};

int qt_dev_init(void)
{
	int ret = misc_register(&qt_misc);

	if (ret != -EBUSY)
		return ret;
	pr_info("qtimer: misc minor %d is taken: /dev/qtimer gets a dynamic one and does not autoload\n",
		QT_MISC_MINOR);
	qt_misc.minor = MISC_DYNAMIC_MINOR;
	return misc_register(&qt_misc);
}

MODULE_ALIAS_MISCDEV(QT_MISC_MINOR);
MODULE_ALIAS("devname:qtimer");

void qt_dev_exit(void)
{
	misc_deregister(&qt_misc);
}
