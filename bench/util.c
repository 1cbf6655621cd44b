// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * The measuring tools shared by every workload: the kernel memory and
 * system CPU counters, quantiles, and the note and progress lines that
 * bench.sh picks out of the guest's output; and the wait for a readable
 * file that the mechanisms built on one share.  Clocks, the random generator
 * and the sysfs and /proc readers are the test suites' (libqttest, see
 * selftests/lib/helpers.h), so that each exists once.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "helpers.h"
#include "qtbench.h"

/*
 * libqttest's xorshift64*: plenty for shuffles and expiry jitter.  main.c
 * seeds it before every run, so that a run's ops replay from --seed.
 */
struct t_rng bench_rng;

void *xcalloc(size_t nr, size_t size)
{
	void *p = calloc(nr ? nr : 1, size);

	if (!p) {
		fprintf(stderr, "qtbench: out of memory (%zu x %zu)\n", nr, size);
		exit(2);
	}
	return p;
}

/* A uniformly random permutation of 0..n-1 (Fisher-Yates), from @rng. */
uint32_t *permutation_from(struct t_rng *rng, size_t n)
{
	uint32_t *p = xcalloc(n, sizeof(*p));
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = i;
	for (i = n; i > 1; i--) {
		size_t j = t_rand_below(rng, i);
		uint32_t t = p[i - 1];

		p[i - 1] = p[j];
		p[j] = t;
	}
	return p;
}

uint32_t *permutation(size_t n)
{
	return permutation_from(&bench_rng, n);
}

/*
 * poll() @fd for input for up to @timeout_ms: 1 when it is ready (or in
 * error, which the read that follows reports), 0 when it is not or a
 * signal came first, -errno when poll() failed.
 */
int poll_in(int fd, int timeout_ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	if (poll(&pfd, 1, timeout_ms) < 0)
		return errno == EINTR ? 0 : -errno;
	return pfd.revents != 0;
}

/*
 * The wait() of a mechanism that reads its expirations from a non-blocking
 * file: read() up to @size bytes and, when nothing is pending and
 * @timeout_ms allows, poll once and read what the poll promised.  Returns
 * the bytes read, 0 when nothing came, or -errno (-EIO for an end of file,
 * which none of these files has).
 */
ssize_t read_or_wait(int fd, void *buf, size_t size, int timeout_ms)
{
	for (;;) {
		ssize_t len = read(fd, buf, size);
		int ret;

		if (len > 0)
			return len;
		if (len == 0)
			return -EIO;
		if (errno != EAGAIN)
			return -errno;
		if (!timeout_ms)
			return 0;
		ret = poll_in(fd, timeout_ms);
		if (ret <= 0)
			return ret;
		timeout_ms = 0;
	}
}

/* t_sysfs_read() as a value, 0 when unreadable: as low as a limit gets. */
unsigned long long read_sysctl(const char *path)
{
	unsigned long long v;

	return t_sysfs_read(path, &v) ? 0 : v;
}

/*
 * Pages mapped with vmap() (qtimer's heap arrays among them), which
 * VmallocUsed leaves out as it counts only what vmalloc() allocated: the
 * sizes of the "vmap" areas in /proc/vmallocinfo, less their guard pages.
 */
static int64_t vmap_bytes(void)
{
	FILE *f = fopen("/proc/vmallocinfo", "re");
	char line[512];
	int64_t total = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		long long size;

		if (!strstr(line, " vmap") || strstr(line, " pages=") ||
		    sscanf(line, "%*s %lld", &size) != 1)
			continue;
		total += size - 4096;
	}
	fclose(f);
	return total;
}

/*
 * Kernel memory that timers can live in: slab, vmalloc, vmap and per-cpu
 * pages.  The vmstat counters behind /proc/meminfo are per-CPU deltas folded
 * every second or so, with an error of up to a few MB; stat_refresh folds
 * them now, which is what makes a delta over 10k timers mean anything.
 */
int64_t kernel_mem_bytes(void)
{
	static const char *const keys[] = { "Slab:", "VmallocUsed:", "Percpu:" };
	char line[256];
	int64_t total = 0;
	FILE *f;

	if (opts.tune)
		t_sysfs_write("/proc/sys/vm/stat_refresh", 1);
	f = fopen("/proc/meminfo", "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		size_t k;

		for (k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
			size_t len = strlen(keys[k]);

			if (!strncmp(line, keys[k], len))
				total += strtoll(line + len, NULL, 10) * 1024;
		}
	}
	fclose(f);
	return total + vmap_bytes();
}

