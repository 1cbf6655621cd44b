#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build a qtimer debug kernel from build/src/linux-source-6.1 (unpacked by
# scripts/setup.sh) out of tree into build/debug-kernel/<variant>-<hash>/.
#
#   dir=$(scripts/debug-kernel/build.sh [debug|kcsan] | tail -n1)
#   make -C "$dir" M=/path/to/module modules
#
# "debug" is tinyconfig + debug.config (KASAN, lockdep, ...); "kcsan" adds
# kcsan.config on top of that.  The hash covers the fragments and this script,
# so a changed config gets a fresh directory, and an unchanged one is reused:
# a stamp written last marks a complete build and makes reruns instant.
# Progress goes to stderr; stdout carries only the build directory, on the
# last line.

set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
src="$top/build/src/linux-source-6.1"
variant=${1:-debug}
jobs=${JOBS:-$(nproc)}

log() { printf 'debug-kernel[%s]: %s\n' "$variant" "$*" >&2; }
die() { log "error: $*"; exit 1; }

case "$variant" in
debug) fragments=("$here/debug.config") ;;
kcsan) fragments=("$here/debug.config" "$here/kcsan.config") ;;
*) die "unknown variant '$variant' (want debug or kcsan)" ;;
esac

[ -f "$src/Makefile" ] || die "no kernel source at $src; run scripts/setup.sh"

