/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * The qtimer family driven by the kernel's own YNL CLI (tools/net/ynl/cli.py
 * of Linux 6.12) from Documentation/netlink/specs/qtimer.yaml, and checked
 * against qtimerctl, which speaks the family through the C uapi header.
 * Where the two tools disagree, the spec and the header disagree (or the
 * spec and the kernel do), so every field of every reply is compared, by
 * name, in order.  cli.py also checks the spec against the kernel's
 * genetlink-c schema before it sends anything.  One suite a message
 * family: get-config and set-config (qtimer_ynl_config_test.c), get-stats
 * (qtimer_ynl_stats_test.c); qtimer_ynl.c runs the two tools and compares
 * their replies for both.
 *
 * The CLI, its python3 and the spec sit in lib/ynl beside the suites
 * (selftests/ynl/pack-ynl.sh, bundled by selftests/kselftest-install.sh;
 * t_beside()); $QT_YNL_ROOT names another such tree.
 * Without the module or the tree, the tests skip.
 */
#ifndef _QT_TEST_YNL_H
#define _QT_TEST_YNL_H

#include <stdbool.h>

#include "helpers.h"

#define NOBODY		65534
#define MAX_FIELDS	1024

/* --- running the two tools ---------------------------------------------- */

const char *ynl_root(void);
int ynl_run(struct t_run *r, uid_t uid, const char *const *args);
int qtimerctl_run(struct t_run *r, uid_t uid, const char *const *args);

#define YNL(r, uid, ...) ynl_run(r, uid, (const char *const []){ __VA_ARGS__, NULL })
#define QTIMERCTL(r, uid, ...) \
	qtimerctl_run(r, uid, (const char *const []){ __VA_ARGS__, NULL })

/* A failed run, for the log: what it printed. */
void show_run(const char *what, const struct t_run *r);

/* In a test (or its setup): skip without the module or the CLI. */
#define NEED_TOOLS() do {						\
	char path[PATH_MAX];						\
									\
	if (access("/sys/module/qtimer", F_OK))				\
		SKIP(return, "qtimer module not loaded");		\
	snprintf(path, sizeof(path), "%s/bin/python3", ynl_root());	\
	if (access(path, X_OK))						\
		SKIP(return, "no YNL CLI in %s (selftests/ynl/pack-ynl.sh)", \
		     ynl_root());					\
} while (0)

/* 6.1's harness runs the test body even when its setup skipped. */
#define RETURN_IF_SETUP_SKIPPED() do {					\
	if (_metadata->skip)						\
		return;							\
} while (0)

/* --- comparing JSON replies, field by field ----------------------------- */

/*
 * A JSON document flattened to its scalars in document order, each named by
 * the path of object keys to it ("heap.entries"); arrays add nothing to the
 * path, so a multi-attr's elements and a dump's messages come one after the
 * other.  Two replies agree when their lists are equal.
 */
struct field {
	char key[64];
	bool number;
	unsigned long long value;
};

struct fields {
	struct field f[MAX_FIELDS];
	int nr;
};

int fields_of(const char *text, const char *prefix, struct fields *out);
void qtimerctl_to_spec_names(struct fields *fs);
bool fields_agree(const char *what, const struct fields *ynl,
		  const struct fields *ctl);
bool fields_equal(const struct fields *a, const struct fields *b);
void show_moved(const struct fields *a, const struct fields *b);
unsigned long long field(const struct fields *fs, const char *key);

#endif /* _QT_TEST_YNL_H */
