#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# What a kernel reviewer runs first, over kmod/ and uapi/: the module built
# with W=1 and with sparse (C=2) against the headers of the stock test
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
#  trace.h is laid out as every TRACE_EVENT in include/trace/events is;
#  compat.h exists to test LINUX_VERSION_CODE.
allowed_types() {
	case $1 in
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

tap_plan "$((2 * ${#kernels[@]} + ${#files[@]}))"

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
	make -C "$kdir" M="$dir" modules "$@" >"$dir.log" 2>&1 || {
		tail -n 20 "$dir.log"
		return 1
	}
	grep -E '(warning|error):' "$dir.log"
	return 0
}

for kernel in "${kernels[@]}"; do
	for what in w1 sparse; do
		case $what in
		w1) flags=(W=1) ;;
		sparse) flags=(C=2) ;;
		esac
		out=$(build "$kernel" "$what" "${flags[@]}")
		rc=$?
		if [ $rc = 0 ] && [ -z "$out" ]; then
			tap_ok "$what build for $kernel: no warnings"
		else
			echo "$out" | sed 's/^/# /'
			tap_not_ok "$what build for $kernel: no warnings"
		fi
	done
done

if [ ! -x "$checkpatch" ]; then
	for f in "${files[@]}"; do
		tap_not_ok "checkpatch $f # no $checkpatch: run scripts/setup.sh"
	done
else
	for f in "${files[@]}"; do
		ignore=$(allowed_types "$f")
		out=$(cd "$top" && "$checkpatch" --strict --no-tree --terse --show-types \
			${ignore:+--ignore "$ignore"} -f "$f" 2>&1)
		# --terse prints nothing for a clean file.
		if [ -z "$out" ]; then
			tap_ok "checkpatch --strict $f"
		else
			echo "$out" | sed 's/^/# /'
			tap_not_ok "checkpatch --strict $f"
		fi
	done
fi

tap_totals
