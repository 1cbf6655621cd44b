#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Install the whole tree into a scratch DESTDIR and check the layout: the
# module, qtimerctl and its man page, the uapi headers, the udev rule, the
# DKMS source tree (and that DKMS's MAKE line builds it), libtimerdev, that
# nothing lands elsewhere (the test rig's self-test module included), and
# that uninstall removes it all.  Prints
# kselftest-style TAP ending with a "# Totals:" line; exits non-zero on a
# failure.  Never touches the live system.
#
#   scripts/install-check.sh            KDIR: $KDIR, else the stock-6.1 test
#                                       kernel's build dir (module and DKMS
#                                       checks skip when there is none)
#   KEEP=1 scripts/install-check.sh     keep the scratch directory

set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=lib/tap.sh
. "$top/scripts/lib/tap.sh"
tap_scratch install-check
root=$scratch/root
prefix=/usr
log=$scratch/log


kdir=${KDIR:-$("$top/scripts/vm/kernel.sh" stock-6.1 kdir 2>/dev/null || true)}
[ -n "$kdir" ] && [ -d "$kdir" ] || kdir=''
kver=''
if [ -n "$kdir" ]; then
	kver=$(sed -n 's/^#define UTS_RELEASE "\(.*\)"/\1/p' "$kdir/include/generated/utsrelease.h" 2>/dev/null)
fi
version=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$top/dkms.conf")
# Where install.mk puts the udev rule: udev's own directory, as udev.pc says.
udevdir=$(pkg-config --variable=udevdir udev 2>/dev/null)
udevdir=${udevdir:-/lib/udev}

tap_plan 16
echo "# DESTDIR=$root PREFIX=$prefix KDIR=${kdir:-none} KVER=${kver:-none} VERSION=$version"

# The top Makefile gets `install` by including packaging/install.mk; until
# it does, use that file directly.
if grep -Eq '^include .*packaging/install\.mk' "$top/Makefile" 2>/dev/null; then
	make_install=(make -C "$top" --no-print-directory)
else
	make_install=(make -C "$top" --no-print-directory -f packaging/install.mk)
fi

# 1: the install itself.
if "${make_install[@]}" install DESTDIR="$root" PREFIX="$prefix" KDIR="$kdir" >"$log" 2>&1; then
	tap_ok "make install into a scratch DESTDIR"
else
	tap_not_ok "make install into a scratch DESTDIR" "$(tail -n 20 "$log")"
fi

# 1b: one copy of the module: the DKMS tree only when asked for.
tap_run "make install leaves the DKMS source out (install-dkms installs it)" \
	bash -c "[ ! -e '$root/usr/src' ]"

# 2: the module, built for KDIR's release.
ko=$root/lib/modules/$kver/extra/qtimer.ko
if [ -z "$kdir" ]; then
	tap_skip "module in lib/modules/<release>/extra" "no kernel build dir"
elif [ ! -f "$ko" ]; then
	tap_not_ok "module in lib/modules/$kver/extra" "missing: $ko"
else
	vermagic=$(modinfo -F vermagic "$ko" 2>&1)
	name=$(modinfo -F name "$ko" 2>&1)
	parms=$(modinfo -F parm "$ko" 2>&1)
	if [ "${vermagic%% *}" = "$kver" ] && [ "$name" = qtimer ] &&
		grep -q '^max_timers_per_fd:' <<<"$parms" && grep -q '^max_timers_per_user:' <<<"$parms"; then
		tap_ok "module in lib/modules/$kver/extra (vermagic $kver, both caps as parameters)"
	else
		tap_not_ok "module in lib/modules/$kver/extra" "vermagic: $vermagic" "name: $name" "parm: $parms"
	fi
fi

# 3: qtimerctl, executable, runs, and finds its libraries.
tool=$root$prefix/sbin/qtimerctl
tap_run "qtimerctl in $prefix/sbin runs and says version $version" \
	bash -c "[ -x '$tool' ] && '$tool' --version | grep -q '^qtimerctl $version ' && ! ldd '$tool' | grep -q 'not found'"

# 4: its man page, lint-clean.
man8=$root$prefix/share/man/man8/qtimerctl.8
tap_run "qtimerctl.8 in $prefix/share/man/man8, groff-clean, says qtimer $version" \
	bash -c "[ -f '$man8' ] && out=\$(LC_ALL=C.UTF-8 groff -man -Tutf8 -ww -z '$man8' 2>&1) && [ -z \"\$out\" ] &&
		 grep -q '^\.TH QTIMERCTL 8 [^ ]* \"qtimer $version\" ' '$man8'"

