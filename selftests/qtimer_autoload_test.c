// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * The module loads itself when first needed, as /dev/fuse and WireGuard's
 * netlink family do: depmod lists its "devname:qtimer" alias in
 * modules.devname, from which kmod static-nodes (systemd-tmpfiles at
 * boot) makes /dev/qtimer before anything loads it, and the first open()
 * of that node has the kernel run modprobe for char-major-10-<minor>; a
 * request for the "qtimer" generic netlink family by name loads it too.
 *
 * Each test takes the module out (delete_module()), does what a user
 * would, and checks that the module came back, with its version.  They
 * need the module installed under /lib/modules/$(uname -r) with depmod's
 * files and kmod's modprobe at /sbin/modprobe (the test VM has both:
 * scripts/vm/run.sh); they skip when the module cannot be taken out (built
 * in, or in use) or was loaded with parameters a modprobe would not give.
 * The module is left loaded, for the suites that follow.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "helpers.h"

#define MODULE_DIR	"/sys/module/qtimer"

static bool module_loaded(void)
{
	return !access(MODULE_DIR "/initstate", F_OK);
}

/*
 * Take the module out.  Returns NULL, or why the test cannot go on.  A
 * module loaded with parameters (run.sh --modparams) is not taken out:
 * modprobe would bring it back without them.
 */
static const char *unload(void)
{
	static char why[128];
	char cmdline[4096] = "";
	FILE *f = fopen("/proc/cmdline", "re");

	if (f) {
		if (!fgets(cmdline, sizeof(cmdline), f))
			cmdline[0] = '\0';
		fclose(f);
	}
	/* run.sh puts it there only with parameters. */
	if (strstr(cmdline, "qtimer.modparams="))
		return "the module was loaded with parameters";
	if (access("/sbin/modprobe", X_OK))
		return "no /sbin/modprobe";
	if (!module_loaded())
		return NULL;
	if (access(MODULE_DIR "/refcnt", F_OK))
		return "qtimer is built in";
	if (syscall(SYS_delete_module, "qtimer", O_NONBLOCK)) {
		snprintf(why, sizeof(why), "cannot take the module out: %s",
			 strerror(errno));
		return why;
	}
	return NULL;
}

/*
 * The device node modules.devname names ("qtimer qtimer c10:243"), as
 * kmod static-nodes reads it: 0 and its number in *@dev, or -ENOENT.
 */
static int devname_entry(dev_t *dev)
{
	char path[256], line[256], name[64], node[64];
	unsigned int major, minor;
	struct utsname u;
	int ret = -ENOENT;
	FILE *f;

	if (uname(&u))
		return -errno;
	snprintf(path, sizeof(path), "/lib/modules/%s/modules.devname", u.release);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%63s %63s c%u:%u", name, node, &major, &minor) == 4 &&
		    !strcmp(name, "qtimer") && !strcmp(node, "qtimer")) {
			*dev = makedev(major, minor);
			ret = 0;
			break;
		}
	}
	fclose(f);
	return ret;
}

/* The version the module reports in sysfs, as modinfo says it. */
static void expect_version(struct __test_metadata *_metadata)
{
	char version[64] = "";
	FILE *f = fopen(MODULE_DIR "/version", "re");

	ASSERT_NE(NULL, f) TH_LOG("no %s/version: no MODULE_VERSION", MODULE_DIR);
	ASSERT_NE(NULL, fgets(version, sizeof(version), f));
	fclose(f);
	version[strcspn(version, "\n")] = '\0';
	EXPECT_STREQ(QT_RELEASE, version);
}

/* Whatever became of a test, the suites after this one need the module. */
static void reload(void)
{
	pid_t pid;

	if (module_loaded())
		return;
	pid = fork();
	if (!pid) {
		execl("/sbin/modprobe", "modprobe", "qtimer", (char *)NULL);
		_exit(127);
	}
	if (pid > 0)
		waitpid(pid, NULL, 0);
}

FIXTURE(autoload)
{
};

FIXTURE_SETUP(autoload)
{
}

FIXTURE_TEARDOWN(autoload)
{
	reload();
}

TEST_F(autoload, first_open_of_the_static_node_loads_it)
{
	struct qtimer_version v;
	const char *why;
	struct stat st;
	dev_t dev = 0;
	int fd;

	ASSERT_EQ(0, devname_entry(&dev))
		TH_LOG("modules.devname has no line for qtimer: no devname: alias");
	EXPECT_EQ(10, major(dev));
	why = unload();
	if (why)
		SKIP(return, "%s", why);
	ASSERT_FALSE(module_loaded());
	/* What static-nodes makes: devtmpfs took the node away with the module. */
	if (!stat("/dev/qtimer", &st))
		ASSERT_EQ(0, unlink("/dev/qtimer"));
	ASSERT_EQ(0, mknod("/dev/qtimer", S_IFCHR | 0666, dev));
	/*
	 * Past the umask, as udev's rule makes it: the node outlives this
	 * test (devtmpfs keeps a node it finds), and other suites open it
	 * as an unprivileged user.
	 */
	ASSERT_EQ(0, chmod("/dev/qtimer", 0666));

	fd = open("/dev/qtimer", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd) TH_LOG("open of the node, module not loaded: %s",
				strerror(errno));
	EXPECT_TRUE(module_loaded());
	/* The file is the module's. */
	ASSERT_EQ(0, ioctl(fd, QTIMER_IOC_VERSION, &v)) TH_LOG("%s", strerror(errno));
	EXPECT_EQ(QTIMER_API_VERSION, v.api_version);
	close(fd);
	expect_version(_metadata);
}

TEST_F(autoload, qtimerctl_loads_it_by_its_netlink_family)
{
	/* Bundled with the suites: a kselftest tree is run where only it is. */
	char *qtimerctl = t_beside("bin/qtimerctl");
	const char *why;
	int status;
	pid_t pid;

	ASSERT_NE(NULL, qtimerctl) TH_LOG("no bin/qtimerctl beside the suite");
	why = unload();
	if (why)
		SKIP(return, "%s", why);
	ASSERT_FALSE(module_loaded());

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		int null = open("/dev/null", O_WRONLY);

		if (null >= 0)
			dup2(null, STDOUT_FILENO);
		execl(qtimerctl, "qtimerctl", "config", "get", (char *)NULL);
		_exit(127);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status)) TH_LOG("qtimerctl config get, module not loaded");
	EXPECT_TRUE(module_loaded());
	expect_version(_metadata);
}

TEST_HARNESS_MAIN
