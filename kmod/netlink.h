/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * The "qtimer" generic netlink family (uapi/linux/qtimer_netlink.h).
 */
#ifndef _QT_NETLINK_H
#define _QT_NETLINK_H

int qt_netlink_init(void);
void qt_netlink_exit(void);

#endif /* _QT_NETLINK_H */
