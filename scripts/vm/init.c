// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2025 The qtimer authors.
 *
 * PID 1 of the qtimer test VMs.  It mounts the usual pseudo file systems,
 * loads /qtimer.ko, runs the test suites through the kernel's kselftest
 * runner, /kselftest/run_kselftest.sh (or the one program named by
 * qtimer.run=), unloads the module, scans kmemleak, records the taint
 * and reports to the host on a channel that kernel noise cannot fake: the
 * second serial port, ttyS1, which carries no kernel console, and the exit
 * status of QEMU through the isa-debug-exit device.  The host (run.sh) scans
 * the kernel console on ttyS0 for splats on its own.
 *
 * Instructions come from the kernel command line, all optional:
 *   qtimer.modparams=  module parameters for the insmod ("a=1 b=2")
 *   qtimer.suites=     comma-separated globs of suite names (default "*"):
 *                      the entries of /kselftest/kselftest-list.txt whose
 *                      test names they match go to the runner as "-t"s
 *   qtimer.run=        a program and its arguments to run instead of suites
 *   qtimer.timeout=    seconds each suite or program may take (default 300;
 *                      the runner enforces it for a suite, from the
 *                      collection's settings file, which run.sh writes)
 *   qtimer.rig_warn=1  the rig's self-test (run.sh --rig-warn): after the
 *                      insmod, load and unload /qtimer_rig.ko, which WARNs
 *                      and prints a forged hang message, so that the host
 *                      must fail the run
 * Values may be double-quoted and may carry %XX escapes (run.sh uses them
 * for '%', '"' and bytes that cannot go on a command line); qtimer.run is
 * split on spaces before the escapes are decoded.
 *
 * Result channel (ttyS1), one record per line:
 *   qtimer-vm: boot <kernel release>
 *   qtimer-vm: insmod ok | qtimer-vm: insmod failed <error>
 *   qtimer-vm: module text <address>   (for bench/profile.py)
 *   qtimer-vm: rig-warn insmod ok | qtimer-vm: rig-warn insmod failed <error>
 *   qtimer-vm: rig-warn rmmod ok | qtimer-vm: rig-warn rmmod failed <error>
 *                                      (only with qtimer.rig_warn=1)
 *   qtimer-vm: start <name>           (run_kselftest.sh, or the program)
 *   | <each line the runner or program printed>
 *   qtimer-vm: took secs=<wall>        (after each "ok"/"not ok" line the
 *                                      runner printed: the time since its
 *                                      previous one, i.e. that suite's)
 *   qtimer-vm: end <name> exit=<code>|signal=<nr>|timeout=<secs> secs=<wall>
 *   qtimer-vm: rmmod ok | qtimer-vm: rmmod failed <error>
 *   qtimer-vm: kmemleak suspects=<n> ignored=<n> ...  ("| " lines: the report)
 *   qtimer-vm: tainted <value>
 *   qtimer-vm: verdict pass|fail
 * Program output is prefixed with "| " so that it cannot fake a record.  The
 * runner prefixes each suite's output with "# ", so that its own "ok" and
 * "not ok" lines, one per suite, cannot be faked by a suite either.
 */

#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <net/if.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/io.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#define MODULE_PATH	"/qtimer.ko"
#define MODULE_NAME	"qtimer"
#define RIG_MODULE_PATH	"/qtimer_rig.ko"
#define RIG_MODULE_NAME	"qtimer_rig"
#define KSFT_ROOT	"/kselftest"
#define KSFT_RUNNER	KSFT_ROOT "/run_kselftest.sh"
#define KSFT_LIST	KSFT_ROOT "/kselftest-list.txt"
#define RESULT_TTY	"/dev/ttyS1"
#define KMEMLEAK	"/sys/kernel/debug/kmemleak"

/* isa-debug-exit: QEMU exits with (value << 1) | 1, so 33 and 35. */
#define DEBUG_EXIT_PORT	0xf4
#define DEBUG_EXIT_PASS	0x10
#define DEBUG_EXIT_FAIL	0x11

/* Taint bits that mean the kernel itself went wrong: D (died), W, L. */
#define BAD_TAINT	((1UL << 7) | (1UL << 9) | (1UL << 14))

/* kselftest's exit status for "this whole suite does not apply here". */
#define KSFT_SKIP	4

#define MAX_SUITES	256
#define MAX_ARGS	64

static char *const guest_env[] = {
	"PATH=/bin:/sbin:/usr/bin:/usr/sbin",
	"HOME=/tmp",
	"TERM=dumb",
	"LD_LIBRARY_PATH=/usr/local/lib",
	NULL,
};

static struct {
	char *modparams;
	char *suites;
	char *run;
	unsigned int timeout;
	bool rig_warn;
} cfg = {
	.modparams = "",
	.suites = "*",
	.timeout = 300,
};

static int result_fd = -1;
static int kmsg_fd = -1;
static bool failed;

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
static void __attribute__((format(printf, 1, 2))) record(const char *fmt, ...)
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

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

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

static void relay_flush(struct relay *r)
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

static void relay_bytes(struct relay *r, const char *buf, size_t len)
{
	write_all(STDOUT_FILENO, buf, len);
	for (size_t i = 0; i < len; i++) {
		r->line[r->len++] = buf[i];
		if (buf[i] == '\n' || r->len == sizeof(r->line))
			relay_flush(r);
	}
}

static void mount_fs(const char *source, const char *target, const char *type,
		     bool required)
{
	mkdir(target, 0755);
	if (mount(source, target, type, 0, NULL) && errno != EBUSY &&
	    (required || errno != ENODEV))
		record("mount %s on %s failed: %s", type, target, strerror(errno));
}

static void setup_filesystems(void)
{
	mount_fs("proc", "/proc", "proc", true);
	mount_fs("sysfs", "/sys", "sysfs", true);
	mount_fs("devtmpfs", "/dev", "devtmpfs", true);
	/*
	 * What udev or mdev would add to devtmpfs: the kselftest runner
	 * writes each suite's output to /dev/stdout, which would otherwise
	 * be a new regular file that swallows it.
	 */
	symlink("/proc/self/fd", "/dev/fd");
	symlink("/proc/self/fd/0", "/dev/stdin");
	symlink("/proc/self/fd/1", "/dev/stdout");
	symlink("/proc/self/fd/2", "/dev/stderr");
	mount_fs("devpts", "/dev/pts", "devpts", true);
	mount_fs("tmpfs", "/dev/shm", "tmpfs", true);
	mount_fs("tmpfs", "/tmp", "tmpfs", true);
	mount_fs("tmpfs", "/run", "tmpfs", true);
	mount_fs("debugfs", "/sys/kernel/debug", "debugfs", false);
	mount_fs("tracefs", "/sys/kernel/tracing", "tracefs", false);
	mount_fs("cgroup2", "/sys/fs/cgroup", "cgroup2", false);
}

/*
 * The kernel only hands init a console when /dev/console exists in the
 * initramfs; devtmpfs provides it, so make sure fds 0-2 are set up now.
 */
static void setup_console(void)
{
	int fd;

	if (fcntl(STDOUT_FILENO, F_GETFD) >= 0)
		return;
	fd = open("/dev/console", O_RDWR);
	if (fd < 0)
		return;
	dup2(fd, STDIN_FILENO);
	dup2(fd, STDOUT_FILENO);
	dup2(fd, STDERR_FILENO);
	if (fd > STDERR_FILENO)
		close(fd);
}

static void setup_result_channel(void)
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

static void setup_loopback(void)
{
	struct ifreq ifr = { .ifr_name = "lo" };
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return;
	if (!ioctl(fd, SIOCGIFFLAGS, &ifr)) {
		ifr.ifr_flags |= IFF_UP;
		ioctl(fd, SIOCSIFFLAGS, &ifr);
	}
	close(fd);
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = tolower((unsigned char)c);
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* Decode %XX escapes in place. */
static char *percent_decode(char *s)
{
	char *in = s, *out = s;

	while (*in) {
		if (in[0] == '%' && hex_digit(in[1]) >= 0 && hex_digit(in[2]) >= 0) {
			*out++ = hex_digit(in[1]) << 4 | hex_digit(in[2]);
			in += 3;
		} else {
			*out++ = *in++;
		}
	}
	*out = '\0';
	return s;
}

/*
 * Split /proc/cmdline into parameters the way the kernel does: spaces
 * separate them except inside double quotes, and the quotes are dropped.
 */
static void parse_cmdline(void)
{
	static char buf[4096];
	char *in, *out, *param;
	bool quoted = false;
	ssize_t len;
	int fd;

	fd = open("/proc/cmdline", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len <= 0)
		return;
	buf[len] = '\0';

	in = buf;
	out = buf;
	while (*in) {
		while (isspace((unsigned char)*in))
			in++;
		if (!*in)
			break;
		param = out;
		for (; *in && (quoted || !isspace((unsigned char)*in)); in++) {
			if (*in == '"')
				quoted = !quoted;
			else
				*out++ = *in;
		}
		if (*in)
			in++;
		*out++ = '\0';

		if (!strncmp(param, "qtimer.modparams=", 17))
			cfg.modparams = percent_decode(param + 17);
		else if (!strncmp(param, "qtimer.suites=", 14))
			cfg.suites = percent_decode(param + 14);
		else if (!strncmp(param, "qtimer.run=", 11))
			cfg.run = param + 11;	/* decoded per argument */
		else if (!strncmp(param, "qtimer.timeout=", 15))
			cfg.timeout = strtoul(param + 15, NULL, 10) ?: cfg.timeout;
		else if (!strcmp(param, "qtimer.rig_warn=1"))
			cfg.rig_warn = true;
	}
}

/* Run a helper that is not under test (busybox --install), quietly. */
static void run_quiet(char *const argv[])
{
	pid_t pid = fork();

	if (pid == 0) {
		execve(argv[0], argv, guest_env);
		_exit(127);
	}
	if (pid > 0)
		waitpid(pid, NULL, 0);
}

static int write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	int ret = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, text, strlen(text)) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

/*
 * On the KCSAN kernel, do not report the core kernel's known data races
 * that any poll() user meets, so that a report means one in the module's
 * code or one it causes.  fs/select.c sets pwq->triggered in pollwake()
 * and reads it in poll_schedule_timeout() with plain accesses on purpose
 * (ordered by barriers, see the comments there; 6.1 does not annotate
 * them), and a qtimer delivery that wakes a poll()ing reader is a wakeup
 * like any other.  Likewise lib/debugobjects.c: debug_check_no_obj_freed()
 * reads obj_freeing with a plain access while free_obj_work() clears it
 * (a hint only; later kernels use READ_ONCE()), which any bulk slab free
 * from one CPU racing debugobjects' free work on another meets: qtimer's
 * compaction work freeing timers in bulk does.  And x86's
 * flush_tlb_mm_range() walks mm_cpumask() with find_next_bit() while
 * switch_mm() on other CPUs sets bits in it (plain reads on purpose): a
 * copy-on-write fault in a threaded process that forks meets it, as
 * hardening_race_stress does; KCSAN reports it at _find_next_bit(), "race
 * at unknown origin".  That hides find_next_bit() races in qtimer's own
 * cancel-on-set marks too, which are read and written under their shard's
 * lock only.  The filter skips a report when either access's function is
 * listed; a symbol the kernel lacks is only refused.
 */
static void quiet_known_races(void)
{
	static const char *const funcs[] = {
		"poll_schedule_timeout.constprop.0",
		"debug_check_no_obj_freed",
		"_find_next_bit",
	};
	const char *path = "/sys/kernel/debug/kcsan";
	char line[128];

	if (access(path, W_OK))
		return;
	for (size_t i = 0; i < sizeof(funcs) / sizeof(funcs[0]); i++) {
		snprintf(line, sizeof(line), "!%s", funcs[i]);
		if (write_file(path, line))
			record("kcsan: cannot filter %s", funcs[i]);
	}
}

static unsigned long read_tainted(void)
{
	char buf[64] = "";
	int fd = open("/proc/sys/kernel/tainted", O_RDONLY | O_CLOEXEC);

	if (fd >= 0) {
		if (read(fd, buf, sizeof(buf) - 1) < 0)
			buf[0] = '\0';
		close(fd);
	}
	return strtoul(buf, NULL, 10);
}

/* Where the module's code went, for a host-side profiler to symbolise. */
static void record_module_text(void)
{
	char buf[32] = "";
	int fd = open("/sys/module/qtimer/sections/.text", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return;
	if (read(fd, buf, sizeof(buf) - 1) > 0)
		record("module text %.*s", (int)strcspn(buf, "\n"), buf);
	close(fd);
}

/* Load the module at @path; 0, or -1 with errno set. */
static int insmod(const char *path, const char *params)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	int ret, err;

	if (fd < 0)
		return -1;
	ret = syscall(SYS_finit_module, fd, params, 0);
	err = errno;
	close(fd);
	errno = err;
	return ret;
}

static bool load_module(void)
{
	if (insmod(MODULE_PATH, cfg.modparams)) {
		record("insmod failed %s", strerror(errno));
		return false;
	}
	record("insmod ok%s%s", *cfg.modparams ? " " : "", cfg.modparams);
	record_module_text();
	return true;
}

/*
 * A test's file descriptors are released when its processes are reaped, so
 * the module is normally free at once; allow a few seconds for deferred
 * work before calling it a leaked reference.
 */
static bool unload_module(void)
{
	for (int tries = 0; ; tries++) {
		if (!syscall(SYS_delete_module, MODULE_NAME, O_NONBLOCK)) {
			record("rmmod ok");
			return true;
		}
		if ((errno != EBUSY && errno != EAGAIN) || tries == 50)
			break;
		usleep(100 * 1000);
	}
	record("rmmod failed %s", strerror(errno));
	return false;
}

/*
 * The rig's self-test: /qtimer_rig.ko WARNs and prints a line that reads as
 * the hrtimer core's hang message when it loads, and the host must fail
 * the run for each (and for the W taint).  Its init has done all it does,
 * so unload it at once: the suites then see the same modules as in any
 * other run.  Returns false when it could not be loaded or unloaded.
 */
static bool rig_warn(void)
{
	if (insmod(RIG_MODULE_PATH, "")) {
		record("rig-warn insmod failed %s", strerror(errno));
		return false;
	}
	record("rig-warn insmod ok");
	if (syscall(SYS_delete_module, RIG_MODULE_NAME, O_NONBLOCK)) {
		record("rig-warn rmmod failed %s", strerror(errno));
		return false;
	}
	record("rig-warn rmmod ok");
	return true;
}

/*
 * Run one program (the kselftest runner, or qtimer.run's) for at most
 * @timeout seconds (with @tap, the runner: at most @timeout seconds from
 * its start or its last result line to the next, so that a suite's
 * leftover holding the runner's pipe, which its own bound cannot end,
 * ends it) with its stdout and stderr relayed, in its own process
 * group so that a timeout, or its end, takes any helpers it left behind
 * with it (they could hold /dev/qtimer open and block the rmmod).  Returns
 * true when it exited with status 0 (or kselftest's "skip") within its
 * time and, with @tap, printed no "not ok" line.
 */
static bool run_program(const char *name, char *const argv[], unsigned int timeout, bool tap)
{
	long long start = now_ms(), deadline = start + timeout * 1000LL, ms;
	bool exited = false, eof = false, timed_out = false;
	struct relay relay = { .len = 0, .tap = tap, .last_result_ms = start };
	int pipefd[2], pidfd, status = 0;
	struct pollfd pfd[2];
	char buf[4096];
	pid_t pid;

	record("start %s", name);
	if (pipe2(pipefd, O_CLOEXEC)) {
		record("end %s error=pipe secs=0", name);
		return false;
	}
	pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_RDONLY);

		setpgid(0, 0);
		dup2(null, STDIN_FILENO);
		dup2(pipefd[1], STDOUT_FILENO);
		dup2(pipefd[1], STDERR_FILENO);
		if (chdir("/tmp"))
			_exit(126);
		execve(argv[0], argv, guest_env);
		dprintf(STDERR_FILENO, "qtimer-vm: exec %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(pipefd[1]);
	if (pid < 0) {
		close(pipefd[0]);
		record("end %s error=fork secs=0", name);
		return false;
	}
	setpgid(pid, pid);	/* also here, so that the kill below cannot race it */
	pidfd = syscall(SYS_pidfd_open, pid, 0);

	while (!(exited && eof)) {
		long long left;
		int ret;

		if (tap && !exited && !timed_out)
			deadline = relay.last_result_ms + timeout * 1000LL;
		left = deadline - now_ms();

		if (left <= 0) {
			if (exited || timed_out)
				break;	/* something outside the group holds the pipe */
			timed_out = true;
			kill(-pid, SIGKILL);
			deadline = now_ms() + 5000;
			continue;
		}
		pfd[0] = (struct pollfd){ .fd = eof ? -1 : pipefd[0], .events = POLLIN };
		pfd[1] = (struct pollfd){ .fd = exited ? -1 : pidfd, .events = POLLIN };
		/* Without a pidfd, notice the exit by polling waitpid. */
		ret = poll(pfd, 2, pidfd < 0 && !exited ? (left < 100 ? left : 100) : left);
		if (ret < 0 && errno != EINTR)
			break;
		if (pfd[0].revents) {
			ssize_t len = read(pipefd[0], buf, sizeof(buf));

			if (len > 0)
				relay_bytes(&relay, buf, len);
			else if (len == 0 || errno != EINTR)
				eof = true;
		}
		if (!exited && (pfd[1].revents || pidfd < 0)) {
			siginfo_t si = { .si_pid = 0 };

			if (!waitid(P_PID, pid, &si, WEXITED | WNOHANG | WNOWAIT) && si.si_pid) {
				/*
				 * It is still a zombie, so its pid is not reused
				 * yet; whatever it left behind is killed now
				 * (see below), which also ends the output.
				 */
				kill(-1, SIGKILL);
				waitpid(pid, &status, 0);
				exited = true;
				if (deadline > now_ms() + 5000)
					deadline = now_ms() + 5000;
			}
		}
	}
	if (!exited) {
		kill(-pid, SIGKILL);
		waitpid(pid, &status, 0);
	}
	/*
	 * The kselftest harness puts each test in a process group of its own
	 * (setpgrp() in the forked test), out of reach of the kill above, and
	 * a test that outlived its harness could keep /dev/qtimer open.  We
	 * are PID 1 and run one program at a time, so every other process is
	 * the program's: kill(-1) reaches them all, and init is spared.
	 */
	kill(-1, SIGKILL);
	relay_flush(&relay);
	close(pipefd[0]);
	if (pidfd >= 0)
		close(pidfd);
	/*
	 * Reap the rest, re-parented to us, until none is left; one stuck in
	 * the kernel for 5 s is left behind (and shows in the rmmod).
	 */
	for (ms = now_ms() + 5000;;) {
		pid_t reaped = waitpid(-1, NULL, WNOHANG);

		if (reaped > 0)
			continue;
		if (reaped < 0 || now_ms() >= ms)
			break;
		usleep(10000);
	}

	ms = now_ms() - start;
	if (timed_out) {
		record("end %s timeout=%u secs=%lld.%03lld",
		       name, timeout, ms / 1000, ms % 1000);
		return false;
	}
	if (WIFSIGNALED(status)) {
		record("end %s signal=%d secs=%lld.%03lld",
		       name, WTERMSIG(status), ms / 1000, ms % 1000);
		return false;
	}
	record("end %s exit=%d secs=%lld.%03lld",
	       name, WEXITSTATUS(status), ms / 1000, ms % 1000);
	if (relay.not_ok)
		return false;
	return WEXITSTATUS(status) == 0 || WEXITSTATUS(status) == KSFT_SKIP;
}

static bool suite_selected(const char *name)
{
	char globs[1024], *glob, *save;

	snprintf(globs, sizeof(globs), "%s", cfg.suites);
	for (glob = strtok_r(globs, ",", &save); glob; glob = strtok_r(NULL, ",", &save))
		if (!fnmatch(glob, name, 0))
			return true;
	return false;
}

static int compare_tests(const void *a, const void *b)
{
	return strcmp(strchr(*(char *const *)a, ':'), strchr(*(char *const *)b, ':'));
}

/*
 * Run the selected suites through the kernel's kselftest runner, as a
 * kernel CI would run the installed tree: "run_kselftest.sh -t
 * collection:suite ..." for each entry of its list whose suite a glob of
 * qtimer.suites names, in lexical order of the suites.  The runner bounds
 * each suite by its collection's settings; run_program() bounds the time
 * between its result lines a little above that, should the runner itself
 * hang (a suite's leftover holding its pipe).
 */
static bool run_suites(void)
{
	char *tests[MAX_SUITES], *argv[2 * MAX_SUITES + 2], line[512];
	int nr = 0, argc = 0, i;
	bool ok;
	FILE *list;

	list = fopen(KSFT_LIST, "re");
	if (!list)
		record("cannot open %s: %s", KSFT_LIST, strerror(errno));
	while (list && fgets(line, sizeof(line), list) && nr < MAX_SUITES) {
		char *colon = strchr(line, ':');

		line[strcspn(line, "\n")] = '\0';
		if (colon && colon[1] && suite_selected(colon + 1))
			tests[nr++] = strdup(line);
	}
	if (list)
		fclose(list);
	if (!nr) {
		record("no suite matches \"%s\"", cfg.suites);
		return false;
	}
	qsort(tests, nr, sizeof(tests[0]), compare_tests);

	argv[argc++] = KSFT_RUNNER;
	for (i = 0; i < nr; i++) {
		argv[argc++] = "-t";
		argv[argc++] = tests[i];
	}
	argv[argc] = NULL;
	/* The runner's own bound on a suite fires first. */
	ok = run_program("run_kselftest.sh", argv, cfg.timeout + 30, true);
	for (i = 0; i < nr; i++)
		free(tests[i]);
	return ok;
}

static bool run_command(void)
{
	char *argv[MAX_ARGS + 1], *arg, *save;
	int argc = 0;

	for (arg = strtok_r(cfg.run, " ", &save); arg && argc < MAX_ARGS;
	     arg = strtok_r(NULL, " ", &save))
		argv[argc++] = percent_decode(arg);
	argv[argc] = NULL;
	if (!argc) {
		record("qtimer.run= is empty");
		return false;
	}
	return run_program(argv[0], argv, cfg.timeout, false);
}

/* The current jiffies, from /proc/timer_list; 0 if it cannot be found. */
static unsigned long long read_jiffies(void)
{
	unsigned long long jiffies = 0;
	char line[256];
	FILE *f = fopen("/proc/timer_list", "re");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "jiffies: %llu", &jiffies) == 1)
			break;
	if (f)
		fclose(f);
	return jiffies;
}

