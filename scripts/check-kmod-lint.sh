#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# What a kernel reviewer runs first, over kmod/ and uapi/: the module built
# with W=1 and sparse (C=2) at once against the headers of the stock test
# kernels, each with no warning at all; and checkpatch.pl --strict -f (from
# linux-source-6.1, which scripts/setup.sh unpacks) with no error, warning
# or check, save the few kinds listed below that a file cannot avoid.
# Prints kselftest TAP, one test per build and per file.

set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
src=$top/build/src/linux-source-6.1
work=$top/build/check/kmod-lint
checkpatch=$src/scripts/checkpatch.pl

# Kinds of checkpatch finding a file may keep, and why.
#  uapi headers are built by user space, which has no BIT();
#  qtimer_netlink.h is ynl-gen-c.py's output, laid out as every generated
#  YNL header in include/uapi is (scripts/ynl-gen-uapi.sh);
#  trace.h is laid out as every TRACE_EVENT in include/trace/events is;
#  compat.h exists to test LINUX_VERSION_CODE.
allowed_types() {
	case $1 in
	uapi/linux/qtimer_netlink.h) echo BIT_MACRO,LINE_SPACING ;;
	uapi/*)		echo BIT_MACRO ;;
	kmod/trace.h)	echo OPEN_ENDED_LINE,PARENTHESIS_ALIGNMENT ;;
	kmod/compat.h)	echo LINUX_VERSION_CODE,CONSTANT_COMPARISON ;;
	esac
}

kernels=(stock-6.1 stock-6.12)
files=()
for f in "$top"/kmod/*.[ch] "$top"/uapi/linux/*.h; do
	files+=("${f#"$top"/}")
done

# shellcheck source=lib/tap.sh
. "$top/scripts/lib/tap.sh"

tap_plan "$((${#kernels[@]} + ${#files[@]}))"

# build KERNEL WHAT MAKEFLAGS...: the module in a private copy; prints the
# compiler's and sparse's warnings and errors, and fails if the build does.
build() {
	local kernel=$1 what=$2 kdir dir
	shift 2
	dir=$work/$kernel-$what
	kdir=$("$top"/scripts/vm/kernel.sh "$kernel" kdir) || return 1
	rm -rf "$dir"
	mkdir -p "$dir"
	cp -r "$top"/Kbuild "$top"/dkms.conf "$top"/kmod "$top"/uapi "$dir"/
	find "$dir" \( -name '*.o' -o -name '*.ko' -o -name '.*.cmd' -o -name '*.mod*' \) -delete
	make -j"$(nproc)" -C "$kdir" M="$dir" modules "$@" >"$dir.log" 2>&1 || {
		tail -n 20 "$dir.log"
		return 1
	}
	grep -E '(warning|error):' "$dir.log"
	return 0
}

# One build a kernel: sparse checks each file as W=1 compiles it.
for kernel in "${kernels[@]}"; do
	out=$(build "$kernel" lint W=1 C=2)
	rc=$?
	if [ $rc = 0 ] && [ -z "$out" ]; then
		tap_ok "W=1 and sparse build for $kernel: no warnings"
	else
		echo "$out" | sed 's/^/# /'
		tap_not_ok "W=1 and sparse build for $kernel: no warnings"
	fi
done

if [ ! -x "$checkpatch" ]; then
	for f in "${files[@]}"; do
		tap_not_ok "checkpatch $f # no $checkpatch: run scripts/setup.sh"
	done
else
	# A process a file, as many at once as there are CPUs; the
	# results are reported in order.
	rm -rf "$work/checkpatch" && mkdir -p "$work/checkpatch"
	for i in "${!files[@]}"; do
		f=${files[$i]}
		ignore=$(allowed_types "$f")
		(cd "$top" && "$checkpatch" --strict --no-tree --terse --show-types \
			${ignore:+--ignore "$ignore"} -f "$f" >"$work/checkpatch/$i" 2>&1) &
		while [ "$(jobs -rp | wc -l)" -ge "$(nproc)" ]; do
			wait -n
		done
	done
	wait
	for i in "${!files[@]}"; do
		f=${files[$i]}
		# --terse prints nothing for a clean file.
		if [ ! -s "$work/checkpatch/$i" ]; then
			tap_ok "checkpatch --strict $f"
		else
			sed 's/^/# /' "$work/checkpatch/$i"
			tap_not_ok "checkpatch --strict $f"
		fi
	done
fi

tap_totals
