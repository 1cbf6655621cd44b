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
 * the kernel console on ttyS0 for splats on its own.  This file is the run
 * from boot to verdict; init_report.c writes what the host reads and ends
 * the VM, init_run.c runs the suites or the program (init.h joins them).
 *
 * Instructions come from the kernel command line, all optional:
 *   qtimer.modparams=  module parameters for the insmod ("a=1 b=2")
 *   qtimer.suites=     comma-separated globs of suite names (default: the
 *                      first line of /suites, which run.sh writes, else
 *                      "*"): the entries of /kselftest/kselftest-list.txt
 *                      whose test names they match go to the runner as
 *                      "-t"s (a kernel's whole list is too long for x86's
 *                      2047-byte command line, hence the file)
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
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "init.h"

#define MODULE_PATH	"/qtimer.ko"
#define MODULE_NAME	"qtimer"
#define RIG_MODULE_PATH	"/qtimer_rig.ko"
#define RIG_MODULE_NAME	"qtimer_rig"
#define KMEMLEAK	"/sys/kernel/debug/kmemleak"

/* Taint bits that mean the kernel itself went wrong: D (died), W, L. */
#define BAD_TAINT	((1UL << 7) | (1UL << 9) | (1UL << 14))

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

static bool failed;

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
char *percent_decode(char *s)
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
/* @path's first @size - 1 bytes into @buf, NUL-terminated: false if none. */
static bool read_small_file(const char *path, char *buf, size_t size)
{
	ssize_t len;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	len = read(fd, buf, size - 1);
	close(fd);
	if (len <= 0)
		return false;
	buf[len] = '\0';
	return true;
}

static void parse_cmdline(void)
{
	static char buf[4096];
	char *in, *out, *param;
	bool quoted = false;

	if (!read_small_file("/proc/cmdline", buf, sizeof(buf)))
		return;

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

/*
 * The suites' globs from /suites (one line), unless the command line named
 * them: a whole kernel's list does not fit on it.
 */
static void read_suites_file(void)
{
	static char buf[16384];

	if (strcmp(cfg.suites, "*") || !read_small_file("/suites", buf, sizeof(buf)))
		return;
	buf[strcspn(buf, "\n")] = '\0';
	if (buf[0])
		cfg.suites = buf;
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
	read_suites_file();
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
		failed |= !run_command(cfg.run, cfg.timeout);
	else
		failed |= !run_suites(cfg.suites, cfg.timeout);
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
