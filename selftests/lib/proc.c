// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * Clocks and processes: reading and setting the clocks, sleeping without
 * being cut short by signals, children (waited for, spawned to see whether
 * the machine still responds, forked into a time namespace), and the
 * tunables with which scripts/check-long.sh lengthens the stress loops.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <grp.h>
#include <limits.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "helpers.h"

__s64 t_now(int clockid)
{
	struct timespec ts;

	clock_gettime(clockid, &ts);
	return ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

void t_sleep_ns(__s64 ns)
{
	struct timespec ts = {
		.tv_sec = ns / NSEC_PER_SEC,
		.tv_nsec = ns % NSEC_PER_SEC,
	};

	while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) == EINTR)
		;
}

void t_sleep_ms(int ms)
{
	t_sleep_ns((__s64)ms * NSEC_PER_MSEC);
}

void t_busy_wait_ns(__s64 ns)
{
	__s64 until = t_now(CLOCK_MONOTONIC) + ns;

	while (t_now(CLOCK_MONOTONIC) < until)
		;
}

int t_set_realtime(__s64 ns)
{
	struct timespec ts = {
		.tv_sec = ns / NSEC_PER_SEC,
		.tv_nsec = ns % NSEC_PER_SEC,
	};

	return clock_settime(CLOCK_REALTIME, &ts) ? -errno : 0;
}

int t_restore_realtime(__s64 rt0, __s64 mono0)
{
	return t_set_realtime(rt0 + t_now(CLOCK_MONOTONIC) - mono0);
}

int t_wait_child(pid_t pid)
{
	int status;

	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Everything @fd (a memfd the child wrote) holds, as a string; closes @fd. */
static void qt_run_slurp(int fd, char *buf, size_t len)
{
	ssize_t n = pread(fd, buf, len - 1, 0);

	buf[n > 0 ? n : 0] = '\0';
	close(fd);
}

/*
 * memfds, not pipes: the child's output never has to be drained while it
 * runs, so a chatty program cannot block on a full pipe.
 */
int t_run(struct t_run *r, uid_t uid, int unshare_flags, char *const argv[])
{
	int out, err, ret = 0;
	pid_t pid;

	r->status = -1;
	r->out[0] = r->err[0] = '\0';
	out = memfd_create("stdout", 0);
	err = memfd_create("stderr", 0);
	if (out < 0 || err < 0) {
		ret = -errno;
		goto out;
	}
	pid = fork();
	if (pid < 0) {
		ret = -errno;
		goto out;
	}
	if (!pid) {
		dup2(out, STDOUT_FILENO);
		dup2(err, STDERR_FILENO);
		if (unshare_flags && unshare(unshare_flags))
			_exit(126);
		if (uid && (setgroups(0, NULL) || setgid(uid) || setuid(uid)))
			_exit(126);
		execvp(argv[0], argv);
		_exit(127);
	}
	r->status = t_wait_child(pid);
	qt_run_slurp(out, r->out, sizeof(r->out));
	qt_run_slurp(err, r->err, sizeof(r->err));
	return 0;
out:
	if (out >= 0)
		close(out);
	if (err >= 0)
		close(err);
	return ret;
}

char *t_beside(const char *rel)
{
	static const char *const up[] = { "", "../" };
	char self[PATH_MAX], *slash, *path;
	ssize_t len;
	size_t i;

	len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (len <= 0)
		return NULL;
	self[len] = '\0';
	slash = strrchr(self, '/');
	if (!slash)
		return NULL;
	*slash = '\0';
	for (i = 0; i < sizeof(up) / sizeof(up[0]); i++) {
		if (asprintf(&path, "%s/%s%s", self, up[i], rel) < 0)
			return NULL;
		if (!access(path, F_OK))
			return path;
		free(path);
	}
	return NULL;
}

const char *t_program(const char *name)
{
	char rel[256], *path;

	snprintf(rel, sizeof(rel), "bin/%s", name);
	path = t_beside(rel);
	return path ? path : name;
}

/*
 * A machine whose CPUs are held by timer work in interrupt context cannot
 * do this quickly, which is how the hardening suites tell that it still
 * responds while the module is under load.
 */
__s64 t_spawn_true_ns(void)
{
	static char *const argv[] = { "/bin/true", NULL };
	__s64 start = t_now(CLOCK_MONOTONIC);
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
	return t_now(CLOCK_MONOTONIC) - start;
}

/*
 * The offsets can only be written before the first process enters the
 * namespace, hence unshare(), write, then fork().
 */
int t_fork_into_timens(const char *offs)
{
	ssize_t len = strlen(offs);
	int fd, ret;
	pid_t pid;

	if (unshare(CLONE_NEWTIME))
		return errno == EINVAL || errno == EPERM || errno == ENOSYS ?
			QT_NO_TIMENS : -errno;
	fd = open("/proc/self/timens_offsets", O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = write(fd, offs, len) == len ? 0 : -errno;
	close(fd);
	if (ret)
		return ret;
	pid = fork();
	return pid < 0 ? -errno : pid;
}

/*
 * The VM's init passes suites a fixed environment, so scripts/check-long.sh
 * hands QT_STRESS_SECONDS and friends over on the kernel command line
 * (run.sh --cmdline).
 */
long t_tunable(const char *name, long def)
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

int t_stress_seconds(int def)
{
	long v = t_tunable("QT_STRESS_SECONDS", def);

	return v < 1 ? 1 : v > 3600 ? 3600 : (int)v;
}

const char *t_stats_json(void)
{
	static char buf[1 << 16];
	char cmd[PATH_MAX + 64];
	size_t len;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "'%s' stats --json 2>/dev/null", t_program("qtimerctl"));
	f = popen(cmd, "r");
	if (!f)
		return NULL;
	len = fread(buf, 1, sizeof(buf) - 1, f);
	buf[len] = 0;
	if (pclose(f))
		return NULL;
	return buf;
}

int t_mappings_of(const char *path, bool at_zero)
{
	unsigned long long off;
	size_t len = strlen(path);
	char line[512], *end;
	int nr = 0;
	FILE *f = fopen("/proc/self/maps", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		end = strchr(line, '\n');
		if (!end || (size_t)(end - line) < len ||
		    strncmp(end - len, path, len) ||
		    sscanf(line, "%*s %*s %llx", &off) != 1)
			continue;
		nr += at_zero ? !off : !!off;
	}
	fclose(f);
	return nr;
}
