/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * What the qtimerctl_*_test suites share (ctl.c), which run qtimerctl end
 * to end, as a user would, against the module's generic netlink family,
 * and check what it prints against what the raw ioctls did and against
 * /sys/module/qtimer/parameters: running the tool as root, as nobody or in
 * a new network namespace, and reading its output (a strict JSON syntax
 * check and a number by its key).
 *
 * The tool is $QTIMERCTL, else the one bundled beside the suite
 * (t_program(): bin/ in a kselftest tree, ../bin in a payload), else
 * qtimerctl on PATH.  Without the module (the build host, where it is
 * never loaded) only the usage and "module not loaded" tests run; the
 * others skip.
 */
#ifndef _QTIMERCTL_TEST_CTL_H
#define _QTIMERCTL_TEST_CTL_H

#include <stdbool.h>

#include "helpers.h"

#define QT_MODULE	"/sys/module/qtimer"
#define NOBODY		65534

enum { AS_ROOT, AS_NOBODY, IN_NEW_NETNS };

/*
 * Run qtimerctl with @args (NULL-terminated, without argv[0]) and collect
 * its exit status, stdout and stderr.  Returns 0, or -errno when the child
 * could not be set up.
 */
int run_as(struct t_run *r, int how, const char *const *args);

#define RUN(r, ...) run_as(r, AS_ROOT, (const char *const []){ __VA_ARGS__, NULL })

bool module_loaded(void);

#define NEED_MODULE() do {						\
	if (!module_loaded())						\
		SKIP(return, "qtimer module not loaded");		\
} while (0)

/*
 * One JSON document per line, each checked strictly (RFC 8259 values, no
 * extensions), so that a test can say "--json output parses" without a
 * JSON library in the guest: how many lines, or -1 if one does not parse.
 */
int json_lines(const char *text);
/* The number after "key": at or after @from; -1 if absent. */
long long json_num_after(const char *from, const char *key);

#endif /* _QTIMERCTL_TEST_CTL_H */
