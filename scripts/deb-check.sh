#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Copyright (C) 2026 The qtimer authors
#
# The Debian packages, built as a user builds them: dpkg-buildpackage -us
# -uc -b on a copy of the tree in build/deb/src (dpkg-buildpackage writes
# its .debs to the parent directory, so they land in build/deb/, never
# beside the repository).  Then lintian (no error may remain), each
# package's contents, the hardening dpkg-buildflags asks for, a program
# outside the tree built with `pkg-config --cflags --libs libtimerdev`
# from the extracted libtimerdev-dev and libtimerdev2 alone, and the module
# built from the extracted qtimer-dkms source, as DKMS builds it, for each
# test kernel whose headers scripts/setup.sh installed (skipped for the
# others); last, a VM of the first kernel boots with that module and runs
# qtimer_basic_test and qtimer_autoload_test against it (the latter loads
# it again by its aliases).  Prints kselftest TAP ending with a "# Totals:"
# line; exits non-zero on a failure.  Installs nothing on the host and
# loads nothing there.
#
#   scripts/deb-check.sh [KERNEL...]   default: stock-6.1 stock-6.12 rt-6.12
#   KEEP=1                             keep the scratch directory
#   DEB_CHECK_VM=0                     no VM
#   DEB_CHECK_MODULES=DIR              no VM here either: each kernel's
#                                      module from the package's source is
#                                      kept as DIR/KERNEL/qtimer.ko for the
#                                      caller to boot (make check runs the
#                                      whole suite list of stock-6.12 and
#                                      rt-6.12 on them, autoload included)

# The checks are functions that tap_run runs, which shellcheck cannot see.
# shellcheck disable=SC2317

set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
out=$top/build/deb
src=$out/src
# shellcheck source=lib/tap.sh
. "$top/scripts/lib/tap.sh"
tap_scratch deb-check

# grep -q at the end of a pipe exits at the first match, and with pipefail
# the writer's SIGPIPE would fail the pipe: read it all.
quiet_grep() { grep "$@" >/dev/null; }

