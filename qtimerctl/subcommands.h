/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * The subcommands qtimerctl.c dispatches to, one file each.  A subcommand
 * gets argv from its own name on, parses its arguments first (a usage
 * error never touches the socket), then opens @nl; the caller closes it.
 * It returns the exit status (util.h).
 */

#ifndef _QTIMERCTL_SUBCOMMANDS_H
#define _QTIMERCTL_SUBCOMMANDS_H

#include <stdio.h>

struct nl;

/* qtimerctl.c: the one usage text, which "stats -h" prints too. */
void usage(FILE *f);

/* stats.c */
int cmd_stats(struct nl *nl, int argc, char **argv);

/* config.c */
int cmd_config(struct nl *nl, int argc, char **argv);

#endif /* _QTIMERCTL_SUBCOMMANDS_H */
