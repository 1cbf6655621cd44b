#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Copyright (C) 2026 The qtimer authors
#
# The module the way DKMS users get it: `make install-dkms` (which installs
# the module's source instead of the module) into a scratch DESTDIR, then the real dkms
# (Debian's package, scripts/setup.sh) runs `add`, `build` and `install`
# from that /usr/src for each test kernel's headers, and a VM boots the
# DKMS-installed qtimer.ko and runs a suite against it.  install-check.sh
# only sources dkms.conf and runs the MAKE line DKMS would; this is where
# the tool's own reading of the file (its variables, BUILT_MODULE_LOCATION,
# BUILD_EXCLUSIVE_*, signing, the install layout) is tested.  Prints
# kselftest TAP ending with a "# Totals:" line; exits non-zero on a failure.
#
#   scripts/dkms-check.sh [KERNEL...]
#
# KERNEL: names scripts/vm/kernel.sh resolves, by default the three Debian
# ones (stock-6.1 stock-6.12 rt-6.12); the VM boots the first.
#   DKMS_CHECK_SUITES  the suites the VM runs (qtimer_basic_test)
#   DKMS_CHECK_VM=0    build and install only, no VM
#   DKMS_CHECK_MODULES=DIR
#                      no VM here either: each kernel's DKMS-installed
#                      module is kept as DIR/KERNEL/qtimer.ko* for the
#                      caller to boot (make check runs stock-6.1's whole
#                      suite list on it instead of a second boot here)
#   QTIMER_VM_LOCK     a file to hold with flock(1) around the VM run
#                      (machines where VMs take turns); none by default
#   KEEP=1             keep the scratch directory
#
# Nothing here touches the host's DKMS state or module tree: dkms gets a
# private --dkmstree, --sourcetree and --installtree, --no-depmod (depmod
# would work on /lib/modules/<release>), and a signing key in the scratch
# directory (without one, dkms creates /var/lib/dkms/mok.key).  The last
# test checks that.  No module is ever loaded on the host.

set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=lib/tap.sh
. "$top/scripts/lib/tap.sh"
tap_scratch dkms-check
root=$scratch/root
dkms_tree=$scratch/dkms
install_tree=$scratch/lib/modules
log=$scratch/log
suites=${DKMS_CHECK_SUITES:-qtimer_basic_test}

