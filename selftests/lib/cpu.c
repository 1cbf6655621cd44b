// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * CPUs: how many the kernel may have, pinning, hotplug through sysfs, and
 * the one reader of /proc/stat, with which the suites tell that timer work
 * does not keep a CPU busy.
 */
#define _GNU_SOURCE
#include <sys/sysinfo.h>

#include "helpers.h"

/*
 * Cached: glibc reads sysfs on every get_nprocs_conf(), far too slow for a
 * per-timer loop under TCG.
 */
int t_nr_cpus(void)
{
	static int nr;

	if (!nr)
		nr = get_nprocs_conf();
	return nr;
}

int t_pin_self(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) ? -errno : 0;
}

int t_allowed_cpus(int *cpus, int max)
{
	cpu_set_t set;
	int cpu, n = 0;

	if (sched_getaffinity(0, sizeof(set), &set))
		return -errno;
	for (cpu = 0; cpu < CPU_SETSIZE && n < max; cpu++)
		if (CPU_ISSET(cpu, &set))
			cpus[n++] = cpu;
	return n;
}

char *t_cpu_online_path(int cpu, char *buf, size_t len)
{
	snprintf(buf, len, "/sys/devices/system/cpu/cpu%d/online", cpu);
	return buf;
}

/* CPU 0 usually has no online file: it cannot go. */
bool t_cpu_online(int cpu)
{
	char path[96];
	unsigned long long v = 1;

	if (cpu == 0)
		return true;
	if (t_sysfs_read(t_cpu_online_path(cpu, path, sizeof(path)), &v))
		return cpu < t_nr_cpus();
	return v == 1;
}

/* A hotplug operation under way elsewhere makes the write fail for a while. */
int t_cpu_set_online(int cpu, int on)
{
	char path[96];
	int tries, ret = 0;

	t_cpu_online_path(cpu, path, sizeof(path));
	for (tries = 0; tries < 50; tries++) {
		ret = t_sysfs_write(path, on);
		if (ret != -EBUSY && ret != -EAGAIN)
			break;
		t_sleep_ms(20);
	}
	return ret;
}

int t_proc_stat(int cpu, struct t_cpu_stat *st)
{
	char line[256], want[16];
	size_t len;
	int ret = -ENOENT;
	FILE *f;

	memset(st, 0, sizeof(*st));
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
			   &st->user, &st->nice, &st->system, &st->idle,
			   &st->iowait, &st->irq, &st->softirq, &st->steal) == 8)
			ret = 0;
		break;
	}
	fclose(f);
	return ret;
}

/* Steal is time the host took the vCPU away: not busy, but not ours. */
int t_cpu_ticks(int cpu, unsigned long long *busy, unsigned long long *total)
{
	struct t_cpu_stat st;
	int ret = t_proc_stat(cpu, &st);

	*busy = *total = 0;
	if (ret)
		return ret;
	*busy = st.user + st.nice + st.system + st.irq + st.softirq;
	*total = *busy + st.idle + st.iowait + st.steal;
	return 0;
}
