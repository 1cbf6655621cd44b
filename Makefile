# SPDX-License-Identifier: GPL-2.0
#
# qtimer: build, test and demo entry points.
#
#   make [KDIR=dir]     what a machine running qtimer needs: `make module`
#                       and `make user`; stops with a message if KDIR is missing
#   make module         kmod/qtimer.ko against KDIR (default: the running
#                       kernel's build dir, /lib/modules/$(uname -r)/build,
#                       from its linux-headers package; never a test
#                       kernel's unless asked for by name, e.g.
#                       KDIR=$(scripts/vm/kernel.sh stock-6.1 kdir))
#   make user           libtimerdev and qtimerctl (needs libmnl-dev) into
#                       build/user/; the test programs are `make guest-user`'s
#   make check          the whole test run (scripts/check.sh); quick loop:
#                       KERNELS=stock-6.1 SELFTEST=0 make check
#   make demo           boot a test kernel in QEMU and run the demo
#   make bench [KERNEL=stock-6.1] [BENCH_ARGS=--quick]
#                       qtimer against timerfd, POSIX timers, io_uring and
#                       libuv in one VM; table, CSV and plot in build/bench/
#   make check-long     the hardening suites for longer, on debug-6.1,
#                       rt-6.12 and kcsan-6.1
#   make vm KERNEL=stock-6.1 [SUITES=glob] [MODPARAMS="a=1"] [RUN="prog args"]
#                       one VM run (scripts/vm/run.sh)
#   make clean
#   make help           every target, one line each
#
# Guest-content contract
# ----------------------
# `make guest KERNEL=<name> OUT=<absolute dir>` builds everything a test VM
# gets, and scripts/vm/run.sh packs exactly that into the initramfs:
#
#   $(OUT)/qtimer.ko    the module for KERNEL (a name from scripts/vm/kernel.sh,
#                       or give KDIR=), built from a private copy of Kbuild,
#                       dkms.conf (Kbuild reads the version there), kmod/
#                       and uapi/ in build/vm/<KERNEL>/src so that
#                       builds for different kernels never clobber each other
#   $(OUT)/qtimer_rig.ko
#                       the rig's self-test module for KERNEL, from
#                       scripts/vm/rig-module built in a private copy in
#                       build/vm/<KERNEL>/rig-module: loading it WARNs and
#                       prints a forged "hrtimer: interrupt took" line; the
#                       init loads it only for run.sh --rig-warn.  Test
#                       only: make, make install and DKMS never build it
#   $(OUT)/selftests/*  test suites: executables that print kselftest TAP,
#                       end with the kselftest line
#                       "# Totals: pass:P fail:F xfail:X xpass:Y skip:S error:E"
#                       and exit non-zero on failure
#   $(OUT)/kselftest/  the same suites as a kselftest install tree (see
#                       `make -C selftests install`): the kernel's
#                       run_kselftest.sh runs them in the VM, those
#                       selftests/suites.manifest lists for the kernel, in
#                       lexical order, with the module loaded
#   $(OUT)/bin/*        other programs (tools, examples, benchmarks, the
#                       demo); /bin in the guest, which is on PATH
#   $(OUT)/lib/*        shared libraries built here; /usr/local/lib in the
#                       guest, which is on LD_LIBRARY_PATH; and
#                       $(OUT)/lib/ynl, the kernel's YNL CLI with a python3
#                       (selftests/ynl/pack-ynl.sh)
#
# The user-space part comes from `$(MAKE) -C <dir> guest OUT=$(OUT)` in every
# top-level directory whose Makefile has a `guest:` rule (kmod/ excepted),
# and in scripts/demo (`make guest-user OUT=...` builds just this part,
# `make guest-module` just qtimer.ko and `make guest-rig-module` just
# qtimer_rig.ko).  A guest rule writes only below
# $(OUT) (payloads for several kernels may be built at once), builds nothing
# that depends on the kernel (make check builds the user-space part once
# and reuses it for every kernel) and may link dynamically: the initramfs
# packer copies each ELF's shared libraries and loader.

TOP := $(patsubst %/,%,$(dir $(abspath $(lastword $(MAKEFILE_LIST)))))

