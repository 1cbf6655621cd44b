// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2025 The qtimer authors.
 *
 * How the test VM's init (init.c) runs programs: the suites through the
 * kernel's kselftest runner, /kselftest/run_kselftest.sh, or the one
 * program qtimer.run= names, each bounded in time, in a process group of
 * its own, its output relayed to the host (init_report.c), and whatever
 * it left behind killed and reaped before the module is unloaded; and
 * helpers that are not under test, quietly.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "init.h"

#define KSFT_ROOT	"/kselftest"
#define KSFT_RUNNER	KSFT_ROOT "/run_kselftest.sh"
#define KSFT_LIST	KSFT_ROOT "/kselftest-list.txt"

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

/* Run a helper that is not under test (busybox --install), quietly. */
void run_quiet(char *const argv[])
{
	pid_t pid = fork();

	if (pid == 0) {
		execve(argv[0], argv, guest_env);
		_exit(127);
	}
	if (pid > 0)
		waitpid(pid, NULL, 0);
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

static bool suite_selected(const char *globs, const char *name)
{
	char *copy = strdup(globs), *glob, *save;
	bool found = false;

	if (!copy)
		return false;
	for (glob = strtok_r(copy, ",", &save); glob && !found;
	     glob = strtok_r(NULL, ",", &save))
		found = !fnmatch(glob, name, 0);
	free(copy);
	return found;
}

static int compare_tests(const void *a, const void *b)
{
	return strcmp(strchr(*(char *const *)a, ':'), strchr(*(char *const *)b, ':'));
}

/*
 * Run the selected suites through the kernel's kselftest runner, as a
 * kernel CI would run the installed tree: "run_kselftest.sh -t
 * collection:suite ..." for each entry of its list whose suite a glob of
 * @globs (qtimer.suites) names, in lexical order of the suites, each
 * bounded by @timeout seconds (qtimer.timeout).  The runner bounds
 * each suite by its collection's settings; run_program() bounds the time
 * between its result lines a little above that, should the runner itself
 * hang (a suite's leftover holding its pipe).
 */
bool run_suites(const char *globs, unsigned int timeout)
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
		if (colon && colon[1] && suite_selected(globs, colon + 1))
			tests[nr++] = strdup(line);
	}
	if (list)
		fclose(list);
	if (!nr) {
		record("no suite matches \"%s\"", globs);
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
	ok = run_program("run_kselftest.sh", argv, timeout + 30, true);
	for (i = 0; i < nr; i++)
		free(tests[i]);
	return ok;
}

/*
 * Run qtimer.run's program for at most @timeout seconds: @cmdline split on
 * spaces, then each word's %XX escapes decoded.
 */
bool run_command(char *cmdline, unsigned int timeout)
{
	char *argv[MAX_ARGS + 1], *arg, *save;
	int argc = 0;

	for (arg = strtok_r(cmdline, " ", &save); arg && argc < MAX_ARGS;
	     arg = strtok_r(NULL, " ", &save))
		argv[argc++] = percent_decode(arg);
	argv[argc] = NULL;
	if (!argc) {
		record("qtimer.run= is empty");
		return false;
	}
	return run_program(argv[0], argv, timeout, false);
}
