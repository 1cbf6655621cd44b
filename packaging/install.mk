# SPDX-License-Identifier: GPL-2.0
#
# `make install` for the whole tree.  The top Makefile includes this file;
# it also works on its own: make -f packaging/install.mk install [VAR=...].
#
#   install              everything below but install-dkms: one copy of
#                        the module, built for KDIR (a DKMS tree beside it
#                        would build and install a second for the same
#                        kernel)
#   install-module       kmod/qtimer.ko for KDIR into
#                        $(DESTDIR)/lib/modules/$(KVER)/extra (skipped, with a
#                        note, when KDIR is empty); depmod when DESTDIR is empty
#   install-headers      uapi/linux/*.h into $(INCLUDEDIR)/qtimer/linux
#   install-qtimerctl    qtimerctl into $(SBINDIR), its man page into $(MANDIR)
#   install-udev         packaging/60-qtimer.rules into $(UDEVRULESDIR)
#   install-dkms         the module source into $(DESTDIR)/usr/src/qtimer-<version>,
#                        for DKMS, instead of install-module (on its own, or
#                        as `make install KDIR= install-dkms`)
#   install-libtimerdev  libtimerdev's own `make install`, when it has one
#   uninstall            remove what install put in place
#   install-check        scripts/install-check.sh: all of it into a scratch
#                        DESTDIR, then check the layout
#
# Variables: DESTDIR, PREFIX (/usr/local), SBINDIR, INCLUDEDIR, MANDIR,
# UDEVRULESDIR (udev's own: `pkg-config --variable=udevdir udev`/rules.d,
# /lib/udev/rules.d without udev.pc), KDIR (a kernel build dir), KVER (its
# release, read from KDIR by default).  The version is dkms.conf's
# PACKAGE_VERSION, the one place it is said.
#
# Every name this file defines for itself starts with qt_inst_, so that it
# cannot collide with the including Makefile's; the targets are the ones
# listed above.

qt_inst_saved_goal := $(.DEFAULT_GOAL)
qt_inst_top := $(abspath $(dir $(lastword $(MAKEFILE_LIST)))/..)

PREFIX ?= /usr/local
SBINDIR ?= $(PREFIX)/sbin
INCLUDEDIR ?= $(PREFIX)/include
MANDIR ?= $(PREFIX)/share/man
# Where this system's udev reads packaged rules (/lib/udev on Debian 12,
# /usr/lib/udev after the /usr merge); udev.pc says, when installed
# (systemd-dev, or udev on older releases).
ifeq ($(origin UDEVRULESDIR),undefined)
UDEVRULESDIR := $(or $(shell pkg-config --variable=udevdir udev 2>/dev/null),/lib/udev)/rules.d
endif
INSTALL ?= install
KDIR ?=

