/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * What every file of qtimerctl shares and that knows nothing of netlink:
 * the program name, the exit codes, error messages and number parsing.
 */

#ifndef _QTIMERCTL_UTIL_H
#define _QTIMERCTL_UTIL_H

#include <stdint.h>

/* Exit status: 0 on success, 1 when the request failed, 2 on a usage error. */
#define EXIT_FAIL		1
#define EXIT_USAGE		2

extern const char *progname;

void err_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int parse_u64(const char *s, uint64_t *v);

#endif /* _QTIMERCTL_UTIL_H */
