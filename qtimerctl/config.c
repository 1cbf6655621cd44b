// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * qtimerctl config get|set: the module's caps, read and written through
 * the family's GET_CONFIG and SET_CONFIG.  The keys and their ranges are
 * the uapi's; the kernel checks the range (ERANGE), which is reported
 * here with the range the uapi gives.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <libmnl/libmnl.h>
#include <linux/genetlink.h>

#include <linux/qtimer_netlink.h>

#include "netlink.h"
#include "subcommands.h"
#include "util.h"

static const struct config_key {
	const char *name;
	uint16_t attr;
	uint64_t max;
} config_keys[] = {
	{ "max_timers_per_fd", QTIMER_A_CONFIG_MAX_TIMERS_PER_FD,
	  QTIMER_MAX_TIMERS_PER_FD_LIMIT },
	{ "max_timers_per_user", QTIMER_A_CONFIG_MAX_TIMERS_PER_USER,
	  QTIMER_MAX_TIMERS_PER_USER_LIMIT },
};

#define NR_CONFIG_KEYS (sizeof(config_keys) / sizeof(config_keys[0]))

struct config {
	bool has[QTIMER_A_CONFIG_MAX + 1];
	uint64_t value[QTIMER_A_CONFIG_MAX + 1];
};

static const struct config_key *config_key_find(const char *name)
{
	unsigned int i;

	for (i = 0; i < NR_CONFIG_KEYS; i++)
		if (!strcmp(config_keys[i].name, name))
			return &config_keys[i];
	err_msg("config: unknown key '%s' (known: max_timers_per_fd, max_timers_per_user)",
		name);
	return NULL;
}

static int config_attr_cb(const struct nlattr *attr, void *data)
{
	int type = mnl_attr_get_type(attr);
	struct config *cfg = data;

	if (type != QTIMER_A_CONFIG_MAX_TIMERS_PER_FD &&
	    type != QTIMER_A_CONFIG_MAX_TIMERS_PER_USER)
		return MNL_CB_OK;
	if (mnl_attr_validate(attr, MNL_TYPE_U64) < 0)
		return MNL_CB_ERROR;
	cfg->has[type] = true;
	cfg->value[type] = mnl_attr_get_u64(attr);
	return MNL_CB_OK;
}

static int config_cb(const struct nlmsghdr *nlh, void *data)
{
	if (mnl_attr_parse(nlh, sizeof(struct genlmsghdr), config_attr_cb,
			   data) < 0) {
		errno = EBADMSG;
		return MNL_CB_ERROR;
	}
	return MNL_CB_OK;
}

static int cmd_config_get(struct nl *nl, int argc, char **argv)
{
	const struct config_key *key = NULL;
	struct config cfg = {};
	struct nlmsghdr *nlh;
	bool json = false;
	unsigned int i;
	int arg = 0;

	if (argc > arg && (!strcmp(argv[arg], "-j") || !strcmp(argv[arg], "--json"))) {
		json = true;
		arg++;
	}
	if (argc > arg) {
		key = config_key_find(argv[arg++]);
		if (!key)
			return EXIT_USAGE;
	}
	if (argc > arg) {
		err_msg("config get: unexpected argument '%s'", argv[arg]);
		return EXIT_USAGE;
	}
	if (nl_open(nl) < 0)
		return EXIT_FAIL;

	nlh = nl_start(nl, nl->family, QTIMER_CMD_GET_CONFIG, 0,
		       QTIMER_GENL_VERSION);
	if (nl_talk(nl, nlh, config_cb, &cfg) < 0) {
		report_request_error(nl, "config get");
		return EXIT_FAIL;
	}
	for (i = 0; i < NR_CONFIG_KEYS; i++) {
		if (!cfg.has[config_keys[i].attr]) {
			err_msg("config get: the kernel did not report %s",
				config_keys[i].name);
			return EXIT_FAIL;
		}
	}

	if (key && json)
		printf("{\"%s\":%" PRIu64 "}\n", key->name, cfg.value[key->attr]);
	else if (key)
		printf("%" PRIu64 "\n", cfg.value[key->attr]);
	else if (json)
		for (i = 0; i < NR_CONFIG_KEYS; i++)
			printf("%s\"%s\":%" PRIu64 "%s", i ? "," : "{",
			       config_keys[i].name, cfg.value[config_keys[i].attr],
			       i + 1 < NR_CONFIG_KEYS ? "" : "}\n");
	else
		for (i = 0; i < NR_CONFIG_KEYS; i++)
			printf("%s: %" PRIu64 "\n", config_keys[i].name,
			       cfg.value[config_keys[i].attr]);
	return 0;
}

static int cmd_config_set(struct nl *nl, int argc, char **argv)
{
	const struct config_key *key;
	struct nlmsghdr *nlh;
	uint64_t value;

	if (argc != 2) {
		err_msg("config set: wants KEY VALUE");
		return EXIT_USAGE;
	}
	key = config_key_find(argv[0]);
	if (!key)
		return EXIT_USAGE;
	if (parse_u64(argv[1], &value)) {
		err_msg("config set: %s: '%s' is not a number", key->name,
			argv[1]);
		return EXIT_USAGE;
	}
	if (nl_open(nl) < 0)
		return EXIT_FAIL;

	nlh = nl_start(nl, nl->family, QTIMER_CMD_SET_CONFIG, 0,
		       QTIMER_GENL_VERSION);
	mnl_attr_put_u64(nlh, key->attr, value);
	if (nl_talk(nl, nlh, NULL, NULL) < 0) {
		if (errno == EPERM)
			err_msg("config set: permission denied: changing the qtimer caps needs CAP_SYS_ADMIN and CAP_NET_ADMIN (run as root)");
		else if (errno == ERANGE)
			err_msg("config set: %s: %" PRIu64 " is out of range (1..%" PRIu64 ")",
				key->name, value, key->max);
		else
			report_request_error(nl, "config set");
		return EXIT_FAIL;
	}
	return 0;
}

/* argv[0] is "config", argv[1] the verb; the verbs get what follows it. */
int cmd_config(struct nl *nl, int argc, char **argv)
{
	if (argc < 2) {
		err_msg("config: wants 'get' or 'set'");
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "get"))
		return cmd_config_get(nl, argc - 2, argv + 2);
	if (!strcmp(argv[1], "set"))
		return cmd_config_set(nl, argc - 2, argv + 2);
	err_msg("config: unknown subcommand '%s' (get, set)", argv[1]);
	return EXIT_USAGE;
}