kernels=("$@")
[ ${#kernels[@]} -gt 0 ] || kernels=(stock-6.1 stock-6.12 rt-6.12)
version=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$top/dkms.conf")
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null)
arch=$(dpkg --print-architecture)
packages=(qtimer-dkms libtimerdev2 libtimerdev-dev qtimerctl)
keep_dir=${DEB_CHECK_MODULES:-}

tap_plan "$((1 + 1 + 1 + ${#packages[@]} + 1 + 1 + ${#kernels[@]} + $([ -n "$keep_dir" ] || echo 1) + 1))"
echo "# version $version; $arch ($multiarch); output in ${out#"$top"/}"

for tool in dpkg-buildpackage dh dh_dkms lintian fakeroot; do
	command -v "$tool" >/dev/null && continue
	tap_not_ok "dpkg-buildpackage builds the packages" \
		"no $tool: run scripts/setup.sh (dpkg-dev, debhelper, dh-dkms, lintian, fakeroot)"
	tap_exit
done

# 1: dkms.conf says the release; debian/changelog (debian/rules refuses to
# build otherwise) and NEWS's latest heading must follow it.
release_ok() {
	local changelog news
	changelog=$(dpkg-parsechangelog -l "$top/debian/changelog" -SVersion) || return 1
	news=$(sed -n 's/^qtimer \([0-9][^ ]*\).*/\1/p' "$top/NEWS" | head -n 1)
	if [ -z "$version" ] || [ "${changelog%-*}" != "$version" ] || [ "$news" != "$version" ]; then
		echo "dkms.conf: ${version:-none}; debian/changelog: $changelog; NEWS: ${news:-none}"
		return 1
	fi
}
tap_run "dkms.conf, debian/changelog and NEWS say one release, $version" release_ok

# 2: the build, from a copy of exactly what git would ship (tracked files
# and new ones not ignored, as they are in the working tree), so that
# nothing of build/ or of an in-tree module build goes in.
rm -rf "$out"
mkdir -p "$src"
touch "$scratch/started"
if git -C "$top" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	(cd "$top" && git ls-files -z --cached --others --exclude-standard) |
		rsync -a --from0 --files-from=- "$top"/ "$src"/
else
	rsync -a --exclude=/build/ "$top"/ "$src"/
fi
# DPKG_GENSYMBOLS_CHECK_LEVEL=4: a symbol the library gained or lost that
# debian/libtimerdev2.symbols does not list fails the build.
# -J: a job per CPU (debian/rules honours DEB_BUILD_OPTIONS=parallel=N).
if (cd "$src" && DPKG_GENSYMBOLS_CHECK_LEVEL=4 dpkg-buildpackage -us -uc -b -J"$(nproc)") >"$out/build.log" 2>&1; then
	missing=()
	for p in "${packages[@]}"; do
		compgen -G "$out/${p}_${version}-*_*.deb" >/dev/null || missing+=("$p")
	done
	if [ ${#missing[@]} = 0 ]; then
		tap_ok "dpkg-buildpackage -us -uc -b: ${packages[*]} $version"
	else
		tap_not_ok "dpkg-buildpackage -us -uc -b" "no .deb for: ${missing[*]}"
		tap_exit
	fi
else
	tap_not_ok "dpkg-buildpackage -us -uc -b" "$(tap_tail "$out/build.log" 30)" \
		"log: ${out#"$top"/}/build.log"
	tap_exit
fi
deb() { ls "$out/${1}_${version}"-*_*.deb; }
# Each package's files, for the checks below: $scratch/pkg/<package>.
for p in "${packages[@]}"; do
	mkdir -p "$scratch/pkg/$p"
	dpkg-deb -x "$(deb "$p")" "$scratch/pkg/$p"
done

# The module builds (the tests at the end) start now, beside lintian and
# the other checks: each kernel's in a copy of the packaged DKMS tree, as
# DKMS's default command builds it (dkms.conf names none).
dkms_src=$scratch/pkg/qtimer-dkms/usr/src/qtimer-$version
declare -A kdirs=() kvers=() build_pid=()
for k in "${kernels[@]}"; do
	kinfo=$("$top/scripts/vm/kernel.sh" "$k" 2>"$scratch/$k.kernel") || continue
	kdirs[$k]=$(sed -n 's/^kdir=//p' <<<"$kinfo")
	kvers[$k]=$(sed -n 's/^release=//p' <<<"$kinfo")
	cp -a "$dkms_src" "$scratch/build-$k"
	make -C "${kdirs[$k]}" M="$scratch/build-$k" >"$scratch/$k.log" 2>&1 &
	build_pid[$k]=$!
done

# 3: lintian, over everything the build made; errors fail, the rest is shown.
changes=$(ls "$out"/qtimer_*.changes)
lintian --allow-root "$changes" >"$out/lintian.log" 2>&1
tags=$(grep -E '^[EWIPX]: ' "$out/lintian.log")
nr_e=$(grep -c '^E: ' <<<"$tags")
nr_w=$(grep -c '^W: ' <<<"$tags")
if grep -Evq '^[EWIPXN]: |^N:$|^$' "$out/lintian.log" && [ -z "$tags" ]; then
	tap_not_ok "lintian ran" "$(tap_tail "$out/lintian.log")"
elif [ "$nr_e" = 0 ]; then
	tap_ok "lintian: no errors ($nr_w warnings)"
	[ -z "$tags" ] || sed 's/^/#   /' <<<"$tags"
else
	tap_not_ok "lintian: $nr_e errors, $nr_w warnings" "$tags"
fi

# 4-7: each package holds what it must, and nothing of another's.
# has DEB PATH...: every PATH (a grep -x pattern) is in DEB's file list.
has() {
	local deb=$1 list p missing=()
	shift
	list=$(dpkg-deb -c "$deb" | awk '{ print $6 }' | sed 's|^\./|/|')
	for p in "$@"; do
		grep -qx -- "$p" <<<"$list" || missing+=("$p")
	done
	[ ${#missing[@]} = 0 ] || { echo "missing from ${deb##*/}: ${missing[*]}"; return 1; }
}
lacks() {
	local deb=$1 p found
	shift
	for p in "$@"; do
		found=$(dpkg-deb -c "$deb" | awk '{ print $6 }' | sed 's|^\./|/|' | grep -x -- "$p")
		[ -z "$found" ] || { echo "${deb##*/} must not hold: $found"; return 1; }
	done
}
field() { dpkg-deb -f "$1" "$2"; }

dkms_ok() {
	local d
	d=$(deb qtimer-dkms) || return 1
	has "$d" "/usr/src/qtimer-$version/dkms.conf" "/usr/src/qtimer-$version/Kbuild" \
		"/usr/src/qtimer-$version/kmod/Kbuild" "/usr/src/qtimer-$version/kmod/main.c" \
		"/usr/src/qtimer-$version/uapi/linux/qtimer.h" '/.*/udev/rules\.d/60-qtimer\.rules' || return 1
	lacks "$d" '.*\.o' '.*\.ko' '.*/selftests/.*' '.*/rig-module/.*' || return 1
	[ "$(field "$d" Architecture)" = all ] || { echo "Architecture: $(field "$d" Architecture)"; return 1; }
	field "$d" Depends | quiet_grep 'dkms' || { echo "Depends: $(field "$d" Depends)"; return 1; }
	# dh_dkms's maintainer scripts register the tree with DKMS.
	if ! dpkg-deb -I "$d" postinst 2>/dev/null | quiet_grep -x 'DKMS_NAME=qtimer' ||
	   ! dpkg-deb -I "$d" postinst | quiet_grep -x "DKMS_VERSION=$version" ||
	   ! dpkg-deb -I "$d" postinst | quiet_grep '/usr/lib/dkms/common.postinst'; then
		echo "postinst does not register qtimer $version with DKMS"
		return 1
	fi
	dpkg-deb --fsys-tarfile "$d" | tar -xOf - "./usr/src/qtimer-$version/dkms.conf" |
		quiet_grep -x "PACKAGE_VERSION=\"$version\"" || { echo "dkms.conf does not say $version"; return 1; }
}
tap_run "qtimer-dkms: /usr/src/qtimer-$version (dkms.conf, Kbuild, kmod/, uapi/), the udev rule, DKMS scripts" dkms_ok

lib_ok() {
	local d list soname
	d=$(deb libtimerdev2) || return 1
	has "$d" "/usr/lib/$multiarch/libtimerdev\.so\.2" "/usr/lib/$multiarch/libtimerdev\.so\.2\..*" || return 1
	list=$(dpkg-deb -c "$d" | awk '{ print $6 }' | sed 's|^\./|/|' | grep -v '/$' |
		grep -Ev "^/usr/lib/$multiarch/libtimerdev\.so\.2(\..*)?\$|^/usr/share/(doc|lintian/overrides)/libtimerdev2(/|\$)")
	[ -z "$list" ] || { echo "libtimerdev2 holds more than the library: $list"; return 1; }
	soname=$(objdump -p "$scratch/pkg/libtimerdev2/usr/lib/$multiarch/libtimerdev.so.2" | awk '$1 == "SONAME" { print $2 }')
	[ "$soname" = libtimerdev.so.2 ] || { echo "SONAME $soname"; return 1; }
	dpkg-deb --ctrl-tarfile "$d" | tar -tf - | quiet_grep -x './symbols' || { echo "no symbols file"; return 1; }
	[ "$(field "$d" Multi-Arch)" = same ] || { echo "Multi-Arch: $(field "$d" Multi-Arch)"; return 1; }
}
tap_run "libtimerdev2: libtimerdev.so.2 (SONAME libtimerdev.so.2) alone, with its symbols file" lib_ok

dev_ok() {
	local d
	d=$(deb libtimerdev-dev) || return 1
	has "$d" /usr/include/timerdev.h /usr/include/qtimer/linux/qtimer.h \
		/usr/include/qtimer/linux/qtimer_netlink.h "/usr/lib/$multiarch/libtimerdev\.so" \
		"/usr/lib/$multiarch/libtimerdev\.a" "/usr/lib/$multiarch/pkgconfig/libtimerdev\.pc" \
		/usr/share/man/man3/td_open.3.gz /usr/share/man/man3/td_batch_modify.3.gz \
		/usr/share/man/man7/libtimerdev.7.gz || return 1
	# include/linux is linux-libc-dev's.
	lacks "$d" '/usr/include/linux/.*' || return 1
	field "$d" Depends | quiet_grep "libtimerdev2 (= $(field "$d" Version))" ||
		{ echo "Depends: $(field "$d" Depends)"; return 1; }
}
tap_run "libtimerdev-dev: timerdev.h, uapi headers in /usr/include/qtimer, .so link, .a, .pc, man pages" dev_ok

ctl_ok() {
	local d
	d=$(deb qtimerctl) || return 1
	has "$d" /usr/sbin/qtimerctl /usr/share/man/man8/qtimerctl.8.gz || return 1
	zcat "$scratch/pkg/qtimerctl/usr/share/man/man8/qtimerctl.8.gz" | quiet_grep "^\.TH QTIMERCTL 8 [^ ]* \"qtimer $version\" " ||
		{ echo "qtimerctl.8 does not say qtimer $version"; return 1; }
	"$scratch/pkg/qtimerctl/usr/sbin/qtimerctl" --version | quiet_grep "^qtimerctl $version " ||
		{ echo "qtimerctl --version: $("$scratch/pkg/qtimerctl/usr/sbin/qtimerctl" --version 2>&1)"; return 1; }
}
tap_run "qtimerctl: /usr/sbin/qtimerctl and qtimerctl(8), both saying $version" ctl_ok

# 8: dpkg-buildflags reached the compiler and the linker: the tool calls
# glibc's checked functions (-D_FORTIFY_SOURCE, from CPPFLAGS) and is
# linked read-only after relocation (-z relro, from LDFLAGS).
hardening_ok() {
	local f
	for f in "$scratch/pkg/qtimerctl/usr/sbin/qtimerctl" "$scratch/pkg/libtimerdev2/usr/lib/$multiarch/libtimerdev.so.2"; do
		[ -f "$f" ] || { echo "no $f"; return 1; }
		readelf -lW "$f" | quiet_grep GNU_RELRO || { echo "${f##*/}: no RELRO"; return 1; }
	done
	objdump -T "$scratch/pkg/qtimerctl/usr/sbin/qtimerctl" | quiet_grep '__[a-z]*_chk' ||
		{ echo "qtimerctl calls no __*_chk function: CPPFLAGS' -D_FORTIFY_SOURCE did not reach it"; return 1; }
}
tap_run "dpkg-buildflags hardening reached qtimerctl and libtimerdev (fortify, relro)" hardening_ok

# 9: a program outside the tree, built against the extracted -dev and
# library packages only, through their pkg-config file.  The sysroot
# variables point pkg-config into the scratch root; without the two
# ALLOW_SYSTEM variables it would drop -I/usr/include and -L/usr/lib...
# (system directories for the host, not for the scratch root).
outside_ok() {
	local root=$scratch/root prog=$scratch/outside cflags libs said
	dpkg-deb -x "$(deb libtimerdev-dev)" "$root" && dpkg-deb -x "$(deb libtimerdev2)" "$root" || return 1
	cat >"$prog.c" <<'EOF'
#include <errno.h>
#include <stdio.h>
#include <timerdev.h>
#include <linux/qtimer_netlink.h>

int main(void)
{
	struct td_timer_spec spec = { .clockid = CLOCK_MONOTONIC, .expires_ns = 1000 };
	struct td_ctx *ctx;
	int ret = td_open_path(&ctx, "/nonexistent/qtimer", 0);

	if (ret != -ENOENT || spec.flags != 0 || td_lib_version() != TD_VERSION_HEX ||
	    sizeof(struct qtimer_record) != 32 || QTIMER_GENL_VERSION < 1) {
		fprintf(stderr, "libtimerdev from the packages misbehaves: %d\n", ret);
		return 1;
	}
	printf("%d.%d.%d\n", TD_VERSION_MAJOR, TD_VERSION_MINOR, TD_VERSION_PATCH);
	return 0;
}
EOF
	export PKG_CONFIG_SYSROOT_DIR=$root PKG_CONFIG_LIBDIR=$root/usr/lib/$multiarch/pkgconfig
	export PKG_CONFIG_ALLOW_SYSTEM_CFLAGS=1 PKG_CONFIG_ALLOW_SYSTEM_LIBS=1
	unset PKG_CONFIG_PATH
	cflags=$(pkg-config --cflags libtimerdev) && libs=$(pkg-config --libs libtimerdev) || return 1
	echo "pkg-config: $cflags $libs"
	# shellcheck disable=SC2086 # pkg-config's words, split on purpose
	cc -Wall -Wextra -Werror $cflags -o "$prog" "$prog.c" $libs || return 1
	said=$(LD_LIBRARY_PATH=$root/usr/lib/$multiarch "$prog") || return 1
	LD_LIBRARY_PATH=$root/usr/lib/$multiarch ldd "$prog" | quiet_grep "$root/usr/lib/$multiarch/libtimerdev.so.2" ||
		{ echo "the program does not load the packaged libtimerdev.so.2"; return 1; }
	echo "runs with libtimerdev $said"
}
tap_run "an outside program builds with pkg-config --cflags --libs libtimerdev from the packages, links and runs" outside_ok

# 10...: the module from the packaged DKMS tree, for each test kernel with
# headers.  dkms-check.sh runs the real dkms on make install's tree; this
# proves the tree the package ships.  Its version, once kmod/main.c says
# MODULE_VERSION(QTIMER_VERSION_STRING), must be the release.
for k in "${kernels[@]}"; do
	if [ -z "${build_pid[$k]:-}" ]; then
		tap_skip "$k: the module builds from qtimer-dkms's source" \
			"no headers: $(tap_tail "$scratch/$k.kernel" 1)"
		continue
	fi
	ko=$scratch/build-$k/kmod/qtimer.ko
	name="$k: the module builds from qtimer-dkms's source for ${kvers[$k]}"
	if ! wait "${build_pid[$k]}"; then
		tap_not_ok "$name" "$(tap_tail "$scratch/$k.log" 15)"
	elif [ "$(modinfo -F vermagic "$ko" 2>/dev/null | cut -d' ' -f1)" != "${kvers[$k]}" ]; then
		tap_not_ok "$name" "vermagic: $(modinfo -F vermagic "$ko" 2>&1)"
	else
		modversion=$(modinfo -F version "$ko" 2>/dev/null)
		if [ -z "$modversion" ]; then
			tap_ok "$name (no MODULE_VERSION yet)"
		elif [ "$modversion" = "$version" ]; then
			tap_ok "$name, version $modversion"
			if [ -n "$keep_dir" ]; then
				tap_keep_module "$keep_dir" "$k" "$ko"
			fi
		else
			tap_not_ok "$name" "modinfo says version $modversion, the release is $version"
		fi
	fi
done

# The first kernel's module from the package, in a VM: the suites the
# package's users meet first, the device and its autoload.
k=${kernels[0]}
ko=$scratch/build-$k/kmod/qtimer.ko
vm_suites=qtimer_basic_test,qtimer_autoload_test
if [ -n "$keep_dir" ]; then
	echo "# the packaged modules are in $keep_dir for the caller's VMs"
elif [ "${DEB_CHECK_VM:-1}" = 0 ]; then
	tap_skip "$k: VM with the packaged module runs $vm_suites" "DEB_CHECK_VM=0"
elif [ ! -f "$ko" ]; then
	tap_skip "$k: VM with the packaged module runs $vm_suites" "no module built for $k (above)"
else
	tap_vm_module "$k: VM with the packaged module runs $vm_suites" "$k" deb "$ko" "$vm_suites"
fi

# Last: dpkg-buildpackage wrote nothing beside the repository.
stray=$(find "$top/.." -maxdepth 1 \( -name 'qtimer*' -o -name 'libtimerdev*' \) \
	-type f -newer "$scratch/started" 2>/dev/null)
if [ -z "$stray" ]; then
	tap_ok "nothing written beside the repository (outputs in ${out#"$top"/})"
else
	tap_not_ok "nothing written beside the repository" "$stray"
fi

tap_exit
