#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1 OR MIT
# Copyright (C) 2026 The qtimer authors
#
# Install into a scratch DESTDIR, check the layout, then build a program
# against the installed copy only, through pkg-config with a sysroot, both
# with the shared and the static library, and run it.
# Usage: install_check.sh SRCDIR   (O, MAKE, CC, PKG_CONFIG, VERSION, SONAME
# from the Makefile)
set -eu

srcdir=$1
dest=$O/install-check
prefix=/usr/local
fail() { echo "install-check: FAIL: $*" >&2; exit 1; }

rm -rf "$dest"
$MAKE -s -C "$srcdir" O="$O" DESTDIR="$dest/root" PREFIX="$prefix" install

root=$dest/root$prefix
for f in lib/libtimerdev.so.$VERSION lib/libtimerdev.a \
	 lib/pkgconfig/libtimerdev.pc include/timerdev.h include/qtimer/linux/qtimer.h \
	 share/man/man3/td_open.3 share/man/man3/td_batch_modify.3 \
	 share/man/man7/libtimerdev.7; do
	[ -f "$root/$f" ] || fail "$prefix/$f not installed"
done
[ "$(readlink "$root/lib/$SONAME")" = "libtimerdev.so.$VERSION" ] ||
	fail "$SONAME is not a link to libtimerdev.so.$VERSION"
[ "$(readlink "$root/lib/libtimerdev.so")" = "$SONAME" ] ||
	fail "libtimerdev.so is not a link to $SONAME"
# The pages' footers say the version make install filled in.
grep -q "^\.TH td_open 3 [^ ]* \"libtimerdev $VERSION\" " "$root/share/man/man3/td_open.3" ||
	fail "td_open.3 does not say libtimerdev $VERSION"
! grep -rq '@VERSION@' "$root/share/man" || fail "an installed page still says @VERSION@"
# Nothing outside PREFIX.
extra=$(cd "$dest/root" && find . -type f -o -type l | grep -v "^\.$prefix/" || true)
[ -z "$extra" ] || fail "installed outside $prefix: $extra"

export PKG_CONFIG_SYSROOT_DIR="$dest/root"
export PKG_CONFIG_LIBDIR="$root/lib/pkgconfig"
unset PKG_CONFIG_PATH
cflags=$($PKG_CONFIG --cflags libtimerdev)
libs=$($PKG_CONFIG --libs libtimerdev)
case $cflags in *"-I$dest/root$prefix/include/qtimer"*) ;; *) fail "cflags '$cflags'" ;; esac
[ ! -e "$root/include/linux" ] || fail "$prefix/include/linux is linux-libc-dev's: nothing of ours goes there"
[ "$($PKG_CONFIG --modversion libtimerdev)" = "$VERSION" ] || fail "modversion"

# Only the installed headers: no -I into the source tree.
prog=$dest/prog
# The installed header, library and .pc file say one version.
cat > "$prog.c" <<'PROG'
#include <errno.h>
#include <stdio.h>
#include <timerdev.h>

#if !TD_CHECK_VERSION(TD_VERSION_MAJOR, TD_VERSION_MINOR)
#error "TD_CHECK_VERSION denies the version of its own header"
#endif

int main(void)
{
	struct td_ctx *ctx;
	int ret = td_open_path(&ctx, "/nonexistent/qtimer", 0);

	if (ret != -ENOENT || td_now(CLOCK_MONOTONIC) <= 0 ||
	    sizeof(struct qtimer_record) != 32 ||
	    td_lib_version() != TD_VERSION_HEX) {
		fprintf(stderr, "installed libtimerdev misbehaves: %d\n", ret);
		return 1;
	}
	printf("%d.%d.%d\n", TD_VERSION_MAJOR, TD_VERSION_MINOR, TD_VERSION_PATCH);
	return 0;
}
PROG
# shellcheck disable=SC2086
$CC -Wall -Wextra -Werror $cflags -o "$prog-shared" "$prog.c" $libs
said=$(LD_LIBRARY_PATH="$root/lib" "$prog-shared") || fail "shared program failed"
[ "$said" = "$VERSION" ] || fail "timerdev.h says $said, the library is $VERSION"
LD_LIBRARY_PATH="$root/lib" ldd "$prog-shared" | grep -q "$root/lib/$SONAME" ||
	fail "shared program does not use the installed $SONAME"

# shellcheck disable=SC2086
$CC -Wall -Wextra -Werror $cflags -o "$prog-static" "$prog.c" \
	$($PKG_CONFIG --libs-only-L libtimerdev) -Wl,-Bstatic -ltimerdev -Wl,-Bdynamic
"$prog-static" > /dev/null || fail "static program failed"
if ldd "$prog-static" | grep -q libtimerdev; then
	fail "static program links libtimerdev.so"
fi

echo "install-check: layout under DESTDIR and pkg-config build: ok"