# A module loads only into the kernel it was built for, so the default is
# the running kernel's build dir and nothing else: quietly building for a
# test kernel instead gave a qtimer.ko that insmod refuses.  No script
# relies on a default: they all pass KDIR= (or KERNEL= to make guest).
ifeq ($(origin KDIR),undefined)
KDIR := /lib/modules/$(shell uname -r)/build
kdir_hint = the running kernel's headers are not installed: on Debian or \
	Ubuntu, apt-get install linux-headers-$(shell uname -r); or give \
	KDIR=<a kernel build dir>
else
kdir_hint = KDIR=$(KDIR) is not a kernel build dir
endif

include $(TOP)/scripts/vm/guest.mk
# make install [DESTDIR=] [PREFIX=/usr/local] [KDIR=]: module, headers,
# qtimerctl, libtimerdev, man pages and the udev rule; install-dkms the
# module source for DKMS instead of the module.
include $(TOP)/packaging/install.mk

component_dirs := $(filter-out kmod build,$(patsubst %/Makefile,%,$(wildcard */Makefile))) scripts/demo
guest_dirs := $(foreach d,$(component_dirs),$(if $(call has_target,guest,$(d)/Makefile),$(d)))
clean_dirs := $(foreach d,$(component_dirs),$(if $(call has_target,clean,$(d)/Makefile),$(d)))

# Build products rsync must neither copy into a build copy nor delete there.
build_products := --exclude='*.o' --exclude='*.ko' --exclude='*.mod' \
	--exclude='*.mod.c' --exclude='.*.cmd' --exclude='modules.order' \
	--exclude='Module.symvers' --exclude='*.a' --exclude='.tmp_*'

.PHONY: all module user guest guest-module guest-rig-module guest-user check check-long bench demo vm clean help

all: module user

module:
	@test -f "$(KDIR)/Makefile" || { echo "make module: no $(KDIR)/Makefile:" \
		"$(kdir_hint)" >&2; exit 1; }
	$(MAKE) -C $(KDIR) M=$(TOP) modules

# Only what a machine running qtimer uses; the suites, benchmarks and
# examples need liburing, libuv and the kernel source's kselftest headers,
# which scripts/setup.sh installs for make check.  qtimerctl's Makefile
# has no target for the tool alone, so its file is the goal.
user_out := $(TOP)/build/user
user:
	$(MAKE) -C $(TOP)/libtimerdev lib O=$(user_out)/libtimerdev
	$(MAKE) -C $(TOP)/qtimerctl O=$(user_out)/qtimerctl $(user_out)/qtimerctl/qtimerctl

guest: guest-module guest-rig-module guest-user

# guest_check, and KSFT_DIR for the components: said once, there.
include $(TOP)/scripts/component.mk

guest_name = $(or $(KERNEL),$(if $(filter command line,$(origin KDIR)),$(notdir $(patsubst %/build,%,$(KDIR))),$(error make guest: KERNEL=<name> is required)))
# Resolved on first use only (resolving a debug kernel runs its build script).
guest_kdir = $(eval guest_kdir := $(if $(filter command line,$(origin KDIR)),$(KDIR),$(shell $(TOP)/scripts/vm/kernel.sh $(KERNEL) kdir)))$(guest_kdir)
guest_src = $(TOP)/build/vm/$(guest_name)/src
guest_rig_src = $(TOP)/build/vm/$(guest_name)/rig-module

guest-module:
	$(guest_check)
	@: building for $(guest_name)
	@test -d '$(guest_kdir)' || { echo "make guest: no build dir for kernel '$(guest_name)'" >&2; exit 1; }
	@mkdir -p $(guest_src) $(OUT)
	rsync -a --delete $(build_products) $(TOP)/Kbuild $(TOP)/dkms.conf $(TOP)/kmod $(wildcard $(TOP)/uapi) $(guest_src)/
	$(MAKE) -C $(guest_kdir) M=$(guest_src) modules
	cp $(guest_src)/kmod/qtimer.ko $(OUT)/qtimer.ko

# The rig's self-test module: test only, so it lives in scripts/vm and is
# built here alone, never by `module`, install.mk or dkms.conf.
guest-rig-module:
	$(guest_check)
	@: building the rig module for $(guest_name)
	@test -d '$(guest_kdir)' || { echo "make guest: no build dir for kernel '$(guest_name)'" >&2; exit 1; }
	@mkdir -p $(guest_rig_src) $(OUT)
	rsync -a --delete $(build_products) $(TOP)/scripts/vm/rig-module/ $(guest_rig_src)/
	$(MAKE) -C $(guest_kdir) M=$(guest_rig_src) modules
	cp $(guest_rig_src)/qtimer_rig.ko $(OUT)/qtimer_rig.ko

