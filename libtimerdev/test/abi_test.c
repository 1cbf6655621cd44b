// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * Linked against libtimerdev.so: the exported functions resolve and work
 * without a device.  abi_check.sh checks the export list itself, and
 * abi_layout.h the layout of the public structs.
 */
#include <errno.h>
#include <stdio.h>

#include "timerdev.h"
#include "abi_layout.h"

int main(void)
{
	struct td_ctx *ctx;
	struct timespec ts = td_timespec_from_ns(-1);
	int ret = td_open_path(&ctx, "/nonexistent/qtimer", 0);

	if (ret != -ENOENT || ctx || td_fd(NULL) != -EINVAL ||
	    td_ns_from_timespec(&ts) != -1 || td_now(CLOCK_MONOTONIC) <= 0 ||
	    td_lib_version() != TD_VERSION_HEX) {
		fprintf(stderr, "abi_test: libtimerdev.so misbehaves (%d)\n", ret);
		return 1;
	}
	printf("abi_test: libtimerdev.so resolves and answers: ok\n");
	return 0;
}
