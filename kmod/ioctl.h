/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * The ioctl commands of /dev/qtimer.
 */
#ifndef _QT_IOCTL_H
#define _QT_IOCTL_H

struct file;
struct qt_ctx;

long qt_ioctl(struct file *file, unsigned int cmd, unsigned long arg);

#endif /* _QT_IOCTL_H */