/*
 * Relay the kmemleak report and return the number of suspects allocated
 * at or after jiffies @since.  Older ones cannot be the module's: kmemleak
 * reports some boot-time objects only on a later scan (a debug 6.1 kernel
 * finds the ACPI object caches on its second scan), and a scan and clear
 * before the insmod cost over half a minute under TCG and still missed them.
 */
static int dump_kmemleak(unsigned long long since)
{
	struct relay relay = { .len = 0 };
	int suspects = 0, ignored = 0;
	unsigned long long jiffies;
	char line[1024];
	FILE *f;

	f = fopen(KMEMLEAK, "re");
	if (!f)
		return 0;
	/* Count first, so the record precedes the report it summarizes. */
	while (fgets(line, sizeof(line), f)) {
		char *p = strstr(line, " jiffies ");

		/* "  comm "...", pid N, jiffies J" follows each object line. */
		if (strncmp(line, "  comm ", 7) || !p || sscanf(p, " jiffies %llu", &jiffies) != 1)
			continue;
		/* Allocation and insmod times: both 64-bit, neither wraps. */
		if (!since || jiffies >= since)
			suspects++;
		else
			ignored++;
	}
	record("kmemleak suspects=%d ignored=%d (allocated before the insmod, at jiffies %llu)",
	       suspects, ignored, since);
	rewind(f);
	while (fgets(line, sizeof(line), f))
		relay_bytes(&relay, line, strlen(line));
	relay_flush(&relay);
	fclose(f);
	return suspects;
}

