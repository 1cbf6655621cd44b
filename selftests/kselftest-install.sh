#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Copyright (C) 2026 The qtimer authors
#
# Lays out the suites of a built payload as a kselftest install tree, the
# one the kernel's "make -C tools/testing/selftests install" makes, so that
# the kernel's own runner runs them, in the test VMs and on any kernel CI
# that runs kselftest trees.  selftests/Makefile's install targets call it.
#
#   kselftest-install.sh PAYLOAD INSTALL_PATH
#
# PAYLOAD is a "make guest-user" output (its suites are in
# PAYLOAD/selftests).  Into INSTALL_PATH go:
#
#   run_kselftest.sh, kselftest/{runner.sh,prefix.pl,module.sh}
#                       the kernel's runner, copied at install time from
#                       the kernel source's tools/testing/selftests
#                       ($KSFT_DIR, default the linux-source-6.1 that
#                       scripts/setup.sh unpacks), never from this tree
#   qtimer/             the collection: every suite of PAYLOAD/selftests,
#                       plus settings (the runner's per-suite timeout) and
#                       config (the kernel options the suites need), both
#                       from selftests/
#   qtimer/bin/         the programs the suites run (PAYLOAD/bin: qtimerctl,
#                       libtimerdev's examples)
#   qtimer/lib/         PAYLOAD/lib (libtimerdev.so.2, the YNL CLI with its
#                       python3), and every shared library an ELF file of
#                       the collection needs beyond glibc's and libgcc_s
#                       (liburing, libuv, libmnl, python3's), copied from
#                       this host
#   kselftest-list.txt  "qtimer:<suite>", one a line, in lexical order (the
#                       order the suites always ran in); the lines of other
#                       collections already there are kept
#
# One collection for all suites: the runner reads one settings file per
# collection directory, and every suite has had the same bound, so one
# collection says it once (Documentation/testing.rst says more).
#
# The tree stands alone: a kernel CI host that has the module, glibc and
# nothing else of ours runs it.  Every dynamic ELF file in it gets a
# RUNPATH of $ORIGIN/<the way to qtimer/lib> (patchelf), and the suites
# look for their programs and the YNL tree beside themselves before PATH
# (t_program(), t_beside() in selftests/lib).  The test VMs run the tree
# with nothing else of the payload installed, and
# scripts/kselftest-install-check.sh checks with ldd that every library
# resolves inside the tree or is glibc's.

set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
collection=qtimer
ksft=${KSFT_DIR:-$top/build/src/linux-source-6.1/tools/testing/selftests}

die() { printf 'kselftest-install: %s\n' "$*" >&2; exit 1; }

[ $# = 2 ] || die "usage: kselftest-install.sh PAYLOAD INSTALL_PATH"
payload=$1 dest=$2
[ -d "$payload/selftests" ] || die "$payload/selftests does not exist: build the payload first (make guest-user OUT=$payload)"
runner_files=(run_kselftest.sh kselftest/runner.sh kselftest/prefix.pl kselftest/module.sh)
for f in "${runner_files[@]}"; do
	[ -f "$ksft/$f" ] || die "no $ksft/$f: run scripts/setup.sh (it unpacks linux-source-6.1), or set KSFT_DIR"
done

mkdir -p "$dest/kselftest"
# The kernel's install uses these modes.
install -m 744 "$ksft/run_kselftest.sh" "$dest/"
for f in runner.sh prefix.pl module.sh; do
	install -m 744 "$ksft/kselftest/$f" "$dest/kselftest/"
done

# The collection is ours alone: a suite removed since the last install
# must not linger in it.
rm -rf "${dest:?}/$collection"
mkdir -p "$dest/$collection"
install -m 644 "$top/selftests/settings" "$top/selftests/config" "$dest/$collection/"
suites=()
for f in "$payload"/selftests/*; do
	[ -f "$f" ] && [ -x "$f" ] || continue
	install -m 755 "$f" "$dest/$collection/"
	suites+=("$(basename "$f")")
done
[ "${#suites[@]}" -gt 0 ] || die "$payload/selftests holds no suite"

# The programs and libraries the suites run.
coll=$dest/$collection
mkdir -p "$coll/bin" "$coll/lib"
[ ! -d "$payload/bin" ] || cp -a "$payload/bin/." "$coll/bin/"
[ ! -d "$payload/lib" ] || cp -a "$payload/lib/." "$coll/lib/"

# shellcheck source=kselftest-host-libs.sh
. "$top/selftests/kselftest-host-libs.sh"
# The dynamic ELF files under $1, NUL-separated: executables and shared
# objects only (the YNL tree's thousands of .py files are neither), the
# magic read by the shell, readelf only for the few that are ELF.
dynamic_elves() {
	local f magic
	while IFS= read -r -d '' f; do
		magic=
		IFS= read -r -n 4 magic <"$f" 2>/dev/null || true
		[ "$magic" = $'\x7fELF' ] || continue
		readelf -d "$f" 2>/dev/null | grep '(NEEDED)' >/dev/null && printf '%s\0' "$f"
	done < <(find "$1" -type f \( -perm -u+x -o -name '*.so' -o -name '*.so.*' \) -print0)
}
command -v patchelf >/dev/null || die "no patchelf: run scripts/setup.sh (Debian package patchelf)"
mapfile -d '' elves < <(dynamic_elves "$coll")
# A library's own libraries are looked for in turn: until nothing is new.
todo=("${elves[@]}")
while [ "${#todo[@]}" -gt 0 ]; do
	new=()
	for f in "${todo[@]}"; do
		while read -r lib; do
			ksft_from_host "$lib" && continue
			case "$lib" in "$coll"/*) continue ;; esac
			[ -e "$coll/lib/${lib##*/}" ] && continue
			cp -L "$lib" "$coll/lib/"
			chmod 755 "$coll/lib/${lib##*/}"
			new+=("$coll/lib/${lib##*/}")
		done < <(LD_LIBRARY_PATH=$coll/lib ldd "$f" 2>/dev/null |
			awk '/=> \// { print $3 }')
	done
	elves+=("${new[@]}")
	todo=("${new[@]}")
done
for f in "${elves[@]}"; do
	readelf -d "$f" 2>/dev/null | grep '(NEEDED)' >/dev/null || continue
	rel=$(realpath --relative-to="$(dirname "$f")" "$coll/lib")
	patchelf --set-rpath "\$ORIGIN/$rel" "$f" || die "patchelf --set-rpath failed on $f"
done

list=$dest/kselftest-list.txt
{
	[ ! -f "$list" ] || grep -v "^$collection:" "$list" || true
	printf "$collection:%s\n" "${suites[@]}" | LC_ALL=C sort
} >"$list.tmp"
mv "$list.tmp" "$list"