# 5: the uapi headers, identical to the tree's, in qtimer's own directory:
# $prefix/include/linux is the distribution's (linux-libc-dev).
tap_run "uapi headers in $prefix/include/qtimer/linux, none in $prefix/include/linux" \
	bash -c "cmp '$top/uapi/linux/qtimer.h' '$root$prefix/include/qtimer/linux/qtimer.h' &&
		 cmp '$top/uapi/linux/qtimer_netlink.h' '$root$prefix/include/qtimer/linux/qtimer_netlink.h' &&
		 [ ! -e '$root$prefix/include/linux' ]"

# 6: ... and they stand alone, in strict C, from the installed location.
cat >"$scratch/headers.c" <<'EOF'
#include <linux/qtimer.h>
#include <linux/qtimer_netlink.h>
_Static_assert(sizeof(struct qtimer_op) == 64, "op size");
_Static_assert(sizeof(struct qtimer_record) == 32, "record size");
_Static_assert(QTIMER_CMD_MAX == QTIMER_CMD_SET_CONFIG, "commands");
int main(void) { return 0; }
EOF
tap_run "installed headers compile alone (-std=c11 -pedantic -Werror)" \
	cc -std=c11 -pedantic -Wall -Wextra -Werror -I"$root$prefix/include/qtimer" \
		-o "$scratch/headers" "$scratch/headers.c"

# 7: the udev rule.
rule=$root$udevdir/rules.d/60-qtimer.rules
tap_run "udev rule in $udevdir/rules.d gives /dev/qtimer mode 0666" \
	bash -c "grep -Eq '^KERNEL==\"qtimer\", *SUBSYSTEM==\"misc\", *MODE=\"0666\"\$' '$rule' &&
		 ! grep -Ev '^(#.*)?\$' '$rule' | grep -Ev '^([A-Z]+(==|=)\"[^\"]*\")(, *[A-Z]+(==|=)\"[^\"]*\")*\$'"

