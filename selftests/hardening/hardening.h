/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * Helpers shared by the hardening suites (fault injection, races, hotplug,
 * denial of service, clock steps, fuzzing, time namespaces), on top of the
 * raw-ioctl wrappers of ../qtimer_util.h: durations that check-long can
 * stretch, a seedable PRNG, fdinfo parsing, save-and-restore of global
 * knobs (debugfs, sysfs, cgroup files), and the latency of a freshly
 * spawned program, which is how these suites tell that the machine is
 * still responsive while the module is under load.
 */
#ifndef _QT_HARDENING_H
#define _QT_HARDENING_H

#include <ctype.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "../qtimer_util.h"

/*
 * A tunable: the environment variable @name, else a "@name=value" word on
 * the kernel command line (the VM's init passes suites a fixed environment,
 * so scripts/check-long.sh hands QT_STRESS_SECONDS and friends over with
 * run.sh --cmdline), else @def.
 */
static inline long hd_tunable(const char *name, long def)
{
	char buf[4096], *p, *end;
	size_t len = strlen(name);
	const char *env = getenv(name);
	ssize_t n;
	long v;
	int fd;

	if (env && *env) {
		v = strtol(env, &end, 0);
		return *end ? def : v;
	}
	fd = open("/proc/cmdline", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return def;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return def;
	buf[n] = '\0';
	for (p = buf; (p = strstr(p, name)); p += len) {
		if ((p != buf && !isspace((unsigned char)p[-1])) || p[len] != '=')
			continue;
		v = strtol(p + len + 1, &end, 0);
		if (end != p + len + 1 && (!*end || isspace((unsigned char)*end)))
			return v;
	}
	return def;
}

/* Seconds a stress loop runs: QT_STRESS_SECONDS, or the suite's default. */
static inline int hd_stress_seconds(int def)
{
	long v = hd_tunable("QT_STRESS_SECONDS", def);

	return v < 1 ? 1 : v > 3600 ? 3600 : (int)v;
}

/*
 * True under KVM (kvm-clock is offered), false under QEMU's TCG or on bare
 * metal.  Under TCG guest time advances unevenly and everything is 10-50x
 * slower, so latency bounds are relaxed there (never correctness checks).
 */
static inline bool hd_fast_machine(void)
{
	char buf[256] = "";
	int fd = open("/sys/devices/system/clocksource/clocksource0/available_clocksource",
		      O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n > 0)
		buf[n] = '\0';
	return strstr(buf, "kvm-clock") != NULL;
}

/*
 * A CANCEL/MODIFY result that says what it prevented: non-zero, and only
 * the two documented bits.
 */
static inline bool hd_mask_ok(int m)
{
	return m > 0 && !(m & ~(QTIMER_CANCEL_ARMED | QTIMER_CANCEL_QUEUED));
}

/* xorshift64*: small, fast, reproducible from a printed seed. */
struct hd_rng {
	uint64_t s;
};

static inline void hd_rng_seed(struct hd_rng *r, uint64_t seed)
{
	r->s = seed ? seed : 0x9e3779b97f4a7c15ULL;
}

static inline uint64_t hd_rand(struct hd_rng *r)
{
	r->s ^= r->s >> 12;
	r->s ^= r->s << 25;
	r->s ^= r->s >> 27;
	return r->s * 0x2545f4914f6cdd1dULL;
}

/* Uniform in [0, n), n > 0. */
static inline uint64_t hd_below(struct hd_rng *r, uint64_t n)
{
	return hd_rand(r) % n;
}

static inline bool hd_chance(struct hd_rng *r, unsigned int percent)
{
	return hd_below(r, 100) < percent;
}

/* The per-file counters the engine prints in /proc/self/fdinfo/<fd>. */
struct hd_fdinfo {
	long long timers;
	long long pending;
	long long realtime;
	long long monotonic;
	long long boottime;
	long long user_timers;
};

/* 0, or -errno; -ENODATA when a field is missing. */
static inline int hd_fdinfo(int fd, struct hd_fdinfo *fi)
{
	char path[64], line[256];
	int seen = 0;
	FILE *f;

	memset(fi, 0xff, sizeof(*fi));
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		static const char *const keys[] = {
			"timers:", "pending:", "realtime:", "monotonic:",
			"boottime:", "user_timers:",
		};
		long long *vals[] = {
			&fi->timers, &fi->pending, &fi->realtime,
			&fi->monotonic, &fi->boottime, &fi->user_timers,
		};
		unsigned int i;

		for (i = 0; i < 6; i++) {
			size_t kl = strlen(keys[i]);

			if (!strncmp(line, keys[i], kl)) {
				*vals[i] = strtoll(line + kl, NULL, 10);
				seen |= 1 << i;
			}
		}
	}
	fclose(f);
	return seen == 0x3f ? 0 : -ENODATA;
}