# Read, never given: dkms.conf is the one place the release is said (a
# VERSION from the environment must not rename the DKMS tree).
qt_inst_version := $(shell sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' $(qt_inst_top)/dkms.conf)
qt_inst_dkms_dir = $(DESTDIR)/usr/src/qtimer-$(qt_inst_version)

# The release KDIR builds for, unless given: what `uname -r` will say.
qt_inst_kver = $(or $(KVER),$(shell sed -n 's/^\#define UTS_RELEASE "\(.*\)"/\1/p' \
	$(KDIR)/include/generated/utsrelease.h 2>/dev/null))

# The module is built from a private copy, as the test rig does, so that an
# install never clobbers (or picks up) another build's objects.
qt_inst_build = $(qt_inst_top)/build/install/$(qt_inst_kver)/src
qt_inst_sources := Kbuild dkms.conf kmod uapi
qt_inst_rsync := rsync -a --delete --exclude='*.o' --exclude='*.ko' \
	--exclude='*.mod' --exclude='*.mod.c' --exclude='.*.cmd' \
	--exclude='modules.order' --exclude='Module.symvers' --exclude='*.a' \
	--exclude='.tmp_*' --exclude='*.dwo' --exclude='.cache.mk'

# $(call qt_inst_has_target,TARGET,MAKEFILE)
qt_inst_has_target = $(shell grep -Eqs '^([^:=[:space:]]+[[:space:]]+)*$(1)[[:space:]]*::?([^=]|$$)' $(2) && echo y)

qt_inst_dirs := PREFIX="$(PREFIX)" DESTDIR="$(DESTDIR)"

.PHONY: install install-module install-headers install-qtimerctl install-udev \
	install-dkms install-libtimerdev uninstall install-check

install: install-module install-headers install-qtimerctl install-udev \
	install-libtimerdev

install-module:
ifeq ($(strip $(KDIR)),)
	@echo "install-module: no KDIR given: not installing qtimer.ko (use KDIR=/lib/modules/<release>/build)"
else
	@test -d "$(KDIR)" || { echo "install-module: no kernel build dir $(KDIR): install that" \
		"kernel's headers (Debian, Ubuntu: linux-headers-<release>), give KDIR=<build dir>," \
		"or KDIR= to install all but the module" >&2; exit 1; }
	@test -n "$(qt_inst_kver)" || { echo "install-module: cannot read the release of $(KDIR): give KVER=" >&2; exit 1; }
	@mkdir -p $(qt_inst_build)
	cd $(qt_inst_top) && $(qt_inst_rsync) $(qt_inst_sources) $(qt_inst_build)/
	$(MAKE) -C $(KDIR) M=$(qt_inst_build) modules
	$(INSTALL) -d $(DESTDIR)/lib/modules/$(qt_inst_kver)/extra
	$(INSTALL) -m 644 $(qt_inst_build)/kmod/qtimer.ko $(DESTDIR)/lib/modules/$(qt_inst_kver)/extra/
	$(if $(DESTDIR),,depmod -a $(qt_inst_kver))
endif

# In a directory of qtimer's own: $(INCLUDEDIR)/linux belongs to the
# distribution's kernel headers (linux-libc-dev).  Programs keep writing
# <linux/qtimer.h>, with -I$(INCLUDEDIR)/qtimer, which libtimerdev.pc's
# Cflags gives (liburing ships <liburing/io_uring.h> the same way).
qt_inst_uapi_dir = $(DESTDIR)$(INCLUDEDIR)/qtimer/linux

install-headers:
	$(INSTALL) -d $(qt_inst_uapi_dir)
	$(INSTALL) -m 644 $(qt_inst_top)/uapi/linux/qtimer.h \
		$(qt_inst_top)/uapi/linux/qtimer_netlink.h $(qt_inst_uapi_dir)/

install-qtimerctl:
	$(MAKE) -C $(qt_inst_top)/qtimerctl install $(qt_inst_dirs) \
		SBINDIR="$(SBINDIR)" MANDIR="$(MANDIR)"

install-udev:
	$(INSTALL) -d $(DESTDIR)$(UDEVRULESDIR)
	$(INSTALL) -m 644 $(qt_inst_top)/packaging/60-qtimer.rules $(DESTDIR)$(UDEVRULESDIR)/

install-dkms:
	@test -n "$(qt_inst_version)" || { echo "install-dkms: no PACKAGE_VERSION in dkms.conf" >&2; exit 1; }
	$(INSTALL) -d $(qt_inst_dkms_dir)
	cd $(qt_inst_top) && $(qt_inst_rsync) $(qt_inst_sources) $(qt_inst_dkms_dir)/

install-libtimerdev:
ifeq ($(call qt_inst_has_target,install,$(qt_inst_top)/libtimerdev/Makefile),y)
	$(MAKE) -C $(qt_inst_top)/libtimerdev install $(qt_inst_dirs) \
		INCLUDEDIR="$(INCLUDEDIR)" MANDIR="$(MANDIR)"
else
	@echo "install-libtimerdev: libtimerdev has no install target: skipped"
endif

uninstall:
	$(MAKE) -C $(qt_inst_top)/qtimerctl uninstall $(qt_inst_dirs) \
		SBINDIR="$(SBINDIR)" MANDIR="$(MANDIR)"
	rm -f $(qt_inst_uapi_dir)/qtimer_netlink.h \
		$(DESTDIR)$(UDEVRULESDIR)/60-qtimer.rules
	rm -rf $(qt_inst_dkms_dir)
ifneq ($(strip $(KDIR)),)
	rm -f $(DESTDIR)/lib/modules/$(qt_inst_kver)/extra/qtimer.ko
endif
ifeq ($(call qt_inst_has_target,uninstall,$(qt_inst_top)/libtimerdev/Makefile),y)
	$(MAKE) -C $(qt_inst_top)/libtimerdev uninstall $(qt_inst_dirs) \
		INCLUDEDIR="$(INCLUDEDIR)" MANDIR="$(MANDIR)"
endif
	rm -f $(qt_inst_uapi_dir)/qtimer.h
	-rmdir -p --ignore-fail-on-non-empty $(qt_inst_uapi_dir) 2>/dev/null

install-check:
	$(qt_inst_top)/scripts/install-check.sh

# Including this file must not change the includer's default goal.
.DEFAULT_GOAL := $(qt_inst_saved_goal)