guest-user:
	$(guest_check)
	@mkdir -p $(OUT)/selftests $(OUT)/bin $(OUT)/lib
	@set -e; for d in $(guest_dirs); do $(MAKE) -C $(TOP)/$$d guest OUT=$(OUT); done
	$(MAKE) -C $(TOP)/selftests install-tree PAYLOAD=$(OUT) INSTALL_PATH=$(OUT)/kselftest

check:
	$(TOP)/scripts/check.sh

demo:
	$(TOP)/scripts/demo.sh

# Benchmarks print figures and never fail on speed: bench/bench.sh.
bench:
	$(TOP)/bench/bench.sh $(KERNEL) $(BENCH_ARGS)

# The hardening suites at length on debug-6.1, rt-6.12 and kcsan-6.1.
check-long:
	$(TOP)/scripts/check-long.sh

vm:
	$(TOP)/scripts/vm/run.sh $(or $(KERNEL),stock-6.1) \
		$(if $(SUITES),--suites '$(SUITES)') \
		$(if $(MODPARAMS),--modparams '$(MODPARAMS)') \
		$(if $(RUN),--run '$(RUN)')

# One line per target, in the words of the comments above and of
# packaging/install.mk; keep it in step when a target comes or goes.
help:
	@echo 'Build (for the running kernel, or KDIR=<kernel build dir>):'
	@echo '  make                  the module and the user-space part (module + user)'
	@echo '  make module           kmod/qtimer.ko'
	@echo '  make user             libtimerdev and qtimerctl into build/user/ (needs libmnl-dev)'
	@echo 'Install (DESTDIR=, PREFIX=/usr/local, KDIR=):'
	@echo '  make install          all of the install-* targets below but install-dkms'
	@echo '  make install-module   qtimer.ko into /lib/modules/<release>/extra (depmod without DESTDIR)'
	@echo '  make install-headers  uapi/linux/*.h into $$(PREFIX)/include/qtimer/linux'
	@echo '  make install-qtimerctl  qtimerctl and its man page'
	@echo '  make install-udev     packaging/60-qtimer.rules into udev'"'"'s rules.d (pkg-config udev)'
	@echo '  make install-dkms     the module source into /usr/src/qtimer-<version> for DKMS (instead of install-module)'
	@echo '  make install-libtimerdev  libtimerdev, its header, .pc file and man pages'
	@echo '  make uninstall        remove what install put in place'
	@echo '  make install-check    install into a scratch DESTDIR and check the layout'
	@echo 'Test in QEMU (never loads anything into this machine'"'"'s kernel):'
	@echo '  make check            the whole test run, as root; quick: KERNELS=stock-6.1 SELFTEST=0 make check'
	@echo '  make check-long       as root, the hardening suites for longer on debug-6.1, rt-6.12, kcsan-6.1'
	@echo '  make demo             as root, boot a test kernel (KERNEL=stock-6.1) and run the demo'
	@echo '  make bench            benchmarks in one VM (KERNEL=, BENCH_ARGS=--quick)'
	@echo '  make vm               one VM run: KERNEL=, SUITES=glob, MODPARAMS=, RUN='
	@echo 'Test-rig building blocks (KERNEL=<name> OUT=<absolute dir>):'
	@echo '  make guest            everything a test VM gets (the three below)'
	@echo '  make guest-module     qtimer.ko for KERNEL into OUT'
	@echo '  make guest-rig-module the rig self-test module qtimer_rig.ko (test only)'
	@echo '  make guest-user       the suites, programs and libraries into OUT'
	@echo 'Other:'
	@echo '  make clean            remove build products (build/user, build/vm, build/install)'
	@echo '  make help             this list'
	@echo 'Documentation/testing.rst and Documentation/admin-guide.rst say more.'

clean:
	@if [ -d "$(KDIR)" ]; then $(MAKE) -C $(KDIR) M=$(TOP) clean; fi
	rm -f kmod/*.o kmod/*.ko kmod/*.mod kmod/*.mod.c kmod/.*.cmd kmod/modules.order \
		modules.order Module.symvers .*.cmd
	@set -e; for d in $(clean_dirs); do $(MAKE) -C $(TOP)/$$d clean; done
	rm -rf build/user build/vm build/install