# 8: the DKMS source tree, by its own target: every source, no build
# products, its version.
"${make_install[@]}" install-dkms DESTDIR="$root" >>"$log" 2>&1
dkms_dir=$root/usr/src/qtimer-$version
dkms_tree_ok() {
	local f missing=()
	[ -n "$version" ] || { echo "no PACKAGE_VERSION in dkms.conf"; return 1; }
	for f in dkms.conf Kbuild kmod/Kbuild $(cd "$top" && ls kmod/*.[ch] uapi/linux/*.h); do
		# An in-tree `make module` leaves kmod/*.mod.c, a build product
		# the install rightly leaves out.
		case $f in *.mod.c) continue ;; esac
		[ -f "$dkms_dir/$f" ] || missing+=("$f")
	done
	[ ${#missing[@]} = 0 ] || { echo "missing: ${missing[*]}"; return 1; }
	f=$(find "$dkms_dir" \( -name '*.o' -o -name '*.ko' -o -name '.*.cmd' -o -name '*.mod*' \) -print -quit)
	[ -z "$f" ] || { echo "build product: $f"; return 1; }
	grep -qx "PACKAGE_VERSION=\"$version\"" "$dkms_dir/dkms.conf" &&
		grep -qx 'PACKAGE_NAME="qtimer"' "$dkms_dir/dkms.conf" &&
		grep -qx 'AUTOINSTALL="yes"' "$dkms_dir/dkms.conf"
}
tap_run "DKMS source tree in /usr/src/qtimer-$version" dkms_tree_ok

# 9: DKMS's own build recipe, run as DKMS would on a copy of that tree.
# dkms.conf leaves MAKE[0] and CLEAN to DKMS's defaults (those of dkms
# 3.0.10, /usr/sbin/dkms's read_conf) and limits the build with
# BUILD_EXCLUSIVE_*, so both are applied here as dkms applies them.
dkms_build() {
	# The names dkms.conf uses, as DKMS defines them before sourcing it.
	# shellcheck disable=SC2034
	local dkms_tree=$scratch/dkms kernel_source_dir=$kdir
	# shellcheck disable=SC2034
	local PACKAGE_NAME PACKAGE_VERSION MAKE CLEAN BUILT_MODULE_NAME BUILT_MODULE_LOCATION
	local BUILD_EXCLUSIVE_KERNEL BUILD_EXCLUSIVE_CONFIG kconf
	local build=$dkms_tree/qtimer/$version/build
	mkdir -p "$dkms_tree/qtimer/$version"
	cp -a "$dkms_dir" "$build"
	# shellcheck disable=SC1090,SC1091
	. "$build/dkms.conf"
	[ -n "${MAKE[0]:-}" ] || MAKE[0]="make -C $kernel_source_dir M=$build"
	[ -n "${CLEAN:-}" ] || CLEAN="make -C $kernel_source_dir M=$build clean"
	if [ -n "${BUILD_EXCLUSIVE_KERNEL:-}" ] && ! [[ $kver =~ $BUILD_EXCLUSIVE_KERNEL ]]; then
		echo "BUILD_EXCLUSIVE_KERNEL excludes $kver"
		return 1
	fi
	if [ -e "$kdir/.config" ]; then
		for kconf in ${BUILD_EXCLUSIVE_CONFIG:-}; do
			grep -qE "^$kconf=[ym]" "$kdir/.config" ||
				{ echo "BUILD_EXCLUSIVE_CONFIG: $kconf is not set in $kdir/.config"; return 1; }
		done
	fi
	(cd "$build" && eval "${MAKE[0]}") || return 1
	local built=$build/${BUILT_MODULE_LOCATION[0]}${BUILT_MODULE_NAME[0]}.ko
	[ -f "$built" ] || { echo "DKMS would not find $built"; return 1; }
	[ "$(modinfo -F vermagic "$built" | cut -d' ' -f1)" = "$kver" ] || return 1
	(cd "$build" && eval "$CLEAN") || return 1
	[ ! -f "$built" ] || { echo "CLEAN left $built"; return 1; }
}
if [ -n "$kdir" ]; then
	tap_run "dkms.conf admits $kver, DKMS's MAKE builds the installed tree, CLEAN cleans it" dkms_build
else
	tap_skip "DKMS's MAKE builds the installed tree" "no kernel build dir"
fi

# 10: libtimerdev, through its own install target.
if grep -Eq '^install:' "$top/libtimerdev/Makefile" 2>/dev/null; then
	tap_run "libtimerdev: library, pkg-config file and header" \
		bash -c "[ -f '$root$prefix/lib/libtimerdev.so' ] && [ -f '$root$prefix/lib/pkgconfig/libtimerdev.pc' ] &&
			 [ -f '$root$prefix/include/timerdev.h' ]"
else
	tap_skip "libtimerdev installed" "libtimerdev has no install target"
fi

# 11: nothing outside the expected places.
tap_run "nothing installed outside modules, udev, sbin, include, lib, man, src" \
	bash -c "s=\$(cd '$root' && find . -type f -o -type l | sed 's|^\./||' |
		grep -Ev '^(lib/modules/[^/]+/extra/|${udevdir#/}/rules\.d/|${prefix#/}/(sbin|include|lib|share/man|src)/)'); [ -z \"\$s\" ] || { echo \"\$s\"; false; }"

# 11b: nothing of the test rig: its self-test module (scripts/vm/rig-module)
# is for the test VMs only.
tap_run "no test rig module installed (qtimer_rig, scripts/vm/rig-module)" \
	bash -c "s=\$(cd '$root' && find . | grep -E 'qtimer_rig|rig-module'); [ -z \"\$s\" ] || { echo \"\$s\"; false; }"

# 12: installing twice is harmless (and 13: changes nothing).
before=$(cd "$root" && find . -type f -exec md5sum {} + | sort)
if "${make_install[@]}" install DESTDIR="$root" PREFIX="$prefix" KDIR="$kdir" >"$log" 2>&1; then
	tap_ok "make install again over an existing install"
else
	tap_not_ok "make install again over an existing install" "$(tail -n 20 "$log")"
fi
after=$(cd "$root" && find . -type f -exec md5sum {} + | sort)
if [ "$before" = "$after" ]; then
	tap_ok "the second install left identical files"
else
	tap_not_ok "the second install left identical files" "$(diff <(echo "$before") <(echo "$after") | head -n 10)"
fi

# 14: uninstall removes every file.
if "${make_install[@]}" uninstall DESTDIR="$root" PREFIX="$prefix" KDIR="$kdir" >"$log" 2>&1; then
	left=$(cd "$root" && find . -type f -o -type l)
	if [ -z "$left" ]; then
		tap_ok "make uninstall removes every installed file"
	else
		tap_not_ok "make uninstall removes every installed file" "left: $(tr '\n' ' ' <<<"$left" | head -c 500)"
	fi
else
	tap_not_ok "make uninstall removes every installed file" "$(tail -n 20 "$log")"
fi

tap_totals
