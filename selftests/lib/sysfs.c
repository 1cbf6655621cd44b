// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * The small text files of sysfs, debugfs, procfs and cgroupfs: whole-value
 * reads and writes, the module's parameters, knobs that a test changes and
 * its teardown puts back, and what the files say about the machine (where
 * tracefs is, whether the kernel is a debug kernel, whether it runs under
 * KVM).
 */
#include "helpers.h"

int t_read_str(const char *path, char *buf, size_t len)
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

int t_write_str(const char *path, const char *val)
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

int t_sysfs_read(const char *path, unsigned long long *val)
{
	FILE *f = fopen(path, "re");
	int ret;

	if (!f)
		return -errno;
	ret = fscanf(f, "%llu", val) == 1 ? 0 : -EIO;
	fclose(f);
	return ret;
}

int t_sysfs_write(const char *path, unsigned long long val)
{
	char buf[32];
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	int len, ret;

	if (fd < 0)
		return -errno;
	len = snprintf(buf, sizeof(buf), "%llu\n", val);
	ret = write(fd, buf, len) == len ? 0 : -errno;
	close(fd);
	return ret;
}

long long t_param_get(const char *name)
{
	char path[128], buf[32];

	snprintf(path, sizeof(path), QT_PARAMS "%s", name);
	if (t_read_str(path, buf, sizeof(buf)))
		return -1;
	return strtoll(buf, NULL, 10);
}

int t_param_set(const char *name, long long val)
{
	char path[128], buf[32];

	snprintf(path, sizeof(path), QT_PARAMS "%s", name);
	snprintf(buf, sizeof(buf), "%lld\n", val);
	return t_write_str(path, buf);
}

int t_knob_set(struct t_knob *k, const char *path, const char *val)
{
	int ret;

	snprintf(k->path, sizeof(k->path), "%s", path);
	k->changed = false;
	ret = t_read_str(path, k->saved, sizeof(k->saved));
	if (ret)
		return ret;
	ret = t_write_str(path, val);
	if (!ret)
		k->changed = true;
	return ret;
}

int t_knob_restore(struct t_knob *k)
{
	int ret = 0;

	if (k->changed)
		ret = t_write_str(k->path, k->saved);
	k->changed = false;
	return ret;
}

/*
 * tracefs has its own mount point since 4.1; debugfs still offers it under
 * tracing/ (an automount of the same), and the guest may mount either.
 * "instances" is there wherever tracefs is mounted.
 */
const char *t_tracefs_root(void)
{
	static const char *const roots[] = {
		"/sys/kernel/tracing", "/sys/kernel/debug/tracing",
	};
	unsigned int i;

	for (i = 0; i < sizeof(roots) / sizeof(roots[0]); i++) {
		char path[64];

		snprintf(path, sizeof(path), "%s/instances", roots[i]);
		if (!access(path, F_OK))
			return roots[i];
	}
	return NULL;
}

/*
 * A kernel with kmemleak or fault injection is a debug kernel (KASAN,
 * lockdep, kmemleak): under TCG it arms a timer in 0.2-0.9 ms, against
 * 1-2 us on a stock one, so the suites size their storms down there.
 */
bool t_debug_kernel(void)
{
	return !access("/sys/kernel/debug/kmemleak", F_OK) ||
	       !access("/sys/kernel/debug/failslab", F_OK);
}

/*
 * True under KVM (kvm-clock is offered), false under QEMU's TCG or on bare
 * metal.  Under TCG guest time advances unevenly and everything is 10-50x
 * slower, so latency bounds are relaxed there (never correctness checks).
 */
bool t_fast_machine(void)
{
	char buf[256];

	if (t_read_str("/sys/devices/system/clocksource/clocksource0/available_clocksource",
			buf, sizeof(buf)))
		return false;
	return strstr(buf, "kvm-clock") != NULL;
}