# Patches applied to the source before building (see each one's comment).
patches=("$here"/*.patch)

hash=$(cat "${fragments[@]}" "${patches[@]}" "$here/build.sh" | sha256sum | cut -c1-12)
out="$top/build/debug-kernel/$variant-$hash"
stamp="$out/.qtimer-build-complete"

# The hash does not cover the kernel source or the compiler (setup.sh may
# unpack a newer linux-source-6.1); the stamp records both, so either change
# rebuilds.  setup.sh's own stamp names the tarball and its mtime, which
# also catches a new Debian revision of the same upstream release.
src_id=$(cat "$top/build/stamps/source-6.1" 2>/dev/null ||
	awk '/^(VERSION|PATCHLEVEL|SUBLEVEL|EXTRAVERSION) *=/ { v = v $3 "." } END { print v }' "$src/Makefile")
stamp_text="source $src_id compiler $(gcc --version | head -n1)"

mkdir -p "$out"
# Two jobs asking for the same kernel must not build into one directory;
# the second waits, then finds the stamp.
exec 9>"$out.lock"
if ! flock -n 9; then
	log "waiting for another build of $out"
	flock 9
fi

if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$stamp_text" ]; then
	log "up to date: $out"
	echo "$out"
	exit 0
fi
rm -f "$stamp"

build_log="$out/build.log"
: > "$build_log"

# Run make on the out-of-tree directory with its output in build.log.  A
# line on stderr at least every 20 s (a count of compiled files, or just the
# time during long silent links) shows CI that the build is alive; on failure
# the end of the log is shown.
kmake() {
	local step=$*
	local start=$SECONDS last=$SECONDS files=0 line rc
	log "make $step"
	set +e
	make -C "$src" O="$out" "$@" 2>&1 | tee -a "$build_log" | {
		while :; do
			if IFS= read -r -t 20 line; then
				case "$line" in "  CC"*|"  AS"*) files=$((files + 1)) ;; esac
			else
				# read returns >128 on timeout, 1 at end of input.
				[ $? -gt 128 ] || break
			fi
			if [ $((SECONDS - last)) -ge 20 ]; then
				log "make $step: $files files compiled, $((SECONDS - start)) s"
				last=$SECONDS
			fi
		done
	}
	rc=${PIPESTATUS[0]}
	set -e
	if [ "$rc" != 0 ]; then
		# With -j the first error is rarely at the end: show it, then the tail.
		grep -E ': (fatal )?error:|\*\*\*|Killed|internal compiler error' "$build_log" | head -n 20 >&2 || true
		tail -n 20 "$build_log" >&2
		die "make $step failed (exit $rc); full log in $build_log"
	fi
	log "make $step: done in $((SECONDS - start)) s"
}

# The value each option must end up with, the last fragment winning:
# "CONFIG_X=value" lines, and "n" for "# CONFIG_X is not set".
wanted_options() {
	sed -n -e 's/^\(CONFIG_[A-Za-z0-9_]*=.*\)$/\1/p' \
	       -e 's/^# \(CONFIG_[A-Za-z0-9_]*\) is not set$/\1=n/p' "${fragments[@]}" |
		awk -F= '{ v[$1] = substr($0, length($1) + 2); if (!($1 in seen)) { seen[$1] = 1; order[++n] = $1 } }
			END { for (i = 1; i <= n; i++) print order[i] "=" v[order[i]] }'
}

# olddefconfig silently drops an option whose dependencies are not met, so
# compare every requested value with the final .config and name each loser.
verify_config() {
	local bad=0 name want got
	while IFS='=' read -r name want; do
		got=$(sed -n -e "s/^$name=\(.*\)$/\1/p" -e "s/^# $name is not set$/n/p" "$out/.config")
		[ -n "$got" ] || got=n
		if [ "$got" != "$want" ]; then
			log "dropped: $name=$want (final .config: $got)"
			bad=1
		fi
	done < <(wanted_options)
	[ "$bad" = 0 ] || die "the fragments did not survive olddefconfig (missing dependencies?)"
	log "all $(wanted_options | wc -l) fragment options present in .config"
}

# An out-of-tree module must build against the result exactly the way the
# project builds qtimer.ko; a trivial one proves Module.symvers, the headers
# and the host tools (modpost, objtool) are all in place.
check_module_build() {
	local tmp
	tmp=$(mktemp -d)
	cat > "$tmp/hello.c" <<-'EOF'
	// SPDX-License-Identifier: GPL-2.0
	#include <linux/module.h>
	#include <linux/printk.h>

	static int __init hello_init(void) { pr_info("hello\n"); return 0; }
	static void __exit hello_exit(void) { }
	module_init(hello_init);
	module_exit(hello_exit);
	MODULE_LICENSE("GPL");
	EOF
	echo 'obj-m := hello.o' > "$tmp/Kbuild"
	if ! make -C "$out" M="$tmp" modules >> "$build_log" 2>&1 || [ ! -f "$tmp/hello.ko" ]; then
		tail -n 20 "$build_log" >&2
		rm -rf "$tmp"
		die "an out-of-tree module does not build against $out"
	fi
	rm -rf "$tmp"
	log "out-of-tree module build: ok"
}

# Apply each patch once; the source tree is shared by every variant, so
# under its own lock.  A patch that neither applies nor is already applied
# (a new linux-source-6.1 moved the code) stops the build.
apply_patches() {
	local p
	exec 8>"$top/build/src/.qtimer-patch.lock"
	flock 8
	for p in "${patches[@]}"; do
		if patch -d "$src" -p1 -R -s -f --dry-run <"$p" >/dev/null 2>&1; then
			continue
		fi
		patch -d "$src" -p1 -N -s -f --dry-run <"$p" >/dev/null ||
			die "$(basename "$p") does not apply to $src"
		patch -d "$src" -p1 -N -s -f <"$p" >/dev/null
		log "applied $(basename "$p")"
	done
	exec 8>&-
}

apply_patches
log "building into $out with $jobs jobs"
kmake tinyconfig
# merge_config.sh puts its temporary files in the current directory.
(cd "$out" && "$src/scripts/kconfig/merge_config.sh" -m -O "$out" "$out/.config" "${fragments[@]}") >> "$build_log"
kmake olddefconfig
verify_config
kmake -j"$jobs" bzImage modules
make -s -C "$src" O="$out" kernelrelease > "$out/release"
ln -sfn arch/x86/boot/bzImage "$out/vmlinuz"
check_module_build

echo "$stamp_text" > "$stamp"
log "kernel $(cat "$out/release") ready, $SECONDS s in total"
echo "$out"
