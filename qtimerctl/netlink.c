// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * The netlink layer of qtimerctl: a libmnl generic netlink socket, the
 * resolution of the qtimer family (uapi/linux/qtimer_netlink.h), and one
 * request/response exchange that turns the kernel's error and extended ack
 * into errno and a message.  The subcommands build their requests with
 * nl_start() and parse the replies; nothing here knows their attributes.
 */

#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <libmnl/libmnl.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>

#include <linux/qtimer_netlink.h>

#include "netlink.h"
#include "util.h"

#define QT_SYSFS_MODULE		"/sys/module/qtimer"

/* What mnl_cb_run2() hands every callback, control or not. */
struct nl_call {
	struct nl *nl;
	nl_msg_cb cb;
	void *data;
};

static int nl_msg_trampoline(const struct nlmsghdr *nlh, void *data)
{
	struct nl_call *call = data;

	return call->cb(nlh, call->data);
}

/* NLMSG_ERROR: the final ack (0) or an error, maybe with an extended ack. */
static int nl_error_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlmsgerr *err = mnl_nlmsg_get_payload(nlh);
	struct nl *nl = ((struct nl_call *)data)->nl;
	const struct nlattr *attr;
	unsigned int offset;

	if (nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*err))) {
		errno = EBADMSG;
		return MNL_CB_ERROR;
	}
	if (!err->error)
		return MNL_CB_STOP;

	if (nlh->nlmsg_flags & NLM_F_ACK_TLVS) {
		/* The TLVs follow the echoed request, or its header if capped. */
		offset = sizeof(*err);
		if (!(nlh->nlmsg_flags & NLM_F_CAPPED))
			offset += err->msg.nlmsg_len - sizeof(err->msg);
		mnl_attr_for_each(attr, nlh, offset) {
			if (mnl_attr_get_type(attr) == NLMSGERR_ATTR_MSG &&
			    mnl_attr_validate(attr, MNL_TYPE_NUL_STRING) >= 0)
				snprintf(nl->ext_msg, sizeof(nl->ext_msg), "%s",
					 mnl_attr_get_str(attr));
		}
	}
	errno = -err->error;
	return MNL_CB_ERROR;
}

static int nl_done_cb(const struct nlmsghdr *nlh, void *data)
{
	return MNL_CB_STOP;
}

static int nl_noop_cb(const struct nlmsghdr *nlh, void *data)
{
	return MNL_CB_OK;
}

static mnl_cb_t nl_ctl_cbs[NLMSG_MIN_TYPE] = {
	[NLMSG_NOOP]	= nl_noop_cb,
	[NLMSG_ERROR]	= nl_error_cb,
	[NLMSG_DONE]	= nl_done_cb,
};

struct nlmsghdr *nl_start(struct nl *nl, uint16_t type, uint8_t cmd,
			  uint16_t flags, uint8_t version)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(nl->buf);
	struct genlmsghdr *genl;

	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | flags;
	nlh->nlmsg_seq = ++nl->seq;
	genl = mnl_nlmsg_put_extra_header(nlh, sizeof(*genl));
	genl->cmd = cmd;
	genl->version = version;
	return nlh;
}

/*
 * Send @nlh and feed every reply to @cb until the ack (which follows a do's
 * reply) or the end of a dump.  Returns 0, or -1 with errno set and the
 * kernel's explanation, if it gave one, in nl->ext_msg.
 */
int nl_talk(struct nl *nl, struct nlmsghdr *nlh, nl_msg_cb cb, void *data)
{
	struct nl_call call = { .nl = nl, .cb = cb, .data = data };
	unsigned int seq = nlh->nlmsg_seq;
	ssize_t len;
	int ret;

	nl->ext_msg[0] = '\0';
	if (mnl_socket_sendto(nl->sock, nlh, nlh->nlmsg_len) < 0)
		return -1;
	for (;;) {
		len = mnl_socket_recvfrom(nl->sock, nl->buf, nl->buf_len);
		if (len < 0)
			return -1;
		ret = mnl_cb_run2(nl->buf, len, seq, nl->portid,
				  cb ? nl_msg_trampoline : NULL, &call,
				  nl_ctl_cbs, MNL_ARRAY_SIZE(nl_ctl_cbs));
		if (ret <= MNL_CB_STOP)
			return ret < 0 ? -1 : 0;
	}
}