/* Small text files (debugfs, sysfs, cgroupfs): whole-value read/write. */
static inline int hd_read_str(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		n--;
	buf[n] = '\0';
	return 0;
}

static inline int hd_write_str(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n, len = strlen(val);

	if (fd < 0)
		return -errno;
	n = write(fd, val, len);
	close(fd);
	if (n < 0)
		return -errno;
	return n == len ? 0 : -EIO;
}

/*
 * A global knob changed for a test and put back in its teardown (which the
 * harness runs after a failed ASSERT too).
 */
struct hd_knob {
	char path[160];
	char saved[128];
	bool changed;
};

static inline int hd_knob_set(struct hd_knob *k, const char *path,
			      const char *val)
{
	int ret;

	snprintf(k->path, sizeof(k->path), "%s", path);
	k->changed = false;
	ret = hd_read_str(path, k->saved, sizeof(k->saved));
	if (ret)
		return ret;
	ret = hd_write_str(path, val);
	if (!ret)
		k->changed = true;
	return ret;
}

static inline int hd_knob_restore(struct hd_knob *k)
{
	int ret = 0;

	if (k->changed)
		ret = hd_write_str(k->path, k->saved);
	k->changed = false;
	return ret;
}

/*
 * Spawn /bin/true (fork + exec + wait) and return how long that took in
 * nanoseconds of CLOCK_MONOTONIC, or -errno.  A machine whose CPUs are held
 * by timer work in interrupt context cannot do this quickly.
 */
static inline __s64 hd_spawn_true_ns(void)
{
	static char *const argv[] = { "/bin/true", NULL };
	__s64 start = qt_now(CLOCK_MONOTONIC);
	int status;
	pid_t pid;

	pid = fork();
	if (pid < 0)
		return -errno;
	if (!pid) {
		execv(argv[0], argv);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) != pid)
		return -errno;
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		return -ECHILD;
	return qt_now(CLOCK_MONOTONIC) - start;
}

/* Number of online CPUs and whether @cpu is one of them. */
static inline bool hd_cpu_online(int cpu)
{
	char path[96];
	unsigned long long v = 1;

	if (cpu == 0)
		return true;
	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/online", cpu);
	if (qt_sysfs_read(path, &v))
		return cpu < qt_nr_cpus();
	return v == 1;
}

/*
 * Ticks of @cpu (-1: all CPUs) so far, from /proc/stat: *busy counts user,
 * nice, system, irq and softirq time, *total adds idle, iowait and steal
 * (time the host took the vCPU away).  Returns 0 or -errno.
 */
static inline int hd_cpu_ticks(int cpu, unsigned long long *busy,
			       unsigned long long *total)
{
	unsigned long long v[8];
	char line[256], want[16];
	size_t len;
	int ret = -ENOENT;
	FILE *f;

	*busy = *total = 0;
	if (cpu < 0)
		snprintf(want, sizeof(want), "cpu ");
	else
		snprintf(want, sizeof(want), "cpu%d ", cpu);
	len = strlen(want);
	f = fopen("/proc/stat", "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, want, len))
			continue;
		if (sscanf(line + len, "%llu %llu %llu %llu %llu %llu %llu %llu",
			   &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6],
			   &v[7]) == 8)
			ret = 0;
		break;
	}
	fclose(f);
	if (ret)
		return ret;
	/* user nice system idle iowait irq softirq steal */
	*busy = v[0] + v[1] + v[2] + v[5] + v[6];
	*total = *busy + v[3] + v[4] + v[7];
	return 0;
}

/*
 * Writes records to stderr as "# " diagnostics, a bounded number per
 * process, so that a broken engine cannot flood the console.
 */
static _Atomic int hd_diag_budget __attribute__((unused)) = 40;

#define hd_diag(fmt, ...) do {						\
	if (atomic_fetch_sub(&hd_diag_budget, 1) > 0)			\
		fprintf(stderr, "# " fmt "\n", ##__VA_ARGS__);		\
} while (0)

#endif /* _QT_HARDENING_H */
