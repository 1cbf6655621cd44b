/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * /dev/qtimer, the misc device.
 */
#ifndef _QT_DEV_H
#define _QT_DEV_H

int qt_dev_init(void);
void qt_dev_exit(void);

#endif /* _QT_DEV_H */