kernels=("$@")
[ ${#kernels[@]} -gt 0 ] || kernels=(stock-6.1 stock-6.12 rt-6.12)
vm=${DKMS_CHECK_VM:-1}
keep_dir=${DKMS_CHECK_MODULES:-}
[ -z "$keep_dir" ] || vm=handed
version=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$top/dkms.conf")

# add, then build + install per kernel, the VM, remove, the host untouched.
tap_plan "$((1 + 1 + 2 * ${#kernels[@]} + $([ "$vm" = handed ] || echo 1) + 1 + 1))"
echo "# kernels: ${kernels[*]}; VERSION=$version; scratch: $scratch"

if ! command -v dkms >/dev/null; then
	tap_not_ok "dkms is installed" "no dkms command: run scripts/setup.sh (Debian package dkms)"
	tap_exit
fi
echo "# $(dkms --version 2>&1)"

# The private trees.  The signing variables are read from the environment
# (and /etc/dkms/framework.conf, which leaves them unset on Debian).
export mok_signing_key=$scratch/mok.key mok_certificate=$scratch/mok.pub
mkdir -p "$dkms_tree" "$install_tree"
touch "$scratch/started"
# dkms_cmd ACTION [ARGS...]: every action, status too, with the private
# trees (status without --installtree compares with /lib/modules).
dkms_cmd() {
	local action=$1
	shift
	dkms "$action" "qtimer/$version" --dkmstree "$dkms_tree" \
		--sourcetree "$root/usr/src" --installtree "$install_tree" --no-depmod "$@"
}

# 1: the source tree, as `make install-dkms` lays it out.  Only that:
# qtimerctl and libtimerdev are install-check.sh's business, and a failure
# there must not read as a DKMS one.
if make -C "$top" --no-print-directory install-dkms DESTDIR="$root" >"$log" 2>&1 &&
   [ -f "$root/usr/src/qtimer-$version/dkms.conf" ]; then
	tap_ok "make install-dkms into a scratch DESTDIR: usr/src/qtimer-$version"
else
	tap_not_ok "make install-dkms into a scratch DESTDIR" "$(tap_tail "$log")"
	tap_exit
fi

# 2: dkms add, from that /usr/src.
if dkms_cmd add >"$log" 2>&1 && dkms_cmd status 2>&1 | grep -q ': added$'; then
	tap_ok "dkms add qtimer/$version"
else
	tap_not_ok "dkms add qtimer/$version" "$(tap_tail "$log")"
	tap_exit
fi

# 3, 4 for each kernel: dkms build and dkms install.  The module lands where
# dkms puts it for this distribution (updates/dkms on Debian: it overrides
# DEST_MODULE_LOCATION), so it is looked for under the release's tree.
declare -A installed_ko=()
for k in "${kernels[@]}"; do
	kinfo=$("$top/scripts/vm/kernel.sh" "$k" 2>"$log") || {
		tap_not_ok "$k: dkms build" "cannot resolve kernel $k: $(tap_tail "$log" 5)"
		tap_not_ok "$k: dkms install" "no build"
		continue
	}
	kdir=$(sed -n 's/^kdir=//p' <<<"$kinfo")
	kver=$(sed -n 's/^release=//p' <<<"$kinfo")
	if dkms_cmd build -k "$kver" --kernelsourcedir "$kdir" >"$log" 2>&1; then
		tap_ok "$k: dkms build for $kver"
	else
		tap_not_ok "$k: dkms build for $kver" "$(tap_tail "$log" 10)" \
			"make.log:" "$(tap_tail "$dkms_tree/qtimer/$version/build/make.log")"
		tap_not_ok "$k: dkms install" "no build"
		continue
	fi
	mkdir -p "$install_tree/$kver"
	if ! dkms_cmd install -k "$kver" --kernelsourcedir "$kdir" >"$log" 2>&1; then
		tap_not_ok "$k: dkms install for $kver" "$(tap_tail "$log")"
		continue
	fi
	ko=$(find "$install_tree/$kver" -name 'qtimer.ko*' | head -n 1)
	vermagic=$(modinfo -F vermagic "$ko" 2>&1 | cut -d' ' -f1)
	if [ -n "$ko" ] && [ "$vermagic" = "$kver" ] &&
	   dkms_cmd status -k "$kver" 2>&1 | grep -q ': installed$'; then
		tap_ok "$k: dkms install: ${ko#"$install_tree"/}, vermagic $kver"
		installed_ko[$k]=$ko
		if [ -n "$keep_dir" ]; then
			tap_keep_module "$keep_dir" "$k" "$ko"
		fi
	else
		tap_not_ok "$k: dkms install for $kver" "module: ${ko:-none found}" "vermagic: $vermagic" \
			"$(dkms_cmd status -k "$kver" 2>&1)"
	fi
done

# 5: a VM boots the first kernel with the DKMS-installed module.
k=${kernels[0]}
if [ "$vm" = handed ]; then
	echo "# the DKMS-installed modules are in $keep_dir for the caller's VMs"
elif [ "$vm" = 0 ]; then
	tap_skip "$k: VM with the DKMS-built module runs $suites" "DKMS_CHECK_VM=0"
elif [ -z "${installed_ko[$k]:-}" ]; then
	tap_skip "$k: VM with the DKMS-built module runs $suites" "no DKMS-installed module for $k (above)"
else
	tap_vm_module "$k: VM with the DKMS-built module runs $suites" "$k" dkms \
		"${installed_ko[$k]}" "$suites"
fi

# 6: dkms remove takes every kernel's module out of the install tree again.
if dkms_cmd remove --all >"$log" 2>&1 &&
   [ -z "$(find "$install_tree" -name 'qtimer.ko*')" ] && [ ! -e "$dkms_tree/qtimer/$version" ]; then
	tap_ok "dkms remove --all leaves no module behind"
else
	tap_not_ok "dkms remove --all leaves no module behind" "$(tap_tail "$log")" \
		"$(find "$install_tree" "$dkms_tree" -name 'qtimer.ko*')"
fi

# 7: and none of it reached the host.
host=$( { find /var/lib/dkms -maxdepth 1 \( -name qtimer -o -name 'mok.*' -newer "$scratch/started" \) 2>/dev/null
	  find /lib/modules -name 'qtimer*.ko*' -newer "$scratch/started" 2>/dev/null; } )
if [ -z "$host" ]; then
	tap_ok "nothing written to /var/lib/dkms or /lib/modules"
else
	tap_not_ok "nothing written to /var/lib/dkms or /lib/modules" "$host"
fi

tap_exit