static int ctrl_attr_cb(const struct nlattr *attr, void *data)
{
	const struct nlattr **tb = data;
	int type = mnl_attr_get_type(attr);

	if (type == CTRL_ATTR_FAMILY_ID &&
	    mnl_attr_validate(attr, MNL_TYPE_U16) < 0)
		return MNL_CB_ERROR;
	if (type == CTRL_ATTR_VERSION &&
	    mnl_attr_validate(attr, MNL_TYPE_U32) < 0)
		return MNL_CB_ERROR;
	if (type <= CTRL_ATTR_MAX)
		tb[type] = attr;
	return MNL_CB_OK;
}

static int ctrl_family_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[CTRL_ATTR_MAX + 1] = {};
	struct nl *nl = data;

	if (mnl_attr_parse(nlh, sizeof(struct genlmsghdr), ctrl_attr_cb, tb) < 0)
		return MNL_CB_ERROR;
	if (!tb[CTRL_ATTR_FAMILY_ID]) {
		errno = EBADMSG;
		return MNL_CB_ERROR;
	}
	nl->family = mnl_attr_get_u16(tb[CTRL_ATTR_FAMILY_ID]);
	if (tb[CTRL_ATTR_VERSION])
		nl->version = mnl_attr_get_u32(tb[CTRL_ATTR_VERSION]);
	return MNL_CB_OK;
}

/* Why the family is missing: no module, or the wrong network namespace. */
static void report_no_family(void)
{
	if (access(QT_SYSFS_MODULE, F_OK))
		err_msg("qtimer module not loaded: generic netlink family '%s' not found",
			QTIMER_GENL_NAME);
	else
		err_msg("generic netlink family '%s' not found although the qtimer module is loaded: it exists only in the initial network namespace",
			QTIMER_GENL_NAME);
}

int nl_open(struct nl *nl)
{
	struct nlmsghdr *nlh;
	int one = 1;

	nl->buf_len = MNL_SOCKET_BUFFER_SIZE;
	nl->buf = malloc(nl->buf_len);
	if (!nl->buf) {
		err_msg("out of memory");
		return -1;
	}
	nl->sock = mnl_socket_open(NETLINK_GENERIC);
	if (!nl->sock) {
		err_msg("cannot open a generic netlink socket: %s", strerror(errno));
		return -1;
	}
	if (mnl_socket_bind(nl->sock, 0, MNL_SOCKET_AUTOPID) < 0) {
		err_msg("cannot bind the netlink socket: %s", strerror(errno));
		return -1;
	}
	nl->portid = mnl_socket_get_portid(nl->sock);
	/* Best effort: older kernels just give no explanations. */
	mnl_socket_setsockopt(nl->sock, NETLINK_EXT_ACK, &one, sizeof(one));
	mnl_socket_setsockopt(nl->sock, NETLINK_CAP_ACK, &one, sizeof(one));
	nl->seq = time(NULL);

	nlh = nl_start(nl, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 0, 1);
	mnl_attr_put_strz(nlh, CTRL_ATTR_FAMILY_NAME, QTIMER_GENL_NAME);
	if (nl_talk(nl, nlh, ctrl_family_cb, nl) < 0) {
		if (errno == ENOENT)
			report_no_family();
		else
			err_msg("cannot resolve generic netlink family '%s': %s",
				QTIMER_GENL_NAME, strerror(errno));
		return -1;
	}
	return 0;
}

void nl_close(struct nl *nl)
{
	if (nl->sock)
		mnl_socket_close(nl->sock);
	free(nl->buf);
}

/* What failed and why, with the kernel's explanation when it gave one. */
void report_request_error(const struct nl *nl, const char *what)
{
	if (nl->ext_msg[0])
		err_msg("%s: %s (%s)", what, strerror(errno), nl->ext_msg);
	else
		err_msg("%s: %s", what, strerror(errno));
}