static void power_off(bool pass)
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

int main(void)
{
	char *busybox_install[] = { "/bin/busybox", "--install", "-s", "/bin", NULL };
	unsigned long long insmod_jiffies = 0;
	bool have_kmemleak, loaded;
	unsigned long tainted;
	struct utsname uts;

	setup_filesystems();
	setup_console();
	setup_result_channel();
	parse_cmdline();
	setup_loopback();
	sethostname("qtimer-vm", 9);
	run_quiet(busybox_install);

	uname(&uts);
	record("boot %s", uts.release);

	/* Leaks of objects allocated from here on are the module's run's. */
	have_kmemleak = !access(KMEMLEAK, W_OK);
	if (have_kmemleak)
		insmod_jiffies = read_jiffies();

	/*
	 * Re-arm every WARN_ONCE and pr_warn_once (e.g. "hrtimer: interrupt
	 * took", which emulation can trigger while booting) so that the
	 * module's run gets its own chance to show them.
	 */
	write_file("/sys/kernel/debug/clear_warn_once", "1");
	quiet_known_races();

	loaded = load_module();
	if (cfg.rig_warn && !rig_warn())
		failed = true;
	if (!loaded)
		failed = true;
	else if (cfg.run)
		failed |= !run_command();
	else
		failed |= !run_suites();
	if (loaded && !unload_module())
		failed = true;

	if (have_kmemleak) {
		/* Objects younger than 5 s are not reported yet: scan twice. */
		write_file(KMEMLEAK, "scan");
		sleep(6);
		write_file(KMEMLEAK, "scan");
		if (dump_kmemleak(insmod_jiffies))
			failed = true;
	}

	tainted = read_tainted();
	record("tainted %lu", tainted);
	if (tainted & BAD_TAINT)
		failed = true;

	record("verdict %s", failed ? "fail" : "pass");
	power_off(!failed);
	return 0;
}
