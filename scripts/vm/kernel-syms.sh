#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Print the path of a System.map for a test kernel, fetching it first if
# need be, for bench/profile.py.
#
#   kernel-syms.sh KERNEL
#
# Debian ships a placeholder System.map in the image package; the real one
# is in linux-image-RELEASE-dbg, from the same archive.  Only its System.map
# is kept (build/kernels/KERNEL/System.map), not the 300 MB package.  The
# debug kernels built here have their own.
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
kernel=${1:?usage: kernel-syms.sh KERNEL}
dir=$top/build/kernels/$kernel
map=$dir/System.map

case "$kernel" in
debug-* | kcsan-*)
	kdir=$("$top/scripts/vm/kernel.sh" "$kernel" kdir)
	[ -s "$kdir/System.map" ] || { echo "kernel-syms: no $kdir/System.map" >&2; exit 1; }
	echo "$kdir/System.map"
	exit 0 ;;
esac
if [ ! -s "$map" ]; then
	release=$(cat "$dir/release")
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	echo "kernel-syms: fetching linux-image-$release-dbg for its System.map" >&2
	# apt's sandbox user cannot write to a root-owned mktemp directory.
	(cd "$tmp" && apt-get -q -o APT::Sandbox::User=root download "linux-image-$release-dbg" >&2)
	dpkg-deb --fsys-tarfile "$tmp"/*.deb |
		tar -xO "./usr/lib/debug/boot/System.map-$release" >"$map.tmp"
	mv "$map.tmp" "$map"
fi
echo "$map"
