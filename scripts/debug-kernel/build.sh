#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build a qtimer debug kernel from Debian's linux-source-6.1 (installed by
# scripts/setup.sh) into the machine's cache, $QTIMER_CACHE (default
# /var/cache/qtimer), as debug-kernel/<variant>-<hash>/, out of tree from
# its own copy of the source, src-<key>/linux-source-6.1 beside it.
#
#   dir=$(scripts/debug-kernel/build.sh [debug|kcsan] | tail -n1)
#   make -C "$dir" M=/path/to/module modules
#
# "debug" is tinyconfig + debug.config (KASAN, lockdep, ...); "kcsan" adds
# kcsan.config on top of that.  The hash covers the fragments and this script,
# so a changed config gets a fresh directory, and an unchanged one is reused:
# a stamp written last marks a complete build and makes reruns instant.
# The cache is the machine's, not a clone's, as apt's is: the two kernels
# take 20 minutes of a 2-core machine, and every clone (CI's fresh one
# above all) builds the same bytes from the same tarball, fragments and
# compiler, which is what the directory's name and its stamp stand for.
# Its source copy is keyed by the tarball and the patches, and holds only
# what they make, so no clone's tree or later patch set can reach into a
# kernel another clone built.  Where the cache cannot be written (not
# root), this clone's build/ holds both instead.
# Progress goes to stderr; stdout carries only the build directory, on the
# last line.

set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
variant=${1:-debug}
jobs=${JOBS:-$(nproc)}

log() { printf 'debug-kernel[%s]: %s\n' "$variant" "$*" >&2; }
die() { log "error: $*"; exit 1; }

case "$variant" in
debug) fragments=("$here/debug.config") ;;
kcsan) fragments=("$here/debug.config" "$here/kcsan.config") ;;
*) die "unknown variant '$variant' (want debug or kcsan)" ;;
esac

tarball=$(ls /usr/src/linux-source-6.1.tar.* 2>/dev/null | head -n1)
[ -n "$tarball" ] || die "no /usr/src/linux-source-6.1.tar.*; run scripts/setup.sh"

# Patches applied to the source before building (see each one's comment).
patches=("$here"/*.patch)

cache=${QTIMER_CACHE:-/var/cache/qtimer}
if ! mkdir -p "$cache" 2>/dev/null || [ ! -w "$cache" ]; then
	log "cannot write $cache: building into $top/build"
	cache="$top/build"
fi

hash=$(cat "${fragments[@]}" "${patches[@]}" "$here/build.sh" | sha256sum | cut -c1-12)
out="$cache/debug-kernel/$variant-$hash"
stamp="$out/.qtimer-build-complete"

# The hash does not cover the kernel source or the compiler (setup.sh may
# install a newer linux-source-6.1); the stamp records both, so either
# change rebuilds.  The tarball's mtime also catches a new Debian revision
# of the same upstream release.
src_id="$tarball $(stat -c %Y "$tarball")"
src_key=$(printf '%s\n' "$src_id" | cat - "${patches[@]}" | sha256sum | cut -c1-12)
src_dir="$cache/debug-kernel/src-$src_key"
src="$src_dir/linux-source-6.1"
stamp_text="source $src_id compiler $(gcc --version | head -n1)"

mkdir -p "$out"
# Two jobs asking for the same kernel must not build into one directory;
# the second waits, then finds the stamp.
exec 9>"$out.lock"
if ! flock -n 9; then
	log "waiting for another build of $out"
	flock 9
fi

if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$stamp_text" ] &&
   [ -f "$src_dir/.qtimer-source-complete" ]; then
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

# The source both variants build from: the tarball unpacked and patched
# once, under its own lock, with a stamp written last.  A patch that does
# not apply (a new linux-source-6.1 moved the code) stops the build.
prepare_source() {
	local p
	exec 8>"$src_dir.lock"
	flock 8
	if [ ! -f "$src_dir/.qtimer-source-complete" ]; then
		log "unpacking $tarball into $src_dir"
		rm -rf "$src_dir" && mkdir -p "$src_dir"
		tar -C "$src_dir" -xf "$tarball"
		for p in "${patches[@]}"; do
			patch -d "$src" -p1 -N -s -f <"$p" >/dev/null ||
				die "$(basename "$p") does not apply to $src"
			log "applied $(basename "$p")"
		done
		echo "$src_id" > "$src_dir/.qtimer-source-complete"
	fi
	exec 8>&-
}

prepare_source
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
