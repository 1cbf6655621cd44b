// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * qtimerctl: inspect and tune the qtimer module through its generic netlink
 * family (uapi/linux/qtimer_netlink.h), with libmnl.
 *
 *   qtimerctl stats [-w SECONDS] [-c COUNT] [-j|--json]
 *   qtimerctl config get [-j|--json] [KEY]
 *   qtimerctl config set KEY VALUE
 *
 * Exit status: 0 on success, 1 when the request failed (module not loaded,
 * permission denied, value out of range), 2 on a usage error.
 *
 * This file is the dispatch only, as wg.c is in wireguard-tools: the usage
 * text and the subcommand table.  netlink.c holds the socket and the
 * family, stats.c and config.c one subcommand each, util.c what all share.
 */

#include <stdio.h>
#include <string.h>

#include <linux/qtimer_netlink.h>

#include "netlink.h"
#include "subcommands.h"
#include "util.h"

/* The release, from dkms.conf's PACKAGE_VERSION, given by the Makefile. */
#ifndef QTIMER_VERSION_STRING
#error "QTIMER_VERSION_STRING is not defined: build with qtimerctl/Makefile"
#endif

static const struct {
	const char *name;
	int (*function)(struct nl *nl, int argc, char **argv);
} subcommands[] = {
	{ "stats", cmd_stats },
	{ "config", cmd_config },
};

void usage(FILE *f)
{
	fprintf(f,
		"usage: %s stats [-w SECONDS] [-c COUNT] [-j|--json]\n"
		"       %s config get [-j|--json] [KEY]\n"
		"       %s config set KEY VALUE\n"
		"       %s -h|--help | -V|--version\n"
		"keys: max_timers_per_fd (1..%llu), max_timers_per_user (1..%llu)\n",
		progname, progname, progname, progname,
		/* The header's constants are plain integer literals. */
		(unsigned long long)QTIMER_MAX_TIMERS_PER_FD_LIMIT,
		(unsigned long long)QTIMER_MAX_TIMERS_PER_USER_LIMIT);
}

int main(int argc, char **argv)
{
	struct nl nl = {};
	unsigned int i;
	int ret;

	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "-V") || !strcmp(argv[1], "--version")) {
		printf("qtimerctl %s (netlink family %s version %d)\n",
		       QTIMER_VERSION_STRING, QTIMER_GENL_NAME, QTIMER_GENL_VERSION);
		return 0;
	}
	for (i = 0; i < sizeof(subcommands) / sizeof(subcommands[0]); i++) {
		if (strcmp(argv[1], subcommands[i].name))
			continue;
		ret = subcommands[i].function(&nl, argc - 1, argv + 1);
		nl_close(&nl);
		return ret;
	}
	err_msg("unknown command '%s'", argv[1]);
	usage(stderr);
	return EXIT_USAGE;
}