/*
 * Busy time of all CPUs together: elapsed time times the online CPUs, less
 * their idle and iowait time.  The idle time in /proc/stat comes from the
 * nohz idle clocks (exact, including an idle period in progress), while the
 * user and system columns are tick samples, which timer-driven work skews
 * (it tends to run between ticks); so busy is derived from idle.  It counts
 * the hrtimer interrupts and softirqs that deliver expirations on whatever
 * CPU they run, which the process's own CPU time misses.  Resolution: one
 * USER_HZ tick (10 ms) in all, fine over windows of a second or more.
 */
int64_t sys_busy_ns(void)
{
	long hz = sysconf(_SC_CLK_TCK), cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int64_t now = t_now(CLOCK_MONOTONIC);
	struct t_cpu_stat st;

	if (t_proc_stat(-1, &st) || hz <= 0 || cpus <= 0)
		return -1;
	return now * cpus - (int64_t)(st.idle + st.iowait) * (NSEC_PER_SEC / hz);
}

/*
 * Give every slab cache's empty and per-CPU slabs back, so that objects a
 * previous run freed do not hide (or pad) this run's allocations.
 */
void shrink_slabs(void)
{
	struct dirent *de;
	char path[512];
	DIR *dir;

	if (!opts.tune)
		return;
	dir = opendir("/sys/kernel/slab");
	if (!dir)
		return;
	while ((de = readdir(dir))) {
		int fd;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/sys/kernel/slab/%s/shrink", de->d_name);
		fd = open(path, O_WRONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (write(fd, "1", 1) < 0) {
			/* read-only or aliased caches: nothing to give back */
		}
		close(fd);
	}
	closedir(dir);
}

static void swap64(int64_t *a, int64_t *b)
{
	int64_t t = *a;

	*a = *b;
	*b = t;
}

/* Hoare-style quickselect: afterwards v[k] is the k-th smallest. */
static void select_kth(int64_t *v, size_t nr, size_t k)
{
	size_t lo = 0, hi = nr - 1;

	while (lo < hi) {
		int64_t pivot = v[lo + t_rand_below(&bench_rng, hi - lo + 1)];
		size_t i = lo, j = hi;

		while (i <= j) {
			while (v[i] < pivot)
				i++;
			while (v[j] > pivot)
				j--;
			if (i <= j) {
				swap64(&v[i], &v[j]);
				i++;
				if (j == 0)
					break;
				j--;
			}
		}
		if (k <= j)
			hi = j;
		else if (k >= i)
			lo = i;
		else
			return;
	}
}

/* p50, p99 and max of v (reordered), nearest-rank. */
void quantiles(int64_t *v, size_t nr, int64_t *p50, int64_t *p99, int64_t *max)
{
	size_t i, k50, k99;

	*p50 = *p99 = *max = 0;
	if (!nr)
		return;
	*max = v[0];
	for (i = 1; i < nr; i++)
		if (v[i] > *max)
			*max = v[i];
	k50 = (nr * 50 + 99) / 100 - 1;
	k99 = (nr * 99 + 99) / 100 - 1;
	select_kth(v, nr, k99);
	*p99 = v[k99];
	/* After selecting k99, everything below it is in v[0..k99]. */
	select_kth(v, k99 + 1, k50);
	*p50 = v[k50];
}

void note(const struct run *r, const char *fmt, ...)
{
	char text[512];
	va_list ap;

	if (opts.quiet)
		return;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (r && r->mech->batched)
		printf("qtbench-note: %s,%s,%zu,%u: %s\n", r->mech->name,
		       r->workload, r->n, r->batch, text);
	else if (r)
		printf("qtbench-note: %s,%s,%zu,: %s\n", r->mech->name,
		       r->workload, r->n, text);
	else
		printf("qtbench-note: ,,,: %s\n", text);
	fflush(stdout);
}

void progress(const char *fmt, ...)
{
	va_list ap;

	printf("qtbench: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

/*
 * The engine's own view of a run (interrupt batching, work deferred out of
 * the hrtimer), from the "total" row of qtimerctl's table, when the guest
 * has qtimerctl.  Returns 0 or -1.
 */
int engine_stats(struct engine_stats *s)
{
	unsigned long long armed, cancelled, modified;
	char line[512];
	int ret = -1;
	FILE *f;

	if (access("/bin/qtimerctl", X_OK))
		return -1;
	f = popen("/bin/qtimerctl stats 2>/dev/null", "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "total %llu %llu %llu %llu %llu %llu %lf", &armed, &s->fired,
			   &cancelled, &modified, &s->coalesced, &s->deferred,
			   &s->max_run_us) == 7)
			ret = 0;
	pclose(f);
	return ret;
}
