/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * The netlink layer: a libmnl socket bound to the qtimer generic netlink
 * family, and the request/response helpers the subcommands build on.
 */

#ifndef _QTIMERCTL_NETLINK_H
#define _QTIMERCTL_NETLINK_H

#include <stddef.h>
#include <stdint.h>

struct nlmsghdr;

struct nl {
	struct mnl_socket *sock;
	unsigned int portid;
	unsigned int seq;
	uint16_t family;
	uint32_t version;
	char *buf;
	size_t buf_len;
	/* The kernel's extended ack message for the last error, if any. */
	char ext_msg[256];
};

typedef int (*nl_msg_cb)(const struct nlmsghdr *nlh, void *data);

int nl_open(struct nl *nl);
void nl_close(struct nl *nl);
struct nlmsghdr *nl_start(struct nl *nl, uint16_t type, uint8_t cmd,
			  uint16_t flags, uint8_t version);
int nl_talk(struct nl *nl, struct nlmsghdr *nlh, nl_msg_cb cb, void *data);
void report_request_error(const struct nl *nl, const char *what);

#endif /* _QTIMERCTL_NETLINK_H */
