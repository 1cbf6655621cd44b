/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2025 The qtimer authors.
 *
 * What the files of the test VM's PID 1 share: init.c runs the VM from
 * boot to verdict, init_report.c writes what the host reads, init_run.c
 * runs the suites or the program the kernel command line names.
 */
#ifndef _QT_VM_INIT_H
#define _QT_VM_INIT_H

#include <stdbool.h>
#include <stddef.h>

/* --- what the host reads (init_report.c) -------------------------------- */

/* Opens the result channel (ttyS1, raw) and /dev/kmsg for record(). */
void setup_result_channel(void);
/* One "qtimer-vm: " line to the result channel and to the console. */
void __attribute__((format(printf, 1, 2))) record(const char *fmt, ...);
/* CLOCK_MONOTONIC in milliseconds. */
long long now_ms(void);

/*
 * Program output: raw to the console, "| "-prefixed lines to the result.
 * With @tap (the kselftest runner), the TAP result lines it prints at the
 * start of a line, one per suite, are counted and timed.
 */
struct relay {
	char line[4096];
	size_t len;
	bool continued;		/* line[] continues a line longer than it */
	bool tap;
	unsigned int not_ok;
	long long last_result_ms;
};

void relay_bytes(struct relay *r, const char *buf, size_t len);
/* Relays what is left of a line that did not end in a newline. */
void relay_flush(struct relay *r);

/* Ends the VM with QEMU's status for @pass (or by reset); never returns. */
void power_off(bool pass);

/* --- running programs (init_run.c) -------------------------------------- */

/* Runs a helper that is not under test, quietly, and waits for it. */
void run_quiet(char *const argv[]);
bool run_suites(const char *globs, unsigned int timeout);
bool run_command(char *cmdline, unsigned int timeout);

/* --- the command line (init.c) ------------------------------------------ */

/* Decodes %XX escapes in place; returns @s. */
char *percent_decode(char *s);

#endif /* _QT_VM_INIT_H */
