// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2025 The qtimer authors.
 *
 * What the host reads of a run of the test VM's init (init.c): records on
 * the result channel, the second serial port that carries no kernel
 * messages, each echoed to the console through /dev/kmsg; the output of
 * the programs the init runs, relayed with a "| " prefix and the runner's
 * result lines timed; and the run's end, a pass or fail status through
 * QEMU's isa-debug-exit device.  init.c lists the records.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/io.h>
#include <sys/reboot.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "init.h"

#define RESULT_TTY	"/dev/ttyS1"

/* isa-debug-exit: QEMU exits with (value << 1) | 1, so 33 and 35. */
#define DEBUG_EXIT_PORT	0xf4
#define DEBUG_EXIT_PASS	0x10
#define DEBUG_EXIT_FAIL	0x11

static int result_fd = -1;
static int kmsg_fd = -1;

/*
 * The result channel gets whole lines; a write to a serial tty can be short
 * when its buffer is full, so loop.
 */
static void write_all(int fd, const char *buf, size_t len)
{
	while (fd >= 0 && len) {
		ssize_t ret = write(fd, buf, len);

		if (ret < 0) {
			if (errno == EINTR)
				continue;
			return;
		}
		buf += ret;
		len -= ret;
	}
}

/*
 * A record goes to the result channel and, for humans, to the console.  It
 * goes to the console through /dev/kmsg so that it lands in order with the
 * kernel's own messages, which lets the host tell which phase a splat came
 * from.
 */
void record(const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	int len;

	len = snprintf(line, sizeof(line), "qtimer-vm: ");
	va_start(ap, fmt);
	len += vsnprintf(line + len, sizeof(line) - len - 1, fmt, ap);
	va_end(ap);
	if (len > (int)sizeof(line) - 2)
		len = sizeof(line) - 2;
	line[len++] = '\n';
	write_all(result_fd, line, len);
	write_all(kmsg_fd >= 0 ? kmsg_fd : STDOUT_FILENO, line, len);
}

long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

void relay_flush(struct relay *r)
{
	bool result;

	if (!r->len)
		return;
	write_all(result_fd, "| ", 2);
	write_all(result_fd, r->line, r->len);
	if (r->line[r->len - 1] != '\n')
		write_all(result_fd, "\n", 1);
	result = r->tap && !r->continued &&
		 ((r->len > 3 && !strncmp(r->line, "ok ", 3)) ||
		  (r->len > 7 && !strncmp(r->line, "not ok ", 7)));
	if (result) {
		long long ms = now_ms() - r->last_result_ms;

		r->not_ok += r->line[0] == 'n';
		r->last_result_ms += ms;
		record("took secs=%lld.%03lld", ms / 1000, ms % 1000);
	}
	r->continued = r->line[r->len - 1] != '\n';
	r->len = 0;
}

void relay_bytes(struct relay *r, const char *buf, size_t len)
{
	write_all(STDOUT_FILENO, buf, len);
	for (size_t i = 0; i < len; i++) {
		r->line[r->len++] = buf[i];
		if (buf[i] == '\n' || r->len == sizeof(r->line))
			relay_flush(r);
	}
}

void setup_result_channel(void)
{
	struct termios tio;

	result_fd = open(RESULT_TTY, O_WRONLY | O_NOCTTY | O_CLOEXEC);
	if (result_fd < 0) {
		dprintf(STDOUT_FILENO, "qtimer-vm: cannot open %s: %s\n",
			RESULT_TTY, strerror(errno));
		return;
	}
	/* No "\n" -> "\r\n" or other line discipline rewriting. */
	if (!tcgetattr(result_fd, &tio)) {
		cfmakeraw(&tio);
		cfsetospeed(&tio, B115200);
		tcsetattr(result_fd, TCSANOW, &tio);
	}
	kmsg_fd = open("/dev/kmsg", O_WRONLY | O_CLOEXEC);
}

void power_off(bool pass)
{
	if (result_fd >= 0)
		tcdrain(result_fd);
	/*
	 * Let the kernel's console (threaded on PREEMPT_RT) print what is
	 * still queued before QEMU goes away: the host scans it for splats.
	 */
	sync();
	sleep(1);
	if (!ioperm(DEBUG_EXIT_PORT, 4, 1))
		outb(pass ? DEBUG_EXIT_PASS : DEBUG_EXIT_FAIL, DEBUG_EXIT_PORT);
	/*
	 * Still here: no CONFIG_X86_IOPL_IOPERM, or no isa-debug-exit device.
	 * The host then goes by the verdict record alone.  Reset rather than
	 * power off: a kernel without ACPI sleep states can only halt, while
	 * any reset ends QEMU under -no-reboot.
	 */
	record("exit by reset: isa-debug-exit unreachable (%s)", strerror(errno));
	if (result_fd >= 0)
		tcdrain(result_fd);
	reboot(RB_AUTOBOOT);
	for (;;)
		pause();
}
