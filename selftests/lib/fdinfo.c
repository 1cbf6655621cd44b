// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * The one reader of /proc/self/fdinfo/<fd> for a /dev/qtimer file.  The
 * engine's show_fdinfo prints "key:\tvalue" lines after the VFS's own pos,
 * flags, mnt_id and ino; qtimer_fdinfo_test checks that format, the other
 * suites read the counts to pace or check a test.
 */
#include "helpers.h"

static const char *const qt_fdinfo_keys[QT_FI_NR] = {
	[QT_FI_TIMERS] = "timers",
	[QT_FI_PENDING] = "pending",
	[QT_FI_REALTIME] = "realtime",
	[QT_FI_MONOTONIC] = "monotonic",
	[QT_FI_BOOTTIME] = "boottime",
	[QT_FI_USER_TIMERS] = "user_timers",
	[QT_FI_MAX_PER_FD] = "max_timers_per_fd",
	[QT_FI_MAX_PER_USER] = "max_timers_per_user",
};

static bool qt_fdinfo_vfs_key(const char *key)
{
	return !strcmp(key, "pos") || !strcmp(key, "flags") ||
	       !strcmp(key, "mnt_id") || !strcmp(key, "ino");
}

int t_fdinfo_read(int fd, struct t_fdinfo *fi)
{
	char path[64], copy[sizeof(fi->text)], *line, *save, *tab;
	unsigned int i;
	ssize_t len;
	int pfd;

	memset(fi, 0, sizeof(*fi));
	for (i = 0; i < QT_FI_NR; i++)
		fi->v[i] = -1;
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	pfd = open(path, O_RDONLY | O_CLOEXEC);
	if (pfd < 0)
		return -errno;
	len = read(pfd, fi->text, sizeof(fi->text) - 1);
	close(pfd);
	if (len < 0)
		return -errno;
	fi->text[len] = '\0';

	memcpy(copy, fi->text, len + 1);
	for (line = strtok_r(copy, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		tab = strstr(line, ":\t");
		if (!tab) {
			fi->malformed++;
			continue;
		}
		*tab = '\0';
		for (i = 0; i < QT_FI_NR; i++) {
			if (!strcmp(line, qt_fdinfo_keys[i])) {
				fi->seen[i] = true;
				fi->v[i] = strtoll(tab + 2, NULL, 10);
				break;
			}
		}
		if (i == QT_FI_NR && !qt_fdinfo_vfs_key(line))
			fi->unknown++;
	}
	return 0;
}

int t_fdinfo(int fd, struct t_fdinfo *fi)
{
	int ret = t_fdinfo_read(fd, fi);
	int i;

	if (ret)
		return ret;
	for (i = QT_FI_TIMERS; i <= QT_FI_USER_TIMERS; i++)
		if (!fi->seen[i])
			return -ENODATA;
	return 0;
}

const char *t_fdinfo_key_name(enum t_fdinfo_key key)
{
	return key < QT_FI_NR ? qt_fdinfo_keys[key] : NULL;
}

long long t_fdinfo_get(int fd, enum t_fdinfo_key key)
{
	struct t_fdinfo fi;

	if (t_fdinfo_read(fd, &fi) || !fi.seen[key])
		return QT_FI_MISSING;
	return fi.v[key];
}

long long t_fdinfo_named(int fd, const char *name)
{
	size_t len = strlen(name);
	struct t_fdinfo fi;
	const char *line;

	if (t_fdinfo_read(fd, &fi))
		return QT_FI_MISSING;
	for (line = fi.text; *line; line += *line == '\n') {
		if (!strncmp(line, name, len) && !strncmp(line + len, ":\t", 2))
			return strtoll(line + len + 2, NULL, 10);
		line += strcspn(line, "\n");
	}
	return QT_FI_MISSING;
}

/*
 * The "pending" count only paces the test: if the key is not there, this
 * falls back to a generous sleep, and the test's own checks still decide.
 */
int t_wait_pending(int fd, unsigned int n, int timeout_ms)
{
	__s64 deadline = t_now(CLOCK_MONOTONIC) + timeout_ms * NSEC_PER_MSEC;

	do {
		long long pending = t_fdinfo_get(fd, QT_FI_PENDING);

		if (pending == QT_FI_MISSING) {
			t_sleep_ms(300);
			return 1;
		}
		if (pending >= n)
			return 1;
		t_sleep_ms(5);
	} while (t_now(CLOCK_MONOTONIC) < deadline);
	return 0;
}
