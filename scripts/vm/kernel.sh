#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Resolve a test kernel name to its boot image and module build directory.
#
#   kernel.sh NAME            prints vmlinuz=, kdir= and release= lines
#   kernel.sh NAME FIELD      prints one of them (vmlinuz, kdir or release)
#
# stock-6.1, stock-6.12 and rt-6.12 are Debian kernels that scripts/setup.sh
# unpacks into build/kernels/NAME; debug-6.1 and kcsan-6.1 are built (and
# cached) by scripts/debug-kernel/build.sh, whose last line of output is the
# build directory.

set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
die() { printf 'kernel.sh: %s\n' "$*" >&2; exit 1; }

[ $# -ge 1 ] && [ $# -le 2 ] || die "usage: kernel.sh NAME [vmlinuz|kdir|release]"
name=$1 field=${2:-}

case "$name" in
debug-6.1 | kcsan-6.1)
	script=$top/scripts/debug-kernel/build.sh
	[ -x "$script" ] || die "$name is built by scripts/debug-kernel/build.sh, which does not exist (yet)"
	# Its stdout ends with the build directory; its progress goes to
	# stderr.  Private files: several runs may resolve the kernel at once.
	mkdir -p "$top/build/vm"
	log=$(mktemp "$top/build/vm/$name.kernel-build.XXXXXX")
	if ! "$script" "${name%-6.1}" >"$log" 2> >(tee "$log.stderr" >&2); then
		tail -n 30 "$log" "$log.stderr" >&2 || true
		die "building kernel $name failed (logs: $log, $log.stderr)"
	fi
	dir=$(tail -n 1 "$log")
	rm -f "$log" "$log.stderr"
	[ -s "$dir/vmlinuz" ] && [ -s "$dir/release" ] ||
		die "scripts/debug-kernel/build.sh gave '$dir', which has no vmlinuz or release"
	vmlinuz=$dir/vmlinuz
	release=$(cat "$dir/release")
	kdir=$dir
	;;
*)
	dir=$top/build/kernels/$name
	if [ ! -s "$dir/vmlinuz" ] || [ ! -s "$dir/release" ]; then
		known=$(cd "$top/build/kernels" 2>/dev/null && ls -d -- * 2>/dev/null | tr '\n' ' ')
		die "unknown kernel '$name' (unpacked: ${known:-none; run scripts/setup.sh}; built: debug-6.1 kcsan-6.1)"
	fi
	vmlinuz=$dir/vmlinuz
	release=$(cat "$dir/release")
	kdir=/lib/modules/$release/build
	;;
esac
[ -d "$kdir" ] || die "no module build directory $kdir for $name (run scripts/setup.sh)"

case "$field" in
"") printf 'vmlinuz=%s\nkdir=%s\nrelease=%s\n' "$vmlinuz" "$kdir" "$release" ;;
vmlinuz) echo "$vmlinuz" ;;
kdir) echo "$kdir" ;;
release) echo "$release" ;;
*) die "unknown field '$field'" ;;
esac
