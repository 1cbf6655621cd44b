#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# qtimer must refuse to build for a 32-bit kernel, with a message that says
# why: the id slot table in kmod/ctx.c tags a free slot as
# "next << 1 | 1" in an unsigned long, which needs 64 bits, and DKMS would
# otherwise build the module for i386 or armhf without a word.
#
# The check prepares an i386 kernel build tree (tinyconfig + MODULES, then
# modules_prepare) out of tree from build/src/linux-source-6.1, the source
# scripts/setup.sh unpacks, and builds a private copy of Kbuild, kmod/ and
# uapi/ against it the way DKMS and "make guest-module" do.  That build
# must fail and print the refusal.  A trivial module built against the same
# tree first proves the tree itself works, so the failure is qtimer's own.
#
# The tree is cached in build/check-32bit/ with a stamp that names the
# source, the compiler and the recipe below: the first run takes a few
# minutes, later ones a few seconds.  O= leaves the source tree untouched
# (kbuild refuses an O= build of a source tree that holds a .config), so
# the debug kernels' builds from the same source are not disturbed.  It is
# not under build/kernels/, where scripts/vm/kernel.sh lists bootable kernels.
#
# Needs only what scripts/setup.sh installs: the x86-64 gcc builds an i386
# kernel with -m32, and the kernel needs no 32-bit libc.
#
#   scripts/check-32bit.sh          JOBS=n for the prepare (default 2)
#
# Prints kselftest TAP ending with a "# Totals:" line; exits non-zero on a
# failure.

set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=lib/tap.sh
. "$top/scripts/lib/tap.sh"
src=$top/build/src/linux-source-6.1
work=$top/build/check-32bit
out=$work/i386-6.1
stamp=$out/.qtimer-prepared
jobs=${JOBS:-2}
refusal='qtimer: 32-bit kernels are not supported'
name='module build for a 32-bit (i386) kernel refuses with a clear message'

# result KIND [DIAG...]: the one test's line, its reasons and the totals.
result() {
	local kind=$1
	shift
	case "$kind" in
	pass) tap_ok "$name" "$@" ;;
	fail) tap_not_ok "$name" "$@" ;;
	error) tap_error "$name" "$@" ;;
	esac
	tap_exit
}
# The last lines of a log, as TAP diagnostics.
tail_log() { tail -n "${2:-25}" "$1" | sed 's/^/  /'; }

kmake() { nice -n 19 make -C "$src" O="$out" ARCH=i386 "$@"; }

# The recipe of the tree; its text is part of the stamp, so editing it
# prepares the tree afresh.
prepare() {
	kmake tinyconfig &&
	"$src/scripts/config" --file "$out/.config" --enable MODULES &&
	kmake olddefconfig &&
	grep -qx 'CONFIG_MODULES=y' "$out/.config" &&
	! grep -qx 'CONFIG_64BIT=y' "$out/.config" &&
	kmake -j"$jobs" modules_prepare
}

# A module with nothing 64-bit about it must build against the tree.
control_module() {
	local dir=$work/control
	rm -rf "$dir" && mkdir -p "$dir"
	cat > "$dir/control.c" <<-'EOF'
	// SPDX-License-Identifier: GPL-2.0
	#include <linux/module.h>

	static int __init control_init(void) { return 0; }
	static void __exit control_exit(void) { }
	module_init(control_init);
	module_exit(control_exit);
	MODULE_LICENSE("GPL");
	EOF
	echo 'obj-m := control.o' > "$dir/Kbuild"
	make -C "$out" ARCH=i386 M="$dir" modules && [ -f "$dir/control.ko" ]
}

tap_plan 1

[ -f "$src/Makefile" ] || result error "no kernel source at ${src#"$top"/}; run scripts/setup.sh"

mkdir -p "$out"
# Two runs at once must not prepare one directory together; the second
# waits, then finds the stamp.
exec 9>"$out.lock"
flock 9

src_id=$(cat "$top/build/stamps/source-6.1" 2>/dev/null || echo unknown)
stamp_text="source $src_id; compiler $(gcc --version | head -n1); recipe $(declare -f prepare | sha256sum | cut -c1-12)"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$stamp_text" ]; then
	tap_diag "i386 tree: up to date (${out#"$top"/})"
else
	rm -f "$stamp"
	tap_diag "i386 tree: preparing ${out#"$top"/} (a few minutes, once)"
	start=$SECONDS
	if ! prepare > "$out/prepare.log" 2>&1; then
		result error "preparing the i386 tree failed (log: ${out#"$top"/}/prepare.log):" \
			"$(tail_log "$out/prepare.log")"
	fi
	if ! control_module > "$out/control.log" 2>&1; then
		result error "a trivial module does not build against the i386 tree (log: ${out#"$top"/}/control.log):" \
			"$(tail_log "$out/control.log")"
	fi
	echo "$stamp_text" > "$stamp"
	tap_diag "i386 tree: prepared in $((SECONDS - start)) s"
fi

# A private copy, as "make guest-module" makes one: building in the
# working tree would leave i386 objects among the x86-64 ones.
mod=$work/module
log=$work/module.log
rm -rf "$mod" && mkdir -p "$mod"
if ! cp -a "$top/Kbuild" "$top/dkms.conf" "$top/kmod" "$top/uapi" "$mod/" ||
   ! find "$mod" \( -name '*.o' -o -name '*.ko' -o -name '*.mod' -o -name '*.mod.c' \
	-o -name '.*.cmd' -o -name 'modules.order' -o -name 'Module.symvers' \) -delete; then
	result error "cannot copy the module source to ${mod#"$top"/}"
fi

make -C "$out" ARCH=i386 M="$mod" modules > "$log" 2>&1
rc=$?
if [ "$rc" = 0 ]; then
	result fail "the module BUILT for i386 (exit 0, log: ${log#"$top"/}); it must refuse" \
		"$(tail_log "$log" 10)"
fi
if ! grep -qF "$refusal" "$log"; then
	result fail "the build failed (exit $rc) but without \"$refusal\" (log: ${log#"$top"/}):" \
		"$(tail_log "$log")"
fi
result pass "$(grep -F "$refusal" "$log" | head -n1)"
